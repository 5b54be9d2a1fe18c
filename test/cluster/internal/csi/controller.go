package csi

import (
	"context"
	"errors"
	"os"
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// defaultCapacity is the size of a volume whose request names none.
const defaultCapacity = 1 << 30

func (d *Driver) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	var caps []*csipb.ControllerServiceCapability
	for _, t := range []csipb.ControllerServiceCapability_RPC_Type{
		csipb.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csipb.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csipb.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
		csipb.ControllerServiceCapability_RPC_GET_SNAPSHOT,
		csipb.ControllerServiceCapability_RPC_CLONE_VOLUME,
		csipb.ControllerServiceCapability_RPC_LIST_VOLUMES,
		csipb.ControllerServiceCapability_RPC_EXPAND_VOLUME,
	} {
		caps = append(caps, &csipb.ControllerServiceCapability{Type: &csipb.ControllerServiceCapability_Rpc{
			Rpc: &csipb.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csipb.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

// capacity picks the size from a capacity range: the required bytes, or the
// default capped by the limit.
func capacity(r *csipb.CapacityRange) (int64, error) {
	req, limit := r.GetRequiredBytes(), r.GetLimitBytes()
	if req < 0 || limit < 0 {
		return 0, status.Errorf(codes.InvalidArgument, "capacity_range: required_bytes %d and limit_bytes %d must not be negative", req, limit)
	}
	if limit > 0 && req > limit {
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: required_bytes %d exceed limit_bytes %d", req, limit)
	}
	switch {
	case req > 0:
		return req, nil
	case limit > 0 && limit < defaultCapacity:
		return limit, nil
	}
	return defaultCapacity, nil
}

// nodeFor picks the node of a new volume: the scheduler's choice comes first
// among the preferred segments (WaitForFirstConsumer), then any requisite one,
// then this process's own node.
func (d *Driver) nodeFor(req *csipb.TopologyRequirement) string {
	for _, list := range [][]*csipb.Topology{req.GetPreferred(), req.GetRequisite()} {
		for _, t := range list {
			if n := t.GetSegments()[TopologyKey]; n != "" {
				return n
			}
		}
	}
	return d.opts.NodeID
}

func (d *Driver) CreateVolume(_ context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	block, err := checkCapabilities(req.GetVolumeCapabilities())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	size, err := capacity(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	want := volumeRecord{Name: req.GetName(), CapacityBytes: size, Block: block, Node: d.nodeFor(req.GetAccessibilityRequirements())}
	if src := req.GetVolumeContentSource(); src != nil {
		want.SourceSnapshot = src.GetSnapshot().GetSnapshotId()
		want.SourceVolume = src.GetVolume().GetVolumeId()
		if want.SourceSnapshot == "" && want.SourceVolume == "" {
			return nil, status.Error(codes.InvalidArgument, "volume_content_source names neither a snapshot_id nor a volume_id")
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := idFor(req.GetName())
	have, found, err := d.volume(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if found {
		if !sameVolume(have, &want, req.GetCapacityRange()) {
			return nil, status.Errorf(codes.AlreadyExists, "volume %q exists with other parameters (%s, %d bytes, from %q%q)",
				req.GetName(), modeName(have.Block), have.CapacityBytes, have.SourceSnapshot, have.SourceVolume)
		}
		return &csipb.CreateVolumeResponse{Volume: d.csiVolume(id, have)}, nil
	}
	if err := d.createData(id, &want); err != nil {
		return nil, err
	}
	if err := writeJSON(volumeRecordPath(d.opts.Storage, id), &want); err != nil {
		_ = os.RemoveAll(d.opts.Storage.Volume(id, want.Block))
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csipb.CreateVolumeResponse{Volume: d.csiVolume(id, &want)}, nil
}

// sameVolume tells a retried CreateVolume from a conflicting one.
func sameVolume(have, want *volumeRecord, r *csipb.CapacityRange) bool {
	fits := have.CapacityBytes >= r.GetRequiredBytes() && (r.GetLimitBytes() == 0 || have.CapacityBytes <= r.GetLimitBytes())
	return fits && have.Block == want.Block && have.SourceSnapshot == want.SourceSnapshot && have.SourceVolume == want.SourceVolume
}

// createData makes the volume's directory or image file, copied from its
// source if it has one.
func (d *Driver) createData(id string, v *volumeRecord) error {
	st := d.opts.Storage
	path := st.Volume(id, v.Block)
	if err := os.RemoveAll(path); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	var src string
	var srcBlock bool
	var srcSize int64
	switch {
	case v.SourceSnapshot != "":
		snap, found, err := d.snapshot(v.SourceSnapshot)
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		if !found {
			return status.Errorf(codes.NotFound, "source snapshot %q does not exist", v.SourceSnapshot)
		}
		if !d.ready(snap) {
			return status.Errorf(codes.Unavailable, "source snapshot %q is not ready to use yet", v.SourceSnapshot)
		}
		src, srcBlock, srcSize = st.SnapshotData(v.SourceSnapshot), snap.Block, snap.SizeBytes
	case v.SourceVolume != "":
		vol, found, err := d.volume(v.SourceVolume)
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		if !found {
			return status.Errorf(codes.NotFound, "source volume %q does not exist", v.SourceVolume)
		}
		src, srcBlock, srcSize = st.Volume(v.SourceVolume, vol.Block), vol.Block, vol.CapacityBytes
	}
	if src != "" {
		if srcBlock != v.Block {
			return status.Errorf(codes.InvalidArgument, "the source is a %s volume and the request asks for a %s volume", modeName(srcBlock), modeName(v.Block))
		}
		if v.CapacityBytes < srcSize {
			return status.Errorf(codes.OutOfRange, "the source holds %d bytes, more than the %d requested", srcSize, v.CapacityBytes)
		}
		if err := copyTree(src, path); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
	} else if !v.Block {
		if err := os.Mkdir(path, 0o755); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
	}
	if v.Block {
		if err := growImage(path, v.CapacityBytes); err != nil {
			_ = os.Remove(path)
			return err
		}
	}
	return nil
}

// growImage makes an image file at least size bytes long, sparse; a size
// past what the storage root's filesystem allows in one file is out of range.
func growImage(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if info.Size() >= size {
		return nil
	}
	if err := f.Truncate(size); err != nil {
		if errors.Is(err, unix.EFBIG) || errors.Is(err, unix.EINVAL) {
			return status.Errorf(codes.OutOfRange, "a block volume of %d bytes is larger than a file of the storage root's filesystem can be", size)
		}
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}

func (d *Driver) csiVolume(id string, v *volumeRecord) *csipb.Volume {
	vol := &csipb.Volume{VolumeId: id, CapacityBytes: v.CapacityBytes}
	if v.Node != "" {
		vol.AccessibleTopology = []*csipb.Topology{{Segments: map[string]string{TopologyKey: v.Node}}}
	}
	switch {
	case v.SourceSnapshot != "":
		vol.ContentSource = &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: v.SourceSnapshot}}}
	case v.SourceVolume != "":
		vol.ContentSource = &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Volume{
			Volume: &csipb.VolumeContentSource_VolumeSource{VolumeId: v.SourceVolume}}}
	}
	return vol
}

func (d *Driver) DeleteVolume(_ context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, found, err := d.volume(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return &csipb.DeleteVolumeResponse{}, nil
	}
	// snapshots are copies, independent of their volume, so they stay
	if err := os.RemoveAll(d.opts.Storage.Volume(id, v.Block)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := os.Remove(volumeRecordPath(d.opts.Storage, id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csipb.DeleteVolumeResponse{}, nil
}

func (d *Driver) ValidateVolumeCapabilities(_ context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume_capabilities is required")
	}
	v, found, err := d.volume(req.GetVolumeId())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return nil, status.Errorf(codes.NotFound, "volume %q does not exist", req.GetVolumeId())
	}
	block, err := checkCapabilities(req.GetVolumeCapabilities())
	if err != nil || block != v.Block {
		msg := "the volume is a " + modeName(v.Block) + " volume"
		if err != nil {
			msg = err.Error()
		}
		return &csipb.ValidateVolumeCapabilitiesResponse{Message: msg}, nil
	}
	return &csipb.ValidateVolumeCapabilitiesResponse{Confirmed: &csipb.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters()}}, nil
}

func (d *Driver) ListVolumes(_ context.Context, req *csipb.ListVolumesRequest) (*csipb.ListVolumesResponse, error) {
	ids, err := d.volumeIDs()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	page, next, err := paginate(ids, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	resp := &csipb.ListVolumesResponse{NextToken: next}
	for _, id := range page {
		v, found, err := d.volume(id)
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if found {
			resp.Entries = append(resp.Entries, &csipb.ListVolumesResponse_Entry{Volume: d.csiVolume(id, v)})
		}
	}
	return resp, nil
}

// ControllerExpandVolume grows the volume: an image file's length (and the
// loop devices serving it, so a published block volume sees the new size
// at once), a directory's nominal capacity. Nothing is left for the node.
func (d *Driver) ControllerExpandVolume(_ context.Context, req *csipb.ControllerExpandVolumeRequest) (*csipb.ControllerExpandVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if req.GetCapacityRange() == nil {
		return nil, status.Error(codes.InvalidArgument, "capacity_range is required")
	}
	size, err := capacity(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, found, err := d.volume(req.GetVolumeId())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return nil, status.Errorf(codes.NotFound, "volume %q does not exist", req.GetVolumeId())
	}
	if size > v.CapacityBytes {
		if v.Block {
			path := d.opts.Storage.Volume(req.GetVolumeId(), true)
			if err := growImage(path, size); err != nil {
				return nil, err
			}
			if err := refreshLoopDevices(path); err != nil {
				return nil, status.Error(codes.Internal, err.Error())
			}
		}
		v.CapacityBytes = size
		if err := writeJSON(volumeRecordPath(d.opts.Storage, req.GetVolumeId()), v); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	return &csipb.ControllerExpandVolumeResponse{CapacityBytes: v.CapacityBytes}, nil
}

// paginate pages a sorted list; a token is the ID the next page starts with.
func paginate(ids []string, token string, max int32) (page []string, next string, err error) {
	if max < 0 {
		return nil, "", status.Errorf(codes.InvalidArgument, "max_entries %d is negative", max)
	}
	start := 0
	if token != "" {
		i := slices.Index(ids, token)
		if i < 0 {
			return nil, "", status.Errorf(codes.Aborted, "starting_token %q names no entry (it may have been deleted); list again from the start", token)
		}
		start = i
	}
	end := len(ids)
	if max > 0 && start+int(max) < end {
		end = start + int(max)
		next = ids[end]
	}
	return ids[start:end], next, nil
}
