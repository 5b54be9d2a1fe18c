package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// podWorker runs one pod from volume setup to its terminal phase: init
// containers one by one, then the regular containers together, restarting
// them as the restart policy says, stopping them on deletion or deadline.
type podWorker struct {
	agent *Agent
	dir   string

	mu           sync.Mutex
	pod          *corev1.Pod
	init, main   []*containerState
	phase        corev1.PodPhase
	reason       string
	message      string
	startTime    metav1.Time
	volumesReady bool
	initDone     bool
	transitions  map[corev1.PodConditionType]metav1.Time
	loops        map[string]string
	tokenRefresh time.Time

	killOnce  sync.Once
	killed    chan struct{}
	killGrace time.Duration
	finished  chan struct{}
	deleted   sync.Once
}

func newPodWorker(a *Agent, pod *corev1.Pod) *podWorker {
	w := &podWorker{
		agent: a, pod: pod, phase: corev1.PodPending,
		dir:         filepath.Join(a.opts.StateDir, "pods", string(pod.UID)),
		transitions: map[corev1.PodConditionType]metav1.Time{},
		loops:       map[string]string{},
		killed:      make(chan struct{}), finished: make(chan struct{}),
		startTime: metav1.Now(),
	}
	if pod.Status.StartTime != nil {
		w.startTime = *pod.Status.StartTime
	}
	for i := range pod.Spec.InitContainers {
		w.init = append(w.init, newContainerState(&pod.Spec.InitContainers[i], true, true))
	}
	for i := range pod.Spec.Containers {
		w.main = append(w.main, newContainerState(&pod.Spec.Containers[i], false, len(pod.Spec.InitContainers) > 0))
	}
	return w
}

func (w *podWorker) currentPod() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

func (w *podWorker) logf(format string, args ...any) {
	pod := w.currentPod()
	klog.Infof("pod %s/%s: %s", pod.Namespace, pod.Name, fmt.Sprintf(format, args...))
}

// update takes a newer version of the pod; a deletion timestamp stops it.
func (w *podWorker) update(pod *corev1.Pod) {
	w.mu.Lock()
	w.pod = pod
	w.mu.Unlock()
	if pod.DeletionTimestamp != nil {
		grace := time.Duration(30) * time.Second
		if pod.DeletionGracePeriodSeconds != nil {
			grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		}
		w.stop(grace, "", "")
	}
}

// stop ends every container: SIGTERM, then SIGKILL after grace. A reason marks
// the pod Failed with it (DeadlineExceeded); deletion passes none.
func (w *podWorker) stop(grace time.Duration, reason, message string) {
	w.killOnce.Do(func() {
		w.mu.Lock()
		w.killGrace = grace
		if reason != "" {
			w.reason, w.message = reason, message
		}
		w.mu.Unlock()
		close(w.killed) // each container loop stops its own process
	})
}

func (w *podWorker) isKilled() bool {
	select {
	case <-w.killed:
		return true
	default:
		return false
	}
}

func (w *podWorker) run(ctx context.Context) {
	defer close(w.finished)
	w.pushStatus(ctx)
	vols, ok := w.waitVolumes(ctx)
	if ok {
		go w.refreshTokens(ctx)
		w.watchDeadline(ctx)
		w.runContainers(ctx, vols)
	}
	w.finish(ctx)
}

// waitVolumes retries volume setup until it works or the pod is stopped.
func (w *podWorker) waitVolumes(ctx context.Context) (map[string]*podVolume, bool) {
	for {
		vols, err := w.prepareVolumes(ctx)
		if err == nil {
			w.mu.Lock()
			w.volumesReady = true
			w.mu.Unlock()
			w.pushStatus(ctx)
			return vols, true
		}
		if !errors.Is(err, errNotReady) {
			w.agent.event(w.currentPod(), corev1.EventTypeWarning, "FailedMount", err.Error())
		}
		select {
		case <-w.killed:
			return nil, false
		case <-ctx.Done():
			return nil, false
		case <-time.After(time.Second):
		}
	}
}

// watchDeadline enforces activeDeadlineSeconds from the pod's start time.
func (w *podWorker) watchDeadline(ctx context.Context) {
	pod := w.currentPod()
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return
	}
	deadline := w.startTime.Add(time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second)
	go func() {
		select {
		case <-time.After(time.Until(deadline)):
			w.agent.event(pod, corev1.EventTypeNormal, "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
			w.stop(w.graceOf(pod), "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
		case <-w.finished:
		case <-ctx.Done():
		}
	}()
}

func (w *podWorker) graceOf(pod *corev1.Pod) time.Duration {
	if pod.Spec.TerminationGracePeriodSeconds == nil {
		return 30 * time.Second
	}
	return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
}

func (w *podWorker) runContainers(ctx context.Context, vols map[string]*podVolume) {
	for _, cs := range w.init {
		if !w.runContainer(ctx, cs, vols) {
			return
		}
	}
	w.mu.Lock()
	w.initDone = true
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, cs := range w.main {
		wg.Add(1)
		go func() { defer wg.Done(); w.runContainer(ctx, cs, vols) }()
	}
	wg.Wait()
}

// finish settles the terminal phase, releases volumes and, when the pod is
// being deleted, removes it for good.
func (w *podWorker) finish(ctx context.Context) {
	w.mu.Lock()
	w.phase = w.terminalPhase()
	w.mu.Unlock()
	w.pushStatus(ctx)
	w.detachLoops()
	_ = os.RemoveAll(filepath.Join(w.dir, "volumes"))
	if w.currentPod().DeletionTimestamp != nil {
		w.finalDelete(ctx)
	}
}

// terminalPhase: Succeeded when every regular container exited 0, otherwise
// Failed (a failed init container, a failure, a kill, a deadline).
func (w *podWorker) terminalPhase() corev1.PodPhase {
	if w.reason != "" || !w.initDone {
		return corev1.PodFailed
	}
	for _, cs := range w.main {
		if cs.terminated == nil || cs.terminated.ExitCode != 0 {
			return corev1.PodFailed
		}
	}
	return corev1.PodSucceeded
}

// finalDelete is the kubelet's last word on a deleted pod: grace 0, guarded by UID.
func (w *podWorker) finalDelete(ctx context.Context) {
	w.deleted.Do(func() {
		pod := w.currentPod()
		zero := int64(0)
		err := w.agent.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			w.logf("final delete failed: %v", err)
		}
	})
}
