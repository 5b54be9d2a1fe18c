package csi

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

func TestGroupSnapshot(t *testing.T) {
	c := startDriver(t, 0)
	ctx := context.Background()
	a := c.createVolume(t, "pvc-db", mountCap(), 1<<20, nil)
	b := c.createVolume(t, "pvc-log", blockCap(), 1<<20, nil)
	writeFile(t, filepath.Join(c.driver.opts.Storage.Volume(a.GetVolumeId(), false), "table"), "rows")
	req := &csipb.CreateVolumeGroupSnapshotRequest{Name: "groupsnapshot-1", SourceVolumeIds: []string{b.GetVolumeId(), a.GetVolumeId()},
		Parameters: map[string]string{ReadyDelayParameter: "1m"}}
	resp, err := c.CreateVolumeGroupSnapshot(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	group := resp.GetGroupSnapshot()
	if len(group.GetSnapshots()) != 2 || group.GetReadyToUse() {
		t.Fatalf("a group snapshot with readyDelay 1m: %v", group)
	}
	var ids []string
	var dbSnapshot string
	for _, s := range group.GetSnapshots() {
		if s.GetGroupSnapshotId() != group.GetGroupSnapshotId() {
			t.Fatalf("member %s does not name its group", s.GetSnapshotId())
		}
		// csi-snapshotter copies a member's readiness once: a member must be ready when cut
		if !s.GetReadyToUse() {
			t.Fatalf("member %s is not ready", s.GetSnapshotId())
		}
		if s.GetSourceVolumeId() == a.GetVolumeId() {
			dbSnapshot = s.GetSnapshotId()
		}
		ids = append(ids, s.GetSnapshotId())
	}

	c.driver.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	again, err := c.CreateVolumeGroupSnapshot(ctx, req)
	if err != nil || again.GetGroupSnapshot().GetGroupSnapshotId() != group.GetGroupSnapshotId() || !again.GetGroupSnapshot().GetReadyToUse() {
		t.Fatalf("repeating CreateVolumeGroupSnapshot after the delay (the csi-snapshotter's poll): %v %v", again, err)
	}
	_, err = c.CreateVolumeGroupSnapshot(ctx, &csipb.CreateVolumeGroupSnapshotRequest{Name: "groupsnapshot-1", SourceVolumeIds: []string{a.GetVolumeId()}})
	wantCode(t, err, codes.AlreadyExists, "the same group name over other volumes")
	_, err = c.CreateVolumeGroupSnapshot(ctx, &csipb.CreateVolumeGroupSnapshotRequest{Name: "groupsnapshot-2", SourceVolumeIds: []string{a.GetVolumeId(), "pvc-missing"}})
	wantCode(t, err, codes.NotFound, "a group with a missing volume")

	got, err := c.GetVolumeGroupSnapshot(ctx, &csipb.GetVolumeGroupSnapshotRequest{GroupSnapshotId: group.GetGroupSnapshotId(), SnapshotIds: ids})
	if err != nil || len(got.GetGroupSnapshot().GetSnapshots()) != 2 {
		t.Fatalf("GetVolumeGroupSnapshot: %v %v", got, err)
	}
	_, err = c.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: dbSnapshot})
	wantCode(t, err, codes.FailedPrecondition, "deleting one member of a group")

	restored := c.createVolume(t, "pvc-db-restored", mountCap(), 1<<20, sourceSnapshot(dbSnapshot))
	if got := readFile(t, filepath.Join(c.driver.opts.Storage.Volume(restored.GetVolumeId(), false), "table")); got != "rows" {
		t.Fatalf("the volume from a member snapshot holds %q", got)
	}

	_, err = c.DeleteVolumeGroupSnapshot(ctx, &csipb.DeleteVolumeGroupSnapshotRequest{GroupSnapshotId: group.GetGroupSnapshotId(), SnapshotIds: ids[:1]})
	wantCode(t, err, codes.InvalidArgument, "deleting a group with a wrong member list")
	if _, err := c.DeleteVolumeGroupSnapshot(ctx, &csipb.DeleteVolumeGroupSnapshotRequest{GroupSnapshotId: group.GetGroupSnapshotId(), SnapshotIds: ids}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := os.Stat(c.driver.opts.Storage.Snapshot(id)); !os.IsNotExist(err) {
			t.Fatalf("deleting the group left member %s: %v", id, err)
		}
	}
	_, err = c.GetVolumeGroupSnapshot(ctx, &csipb.GetVolumeGroupSnapshotRequest{GroupSnapshotId: group.GetGroupSnapshotId()})
	wantCode(t, err, codes.NotFound, "a deleted group")
}
