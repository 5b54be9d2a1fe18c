package storage

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"ferry.dev/cluster/internal/layout"
)

// Annotations and finalizers shared with kube-controller-manager, the
// scheduler and external-provisioner, by their published names.
const (
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	annSelectedNode           = "volume.kubernetes.io/selected-node"
	annProvisionedBy          = "pv.kubernetes.io/provisioned-by"
	provisionerFinalizer      = "external-provisioner.volume.kubernetes.io/finalizer"
	hostnameLabel             = "kubernetes.io/hostname"
)

// syncClaim provisions a PV for a pending claim addressed to this driver.
func (d *Driver) syncClaim(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	claim, err := d.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil || !addressedToUs(claim) {
		return 0, nil
	}
	pvName := "pvc-" + string(claim.UID)
	if _, err := d.volumes.Get(pvName); err == nil {
		return 0, nil // provisioned already; the PV controller finishes the binding
	}
	class, err := d.classes.Get(ptrOr(claim.Spec.StorageClassName, ""))
	if err != nil {
		return 0, fmt.Errorf("storage class of claim %s: %w", key, err)
	}
	node, err := d.claimNode(claim, class)
	if node == "" || err != nil {
		return time.Second, err
	}
	source, wait, err := d.claimSource(claim)
	if err != nil {
		d.recorder.Event(claim, corev1.EventTypeWarning, "ProvisioningFailed", err.Error())
		return 0, err
	}
	if wait {
		return 2 * time.Second, nil
	}
	d.recorder.Eventf(claim, corev1.EventTypeNormal, "Provisioning", "External provisioner is provisioning volume for claim %q", key)
	block := claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock
	size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if err := d.createData(pvName, block, size.Value(), source); err != nil {
		d.recorder.Event(claim, corev1.EventTypeWarning, "ProvisioningFailed", err.Error())
		return 0, err
	}
	pv := newVolume(pvName, claim, class, node, size)
	if _, err := d.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	d.recorder.Eventf(claim, corev1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume %s", pvName)
	return 0, nil
}

func addressedToUs(claim *corev1.PersistentVolumeClaim) bool {
	p := claim.Annotations[annStorageProvisioner]
	if p == "" {
		p = claim.Annotations[annBetaStorageProvisioner]
	}
	return p == layout.DriverName
}

// claimNode is the node the volume will live on: the scheduler's choice for
// WaitForFirstConsumer, otherwise a node picked by the claim's UID.
func (d *Driver) claimNode(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) (string, error) {
	if class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
		return claim.Annotations[annSelectedNode], nil
	}
	nodes, err := d.nodes.List(labels.Everything())
	if err != nil || len(nodes) == 0 {
		return "", err
	}
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	h := fnv.New32a()
	_, _ = h.Write([]byte(claim.UID))
	return names[int(h.Sum32())%len(names)], nil
}

// dataSource is where a new volume's initial content comes from: a path
// holding a directory or an image file, or "" for an empty volume.
type dataSource struct {
	path  string
	block bool
}

// claimSource resolves the claim's dataSourceRef/dataSource. wait is true when
// the source exists but is not usable yet (snapshot not ready, claim unbound).
func (d *Driver) claimSource(claim *corev1.PersistentVolumeClaim) (src dataSource, wait bool, err error) {
	ref := claim.Spec.DataSourceRef
	if ref == nil && claim.Spec.DataSource != nil {
		ref = &corev1.TypedObjectReference{APIGroup: claim.Spec.DataSource.APIGroup,
			Kind: claim.Spec.DataSource.Kind, Name: claim.Spec.DataSource.Name}
	}
	if ref == nil {
		return dataSource{}, false, nil
	}
	switch ref.Kind {
	case "VolumeSnapshot":
		return d.snapshotSource(claim.Namespace, ref.Name)
	case "PersistentVolumeClaim":
		return d.cloneSource(claim.Namespace, ref.Name)
	}
	return dataSource{}, false, fmt.Errorf("data source kind %s is not supported by %s", ref.Kind, layout.DriverName)
}

func (d *Driver) snapshotSource(ns, name string) (dataSource, bool, error) {
	vs, err := d.vs.VolumeSnapshots(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return dataSource{}, true, nil
	}
	if err != nil {
		return dataSource{}, false, err
	}
	if vs.Status == nil || vs.Status.ReadyToUse == nil || !*vs.Status.ReadyToUse || vs.Status.BoundVolumeSnapshotContentName == nil {
		return dataSource{}, true, nil
	}
	content, err := d.vsc.Get(*vs.Status.BoundVolumeSnapshotContentName)
	if err != nil {
		return dataSource{}, true, nil
	}
	if notOurs(content.Spec.Driver) || content.Status == nil || content.Status.SnapshotHandle == nil {
		return dataSource{}, false, fmt.Errorf("volume snapshot %s/%s is not a snapshot of %s", ns, name, layout.DriverName)
	}
	meta, err := readSnapshotMeta(d.opts.Storage, *content.Status.SnapshotHandle)
	if err != nil {
		return dataSource{}, false, err
	}
	return dataSource{path: d.opts.Storage.SnapshotData(*content.Status.SnapshotHandle), block: meta.Block}, false, nil
}

func (d *Driver) cloneSource(ns, name string) (dataSource, bool, error) {
	src, err := d.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && src.Spec.VolumeName == "") {
		return dataSource{}, true, nil
	}
	if err != nil {
		return dataSource{}, false, err
	}
	pv, err := d.volumes.Get(src.Spec.VolumeName)
	if err != nil {
		return dataSource{}, true, nil
	}
	if pv.Spec.CSI == nil || notOurs(pv.Spec.CSI.Driver) {
		return dataSource{}, false, fmt.Errorf("claim %s/%s is not a volume of %s and cannot be cloned", ns, name, layout.DriverName)
	}
	handle := pv.Spec.CSI.VolumeHandle
	block := d.opts.Storage.IsBlockVolume(handle)
	return dataSource{path: d.opts.Storage.Volume(handle, block), block: block}, false, nil
}

// createData makes the volume's directory or sparse image file, copying the
// source first when there is one. A leftover from an interrupted attempt is replaced.
func (d *Driver) createData(handle string, block bool, size int64, src dataSource) error {
	path := d.opts.Storage.Volume(handle, block)
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	if src.path != "" {
		if src.block != block {
			return fmt.Errorf("the data source is a %s volume and the claim asks for a %s volume", modeName(src.block), modeName(block))
		}
		if err := copyTree(src.path, path); err != nil {
			return err
		}
	} else if !block {
		return os.Mkdir(path, 0o755)
	}
	if !block {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if info != nil && info.Size() >= size {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(size)
}

func modeName(block bool) string {
	if block {
		return "Block"
	}
	return "Filesystem"
}

func newVolume(name string, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, node string, size resource.Quantity) *corev1.PersistentVolume {
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	mode := corev1.PersistentVolumeFilesystem
	fsType := "ext4"
	if claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock {
		mode, fsType = corev1.PersistentVolumeBlock, ""
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{annProvisionedBy: layout.DriverName},
			Finalizers:  []string{provisionerFinalizer},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              class.Name,
			MountOptions:                  class.MountOptions,
			VolumeMode:                    &mode,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: layout.DriverName, VolumeHandle: name, FSType: fsType,
			}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
				}}}},
			}},
		},
	}
}

func ptrOr[T any](p *T, fallback T) T {
	if p == nil {
		return fallback
	}
	return *p
}

func removeString(list []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x == s })
}
