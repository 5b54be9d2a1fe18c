package csi

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"ferry.dev/cluster/internal/layout"
)

// client is one driver process (controller and node-1) reached over its real socket.
type client struct {
	csipb.IdentityClient
	csipb.ControllerClient
	csipb.GroupControllerClient
	csipb.SnapshotMetadataClient
	csipb.NodeClient
	driver   *Driver
	root     string
	endpoint string
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the CSI driver's tests mount and attach loop devices: run them as root (the cluster in a box needs root too)")
	}
}

// startDriver serves a driver on a socket in a temporary folder until the test ends.
func startDriver(t *testing.T, delay time.Duration) *client {
	t.Helper()
	requireRoot(t)
	dir := t.TempDir()
	opts := Options{Storage: layout.Storage{Root: filepath.Join(dir, "storage")}, NodeID: "node-1", Controller: true, SnapshotReadyDelay: delay}
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "unix://" + filepath.Join(dir, "csi.sock")
	l, _, err := Listen(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, l) }()
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return &client{
		IdentityClient: csipb.NewIdentityClient(conn), ControllerClient: csipb.NewControllerClient(conn),
		GroupControllerClient: csipb.NewGroupControllerClient(conn), SnapshotMetadataClient: csipb.NewSnapshotMetadataClient(conn),
		NodeClient: csipb.NewNodeClient(conn), driver: d, root: opts.Storage.Root, endpoint: endpoint,
	}
}

func mountCap() *csipb.VolumeCapability {
	return &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
}

func blockCap() *csipb.VolumeCapability {
	return &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
}

func (c *client) createVolume(t *testing.T, name string, capability *csipb.VolumeCapability, size int64, src *csipb.VolumeContentSource) *csipb.Volume {
	t.Helper()
	resp, err := c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: name,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: size}, VolumeCapabilities: []*csipb.VolumeCapability{capability},
		VolumeContentSource: src})
	if err != nil {
		t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return resp.GetVolume()
}

func (c *client) snapshot(t *testing.T, name, volume string, params map[string]string) *csipb.Snapshot {
	t.Helper()
	resp, err := c.CreateSnapshot(context.Background(), &csipb.CreateSnapshotRequest{Name: name, SourceVolumeId: volume, Parameters: params})
	if err != nil {
		t.Fatalf("CreateSnapshot %s: %v", name, err)
	}
	return resp.GetSnapshot()
}

// publish publishes a volume at a fresh target under the test's folder and unpublishes it when the test ends.
func (c *client) publish(t *testing.T, volume string, capability *csipb.VolumeCapability, readOnly bool) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), "target")
	if _, err := c.NodePublishVolume(context.Background(), &csipb.NodePublishVolumeRequest{VolumeId: volume, TargetPath: target,
		VolumeCapability: capability, Readonly: readOnly}); err != nil {
		t.Fatalf("NodePublishVolume %s: %v", volume, err)
	}
	t.Cleanup(func() { c.unpublish(t, volume, target) })
	return target
}

func (c *client) unpublish(t *testing.T, volume, target string) {
	t.Helper()
	if _, err := c.NodeUnpublishVolume(context.Background(), &csipb.NodeUnpublishVolumeRequest{VolumeId: volume, TargetPath: target}); err != nil {
		t.Errorf("NodeUnpublishVolume %s: %v", volume, err)
	}
}

func sourceSnapshot(id string) *csipb.VolumeContentSource {
	return &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

func sourceVolume(id string) *csipb.VolumeContentSource {
	return &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Volume{Volume: &csipb.VolumeContentSource_VolumeSource{VolumeId: id}}}
}

func wantCode(t *testing.T, err error, code codes.Code, what string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: want %s, got %v", what, code, err)
	}
}
