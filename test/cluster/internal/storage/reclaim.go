package storage

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// syncVolume honours the reclaim policy of a PV this driver provisioned: with
// Delete, a released (or deleted, unbound) PV loses its data and then its
// object; with Retain the data stays and only the driver's finalizer goes.
func (d *Driver) syncVolume(ctx context.Context, name string) (time.Duration, error) {
	pv, err := d.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if notOurs(pv.Annotations[annProvisionedBy]) || pv.Spec.CSI == nil {
		return 0, nil
	}
	deleting := pv.DeletionTimestamp != nil
	unbound := pv.Status.Phase == corev1.VolumeReleased || pv.Status.Phase == corev1.VolumeFailed ||
		(deleting && pv.Status.Phase != corev1.VolumeBound)
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		if deleting {
			return 0, d.dropVolumeFinalizer(ctx, pv)
		}
		return 0, nil
	}
	if !unbound {
		return 0, nil
	}
	handle := pv.Spec.CSI.VolumeHandle
	if err := os.RemoveAll(d.opts.Storage.Volume(handle, d.opts.Storage.IsBlockVolume(handle))); err != nil {
		return 0, err
	}
	if err := d.dropVolumeFinalizer(ctx, pv); err != nil {
		return 0, err
	}
	if !deleting {
		err := d.kube.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pv.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
	}
	return 0, nil
}

func (d *Driver) dropVolumeFinalizer(ctx context.Context, pv *corev1.PersistentVolume) error {
	if !slices.Contains(pv.Finalizers, provisionerFinalizer) {
		return nil
	}
	patch, err := finalizersPatch(pv.ResourceVersion, removeString(pv.Finalizers, provisionerFinalizer))
	if err != nil {
		return err
	}
	_, err = d.kube.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// finalizersPatch replaces the finalizer list, guarded by the resource version
// so a concurrent change is retried rather than overwritten.
func finalizersPatch(resourceVersion string, finalizers []string) ([]byte, error) {
	if finalizers == nil {
		finalizers = []string{}
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion, "finalizers": finalizers,
	}})
}
