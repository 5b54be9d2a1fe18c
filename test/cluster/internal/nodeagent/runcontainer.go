package nodeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"

	"ferry.dev/cluster/internal/runspec"
)

// containerState is what the status reports about one container; guarded by the worker's mutex.
type containerState struct {
	spec       *corev1.Container
	init       bool
	restarts   int32
	id         string
	waiting    *corev1.ContainerStateWaiting
	running    *metav1.Time
	terminated *corev1.ContainerStateTerminated
	last       *corev1.ContainerStateTerminated
}

// newContainerState starts waiting: regular containers of a pod with init
// containers wait in PodInitializing, the others in ContainerCreating.
func newContainerState(c *corev1.Container, init, podHasInit bool) *containerState {
	reason := "ContainerCreating"
	if !init && podHasInit {
		reason = "PodInitializing"
	}
	return &containerState{spec: c, init: init, waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

const defaultTerminationMessagePath = "/dev/termination-log"

// runContainer runs one container until it needs no restart (true when it
// finally exited 0) or the pod is stopped (false).
func (w *podWorker) runContainer(ctx context.Context, cs *containerState, vols map[string]*podVolume) bool {
	for {
		if w.isKilled() || ctx.Err() != nil {
			return false
		}
		p, runDir, err := w.startContainer(ctx, cs, vols)
		if err != nil {
			w.setWaiting(ctx, cs, "CreateContainerConfigError", err.Error())
			w.agent.event(w.currentPod(), corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: %v", err))
			if !w.pause(2 * time.Second) {
				return false
			}
			continue
		}
		select {
		case <-p.done:
		case <-w.killed:
			w.agent.event(w.currentPod(), corev1.EventTypeNormal, "Killing", "Stopping container "+cs.spec.Name)
			w.mu.Lock()
			grace := w.killGrace
			w.mu.Unlock()
			p.stop(grace)
		}
		code := w.recordExit(ctx, cs, p, runDir)
		if w.isKilled() || !w.shouldRestart(cs, code) {
			return code == 0
		}
		if !w.backOff(ctx, cs, code) {
			return false
		}
	}
}

func (w *podWorker) startContainer(ctx context.Context, cs *containerState, vols map[string]*podVolume) (*process, string, error) {
	w.mu.Lock()
	restarts := cs.restarts
	w.mu.Unlock()
	pod := w.currentPod()
	runDir := filepath.Join(w.dir, "containers", fmt.Sprintf("%s-%d", cs.spec.Name, restarts))
	spec, err := w.buildSpec(ctx, pod, cs.spec, vols, runDir)
	if err != nil {
		return nil, "", err
	}
	log, err := openLog(containerLogPath(w.agent.opts.StateDir, pod.Namespace, pod.Name, string(pod.UID), cs.spec.Name, restarts))
	if err != nil {
		return nil, "", err
	}
	limit := cs.spec.Resources.Limits.Memory().Value()
	cgroup := fmt.Sprintf("%s_%s-%d", pod.UID, cs.spec.Name, restarts)
	p, err := w.agent.startProcess(runDir, cgroup, spec, limit, log)
	if err != nil {
		log.close()
		return nil, "", err
	}
	w.mu.Lock()
	cs.id = fmt.Sprintf("ferrybox://%s-%s-%d", pod.UID, cs.spec.Name, restarts)
	cs.waiting, cs.terminated = nil, nil
	started := metav1.NewTime(p.started)
	cs.running = &started
	w.mu.Unlock()
	w.pushStatus(ctx)
	w.agent.event(pod, corev1.EventTypeNormal, "Started", "Started container "+cs.spec.Name)
	return p, runDir, nil
}

// recordExit turns the process's end into a terminated state, with the
// termination message the container wrote (or its log tail when asked).
func (w *podWorker) recordExit(ctx context.Context, cs *containerState, p *process, runDir string) int32 {
	res := p.exit
	message := res.message
	if message == "" {
		message = readTerminationMessage(filepath.Join(runDir, "termination-log"))
	}
	if message == "" && res.code != 0 && cs.spec.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError {
		message = tailText(p.log.path, 80, 2048)
	}
	w.mu.Lock()
	cs.running = nil
	cs.terminated = &corev1.ContainerStateTerminated{
		ExitCode: res.code, Signal: int32(res.signal), Reason: res.reason, Message: message,
		StartedAt: metav1.NewTime(p.started), FinishedAt: metav1.NewTime(res.finished), ContainerID: cs.id,
	}
	w.mu.Unlock()
	if res.reason == "OOMKilled" {
		w.agent.event(w.currentPod(), corev1.EventTypeWarning, "OOMKilled", "Container "+cs.spec.Name+" exceeded its memory limit")
	}
	w.pushStatus(ctx)
	return res.code
}

func readTerminationMessage(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(raw) > 4096 {
		raw = raw[:4096]
	}
	return string(raw)
}

// shouldRestart applies the pod's restartPolicy; init containers restart on
// failure unless the policy is Never.
func (w *podWorker) shouldRestart(cs *containerState, code int32) bool {
	switch w.currentPod().Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return code != 0
	}
	return code != 0 || !cs.init
}

// backOff waits before a restart, 1 s doubling to 10 s: shorter than a
// kubelet's 10 s to 5 min so tests stay quick.
func (w *podWorker) backOff(ctx context.Context, cs *containerState, code int32) bool {
	w.mu.Lock()
	delay := time.Second << min(cs.restarts, 3)
	if delay > 10*time.Second {
		delay = 10 * time.Second
	}
	cs.last, cs.terminated = cs.terminated, nil
	cs.restarts++
	if code != 0 {
		cs.waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, cs.spec.Name, w.pod.Name)}
	} else {
		cs.waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	w.mu.Unlock()
	w.pushStatus(ctx)
	return w.pause(delay)
}

func (w *podWorker) setWaiting(ctx context.Context, cs *containerState, reason, message string) {
	w.mu.Lock()
	cs.waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: message}
	w.mu.Unlock()
	w.pushStatus(ctx)
}

