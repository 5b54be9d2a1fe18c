package csi

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"ferry.dev/cluster/internal/layout"
)

// Registrar answers the kubelet's plugin watcher on a socket in its
// plugins_registry folder, the part node-driver-registrar plays in a real
// cluster: it names the driver and the CSI socket the kubelet should use.
type Registrar struct {
	registerapi.UnimplementedRegistrationServer
	// CSIEndpoint is the path of the driver's CSI socket, as the kubelet can reach it.
	CSIEndpoint string

	mu     sync.Mutex
	status *registerapi.RegistrationStatus
}

// RegistrationSocket is where the kubelet looks for this driver in its
// plugins_registry folder (/var/lib/kubelet/plugins_registry by default).
func RegistrationSocket(registryDir string) string {
	return filepath.Join(registryDir, layout.DriverName+"-reg.sock")
}

func (r *Registrar) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: layout.DriverName, Endpoint: r.CSIEndpoint,
		SupportedVersions: []string{"1.0.0"}}, nil
}

// NotifyRegistrationStatus records the kubelet's verdict; a refusal is logged
// with the kubelet's reason, which is the only place that reason appears.
func (r *Registrar) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	r.mu.Lock()
	r.status = s
	r.mu.Unlock()
	if s.GetPluginRegistered() {
		klog.InfoS("Registered with the kubelet", "driver", layout.DriverName, "endpoint", r.CSIEndpoint)
	} else {
		klog.ErrorS(fmt.Errorf("%s", s.GetError()), "The kubelet refused the driver's registration", "driver", layout.DriverName)
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

// Status is the kubelet's last verdict, nil before it gave one.
func (r *Registrar) Status() *registerapi.RegistrationStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Serve serves the registration API on a listener at RegistrationSocket until ctx ends.
func (r *Registrar) Serve(ctx context.Context, l net.Listener) error {
	s := grpc.NewServer()
	registerapi.RegisterRegistrationServer(s, r)
	go func() {
		<-ctx.Done()
		s.GracefulStop()
	}()
	return s.Serve(l)
}
