package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"ferry.dev/cluster/internal/layout"
)

// Names the snapshot-controller and csi-snapshotter agree on (external-snapshotter's utils).
const (
	contentFinalizer     = "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection"
	annBeingCreated      = "snapshot.storage.kubernetes.io/volumesnapshot-being-created"
	annBeingDeleted      = "snapshot.storage.kubernetes.io/volumesnapshot-being-deleted"
	readyDelayParameter  = "readyDelay"
	snapshotHandlePrefix = "snapshot-"
)

// snapshotMeta is what ListSnapshots would answer for a handle: size, mode, time.
type snapshotMeta struct {
	SourceVolume string    `json:"sourceVolume"`
	SizeBytes    int64     `json:"sizeBytes"`
	Block        bool      `json:"block"`
	CreatedAt    time.Time `json:"createdAt"`
}

// syncContent does the csi-snapshotter's share for a VolumeSnapshotContent:
// take the snapshot of a dynamic content, check the handle of a
// pre-provisioned one, flip readyToUse after the delay, delete on request.
func (d *Driver) syncContent(ctx context.Context, name string) (time.Duration, error) {
	content, err := d.vsc.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if notOurs(content.Spec.Driver) {
		return 0, nil
	}
	if shouldDelete(content) {
		return 0, d.deleteSnapshot(ctx, content)
	}
	if content.DeletionTimestamp != nil {
		return 0, nil
	}
	switch {
	case content.Status == nil && content.Spec.Source.VolumeHandle != nil:
		return d.createSnapshot(ctx, content)
	case content.Spec.Source.SnapshotHandle != nil && (content.Status == nil || content.Status.SnapshotHandle == nil):
		return d.checkStaticSnapshot(ctx, content)
	case content.Status != nil && content.Status.ReadyToUse != nil && !*content.Status.ReadyToUse:
		return d.markReady(ctx, content)
	}
	return 0, nil
}

func shouldDelete(c *snapv1.VolumeSnapshotContent) bool {
	if c.DeletionTimestamp == nil {
		return false
	}
	if c.Spec.Source.SnapshotHandle != nil && c.Spec.VolumeSnapshotRef.UID == "" {
		return true
	}
	return !metav1.HasAnnotation(c.ObjectMeta, annBeingCreated) && metav1.HasAnnotation(c.ObjectMeta, annBeingDeleted)
}

