package nodeagent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/kubernetes/pkg/api/v1/resource"
	"k8s.io/kubernetes/pkg/fieldpath"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// containerEnv resolves a container's environment as a kubelet does:
// service variables first, then envFrom, then env, with $(VAR) expanded
// against what came before.
func (w *podWorker) containerEnv(ctx context.Context, c *corev1.Container, profile imageProfile) ([]string, map[string]string, error) {
	pod := w.currentPod()
	values := map[string]string{}
	var order []string
	set := func(name, value string) {
		if _, seen := values[name]; !seen {
			order = append(order, name)
		}
		values[name] = value
	}
	for _, kv := range w.agent.serviceEnv() {
		set(kv[0], kv[1])
	}
	for _, from := range c.EnvFrom {
		data, err := w.envFromSource(ctx, pod.Namespace, from)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range data {
			set(from.Prefix+k, v)
		}
	}
	for _, e := range c.Env {
		value, err := w.envValue(ctx, pod, c, e, values)
		if err != nil {
			return nil, nil, err
		}
		set(e.Name, value)
	}
	if _, ok := values["PATH"]; !ok {
		set("PATH", profile.path)
	}
	if _, ok := values["HOSTNAME"]; !ok {
		set("HOSTNAME", pod.Name)
	}
	if _, ok := values["HOME"]; !ok {
		set("HOME", homeFor(c, pod))
	}
	env := make([]string, 0, len(order))
	for _, name := range order {
		env = append(env, name+"="+values[name])
	}
	return env, values, nil
}

func homeFor(c *corev1.Container, pod *corev1.Pod) string {
	if uid := runAsUser(c, pod); uid != nil && *uid != 0 {
		return "/"
	}
	return "/root"
}

// envValue resolves one variable; a literal value expands $(VAR) against the
// variables defined before it.
func (w *podWorker) envValue(ctx context.Context, pod *corev1.Pod, c *corev1.Container, e corev1.EnvVar, earlier map[string]string) (string, error) {
	if e.ValueFrom == nil {
		return expansion.Expand(e.Value, expansion.MappingFuncFor(earlier)), nil
	}
	from := e.ValueFrom
	switch {
	case from.FieldRef != nil:
		return podFieldValue(pod, from.FieldRef.FieldPath)
	case from.ResourceFieldRef != nil:
		name := from.ResourceFieldRef.ContainerName
		if name == "" {
			name = c.Name
		}
		return resourcehelper.ExtractResourceValueByContainerNameAndNodeAllocatable(from.ResourceFieldRef, pod, name, nodeAllocatable)
	case from.SecretKeyRef != nil:
		return w.keyRef(ctx, pod.Namespace, "secret", from.SecretKeyRef.Name, from.SecretKeyRef.Key, from.SecretKeyRef.Optional)
	case from.ConfigMapKeyRef != nil:
		return w.keyRef(ctx, pod.Namespace, "configmap", from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Key, from.ConfigMapKeyRef.Optional)
	}
	return "", fmt.Errorf("environment variable %s has a valueFrom the box does not support", e.Name)
}

// podFieldValue answers the downward API field paths a kubelet answers.
func podFieldValue(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.podIP", "status.hostIPs", "status.podIPs":
		return nodeIP, nil
	}
	return fieldpath.ExtractFieldPathAsString(pod, path)
}

func (w *podWorker) keyRef(ctx context.Context, ns, kind, name, key string, optional *bool) (string, error) {
	data, err := w.agent.objectData(ctx, ns, kind, name)
	if err != nil {
		if optional != nil && *optional {
			return "", nil
		}
		return "", err
	}
	value, ok := data[key]
	if !ok && (optional == nil || !*optional) {
		return "", fmt.Errorf("%s %s/%s has no key %s", kind, ns, name, key)
	}
	return value, nil
}

func (w *podWorker) envFromSource(ctx context.Context, ns string, from corev1.EnvFromSource) (map[string]string, error) {
	kind, name, optional := "configmap", "", (*bool)(nil)
	if from.ConfigMapRef != nil {
		name, optional = from.ConfigMapRef.Name, from.ConfigMapRef.Optional
	} else if from.SecretRef != nil {
		kind, name, optional = "secret", from.SecretRef.Name, from.SecretRef.Optional
	}
	data, err := w.agent.objectData(ctx, ns, kind, name)
	if err != nil && optional != nil && *optional {
		return nil, nil
	}
	return data, err
}

// expandAll expands $(VAR) references in command and args with the container's env.
func expandAll(list []string, env map[string]string) []string {
	mapping := expansion.MappingFuncFor(env)
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = expansion.Expand(s, mapping)
	}
	return out
}

// objectData reads a Secret's or ConfigMap's data as strings.
func (a *Agent) objectData(ctx context.Context, ns, kind, name string) (map[string]string, error) {
	out := map[string]string{}
	if kind == "secret" {
		s, err := a.kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		for k, v := range s.Data {
			out[k] = string(v)
		}
		for k, v := range s.StringData {
			out[k] = v
		}
		return out, nil
	}
	cm, err := a.kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	for k, v := range cm.Data {
		out[k] = v
	}
	for k, v := range cm.BinaryData {
		out[k] = string(v)
	}
	return out, nil
}
