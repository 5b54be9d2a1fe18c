package csi

import (
	"context"
	"maps"
	"os"
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func (d *Driver) GroupControllerGetCapabilities(context.Context, *csipb.GroupControllerGetCapabilitiesRequest) (*csipb.GroupControllerGetCapabilitiesResponse, error) {
	return &csipb.GroupControllerGetCapabilitiesResponse{Capabilities: []*csipb.GroupControllerServiceCapability{{
		Type: &csipb.GroupControllerServiceCapability_Rpc{Rpc: &csipb.GroupControllerServiceCapability_RPC{
			Type: csipb.GroupControllerServiceCapability_RPC_CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT}}}}}, nil
}

// CreateVolumeGroupSnapshot copies each volume in turn while holding the
// driver's lock: no CSI call changes any of them in between, though a pod
// writing to them meanwhile is not paused (the box has no freeze). The ready
// delay holds back the group, not its members: csi-snapshotter v8.7.0 copies
// the members' ready_to_use into their VolumeSnapshotContents when the group
// is cut and looks again only at its resync (15 minutes by default), while it
// polls the group until it is ready.
func (d *Driver) CreateVolumeGroupSnapshot(_ context.Context, req *csipb.CreateVolumeGroupSnapshotRequest) (*csipb.CreateVolumeGroupSnapshotResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	volumes := slices.Clone(req.GetSourceVolumeIds())
	if len(volumes) == 0 {
		return nil, status.Error(codes.InvalidArgument, "source_volume_ids is required")
	}
	slices.Sort(volumes)
	if len(slices.Compact(slices.Clone(volumes))) != len(volumes) {
		return nil, status.Errorf(codes.InvalidArgument, "source_volume_ids %v name a volume twice", req.GetSourceVolumeIds())
	}
	delay, err := d.readyDelay(req.GetParameters())
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := idFor(req.GetName())
	have, found, err := d.group(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if found {
		if !slices.Equal(slices.Sorted(maps.Keys(have.Snapshots)), volumes) {
			return nil, status.Errorf(codes.AlreadyExists, "group snapshot %q exists of other volumes", req.GetName())
		}
		return d.groupResponse(id, have)
	}
	for _, v := range volumes {
		if _, ok, err := d.volume(v); err != nil || !ok {
			return nil, status.Errorf(codes.NotFound, "source volume %q does not exist", v)
		}
	}
	now := d.now()
	group := &groupRecord{Name: req.GetName(), Snapshots: map[string]string{}, CreatedAt: now, ReadyAt: now.Add(delay)}
	for _, v := range volumes {
		snapID, _, err := d.takeSnapshot(id+"-"+v, v, 0, id)
		if err != nil {
			d.removeSnapshots(group)
			return nil, err
		}
		group.Snapshots[v] = snapID
	}
	if err := writeJSON(groupRecordPath(d.opts.Storage, id), group); err != nil {
		d.removeSnapshots(group)
		return nil, status.Error(codes.Internal, err.Error())
	}
	return d.groupResponse(id, group)
}

func (d *Driver) removeSnapshots(g *groupRecord) {
	for _, s := range g.Snapshots {
		_ = os.RemoveAll(d.opts.Storage.Snapshot(s))
	}
}

func (d *Driver) groupResponse(id string, g *groupRecord) (*csipb.CreateVolumeGroupSnapshotResponse, error) {
	group, err := d.csiGroup(id, g)
	if err != nil {
		return nil, err
	}
	return &csipb.CreateVolumeGroupSnapshotResponse{GroupSnapshot: group}, nil
}

func (d *Driver) csiGroup(id string, g *groupRecord) (*csipb.VolumeGroupSnapshot, error) {
	out := &csipb.VolumeGroupSnapshot{GroupSnapshotId: id, CreationTime: timestamppb.New(g.CreatedAt), ReadyToUse: !d.now().Before(g.ReadyAt)}
	for _, v := range slices.Sorted(maps.Keys(g.Snapshots)) {
		snap, found, err := d.snapshot(g.Snapshots[v])
		if err != nil || !found {
			return nil, status.Errorf(codes.Internal, "snapshot %q of group snapshot %q is missing: %v", g.Snapshots[v], id, err)
		}
		s := d.csiSnapshot(g.Snapshots[v], snap)
		out.ReadyToUse = out.ReadyToUse && s.ReadyToUse
		out.Snapshots = append(out.Snapshots, s)
	}
	return out, nil
}

// checkMembers reports a snapshot_ids list that does not match the group's
// members, which the spec asks a plugin to detect where it can.
func checkMembers(id string, g *groupRecord, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(maps.Values(g.Snapshots))) {
		return status.Errorf(codes.InvalidArgument, "snapshot_ids %v are not the snapshots of group snapshot %q", ids, id)
	}
	return nil
}

func (d *Driver) DeleteVolumeGroupSnapshot(_ context.Context, req *csipb.DeleteVolumeGroupSnapshotRequest) (*csipb.DeleteVolumeGroupSnapshotResponse, error) {
	id := req.GetGroupSnapshotId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "group_snapshot_id is required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	g, found, err := d.group(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return &csipb.DeleteVolumeGroupSnapshotResponse{}, nil
	}
	if err := checkMembers(id, g, req.GetSnapshotIds()); err != nil {
		return nil, err
	}
	d.removeSnapshots(g)
	if err := os.Remove(groupRecordPath(d.opts.Storage, id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csipb.DeleteVolumeGroupSnapshotResponse{}, nil
}

func (d *Driver) GetVolumeGroupSnapshot(_ context.Context, req *csipb.GetVolumeGroupSnapshotRequest) (*csipb.GetVolumeGroupSnapshotResponse, error) {
	id := req.GetGroupSnapshotId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "group_snapshot_id is required")
	}
	g, found, err := d.group(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return nil, status.Errorf(codes.NotFound, "group snapshot %q does not exist", id)
	}
	if err := checkMembers(id, g, req.GetSnapshotIds()); err != nil {
		return nil, err
	}
	group, err := d.csiGroup(id, g)
	if err != nil {
		return nil, err
	}
	return &csipb.GetVolumeGroupSnapshotResponse{GroupSnapshot: group}, nil
}