func (d *Driver) deleteSnapshot(ctx context.Context, c *snapv1.VolumeSnapshotContent) error {
	if c.Spec.DeletionPolicy == snapv1.VolumeSnapshotContentDelete && c.Status != nil && c.Status.SnapshotHandle != nil {
		if err := os.RemoveAll(d.opts.Storage.Snapshot(*c.Status.SnapshotHandle)); err != nil {
			return err
		}
	}
	if !slices.Contains(c.Finalizers, contentFinalizer) {
		return nil
	}
	patch, err := finalizersPatch(c.ResourceVersion, removeString(c.Finalizers, contentFinalizer))
	if err != nil {
		return err
	}
	_, err = d.snaps.SnapshotV1().VolumeSnapshotContents().Patch(ctx, c.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (d *Driver) createSnapshot(ctx context.Context, c *snapv1.VolumeSnapshotContent) (time.Duration, error) {
	c, err := d.setBeingCreated(ctx, c, true)
	if err != nil {
		return 0, err
	}
	handle := snapshotHandlePrefix + string(c.UID)
	meta, err := d.copyVolume(*c.Spec.Source.VolumeHandle, handle)
	if err != nil {
		return 0, err
	}
	delay, err := d.readyDelay(c)
	if err != nil {
		return 0, err
	}
	ready := delay <= 0
	c = c.DeepCopy()
	c.Status = &snapv1.VolumeSnapshotContentStatus{
		SnapshotHandle: &handle,
		CreationTime:   ptr(meta.CreatedAt.UnixNano()),
		RestoreSize:    &meta.SizeBytes,
		ReadyToUse:     &ready,
	}
	c, err = d.snaps.SnapshotV1().VolumeSnapshotContents().UpdateStatus(ctx, c, metav1.UpdateOptions{})
	if err != nil {
		return 0, err
	}
	if _, err := d.setBeingCreated(ctx, c, false); err != nil {
		return 0, err
	}
	return delay, nil
}

// copyVolume copies a volume into a new snapshot folder with its metadata.
// A partial folder from an interrupted attempt is replaced.
func (d *Driver) copyVolume(volumeHandle, handle string) (*snapshotMeta, error) {
	st := d.opts.Storage
	block := st.IsBlockVolume(volumeHandle)
	src := st.Volume(volumeHandle, block)
	if _, err := os.Stat(src); err != nil {
		return nil, fmt.Errorf("volume %s has no data on this host: %w", volumeHandle, err)
	}
	size, err := d.volumeSize(volumeHandle, src, block)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(st.Snapshot(handle)); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(st.Snapshot(handle), 0o755); err != nil {
		return nil, err
	}
	if err := copyTree(src, st.SnapshotData(handle)); err != nil {
		return nil, err
	}
	meta := &snapshotMeta{SourceVolume: volumeHandle, SizeBytes: size, Block: block, CreatedAt: time.Now()}
	raw, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	return meta, os.WriteFile(st.SnapshotMeta(handle), raw, 0o644)
}

// volumeSize is the restore size: the PV's capacity, or the image size for block volumes.
func (d *Driver) volumeSize(handle, path string, block bool) (int64, error) {
	if block {
		info, err := os.Stat(path)
		if err != nil {
			return 0, err
		}
		return info.Size(), nil
	}
	pv, err := d.volumes.Get(handle)
	if err != nil {
		return 0, fmt.Errorf("volume %s has no PersistentVolume: %w", handle, err)
	}
	size := pv.Spec.Capacity.Storage()
	return size.Value(), nil
}

func (d *Driver) readyDelay(c *snapv1.VolumeSnapshotContent) (time.Duration, error) {
	if c.Spec.VolumeSnapshotClassName == nil {
		return d.opts.SnapshotReadyDelay, nil
	}
	class, err := d.vsclass.Get(*c.Spec.VolumeSnapshotClassName)
	if err != nil {
		return 0, fmt.Errorf("volume snapshot class %s: %w", *c.Spec.VolumeSnapshotClassName, err)
	}
	value, ok := class.Parameters[readyDelayParameter]
	if !ok {
		return d.opts.SnapshotReadyDelay, nil
	}
	delay, err := time.ParseDuration(value)
	if err != nil {
		return 0, fmt.Errorf("volume snapshot class %s has readyDelay %q, which is not a duration like 5s", class.Name, value)
	}
	return delay, nil
}

// markReady flips readyToUse once the content's ready delay has passed.
func (d *Driver) markReady(ctx context.Context, c *snapv1.VolumeSnapshotContent) (time.Duration, error) {
	delay, err := d.readyDelay(c)
	if err != nil {
		return 0, err
	}
	created := time.Unix(0, ptrOr(c.Status.CreationTime, 0))
	if wait := time.Until(created.Add(delay)); wait > 0 {
		return wait, nil
	}
	c = c.DeepCopy()
	c.Status.ReadyToUse = ptr(true)
	_, err = d.snaps.SnapshotV1().VolumeSnapshotContents().UpdateStatus(ctx, c, metav1.UpdateOptions{})
	return 0, err
}

// checkStaticSnapshot fills the status of a pre-provisioned content from the
// snapshot its handle names, or reports that the handle is unknown and looks again later.
func (d *Driver) checkStaticSnapshot(ctx context.Context, c *snapv1.VolumeSnapshotContent) (time.Duration, error) {
	handle := *c.Spec.Source.SnapshotHandle
	c = c.DeepCopy()
	meta, err := readSnapshotMeta(d.opts.Storage, handle)
	retry := time.Duration(0)
	if err != nil {
		msg := err.Error()
		if c.Status != nil && c.Status.Error != nil && ptrOr(c.Status.Error.Message, "") == msg {
			return 5 * time.Second, nil
		}
		c.Status = &snapv1.VolumeSnapshotContentStatus{ReadyToUse: ptr(false),
			Error: &snapv1.VolumeSnapshotError{Time: &metav1.Time{Time: time.Now()}, Message: &msg}}
		retry = 5 * time.Second
	} else {
		c.Status = &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: &handle, ReadyToUse: ptr(true),
			RestoreSize: &meta.SizeBytes, CreationTime: ptr(meta.CreatedAt.UnixNano())}
	}
	_, err = d.snaps.SnapshotV1().VolumeSnapshotContents().UpdateStatus(ctx, c, metav1.UpdateOptions{})
	return retry, err
}

func readSnapshotMeta(st layout.Storage, handle string) (*snapshotMeta, error) {
	raw, err := os.ReadFile(st.SnapshotMeta(handle))
	if err != nil {
		return nil, fmt.Errorf("snapshot handle %s does not exist in %s", handle, layout.DriverName)
	}
	var meta snapshotMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("snapshot %s has unreadable metadata: %w", handle, err)
	}
	return &meta, nil
}

func (d *Driver) setBeingCreated(ctx context.Context, c *snapv1.VolumeSnapshotContent, on bool) (*snapv1.VolumeSnapshotContent, error) {
	if metav1.HasAnnotation(c.ObjectMeta, annBeingCreated) == on {
		return c, nil
	}
	var value any
	if on {
		value = "yes"
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{annBeingCreated: value}}})
	if err != nil {
		return nil, err
	}
	return d.snaps.SnapshotV1().VolumeSnapshotContents().Patch(ctx, c.Name, types.MergePatchType, patch, metav1.PatchOptions{})
}

func ptr[T any](v T) *T { return &v }
