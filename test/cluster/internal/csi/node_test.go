package csi

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
)

// loopsBacking lists the loop devices whose backing file is image.
func loopsBacking(t *testing.T, image string) []string {
	t.Helper()
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	var out []string
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == image {
			out = append(out, f)
		}
	}
	return out
}

func TestBlockPublishWritesReachTheImageAndUnpublishDetaches(t *testing.T) {
	c := startDriver(t, 0)
	vol := c.createVolume(t, "pvc-block", blockCap(), 8<<20, nil)
	image := c.driver.opts.Storage.Volume(vol.GetVolumeId(), true)
	target := c.publish(t, vol.GetVolumeId(), blockCap(), false)

	if dev := loopDeviceOf(target); dev == "" {
		t.Fatalf("%s is not a loop device after publishing", target)
	}
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte("ferry"), 1000)
	if _, err := f.WriteAt(payload, 3<<20); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c.unpublish(t, vol.GetVolumeId(), target)

	if loops := loopsBacking(t, image); len(loops) != 0 {
		t.Fatalf("unpublishing left loop devices attached to %s: %v", image, loops)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unpublishing left the target %s behind: %v", target, err)
	}
	got := make([]byte, len(payload))
	img, err := os.Open(image)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if _, err := img.ReadAt(got, 3<<20); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("the bytes written through the published device are not in the image (err %v)", err)
	}
	info, _ := img.Stat()
	if info.Size() != 8<<20 {
		t.Fatalf("the image is %d bytes, want the requested 8 MiB", info.Size())
	}
}

func TestReadOnlyPublishRefusesWrites(t *testing.T) {
	c := startDriver(t, 0)
	fsVol := c.createVolume(t, "pvc-ro-fs", mountCap(), 1<<20, nil)
	if err := os.WriteFile(filepath.Join(c.driver.opts.Storage.Volume(fsVol.GetVolumeId(), false), "kept"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := c.publish(t, fsVol.GetVolumeId(), mountCap(), true)
	if _, err := os.ReadFile(filepath.Join(dir, "kept")); err != nil {
		t.Fatalf("a read-only volume must still be readable: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644); !errors.Is(err, unix.EROFS) {
		t.Fatalf("writing into a read-only published directory: want EROFS, got %v", err)
	}

	blockVol := c.createVolume(t, "pvc-ro-block", blockCap(), 1<<20, nil)
	dev := c.publish(t, blockVol.GetVolumeId(), blockCap(), true)
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteAt([]byte("x"), 0)
		if err == nil {
			err = f.Sync()
		}
		f.Close()
	}
	if err == nil {
		t.Fatal("writing to a read-only published block device succeeded")
	}
}

func TestPublishChecksModeAndNode(t *testing.T) {
	c := startDriver(t, 0)
	fsVol := c.createVolume(t, "pvc-fs", mountCap(), 1<<20, nil)
	_, err := c.NodePublishVolume(context.Background(), &csipb.NodePublishVolumeRequest{VolumeId: fsVol.GetVolumeId(),
		TargetPath: filepath.Join(t.TempDir(), "t"), VolumeCapability: blockCap()})
	wantCode(t, err, codes.InvalidArgument, "publishing a filesystem volume as a block device")

	resp, err := c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "pvc-elsewhere",
		VolumeCapabilities:        []*csipb.VolumeCapability{mountCap()},
		AccessibilityRequirements: &csipb.TopologyRequirement{Preferred: []*csipb.Topology{{Segments: map[string]string{TopologyKey: "node-2"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetVolume().GetAccessibleTopology()[0].GetSegments()[TopologyKey]; got != "node-2" {
		t.Fatalf("a volume for the scheduler's node-2 has topology %q", got)
	}
	_, err = c.NodePublishVolume(context.Background(), &csipb.NodePublishVolumeRequest{VolumeId: resp.GetVolume().GetVolumeId(),
		TargetPath: filepath.Join(t.TempDir(), "t"), VolumeCapability: mountCap()})
	wantCode(t, err, codes.FailedPrecondition, "publishing node-2's volume on node-1")

	_, err = c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "pvc-rwx", VolumeCapabilities: []*csipb.VolumeCapability{{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}}})
	wantCode(t, err, codes.InvalidArgument, "a ReadWriteMany volume")

	other := c.createVolume(t, "pvc-other", mountCap(), 1<<20, nil)
	target := c.publish(t, other.GetVolumeId(), mountCap(), false)
	_, err = c.NodePublishVolume(context.Background(), &csipb.NodePublishVolumeRequest{VolumeId: other.GetVolumeId(),
		TargetPath: target, VolumeCapability: mountCap()})
	if err != nil {
		t.Fatalf("publishing a volume again at its own target must succeed: %v", err)
	}
	_, err = c.NodePublishVolume(context.Background(), &csipb.NodePublishVolumeRequest{VolumeId: fsVol.GetVolumeId(),
		TargetPath: target, VolumeCapability: mountCap()})
	wantCode(t, err, codes.AlreadyExists, "publishing a volume where another one is mounted")

	_, err = c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "pvc-huge",
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 62}, VolumeCapabilities: []*csipb.VolumeCapability{blockCap()}})
	wantCode(t, err, codes.OutOfRange, "a block volume larger than a file can be")
	if _, err := os.Stat(c.driver.opts.Storage.Volume("pvc-huge", true)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused block volume left its image: %v", err)
	}
}
