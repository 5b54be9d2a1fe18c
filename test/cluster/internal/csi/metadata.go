package csi

import (
	"os"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	// BlockSize is the granularity of GetMetadataDelta: a changed byte reports its whole block.
	BlockSize = 4096
	// defaultMaxResults bounds the extents of one stream message when the request names no bound.
	defaultMaxResults = 1024
)

// blockSnapshot opens the image of a ready block snapshot.
func (d *Driver) blockSnapshot(field, id string) (*os.File, *snapshotRecord, error) {
	if id == "" {
		return nil, nil, status.Errorf(codes.InvalidArgument, "%s is required", field)
	}
	snap, found, err := d.snapshot(id)
	if err != nil {
		return nil, nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return nil, nil, status.Errorf(codes.NotFound, "%s %q does not exist", field, id)
	}
	if !snap.Block {
		return nil, nil, status.Errorf(codes.InvalidArgument, "%s %q is a snapshot of a filesystem volume; block metadata exists only for block volumes", field, id)
	}
	if !d.ready(snap) {
		return nil, nil, status.Errorf(codes.Unavailable, "%s %q is not ready to use yet", field, id)
	}
	f, err := os.Open(d.opts.Storage.SnapshotData(id))
	if err != nil {
		return nil, nil, status.Error(codes.Internal, err.Error())
	}
	return f, snap, nil
}

func checkStart(offset, capacity int64) error {
	if offset < 0 || offset > capacity {
		return status.Errorf(codes.OutOfRange, "starting_offset %d is outside the volume (0 to %d bytes)", offset, capacity)
	}
	return nil
}

// batcher sends extents in messages of at most max entries, clipped to the volume.
type batcher struct {
	max      int
	capacity int64
	pending  []*csipb.BlockMetadata
	send     func([]*csipb.BlockMetadata) error
}

func newBatcher(max int32, capacity int64, send func([]*csipb.BlockMetadata) error) *batcher {
	if max <= 0 {
		max = defaultMaxResults
	}
	return &batcher{max: int(max), capacity: capacity, send: send}
}

func (b *batcher) add(e extent) error {
	end := min(e.end(), b.capacity)
	if end <= e.Offset {
		return nil
	}
	b.pending = append(b.pending, &csipb.BlockMetadata{ByteOffset: e.Offset, SizeBytes: end - e.Offset})
	if len(b.pending) < b.max {
		return nil
	}
	return b.flush()
}

func (b *batcher) flush() error {
	if len(b.pending) == 0 {
		return nil
	}
	batch := b.pending
	b.pending = nil
	return b.send(batch)
}

// GetMetadataAllocated lists the ranges of a block snapshot that hold data:
// the image's allocated extents, as SEEK_DATA/SEEK_HOLE report them.
func (d *Driver) GetMetadataAllocated(req *csipb.GetMetadataAllocatedRequest, stream csipb.SnapshotMetadata_GetMetadataAllocatedServer) error {
	f, snap, err := d.blockSnapshot("snapshot_id", req.GetSnapshotId())
	if err != nil {
		return err
	}
	defer f.Close()
	if err := checkStart(req.GetStartingOffset(), snap.SizeBytes); err != nil {
		return err
	}
	extents, err := dataExtents(f, req.GetStartingOffset(), snap.SizeBytes)
	if err != nil {
		return status.Errorf(codes.Internal, "reading the extents of snapshot %q: %v", req.GetSnapshotId(), err)
	}
	b := newBatcher(req.GetMaxResults(), snap.SizeBytes, func(list []*csipb.BlockMetadata) error {
		return stream.Send(&csipb.GetMetadataAllocatedResponse{BlockMetadataType: csipb.BlockMetadataType_VARIABLE_LENGTH,
			VolumeCapacityBytes: snap.SizeBytes, BlockMetadata: list})
	})
	for _, e := range extents {
		if err := b.add(e); err != nil {
			return err
		}
	}
	return b.flush()
}

// GetMetadataDelta lists the blocks that differ between two snapshots of one
// volume, comparing their images where either holds data (both holes are equal).
func (d *Driver) GetMetadataDelta(req *csipb.GetMetadataDeltaRequest, stream csipb.SnapshotMetadata_GetMetadataDeltaServer) error {
	base, baseSnap, err := d.blockSnapshot("base_snapshot_id", req.GetBaseSnapshotId())
	if err != nil {
		return err
	}
	defer base.Close()
	target, targetSnap, err := d.blockSnapshot("target_snapshot_id", req.GetTargetSnapshotId())
	if err != nil {
		return err
	}
	defer target.Close()
	if baseSnap.SourceVolume != targetSnap.SourceVolume {
		return status.Errorf(codes.InvalidArgument, "base snapshot %q is of volume %q and target snapshot %q of volume %q; a delta needs two snapshots of one volume",
			req.GetBaseSnapshotId(), baseSnap.SourceVolume, req.GetTargetSnapshotId(), targetSnap.SourceVolume)
	}
	capacity := targetSnap.SizeBytes
	if err := checkStart(req.GetStartingOffset(), capacity); err != nil {
		return err
	}
	baseData, err := dataExtents(base, req.GetStartingOffset(), capacity)
	if err != nil {
		return status.Errorf(codes.Internal, "reading the extents of snapshot %q: %v", req.GetBaseSnapshotId(), err)
	}
	targetData, err := dataExtents(target, req.GetStartingOffset(), capacity)
	if err != nil {
		return status.Errorf(codes.Internal, "reading the extents of snapshot %q: %v", req.GetTargetSnapshotId(), err)
	}
	b := newBatcher(req.GetMaxResults(), capacity, func(list []*csipb.BlockMetadata) error {
		return stream.Send(&csipb.GetMetadataDeltaResponse{BlockMetadataType: csipb.BlockMetadataType_VARIABLE_LENGTH,
			VolumeCapacityBytes: capacity, BlockMetadata: list})
	})
	ranges := aligned(union(baseData, targetData), BlockSize)
	if err := changedBlocks(base, target, ranges, BlockSize, b.add); err != nil {
		if _, ok := status.FromError(err); ok {
			return err
		}
		return status.Errorf(codes.Internal, "comparing snapshots %q and %q: %v", req.GetBaseSnapshotId(), req.GetTargetSnapshotId(), err)
	}
	return b.flush()
}
