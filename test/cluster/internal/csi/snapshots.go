package csi

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ReadyDelayParameter is the snapshot parameter (a VolumeSnapshotClass
// parameter) that overrides the driver's snapshot ready delay, as a Go duration.
const ReadyDelayParameter = "readyDelay"

// copyTree copies a directory tree or an image file to dst, which must not
// exist. coreutils cp clones extents when the filesystem supports reflinks
// (btrfs, xfs), keeps image files sparse and preserves owners, modes and times.
func copyTree(src, dst string) error {
	out, err := exec.Command("cp", "-a", "--reflink=auto", "--sparse=always", src, dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("copying %s to %s failed: %v: %s", src, dst, err, out)
	}
	return nil
}

func (d *Driver) readyDelay(params map[string]string) (time.Duration, error) {
	value, ok := params[ReadyDelayParameter]
	if !ok {
		return d.opts.SnapshotReadyDelay, nil
	}
	delay, err := time.ParseDuration(value)
	if err != nil || delay < 0 {
		return 0, status.Errorf(codes.InvalidArgument, "parameter %s is %q, which is not a duration like 5s", ReadyDelayParameter, value)
	}
	return delay, nil
}

func (d *Driver) ready(s *snapshotRecord) bool { return !d.now().Before(s.ReadyAt) }

func (d *Driver) csiSnapshot(id string, s *snapshotRecord) *csipb.Snapshot {
	return &csipb.Snapshot{SnapshotId: id, SourceVolumeId: s.SourceVolume, SizeBytes: s.SizeBytes,
		CreationTime: timestamppb.New(s.CreatedAt), ReadyToUse: d.ready(s), GroupSnapshotId: s.Group}
}

func (d *Driver) CreateSnapshot(_ context.Context, req *csipb.CreateSnapshotRequest) (*csipb.CreateSnapshotResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if req.GetSourceVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "source_volume_id is required")
	}
	delay, err := d.readyDelay(req.GetParameters())
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id, snap, err := d.takeSnapshot(req.GetName(), req.GetSourceVolumeId(), delay, "")
	if err != nil {
		return nil, err
	}
	return &csipb.CreateSnapshotResponse{Snapshot: d.csiSnapshot(id, snap)}, nil
}

// takeSnapshot copies a volume into a new snapshot, or returns the snapshot an
// earlier call with the same name took of the same volume. The caller holds d.mu.
func (d *Driver) takeSnapshot(name, volumeID string, delay time.Duration, group string) (string, *snapshotRecord, error) {
	id := idFor(name)
	have, found, err := d.snapshot(id)
	if err != nil {
		return "", nil, status.Error(codes.Internal, err.Error())
	}
	if found {
		if have.SourceVolume != volumeID || have.Group != group {
			return "", nil, status.Errorf(codes.AlreadyExists, "snapshot %q exists of volume %q", name, have.SourceVolume)
		}
		return id, have, nil
	}
	vol, found, err := d.volume(volumeID)
	if err != nil {
		return "", nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return "", nil, status.Errorf(codes.NotFound, "source volume %q does not exist", volumeID)
	}
	st := d.opts.Storage
	if err := os.RemoveAll(st.Snapshot(id)); err != nil {
		return "", nil, status.Error(codes.Internal, err.Error())
	}
	if err := os.MkdirAll(st.Snapshot(id), 0o755); err != nil {
		return "", nil, status.Error(codes.Internal, err.Error())
	}
	now := d.now()
	snap := &snapshotRecord{SourceVolume: volumeID, SizeBytes: vol.CapacityBytes, Block: vol.Block, CreatedAt: now,
		Name: name, ReadyAt: now.Add(delay), Group: group}
	err = copyTree(st.Volume(volumeID, vol.Block), st.SnapshotData(id))
	if err == nil {
		err = writeJSON(st.SnapshotMeta(id), snap)
	}
	if err != nil {
		_ = os.RemoveAll(st.Snapshot(id))
		return "", nil, status.Error(codes.Internal, err.Error())
	}
	return id, snap, nil
}

func (d *Driver) DeleteSnapshot(_ context.Context, req *csipb.DeleteSnapshotRequest) (*csipb.DeleteSnapshotResponse, error) {
	id := req.GetSnapshotId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot_id is required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	snap, found, err := d.snapshot(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return &csipb.DeleteSnapshotResponse{}, nil
	}
	if snap.Group != "" {
		if _, inGroup, _ := d.group(snap.Group); inGroup {
			return nil, status.Errorf(codes.FailedPrecondition, "snapshot %q belongs to group snapshot %q; delete the group", id, snap.Group)
		}
	}
	if err := os.RemoveAll(d.opts.Storage.Snapshot(id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csipb.DeleteSnapshotResponse{}, nil
}

// ListSnapshots also answers the csi-snapshotter's check of a pre-provisioned
// VolumeSnapshotContent: a snapshot_id filter that finds nothing is an empty list.
func (d *Driver) ListSnapshots(_ context.Context, req *csipb.ListSnapshotsRequest) (*csipb.ListSnapshotsResponse, error) {
	var ids []string
	if req.GetSnapshotId() != "" {
		ids = []string{req.GetSnapshotId()}
	} else {
		all, err := d.snapshotIDs()
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		ids = all
	}
	var matching []string
	records := map[string]*snapshotRecord{}
	for _, id := range ids {
		snap, found, err := d.snapshot(id)
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if found && (req.GetSourceVolumeId() == "" || snap.SourceVolume == req.GetSourceVolumeId()) {
			matching = append(matching, id)
			records[id] = snap
		}
	}
	page, next, err := paginate(matching, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	resp := &csipb.ListSnapshotsResponse{NextToken: next}
	for _, id := range page {
		resp.Entries = append(resp.Entries, &csipb.ListSnapshotsResponse_Entry{Snapshot: d.csiSnapshot(id, records[id])})
	}
	return resp, nil
}

func (d *Driver) GetSnapshot(_ context.Context, req *csipb.GetSnapshotRequest) (*csipb.GetSnapshotResponse, error) {
	if req.GetSnapshotId() == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot_id is required")
	}
	snap, found, err := d.snapshot(req.GetSnapshotId())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return nil, status.Errorf(codes.NotFound, "snapshot %q does not exist", req.GetSnapshotId())
	}
	return &csipb.GetSnapshotResponse{Snapshot: d.csiSnapshot(req.GetSnapshotId(), snap)}, nil
}
