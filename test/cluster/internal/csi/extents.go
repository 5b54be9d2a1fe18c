package csi

import (
	"bytes"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// extent is a byte range [Offset, Offset+Length).
type extent struct{ Offset, Length int64 }

func (e extent) end() int64 { return e.Offset + e.Length }

// dataExtents lists the allocated ranges of a sparse file from start to limit,
// as the filesystem reports them through SEEK_DATA and SEEK_HOLE. Bytes past
// the end of the file are holes.
func dataExtents(f *os.File, start, limit int64) ([]extent, error) {
	var out []extent
	fd := int(f.Fd())
	for pos := start; pos < limit; {
		data, err := unix.Seek(fd, pos, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // no data after pos
		}
		if err != nil {
			return nil, err
		}
		if data >= limit {
			break
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			return nil, err
		}
		hole = min(hole, limit)
		out = append(out, extent{data, hole - data})
		pos = hole
	}
	return out, nil
}

// union merges two sorted extent lists into sorted, non-overlapping extents.
func union(a, b []extent) []extent {
	var out []extent
	for len(a) > 0 || len(b) > 0 {
		var next extent
		if len(b) == 0 || (len(a) > 0 && a[0].Offset <= b[0].Offset) {
			next, a = a[0], a[1:]
		} else {
			next, b = b[0], b[1:]
		}
		if n := len(out); n > 0 && next.Offset <= out[n-1].end() {
			out[n-1].Length = max(out[n-1].end(), next.end()) - out[n-1].Offset
			continue
		}
		out = append(out, next)
	}
	return out
}

// aligned widens each extent to whole blocks and merges those that then touch.
func aligned(list []extent, blockSize int64) []extent {
	out := make([]extent, 0, len(list))
	for _, e := range list {
		start := e.Offset / blockSize * blockSize
		end := (e.end() + blockSize - 1) / blockSize * blockSize
		out = append(out, extent{start, end - start})
	}
	return union(out, nil)
}

// changedBlocks compares two files block by block over the given ranges and
// calls emit with each run of differing blocks (bytes past a file's end read
// as zeros). The ranges must be block-aligned (see aligned), so a changed byte
// reports its whole block, as a block device's changed-block tracking would.
func changedBlocks(base, target *os.File, ranges []extent, blockSize int64, emit func(extent) error) error {
	const chunkBlocks = 256
	bufA := make([]byte, blockSize*chunkBlocks)
	bufB := make([]byte, blockSize*chunkBlocks)
	var run extent
	flush := func() error {
		if run.Length == 0 {
			return nil
		}
		r := run
		run = extent{}
		return emit(r)
	}
	for _, r := range ranges {
		for pos := r.Offset; pos < r.end(); pos += int64(len(bufA)) {
			n := min(int64(len(bufA)), r.end()-pos)
			if err := readFull(base, bufA[:n], pos); err != nil {
				return err
			}
			if err := readFull(target, bufB[:n], pos); err != nil {
				return err
			}
			for off := int64(0); off < n; off += blockSize {
				blockAt := pos + off
				if bytes.Equal(bufA[off:off+blockSize], bufB[off:off+blockSize]) {
					continue
				}
				if run.Length > 0 && run.end() == blockAt {
					run.Length += blockSize
					continue
				}
				if err := flush(); err != nil {
					return err
				}
				run = extent{blockAt, blockSize}
			}
		}
	}
	return flush()
}

// readFull reads len(buf) bytes at off, zero-filling what lies past the end.
func readFull(f *os.File, buf []byte, off int64) error {
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	clear(buf[n:])
	return nil
}
