// Package nodeagent is the box's emulated kubelet. One agent serves several
// nodes: it registers them, keeps them Ready, and runs every pod bound to them
// as local processes in private mount namespaces (see containerinit), with
// the pod's argv, env, volumes, user, memory limit and service-account token.
package nodeagent

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"ferry.dev/cluster/internal/layout"
)

// Options configure the agent.
type Options struct {
	Nodes      int
	NodePrefix string
	// StateDir holds pod folders and container logs.
	StateDir string
	Storage  layout.Storage
	// Checkout is the ferry checkout the ferry image maps to.
	Checkout string
	// APIServerPort is what pods see as KUBERNETES_SERVICE_PORT on 127.0.0.1.
	APIServerPort string
	// KubeletPortBase is node i's log endpoint port (base+i).
	KubeletPortBase           int
	TLSCert, TLSKey, ClientCA string
}

// Agent serves the nodes.
type Agent struct {
	opts      Options
	kube      kubernetes.Interface
	storage   layout.Storage
	self      string
	cgroupDir string
	cgroupV2  bool
	recorder  record.EventRecorder
	pods      corelisters.PodLister
	nodes     map[string]int32 // name -> kubelet port

	mu      sync.Mutex
	workers map[types.UID]*podWorker
}

// Run registers the nodes and runs their pods until ctx ends; then it stops
// every container (SIGTERM, SIGKILL after a short grace).
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// /proc/self/exe still executes when a newer build has replaced this one in the cache.
	a := &Agent{opts: opts, kube: kube, storage: opts.Storage, self: "/proc/self/exe",
		nodes: map[string]int32{}, workers: map[types.UID]*podWorker{}}
	if err := a.setupCgroup(); err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	a.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet"})

	for i := 1; i <= opts.Nodes; i++ {
		name, port := fmt.Sprintf("%s%d", opts.NodePrefix, i), int32(opts.KubeletPortBase+i-1)
		a.nodes[name] = port
		if err := a.registerNode(ctx, name, port); err != nil {
			return err
		}
		go a.heartbeat(ctx, name, port)
		if err := a.serveKubelet(ctx, name, port); err != nil {
			return err
		}
	}
	factory := informers.NewSharedInformerFactory(kube, 5*time.Minute)
	inf := factory.Core().V1().Pods().Informer()
	a.pods = factory.Core().V1().Pods().Lister()
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { a.sync(ctx, o) },
		UpdateFunc: func(_, o any) { a.sync(ctx, o) },
		DeleteFunc: a.forget,
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	klog.Infof("node agent serving %d nodes", opts.Nodes)
	<-ctx.Done()
	a.stopAll()
	return nil
}

// setupCgroup makes the box's cgroup under the agent's own, clearing leftovers
// of an earlier agent of the same box.
func (a *Agent) setupCgroup() error {
	base, v2, err := cgroupBase()
	if err != nil {
		return err
	}
	// One box per state folder: hash it so two checkouts never share a cgroup.
	h := fnv.New32a()
	_, _ = h.Write([]byte(a.opts.StateDir))
	a.cgroupDir = filepath.Join(base, fmt.Sprintf("ferrybox-%08x", h.Sum32()))
	a.cgroupV2 = v2
	if entries, err := os.ReadDir(a.cgroupDir); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				(&memoryCgroup{dir: filepath.Join(a.cgroupDir, e.Name()), v2: v2}).remove()
			}
		}
	}
	if err := os.MkdirAll(a.cgroupDir, 0o755); err != nil {
		return fmt.Errorf("creating the box cgroup %s: %w", a.cgroupDir, err)
	}
	return nil
}

func (a *Agent) sync(ctx context.Context, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if _, ours := a.nodes[pod.Spec.NodeName]; !ours {
		return
	}
	a.mu.Lock()
	w := a.workers[pod.UID]
	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if w == nil && !terminal && pod.DeletionTimestamp == nil {
		w = newPodWorker(a, pod)
		a.workers[pod.UID] = w
		go w.run(ctx)
	}
	a.mu.Unlock()
	if w == nil {
		if pod.DeletionTimestamp != nil {
			// Never started here, or finished before this agent started.
			newPodWorker(a, pod).finalDelete(ctx)
		}
		return
	}
	w.update(pod)
	select {
	case <-w.finished:
		if pod.DeletionTimestamp != nil {
			w.finalDelete(ctx)
		}
	default:
	}
}

// forget drops a pod object that is gone; its containers are killed at once.
func (a *Agent) forget(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	a.mu.Lock()
	w := a.workers[pod.UID]
	delete(a.workers, pod.UID)
	a.mu.Unlock()
	if w == nil {
		return
	}
	w.stop(0, "", "")
	go func() {
		<-w.finished
		_ = os.RemoveAll(w.dir)
	}()
}

func (a *Agent) stopAll() {
	a.mu.Lock()
	workers := make([]*podWorker, 0, len(a.workers))
	for _, w := range a.workers {
		workers = append(workers, w)
	}
	a.mu.Unlock()
	for _, w := range workers {
		w.stop(2*time.Second, "", "")
	}
	for _, w := range workers {
		select {
		case <-w.finished:
		case <-time.After(5 * time.Second):
		}
	}
	_ = os.Remove(a.cgroupDir)
}

// serviceEnv is the service environment every container gets; only the
// kubernetes service exists, at the apiserver's loopback address.
func (a *Agent) serviceEnv() [][2]string {
	port := a.opts.APIServerPort
	return [][2]string{
		{"KUBERNETES_SERVICE_HOST", nodeIP},
		{"KUBERNETES_SERVICE_PORT", port},
		{"KUBERNETES_SERVICE_PORT_HTTPS", port},
		{"KUBERNETES_PORT", "tcp://" + nodeIP + ":" + port},
		{"KUBERNETES_PORT_443_TCP", "tcp://" + nodeIP + ":" + port},
		{"KUBERNETES_PORT_443_TCP_PROTO", "tcp"},
		{"KUBERNETES_PORT_443_TCP_ADDR", nodeIP},
		{"KUBERNETES_PORT_443_TCP_PORT", port},
	}
}

func (a *Agent) event(pod *corev1.Pod, kind, reason, message string) {
	a.recorder.Event(pod, kind, reason, message)
}
