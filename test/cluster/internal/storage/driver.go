// Package storage is the box's local storage driver. It plays the parts a CSI
// driver and its sidecars play in a real cluster: external-provisioner
// (dynamic PVs as directories or image files, from snapshots or clones,
// reclaim), and csi-snapshotter (VolumeSnapshotContents as copies). The real
// snapshot-controller binds VolumeSnapshots to contents; this driver only
// serves contents whose spec.driver is layout.DriverName.
package storage

import (
	"context"
	"time"

	snapclient "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	snapinformers "github.com/kubernetes-csi/external-snapshotter/client/v8/informers/externalversions"
	snaplisters "github.com/kubernetes-csi/external-snapshotter/client/v8/listers/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"ferry.dev/cluster/internal/layout"
)

// Options configure the driver.
type Options struct {
	Storage layout.Storage
	// SnapshotReadyDelay is how long a new snapshot stays not readyToUse; a
	// VolumeSnapshotClass parameter "readyDelay" overrides it per class.
	SnapshotReadyDelay time.Duration
}

// Driver holds the clients, listers and work queues.
type Driver struct {
	opts     Options
	kube     kubernetes.Interface
	snaps    snapclient.Interface
	claims   corelisters.PersistentVolumeClaimLister
	volumes  corelisters.PersistentVolumeLister
	nodes    corelisters.NodeLister
	classes  storagelisters.StorageClassLister
	vs       snaplisters.VolumeSnapshotLister
	vsc      snaplisters.VolumeSnapshotContentLister
	vsclass  snaplisters.VolumeSnapshotClassLister
	recorder record.EventRecorder
}

// Run starts the driver and blocks until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	if err := opts.Storage.Ensure(); err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	snaps, err := snapclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kf := informers.NewSharedInformerFactory(kube, time.Minute)
	sf := snapinformers.NewSharedInformerFactory(snaps, time.Minute)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	d := &Driver{
		opts: opts, kube: kube, snaps: snaps,
		claims:   kf.Core().V1().PersistentVolumeClaims().Lister(),
		volumes:  kf.Core().V1().PersistentVolumes().Lister(),
		nodes:    kf.Core().V1().Nodes().Lister(),
		classes:  kf.Storage().V1().StorageClasses().Lister(),
		vs:       sf.Snapshot().V1().VolumeSnapshots().Lister(),
		vsc:      sf.Snapshot().V1().VolumeSnapshotContents().Lister(),
		vsclass:  sf.Snapshot().V1().VolumeSnapshotClasses().Lister(),
		recorder: broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: layout.DriverName}),
	}
	loops := []*loop{
		newLoop("claims", kf.Core().V1().PersistentVolumeClaims().Informer(), d.syncClaim),
		newLoop("volumes", kf.Core().V1().PersistentVolumes().Informer(), d.syncVolume),
		newLoop("contents", sf.Snapshot().V1().VolumeSnapshotContents().Informer(), d.syncContent),
	}
	// Claims waiting on a snapshot are retried when the snapshot changes.
	requeueClaims := func(any) { loops[0].enqueueAll(kf.Core().V1().PersistentVolumeClaims().Informer()) }
	if _, err := sf.Snapshot().V1().VolumeSnapshots().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: requeueClaims, UpdateFunc: func(_, o any) { requeueClaims(o) },
	}); err != nil {
		return err
	}
	kf.Start(ctx.Done())
	sf.Start(ctx.Done())
	kf.WaitForCacheSync(ctx.Done())
	sf.WaitForCacheSync(ctx.Done())
	for _, l := range loops {
		go l.run(ctx)
	}
	klog.Infof("storage driver %s serving %s", layout.DriverName, opts.Storage.Root)
	<-ctx.Done()
	return nil
}

// loop is a work queue of object keys fed by an informer and drained by sync.
// sync returns a delay to look again after (0: done) or an error to retry with backoff.
type loop struct {
	name  string
	queue workqueue.TypedRateLimitingInterface[string]
	sync  func(ctx context.Context, key string) (time.Duration, error)
}

func newLoop(name string, inf cache.SharedIndexInformer, sync func(context.Context, string) (time.Duration, error)) *loop {
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 10*time.Second)
	l := &loop{name: name, sync: sync,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[string]{Name: name})}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			l.queue.Add(key)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue,
	})
	return l
}

func (l *loop) enqueueAll(inf cache.SharedIndexInformer) {
	for _, key := range inf.GetStore().ListKeys() {
		l.queue.Add(key)
	}
}

func (l *loop) run(ctx context.Context) {
	go func() { <-ctx.Done(); l.queue.ShutDown() }()
	for {
		key, quit := l.queue.Get()
		if quit {
			return
		}
		after, err := l.sync(ctx, key)
		switch {
		case err != nil:
			klog.Errorf("%s %s: %v", l.name, key, err)
			l.queue.AddRateLimited(key)
		case after > 0:
			l.queue.Forget(key)
			l.queue.AddAfter(key, after)
		default:
			l.queue.Forget(key)
		}
		l.queue.Done(key)
	}
}

func notOurs(driver string) bool { return driver != layout.DriverName }