// pause sleeps unless the pod is stopped first (then false).
func (w *podWorker) pause(d time.Duration) bool {
	select {
	case <-w.killed:
		return false
	case <-time.After(d):
		return true
	}
}

// buildSpec resolves argv, env, user and mounts of one container run.
func (w *podWorker) buildSpec(ctx context.Context, pod *corev1.Pod, c *corev1.Container, vols map[string]*podVolume, runDir string) (*runspec.Spec, error) {
	profile := profileFor(c.Image, w.agent.opts.Checkout)
	env, envMap, err := w.containerEnv(ctx, c, profile)
	if err != nil {
		return nil, err
	}
	argv, err := profile.argv(c.Image, expandAll(c.Command, envMap), expandAll(c.Args, envMap))
	if err != nil {
		return nil, err
	}
	uid := runAsUser(c, pod)
	if nonRoot := runAsNonRoot(c, pod); nonRoot && (uid == nil || *uid == 0) {
		return nil, fmt.Errorf("container has runAsNonRoot and image will run as root")
	}
	readOnlyRoot := c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem
	if err := os.RemoveAll(runDir); err != nil {
		return nil, err
	}
	scratch := filepath.Join(runDir, "root")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, err
	}
	mounts, err := w.containerMounts(c, vols, runDir, readOnlyRoot, envMap)
	if err != nil {
		return nil, err
	}
	workingDir := c.WorkingDir
	if workingDir == "" {
		workingDir = profile.workingDir
	}
	hostname := pod.Spec.Hostname
	if hostname == "" {
		hostname = pod.Name
	}
	return &runspec.Spec{
		ScratchDir: scratch, Hostname: truncateHostname(hostname), Argv: argv, Env: env, WorkingDir: workingDir,
		UID: uid, GID: runAsGroup(c, pod), SupplementalGroups: supplementalGroups(pod),
		ReadOnlyRoot: readOnlyRoot, Mounts: mounts,
	}, nil
}

