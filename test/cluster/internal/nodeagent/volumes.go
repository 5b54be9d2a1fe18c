package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ferry.dev/cluster/internal/layout"
)

// podVolume is a pod volume made ready on the host.
type podVolume struct {
	path     string // directory, file, or block device node
	readOnly bool
}

// errNotReady means a volume depends on something not there yet (an unbound
// claim); the pod stays in ContainerCreating and the agent tries again.
var errNotReady = errors.New("volume not ready")

// prepareVolumes makes every pod volume available under the pod folder (or
// names the host path that backs it).
func (w *podWorker) prepareVolumes(ctx context.Context) (map[string]*podVolume, error) {
	pod := w.currentPod()
	out := map[string]*podVolume{}
	for _, v := range pod.Spec.Volumes {
		vol, err := w.prepareVolume(ctx, pod, v)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		out[v.Name] = vol
	}
	if err := w.applyFSGroup(pod, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (w *podWorker) prepareVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume) (*podVolume, error) {
	dir := filepath.Join(w.dir, "volumes", v.Name)
	src := v.VolumeSource
	switch {
	case src.PersistentVolumeClaim != nil:
		return w.claimVolume(ctx, pod, v.Name, src.PersistentVolumeClaim.ClaimName, src.PersistentVolumeClaim.ReadOnly)
	case src.Ephemeral != nil:
		return w.claimVolume(ctx, pod, v.Name, pod.Name+"-"+v.Name, false)
	case src.EmptyDir != nil:
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, err
		}
		return &podVolume{path: dir}, os.Chmod(dir, 0o777) // world-writable as a kubelet makes it, whatever the umask
	case src.HostPath != nil:
		return hostPathVolume(src.HostPath)
	case src.ConfigMap != nil, src.Secret != nil, src.DownwardAPI != nil, src.Projected != nil:
		files, err := w.projectedFiles(ctx, pod, src)
		if err != nil {
			return nil, err
		}
		return &podVolume{path: dir, readOnly: true}, writeFiles(dir, files)
	}
	return nil, fmt.Errorf("this volume type is not emulated by the box")
}

func hostPathVolume(src *corev1.HostPathVolumeSource) (*podVolume, error) {
	if src.Type != nil && *src.Type == corev1.HostPathDirectoryOrCreate {
		if err := os.MkdirAll(src.Path, 0o755); err != nil {
			return nil, err
		}
	}
	return &podVolume{path: src.Path}, nil
}

// claimVolume resolves a PVC to the host data of its PV. Block volumes are
// attached to a loop device, so the container sees a real block device.
func (w *podWorker) claimVolume(ctx context.Context, pod *corev1.Pod, volume, claimName string, readOnly bool) (*podVolume, error) {
	claim, err := w.agent.kube.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, claimName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w: %v", claimName, errNotReady, err)
	}
	if claim.Spec.VolumeName == "" || claim.Status.Phase != corev1.ClaimBound {
		return nil, fmt.Errorf("claim %s is not bound yet: %w", claimName, errNotReady)
	}
	pv, err := w.agent.kube.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("volume %s of claim %s: %w: %v", claim.Spec.VolumeName, claimName, errNotReady, err)
	}
	block := pv.Spec.VolumeMode != nil && *pv.Spec.VolumeMode == corev1.PersistentVolumeBlock
	readOnly = readOnly || isReadOnlyMany(claim)
	var path string
	switch {
	case pv.Spec.CSI != nil && pv.Spec.CSI.Driver == layout.DriverName:
		path = w.agent.storage.Volume(pv.Spec.CSI.VolumeHandle, block)
	case pv.Spec.HostPath != nil:
		path = pv.Spec.HostPath.Path
	case pv.Spec.Local != nil:
		path = pv.Spec.Local.Path
	default:
		return nil, fmt.Errorf("persistent volume %s has a source the box cannot mount", pv.Name)
	}
	if !block {
		return &podVolume{path: path, readOnly: readOnly}, nil
	}
	device, err := w.attachLoop(path, volume, readOnly)
	if err != nil {
		return nil, err
	}
	return &podVolume{path: device, readOnly: readOnly}, nil
}

func isReadOnlyMany(claim *corev1.PersistentVolumeClaim) bool {
	return len(claim.Spec.AccessModes) == 1 && claim.Spec.AccessModes[0] == corev1.ReadOnlyMany
}

// attachLoop attaches an image file to a free loop device and remembers it for detach.
func (w *podWorker) attachLoop(image, volume string, readOnly bool) (string, error) {
	w.mu.Lock()
	device, ok := w.loops[volume]
	w.mu.Unlock()
	if ok {
		return device, nil
	}
	args := []string{"--find", "--show"}
	if readOnly {
		args = append(args, "--read-only")
	}
	out, err := exec.Command("losetup", append(args, image)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("attaching %s to a loop device: %v: %s", image, err, out)
	}
	device = strings.TrimSpace(string(out))
	w.mu.Lock()
	w.loops[volume] = device
	w.mu.Unlock()
	return device, nil
}

func (w *podWorker) detachLoops() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for volume, device := range w.loops {
		if out, err := exec.Command("losetup", "--detach", device).CombinedOutput(); err != nil {
			w.logf("detaching %s: %v: %s", device, err, out)
		}
		delete(w.loops, volume)
	}
}

// applyFSGroup gives the pod's fsGroup ownership of its writable volumes, as a
// kubelet does for drivers with fsGroupPolicy File.
func (w *podWorker) applyFSGroup(pod *corev1.Pod, vols map[string]*podVolume) error {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.FSGroup == nil {
		return nil
	}
	gid := int(*sc.FSGroup)
	for _, v := range pod.Spec.Volumes {
		pv := vols[v.Name]
		if pv == nil || v.HostPath != nil || strings.HasPrefix(pv.path, "/dev/") {
			continue
		}
		err := filepath.Walk(pv.path, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if err := os.Lchown(p, -1, gid); err != nil {
				return err
			}
			if info.Mode()&os.ModeSymlink != 0 {
				return nil
			}
			mode := info.Mode() | 0o060
			if info.IsDir() {
				mode |= os.ModeSetgid | 0o010
			}
			return os.Chmod(p, mode)
		})
		if err != nil {
			return fmt.Errorf("applying fsGroup %d to volume %s: %w", gid, v.Name, err)
		}
	}
	return nil
}
