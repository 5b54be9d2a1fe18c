// Package csi is the box's storage driver as a real CSI plugin: Identity,
// Controller, GroupController, SnapshotMetadata and Node services over gRPC on
// a unix socket, driven by the real sidecars (external-provisioner,
// csi-snapshotter, csi-snapshot-metadata) and the kubelet. Volumes are
// directories, or sparse image files for block volumes, under one storage
// root shared by every node of the box (one host), with topology pinning each
// volume to the node it was created for; snapshots are reflink-or-copy.
package csi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"k8s.io/klog/v2"

	"ferry.dev/cluster/internal/layout"
)

// TopologyKey is the topology segment every volume and node carries: the node's name.
const TopologyKey = "topology." + layout.DriverName + "/node"

// Options configure one driver process.
type Options struct {
	// Storage is where volumes and snapshots live (shared by all nodes of the box).
	Storage layout.Storage
	// NodeID is the node this process serves as a Node plugin; empty for a controller-only process.
	NodeID string
	// Controller serves the Controller, GroupController and SnapshotMetadata services.
	Controller bool
	// SnapshotReadyDelay is how long a new snapshot reports ready_to_use=false; the
	// snapshot parameter "readyDelay" (VolumeSnapshotClass parameters) overrides it.
	SnapshotReadyDelay time.Duration
	// Version is reported by GetPluginInfo.
	Version string
}

// Driver implements the CSI services.
type Driver struct {
	csipb.UnimplementedIdentityServer
	csipb.UnimplementedControllerServer
	csipb.UnimplementedGroupControllerServer
	csipb.UnimplementedSnapshotMetadataServer
	csipb.UnimplementedNodeServer

	opts Options
	// mu serialises the controller's changes to the store, so that the checks
	// of an idempotent create and the create itself are one step.
	mu  sync.Mutex
	now func() time.Time
}

// New makes a driver after checking its options.
func New(opts Options) (*Driver, error) {
	if opts.Storage.Root == "" {
		return nil, errors.New("the storage root is required")
	}
	if !opts.Controller && opts.NodeID == "" {
		return nil, errors.New("serve the controller, a node (its node ID), or both")
	}
	if opts.SnapshotReadyDelay < 0 {
		return nil, fmt.Errorf("the snapshot ready delay %s is negative", opts.SnapshotReadyDelay)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if err := opts.Storage.Ensure(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(groupsDir(opts.Storage), 0o755); err != nil {
		return nil, err
	}
	return &Driver{opts: opts, now: time.Now}, nil
}

// Register adds the services this process serves to a gRPC server.
func (d *Driver) Register(s *grpc.Server) {
	csipb.RegisterIdentityServer(s, d)
	if d.opts.Controller {
		csipb.RegisterControllerServer(s, d)
		csipb.RegisterGroupControllerServer(s, d)
		csipb.RegisterSnapshotMetadataServer(s, d)
	}
	if d.opts.NodeID != "" {
		csipb.RegisterNodeServer(s, d)
	}
}

// Listen opens a unix socket at endpoint (a path or unix:// URL), replacing a stale one.
func Listen(endpoint string) (net.Listener, string, error) {
	path := strings.TrimPrefix(endpoint, "unix://")
	if !filepath.IsAbs(path) {
		return nil, "", fmt.Errorf("endpoint %q is not an absolute unix socket path (unix:///path/csi.sock)", endpoint)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, "", err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, "", err
	}
	l, err := net.Listen("unix", path)
	return l, path, err
}

// Serve serves the driver on a listener (see Listen) until ctx ends.
func (d *Driver) Serve(ctx context.Context, l net.Listener) error {
	s := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	d.Register(s)
	go func() {
		<-ctx.Done()
		s.GracefulStop()
	}()
	klog.InfoS("CSI driver serving", "endpoint", l.Addr().String(), "node", d.opts.NodeID, "controller", d.opts.Controller)
	return s.Serve(l)
}

// logCalls logs every failed call, so the box's log says why a sidecar retries.
func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err != nil {
		klog.InfoS("CSI call failed", "method", info.FullMethod, "err", err)
	} else {
		klog.V(4).InfoS("CSI call", "method", info.FullMethod)
	}
	return resp, err
}
