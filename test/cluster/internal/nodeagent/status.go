package nodeagent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// The node's conditions on a pod; PodScheduled and conditions other
// controllers add (DisruptionTarget) are left as they are.
var ownedConditions = []corev1.PodConditionType{
	corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady,
}

// pushStatus writes the worker's view into pods/status, retrying on conflicts.
func (w *podWorker) pushStatus(ctx context.Context) {
	pod := w.currentPod()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := w.agent.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if fresh.UID != pod.UID {
			return nil
		}
		fresh.Status = w.buildStatus(fresh.Status)
		_, err = w.agent.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		w.logf("status update failed: %v", err)
	}
}

func (w *podWorker) buildStatus(old corev1.PodStatus) corev1.PodStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := *old.DeepCopy()
	st.Phase = w.currentPhase()
	st.Reason, st.Message = w.reason, w.message
	st.HostIP, st.PodIP = nodeIP, nodeIP
	st.HostIPs = []corev1.HostIP{{IP: nodeIP}}
	st.PodIPs = []corev1.PodIP{{IP: nodeIP}}
	st.StartTime = &w.startTime
	st.InitContainerStatuses = w.containerStatuses(w.init)
	st.ContainerStatuses = w.containerStatuses(w.main)
	ready := st.Phase == corev1.PodRunning && w.allRunning()
	notReadyReason := "ContainersNotReady"
	if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		notReadyReason = "PodCompleted"
	}
	conds := map[corev1.PodConditionType]condValue{
		corev1.PodReadyToStartContainers: {w.volumesReady, ""},
		corev1.PodInitialized:            {w.initDone, "ContainersNotInitialized"},
		corev1.ContainersReady:           {ready, notReadyReason},
		corev1.PodReady:                  {ready, notReadyReason},
	}
	var kept []corev1.PodCondition
	for _, c := range st.Conditions {
		if _, owned := conds[c.Type]; !owned {
			kept = append(kept, c)
		}
	}
	for _, t := range ownedConditions {
		kept = append(kept, w.condition(old, t, conds[t]))
	}
	st.Conditions = kept
	return st
}

type condValue struct {
	ok     bool
	reason string // when not ok
}

// condition keeps lastTransitionTime unless the status flips.
func (w *podWorker) condition(old corev1.PodStatus, t corev1.PodConditionType, v condValue) corev1.PodCondition {
	status := corev1.ConditionFalse
	reason := v.reason
	if v.ok {
		status, reason = corev1.ConditionTrue, ""
	}
	c := corev1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: metav1.Now()}
	for _, prev := range old.Conditions {
		if prev.Type == t && prev.Status == status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
	}
	return c
}

func (w *podWorker) currentPhase() corev1.PodPhase {
	if w.phase == corev1.PodSucceeded || w.phase == corev1.PodFailed {
		return w.phase
	}
	if !w.initDone {
		return corev1.PodPending
	}
	for _, cs := range w.main {
		if cs.running != nil || cs.terminated != nil || cs.last != nil {
			return corev1.PodRunning
		}
	}
	return corev1.PodPending
}

func (w *podWorker) allRunning() bool {
	for _, cs := range w.main {
		if cs.running == nil {
			return false
		}
	}
	return true
}

func (w *podWorker) containerStatuses(list []*containerState) []corev1.ContainerStatus {
	if len(list) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, 0, len(list))
	for _, cs := range list {
		s := corev1.ContainerStatus{
			Name: cs.spec.Name, Image: cs.spec.Image, ImageID: "ferrybox://" + cs.spec.Image,
			ContainerID: cs.id, RestartCount: cs.restarts,
			Ready:   cs.running != nil || (cs.init && cs.terminated != nil && cs.terminated.ExitCode == 0),
			Started: ptr(cs.running != nil),
		}
		switch {
		case cs.running != nil:
			s.State.Running = &corev1.ContainerStateRunning{StartedAt: *cs.running}
		case cs.terminated != nil:
			s.State.Terminated = cs.terminated.DeepCopy()
		default:
			s.State.Waiting = cs.waiting.DeepCopy()
		}
		if cs.last != nil {
			s.LastTerminationState.Terminated = cs.last.DeepCopy()
		}
		out = append(out, s)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
