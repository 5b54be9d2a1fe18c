// Package bootstrap applies the box's manifests (CRDs, RBAC, storage classes)
// with server-side apply, in file order, waiting for CRDs to be served before
// the objects that need them.
package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

const fieldManager = "ferrybox-bootstrap"

// Apply applies every YAML document of every file, in order.
func Apply(ctx context.Context, cfg *rest.Config, files []string) error {
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, file := range files {
		docs, err := readDocuments(file)
		if err != nil {
			return err
		}
		for _, obj := range docs {
			if err := applyOne(ctx, client, mapper, obj); err != nil {
				return fmt.Errorf("applying %s %s from %s: %w", obj.GetKind(), obj.GetName(), file, err)
			}
		}
	}
	return nil
}

func readDocuments(file string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	decoder := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var docs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s is not valid YAML: %w", file, err)
		}
		if len(obj.Object) > 0 {
			docs = append(docs, obj)
		}
	}
}

// applyOne retries while the kind is unknown, which happens right after its
// CRD was created and before discovery shows it.
func applyOne(ctx context.Context, client dynamic.Interface, mapper *restmapper.DeferredDiscoveryRESTMapper, obj *unstructured.Unstructured) error {
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			mapper.Reset()
			return false, nil
		}
		if err != nil {
			return false, err
		}
		var target dynamic.ResourceInterface = client.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			target = client.Resource(mapping.Resource).Namespace(ns)
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			return false, err
		}
		force := true
		_, err = target.Patch(ctx, obj.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
		if err != nil {
			return false, err
		}
		if gvk.Kind == "CustomResourceDefinition" {
			return true, waitEstablished(ctx, client, obj.GetName())
		}
		return true, nil
	})
}

func waitEstablished(ctx context.Context, client dynamic.Interface, name string) error {
	crds := client.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		obj, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conditions {
			cond, _ := c.(map[string]any)
			if cond["type"] == "Established" && cond["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}
