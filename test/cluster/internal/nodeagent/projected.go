package nodeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/kubernetes/pkg/api/v1/resource"
	"k8s.io/kubernetes/pkg/fieldpath"
)

// projectedFile is one file of a configMap, secret, downwardAPI or projected volume.
type projectedFile struct {
	data []byte
	mode os.FileMode
}

const defaultFileMode = 0o644

// projectedFiles computes the files of a configMap, secret, downwardAPI or
// projected volume source. Service-account tokens are requested through the
// TokenRequest API for the pod's own ServiceAccount, bound to the pod.
func (w *podWorker) projectedFiles(ctx context.Context, pod *corev1.Pod, src corev1.VolumeSource) (map[string]projectedFile, error) {
	files := map[string]projectedFile{}
	mode := func(m *int32) os.FileMode {
		if m == nil {
			return defaultFileMode
		}
		return os.FileMode(*m)
	}
	var err error
	switch {
	case src.ConfigMap != nil:
		err = w.keyFiles(ctx, files, pod.Namespace, "configmap", src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, mode(src.ConfigMap.DefaultMode))
	case src.Secret != nil:
		err = w.keyFiles(ctx, files, pod.Namespace, "secret", src.Secret.SecretName, src.Secret.Items, src.Secret.Optional, mode(src.Secret.DefaultMode))
	case src.DownwardAPI != nil:
		err = downwardFiles(files, pod, src.DownwardAPI.Items, mode(src.DownwardAPI.DefaultMode))
	case src.Projected != nil:
		err = w.projectedSources(ctx, files, pod, src.Projected.Sources, mode(src.Projected.DefaultMode))
	}
	return files, err
}

func (w *podWorker) projectedSources(ctx context.Context, files map[string]projectedFile, pod *corev1.Pod, sources []corev1.VolumeProjection, mode os.FileMode) error {
	for _, s := range sources {
		var err error
		switch {
		case s.ConfigMap != nil:
			err = w.keyFiles(ctx, files, pod.Namespace, "configmap", s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, mode)
		case s.Secret != nil:
			err = w.keyFiles(ctx, files, pod.Namespace, "secret", s.Secret.Name, s.Secret.Items, s.Secret.Optional, mode)
		case s.DownwardAPI != nil:
			err = downwardFiles(files, pod, s.DownwardAPI.Items, mode)
		case s.ServiceAccountToken != nil:
			var token []byte
			token, err = w.issueToken(ctx, pod, s.ServiceAccountToken)
			files[s.ServiceAccountToken.Path] = projectedFile{data: token, mode: mode}
		default:
			err = fmt.Errorf("a projected source type the box does not emulate")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *podWorker) keyFiles(ctx context.Context, files map[string]projectedFile, ns, kind, name string, items []corev1.KeyToPath, optional *bool, mode os.FileMode) error {
	data, err := w.agent.objectData(ctx, ns, kind, name)
	if err != nil {
		if optional != nil && *optional {
			return nil
		}
		return fmt.Errorf("%s %s/%s: %w", kind, ns, name, err)
	}
	if len(items) == 0 {
		for k, v := range data {
			files[k] = projectedFile{data: []byte(v), mode: mode}
		}
		return nil
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok {
			if optional != nil && *optional {
				continue
			}
			return fmt.Errorf("%s %s/%s has no key %s", kind, ns, name, item.Key)
		}
		m := mode
		if item.Mode != nil {
			m = os.FileMode(*item.Mode)
		}
		files[item.Path] = projectedFile{data: []byte(v), mode: m}
	}
	return nil
}

func downwardFiles(files map[string]projectedFile, pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, mode os.FileMode) error {
	for _, item := range items {
		var value string
		var err error
		switch {
		case item.FieldRef != nil && item.FieldRef.FieldPath == "metadata.labels":
			value = fieldpath.FormatMap(pod.Labels)
		case item.FieldRef != nil && item.FieldRef.FieldPath == "metadata.annotations":
			value = fieldpath.FormatMap(pod.Annotations)
		case item.FieldRef != nil:
			value, err = podFieldValue(pod, item.FieldRef.FieldPath)
		case item.ResourceFieldRef != nil:
			value, err = resourcehelper.ExtractResourceValueByContainerNameAndNodeAllocatable(item.ResourceFieldRef, pod, item.ResourceFieldRef.ContainerName, nodeAllocatable)
		}
		if err != nil {
			return fmt.Errorf("downward API file %s: %w", item.Path, err)
		}
		m := mode
		if item.Mode != nil {
			m = os.FileMode(*item.Mode)
		}
		files[item.Path] = projectedFile{data: []byte(value), mode: m}
	}
	return nil
}

// writeFiles writes each file through a temporary name and a rename, so a
// process reading a refreshed token never sees half of it.
func writeFiles(dir string, files map[string]projectedFile) error {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		f := files[name]
		path := filepath.Join(dir, filepath.Clean("/"+name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, f.data, f.mode.Perm()); err != nil {
			return err
		}
		if err := os.Chmod(tmp, f.mode.Perm()); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	return nil
}
