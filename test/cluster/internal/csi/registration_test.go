package csi

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"ferry.dev/cluster/internal/layout"
)

// The kubelet's plugin watcher dials the socket in plugins_registry, asks
// GetInfo, then reports its verdict; this test plays the kubelet's part.
func TestRegistrationAnswersTheKubelet(t *testing.T) {
	dir := t.TempDir()
	r := &Registrar{CSIEndpoint: "/var/lib/kubelet/plugins/local.csi.ferry.dev/csi.sock"}
	l, _, err := Listen(RegistrationSocket(dir))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx, l) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	conn, err := grpc.NewClient("unix://"+RegistrationSocket(dir), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	kubelet := registerapi.NewRegistrationClient(conn)
	info, err := kubelet.GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetType() != registerapi.CSIPlugin || info.GetName() != layout.DriverName || info.GetEndpoint() != r.CSIEndpoint ||
		len(info.GetSupportedVersions()) == 0 {
		t.Fatalf("GetInfo: %v", info)
	}
	if _, err := kubelet.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: false, Error: "version 0.9 unsupported"}); err != nil {
		t.Fatal(err)
	}
	if s := r.Status(); s == nil || s.GetPluginRegistered() || s.GetError() != "version 0.9 unsupported" {
		t.Fatalf("the kubelet's refusal was not kept: %v", s)
	}
}