func (w *podWorker) containerMounts(c *corev1.Container, vols map[string]*podVolume, runDir string, readOnlyRoot bool, env map[string]string) ([]runspec.Mount, error) {
	checkout := w.agent.opts.Checkout
	mounts := []runspec.Mount{{Source: checkout, Target: checkout, ReadOnly: true}}
	if !readOnlyRoot {
		tmp := filepath.Join(runDir, "tmp")
		if err := os.Mkdir(tmp, 0o1777); err != nil {
			return nil, err
		}
		if err := os.Chmod(tmp, 0o1777); err != nil {
			return nil, err
		}
		mounts = append(mounts, runspec.Mount{Source: tmp, Target: "/tmp"})
	}
	termLog := filepath.Join(runDir, "termination-log")
	if err := os.WriteFile(termLog, nil, 0o666); err != nil {
		return nil, err
	}
	if err := os.Chmod(termLog, 0o666); err != nil {
		return nil, err
	}
	termPath := c.TerminationMessagePath
	if termPath == "" {
		termPath = defaultTerminationMessagePath
	}
	mounts = append(mounts, runspec.Mount{Source: termLog, Target: termPath})
	for _, vm := range c.VolumeMounts {
		v, ok := vols[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume mount %s names no volume of the pod", vm.Name)
		}
		source, err := subPathSource(v.path, vm, env)
		if err != nil {
			return nil, err
		}
		mounts = append(mounts, runspec.Mount{Source: source, Target: vm.MountPath, ReadOnly: vm.ReadOnly || v.readOnly})
	}
	for _, vd := range c.VolumeDevices {
		v, ok := vols[vd.Name]
		if !ok {
			return nil, fmt.Errorf("volume device %s names no volume of the pod", vd.Name)
		}
		mounts = append(mounts, runspec.Mount{Source: v.path, Target: vd.DevicePath, ReadOnly: v.readOnly})
	}
	return mounts, nil
}

// subPathSource resolves subPath/subPathExpr inside the volume, creating the
// directory when missing as a kubelet does, and refusing to leave the volume.
func subPathSource(volume string, vm corev1.VolumeMount, env map[string]string) (string, error) {
	sub := vm.SubPath
	if vm.SubPathExpr != "" {
		sub = expansion.Expand(vm.SubPathExpr, expansion.MappingFuncFor(env))
	}
	if sub == "" {
		return volume, nil
	}
	clean := filepath.Clean(sub)
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("subPath %q of volume mount %s leaves the volume", sub, vm.Name)
	}
	path := filepath.Join(volume, clean)
	if _, err := os.Lstat(path); os.IsNotExist(err) {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return "", err
		}
	}
	return path, nil
}

func truncateHostname(name string) string {
	if len(name) > 63 {
		return strings.TrimRight(name[:63], "-.")
	}
	return name
}

func runAsUser(c *corev1.Container, pod *corev1.Pod) *int64 {
	if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
		return c.SecurityContext.RunAsUser
	}
	if pod.Spec.SecurityContext != nil {
		return pod.Spec.SecurityContext.RunAsUser
	}
	return nil
}

func runAsGroup(c *corev1.Container, pod *corev1.Pod) *int64 {
	if c.SecurityContext != nil && c.SecurityContext.RunAsGroup != nil {
		return c.SecurityContext.RunAsGroup
	}
	if pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.RunAsGroup != nil {
		return pod.Spec.SecurityContext.RunAsGroup
	}
	if uid := runAsUser(c, pod); uid != nil {
		gid := int64(0)
		return &gid
	}
	return nil
}

func runAsNonRoot(c *corev1.Container, pod *corev1.Pod) bool {
	if c.SecurityContext != nil && c.SecurityContext.RunAsNonRoot != nil {
		return *c.SecurityContext.RunAsNonRoot
	}
	return pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.RunAsNonRoot != nil && *pod.Spec.SecurityContext.RunAsNonRoot
}

func supplementalGroups(pod *corev1.Pod) []int64 {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return nil
	}
	groups := append([]int64{}, sc.SupplementalGroups...)
	if sc.FSGroup != nil {
		groups = append(groups, *sc.FSGroup)
	}
	return groups
}
