package csi

import (
	"context"
	"errors"
	"io"
	"os"
	"reflect"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

const mib = 1 << 20

// writeAt writes n bytes of fill into a block volume's image, as a pod writing to the device would.
func writeAt(t *testing.T, image string, off int64, n int, fill byte) {
	t.Helper()
	f, err := os.OpenFile(image, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = fill
	}
	if _, err := f.WriteAt(buf, off); err != nil {
		t.Fatal(err)
	}
}

// collect reads a metadata stream to its end: the extents, and the largest message.
func collect[R interface {
	GetBlockMetadata() []*csipb.BlockMetadata
	GetVolumeCapacityBytes() int64
	GetBlockMetadataType() csipb.BlockMetadataType
}](t *testing.T, recv func() (R, error), capacity int64) ([]extent, int, error) {
	t.Helper()
	var out []extent
	largest := 0
	for {
		msg, err := recv()
		if errors.Is(err, io.EOF) {
			return out, largest, nil
		}
		if err != nil {
			return nil, 0, err
		}
		if msg.GetVolumeCapacityBytes() != capacity || msg.GetBlockMetadataType() != csipb.BlockMetadataType_VARIABLE_LENGTH {
			t.Fatalf("message says capacity %d type %s", msg.GetVolumeCapacityBytes(), msg.GetBlockMetadataType())
		}
		largest = max(largest, len(msg.GetBlockMetadata()))
		for _, b := range msg.GetBlockMetadata() {
			out = append(out, extent{b.GetByteOffset(), b.GetSizeBytes()})
		}
	}
}

func (c *client) allocated(t *testing.T, snapshot string, start int64, maxResults int32) ([]extent, int, error) {
	t.Helper()
	stream, err := c.GetMetadataAllocated(context.Background(), &csipb.GetMetadataAllocatedRequest{SnapshotId: snapshot, StartingOffset: start, MaxResults: maxResults})
	if err != nil {
		return nil, 0, err
	}
	return collect(t, stream.Recv, 16*mib)
}

func (c *client) delta(t *testing.T, base, target string, start int64, maxResults int32) ([]extent, int, error) {
	t.Helper()
	stream, err := c.GetMetadataDelta(context.Background(), &csipb.GetMetadataDeltaRequest{BaseSnapshotId: base, TargetSnapshotId: target, StartingOffset: start, MaxResults: maxResults})
	if err != nil {
		return nil, 0, err
	}
	return collect(t, stream.Recv, 16*mib)
}

// A 16 MiB sparse block volume gets known writes, a snapshot, more writes and
// a second snapshot; the service must report exactly the written blocks.
func TestSnapshotMetadataOfASparseBlockVolume(t *testing.T) {
	c := startDriver(t, 0)
	vol := c.createVolume(t, "pvc-cbt", blockCap(), 16*mib, nil)
	image := c.driver.opts.Storage.Volume(vol.GetVolumeId(), true)
	writeAt(t, image, 0, 4096, 'a')       // the first block
	writeAt(t, image, mib+100, 1, 'b')    // one byte: its whole block is data
	writeAt(t, image, 8*mib, 64<<10, 'c') // 64 KiB
	first := c.snapshot(t, "snapshot-cbt-1", vol.GetVolumeId(), nil).GetSnapshotId()

	writeAt(t, image, mib+100, 1, 'B')        // changes a block
	writeAt(t, image, 8*mib+8192, 4096, 'c')  // rewrites the same bytes: no change
	writeAt(t, image, 12*mib, 3*4096, 'd')    // new data in a hole
	writeAt(t, image, 16*mib-4096, 4096, 'e') // the last block
	second := c.snapshot(t, "snapshot-cbt-2", vol.GetVolumeId(), nil).GetSnapshotId()

	got, _, err := c.allocated(t, first, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []extent{{0, 4096}, {mib, 4096}, {8 * mib, 64 << 10}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("allocated extents of the first snapshot:\n got %v\nwant %v", got, want)
	}

	got, largest, err := c.delta(t, first, second, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	want = []extent{{mib, 4096}, {12 * mib, 3 * 4096}, {16*mib - 4096, 4096}}
	if !reflect.DeepEqual(got, want) || largest != 1 {
		t.Fatalf("changed blocks from the first to the second snapshot (max_results 1, largest message %d):\n got %v\nwant %v", largest, got, want)
	}
	got, _, err = c.delta(t, first, second, 2*mib, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want[1:]) {
		t.Fatalf("changed blocks from starting_offset 2 MiB: got %v, want %v", got, want[1:])
	}
	got, _, err = c.allocated(t, second, 8*mib+4096, 0)
	if err != nil {
		t.Fatal(err)
	}
	want = []extent{{8*mib + 4096, 60 << 10}, {12 * mib, 3 * 4096}, {16*mib - 4096, 4096}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("allocated extents from the middle of an extent:\n got %v\nwant %v", got, want)
	}

	_, _, err = c.allocated(t, first, 17*mib, 0)
	wantCode(t, err, codes.OutOfRange, "a starting offset past the volume")
	_, _, err = c.allocated(t, "snapshot-missing", 0, 0)
	wantCode(t, err, codes.NotFound, "an unknown snapshot")

	other := c.createVolume(t, "pvc-other", blockCap(), 16*mib, nil)
	otherSnap := c.snapshot(t, "snapshot-other", other.GetVolumeId(), nil).GetSnapshotId()
	_, _, err = c.delta(t, first, otherSnap, 0, 0)
	wantCode(t, err, codes.InvalidArgument, "a delta between snapshots of two volumes")
	fsVol := c.createVolume(t, "pvc-files", mountCap(), mib, nil)
	fsSnap := c.snapshot(t, "snapshot-files", fsVol.GetVolumeId(), nil).GetSnapshotId()
	_, _, err = c.allocated(t, fsSnap, 0, 0)
	wantCode(t, err, codes.InvalidArgument, "block metadata of a filesystem snapshot")
}
