package nodeagent

import (
	"context"
	"fmt"
	"runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// Every emulated node runs its pods in the host's network namespace.
const nodeIP = "127.0.0.1"

// nodeAllocatable is what each node offers the scheduler, and what downward
// API resource fields report for containers without limits.
var nodeAllocatable = corev1.ResourceList{
	corev1.ResourceCPU:              resource.MustParse("8"),
	corev1.ResourceMemory:           resource.MustParse("16Gi"),
	corev1.ResourcePods:             resource.MustParse("110"),
	corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
}

const (
	leaseSeconds     = 40
	leaseRenewal     = 10 * time.Second
	statusHeartbeat  = 30 * time.Second
	kubeletVersion   = "v1.37.1-ferrybox"
	nodeLeaseNS      = "kube-node-lease"
	topologyHostname = "kubernetes.io/hostname"
)

// registerNode creates (or takes over) the Node object with a Ready status.
func (a *Agent) registerNode(ctx context.Context, name string, port int32) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			topologyHostname:         name,
			"kubernetes.io/os":       "linux",
			"kubernetes.io/arch":     runtime.GOARCH,
			"ferrybox.ferry.dev/box": "true",
		}},
		Status: a.nodeStatus(port),
	}
	created, err := a.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = a.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("registering node %s: %w", name, err)
	}
	return a.updateNodeStatus(ctx, created.Name, port)
}

func (a *Agent) nodeStatus(port int32) corev1.NodeStatus {
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return corev1.NodeStatus{
		Capacity:    nodeAllocatable,
		Allocatable: nodeAllocatable,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "ferrybox node agent is posting ready status"),
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		},
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP}, {Type: corev1.NodeHostName, Address: "localhost"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: port}},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion: kubeletVersion, OperatingSystem: "linux", Architecture: runtime.GOARCH,
			ContainerRuntimeVersion: "ferrybox://1", OSImage: "ferry cluster in a box", KernelVersion: "host",
		},
	}
}

// updateNodeStatus refreshes the conditions' heartbeat times, keeping transition times.
func (a *Agent) updateNodeStatus(ctx context.Context, name string, port int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := a.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fresh := a.nodeStatus(port)
		for i, c := range fresh.Conditions {
			for _, old := range node.Status.Conditions {
				if old.Type == c.Type && old.Status == c.Status {
					fresh.Conditions[i].LastTransitionTime = old.LastTransitionTime
				}
			}
		}
		node.Status = fresh
		_, err = a.kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
}

// heartbeat renews the node's Lease and status, as the node lifecycle
// controller expects from a live kubelet.
func (a *Agent) heartbeat(ctx context.Context, name string, port int32) {
	lastStatus := time.Now()
	for {
		if err := a.renewLease(ctx, name); err != nil && ctx.Err() == nil {
			klog.Errorf("node %s: renewing lease: %v", name, err)
		}
		if time.Since(lastStatus) >= statusHeartbeat {
			if err := a.updateNodeStatus(ctx, name, port); err != nil && ctx.Err() == nil {
				klog.Errorf("node %s: updating status: %v", name, err)
			}
			lastStatus = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(leaseRenewal):
		}
	}
}

func (a *Agent) renewLease(ctx context.Context, name string) error {
	leases := a.kube.CoordinationV1().Leases(nodeLeaseNS)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, err := a.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: ptr(int32(leaseSeconds)), RenewTime: &now},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}
