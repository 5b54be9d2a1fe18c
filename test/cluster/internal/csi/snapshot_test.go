package csi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestVolumesFromASnapshotAndFromAVolume(t *testing.T) {
	c := startDriver(t, 0)
	src := c.createVolume(t, "pvc-src", mountCap(), 1<<20, nil)
	dir := c.publish(t, src.GetVolumeId(), mountCap(), false)
	writeFile(t, filepath.Join(dir, "state"), "before")

	snap := c.snapshot(t, "snapshot-1", src.GetVolumeId(), nil)
	if !snap.GetReadyToUse() || snap.GetSourceVolumeId() != src.GetVolumeId() || snap.GetSizeBytes() != 1<<20 {
		t.Fatalf("snapshot: %v", snap)
	}
	writeFile(t, filepath.Join(dir, "state"), "after")

	restored := c.createVolume(t, "pvc-restored", mountCap(), 1<<20, sourceSnapshot(snap.GetSnapshotId()))
	if restored.GetContentSource().GetSnapshot().GetSnapshotId() != snap.GetSnapshotId() {
		t.Fatalf("the volume does not name its source snapshot: %v", restored.GetContentSource())
	}
	if got := readFile(t, filepath.Join(c.publish(t, restored.GetVolumeId(), mountCap(), false), "state")); got != "before" {
		t.Fatalf("the volume from the snapshot holds %q, want the snapshot's %q", got, "before")
	}
	clone := c.createVolume(t, "pvc-clone", mountCap(), 1<<20, sourceVolume(src.GetVolumeId()))
	if got := readFile(t, filepath.Join(c.publish(t, clone.GetVolumeId(), mountCap(), false), "state")); got != "after" {
		t.Fatalf("the clone holds %q, want the source's %q", got, "after")
	}

	_, err := c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "pvc-block-from-fs",
		VolumeCapabilities: []*csipb.VolumeCapability{blockCap()}, VolumeContentSource: sourceSnapshot(snap.GetSnapshotId())})
	wantCode(t, err, codes.InvalidArgument, "a block volume from a filesystem snapshot")
	_, err = c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "pvc-small",
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 10}, VolumeCapabilities: []*csipb.VolumeCapability{mountCap()},
		VolumeContentSource: sourceSnapshot(snap.GetSnapshotId())})
	wantCode(t, err, codes.OutOfRange, "a volume smaller than its snapshot")

	// deleting the source keeps its snapshots: they are copies
	if _, err := c.DeleteVolume(context.Background(), &csipb.DeleteVolumeRequest{VolumeId: clone.GetVolumeId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.driver.opts.Storage.Volume(clone.GetVolumeId(), false)); !os.IsNotExist(err) {
		t.Fatalf("DeleteVolume left the data: %v", err)
	}
}

func TestBlockCloneKeepsTheBytesAndGrows(t *testing.T) {
	c := startDriver(t, 0)
	src := c.createVolume(t, "pvc-block-src", blockCap(), 1<<20, nil)
	image := c.driver.opts.Storage.Volume(src.GetVolumeId(), true)
	f, err := os.OpenFile(image, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("block data"), 4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	clone := c.createVolume(t, "pvc-block-clone", blockCap(), 2<<20, sourceVolume(src.GetVolumeId()))
	raw, err := os.ReadFile(c.driver.opts.Storage.Volume(clone.GetVolumeId(), true))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 2<<20 || string(raw[4096:4106]) != "block data" {
		t.Fatalf("the clone is %d bytes with %q at 4096", len(raw), raw[4096:4106])
	}
}

func TestSnapshotReadyDelay(t *testing.T) {
	c := startDriver(t, 0)
	vol := c.createVolume(t, "pvc-delay", mountCap(), 1<<20, nil)
	snap := c.snapshot(t, "snapshot-slow", vol.GetVolumeId(), map[string]string{ReadyDelayParameter: "1h"})
	if snap.GetReadyToUse() {
		t.Fatal("a snapshot with readyDelay 1h is ready at once")
	}
	_, err := c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "pvc-too-early",
		VolumeCapabilities: []*csipb.VolumeCapability{mountCap()}, VolumeContentSource: sourceSnapshot(snap.GetSnapshotId())})
	wantCode(t, err, codes.Unavailable, "a volume from a snapshot that is not ready")

	c.driver.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	again := c.snapshot(t, "snapshot-slow", vol.GetVolumeId(), map[string]string{ReadyDelayParameter: "1h"})
	if !again.GetReadyToUse() || again.GetSnapshotId() != snap.GetSnapshotId() {
		t.Fatalf("after the delay the repeated CreateSnapshot (the csi-snapshotter's poll) answers %v", again)
	}
	_, err = c.CreateSnapshot(context.Background(), &csipb.CreateSnapshotRequest{Name: "x", SourceVolumeId: vol.GetVolumeId(),
		Parameters: map[string]string{ReadyDelayParameter: "soon"}})
	wantCode(t, err, codes.InvalidArgument, "readyDelay soon")
}

// A snapshot folder written by hand (meta.json without name or ready time)
// is what a pre-provisioned VolumeSnapshotContent names by snapshotHandle: the
// csi-snapshotter checks it with ListSnapshots by ID.
func TestStaticSnapshotByHandle(t *testing.T) {
	c := startDriver(t, 0)
	st := c.driver.opts.Storage
	handle := "snapshot-4d6c0b2e"
	if err := os.MkdirAll(st.SnapshotData(handle), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(st.SnapshotData(handle), "seed"), "velero")
	meta, _ := json.Marshal(map[string]any{"sourceVolume": "pvc-gone", "sizeBytes": 1 << 20, "block": false, "createdAt": time.Now()})
	writeFile(t, st.SnapshotMeta(handle), string(meta))

	list, err := c.ListSnapshots(context.Background(), &csipb.ListSnapshotsRequest{SnapshotId: handle})
	if err != nil || len(list.GetEntries()) != 1 || !list.GetEntries()[0].GetSnapshot().GetReadyToUse() {
		t.Fatalf("ListSnapshots by handle: %v %v", list, err)
	}
	missing, err := c.ListSnapshots(context.Background(), &csipb.ListSnapshotsRequest{SnapshotId: "snapshot-unknown"})
	if err != nil || len(missing.GetEntries()) != 0 {
		t.Fatalf("ListSnapshots of an unknown handle must be empty: %v %v", missing, err)
	}
	vol := c.createVolume(t, "pvc-from-static", mountCap(), 1<<20, sourceSnapshot(handle))
	if got := readFile(t, filepath.Join(c.publish(t, vol.GetVolumeId(), mountCap(), false), "seed")); got != "velero" {
		t.Fatalf("the volume from the static snapshot holds %q", got)
	}
}
