package csi

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func (d *Driver) NodeGetInfo(context.Context, *csipb.NodeGetInfoRequest) (*csipb.NodeGetInfoResponse, error) {
	return &csipb.NodeGetInfoResponse{NodeId: d.opts.NodeID,
		AccessibleTopology: &csipb.Topology{Segments: map[string]string{TopologyKey: d.opts.NodeID}}}, nil
}

func (d *Driver) NodeGetCapabilities(context.Context, *csipb.NodeGetCapabilitiesRequest) (*csipb.NodeGetCapabilitiesResponse, error) {
	return &csipb.NodeGetCapabilitiesResponse{Capabilities: []*csipb.NodeServiceCapability{{
		Type: &csipb.NodeServiceCapability_Rpc{Rpc: &csipb.NodeServiceCapability_RPC{
			Type: csipb.NodeServiceCapability_RPC_GET_VOLUME_STATS}}}}}, nil
}

// mounted reports whether something is mounted at path; a missing path is not.
func mounted(path string) (bool, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return mountinfo.Mounted(path)
}

// NodePublishVolume bind-mounts a filesystem volume's directory on the target
// directory, or a loop device of a block volume's image on the target file.
// There is no staging: a bind mount needs no per-node preparation.
func (d *Driver) NodePublishVolume(_ context.Context, req *csipb.NodePublishVolumeRequest) (*csipb.NodePublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	switch {
	case id == "":
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	case target == "":
		return nil, status.Error(codes.InvalidArgument, "target_path is required")
	case req.GetVolumeCapability() == nil:
		return nil, status.Error(codes.InvalidArgument, "volume_capability is required")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "volume_capability: %v", err)
	}
	v, found, err := d.volume(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return nil, status.Errorf(codes.NotFound, "volume %q does not exist", id)
	}
	block := req.GetVolumeCapability().GetBlock() != nil
	if block != v.Block {
		return nil, status.Errorf(codes.InvalidArgument, "volume %q is a %s volume; it cannot be published for %s access", id, modeName(v.Block), modeName(block))
	}
	if v.Node != "" && v.Node != d.opts.NodeID {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %q lives on node %s, not on %s", id, v.Node, d.opts.NodeID)
	}
	already, err := mounted(target)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if already {
		if !publishes(target, d.opts.Storage.Volume(id, block), block) {
			return nil, status.Errorf(codes.AlreadyExists, "%s is already a mount of something other than volume %q", target, id)
		}
		return &csipb.NodePublishVolumeResponse{}, nil
	}
	readOnly := req.GetReadonly() || req.GetVolumeCapability().GetAccessMode().GetMode() == csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY
	if block {
		err = publishBlock(d.opts.Storage.Volume(id, true), target, readOnly)
	} else {
		err = publishDirectory(d.opts.Storage.Volume(id, false), target, readOnly)
	}
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csipb.NodePublishVolumeResponse{}, nil
}

// publishes tells whether a mounted target is the volume's data: the same
// directory through a bind mount, or a loop device backed by the image.
func publishes(target, data string, block bool) bool {
	if block {
		dev := loopDeviceOf(target)
		backing, err := os.ReadFile("/sys/block/" + filepath.Base(dev) + "/loop/backing_file")
		return dev != "" && err == nil && strings.TrimSpace(string(backing)) == data
	}
	a, errA := os.Stat(target)
	b, errB := os.Stat(data)
	return errA == nil && errB == nil && os.SameFile(a, b)
}

func publishDirectory(dir, target string, readOnly bool) error {
	if err := os.MkdirAll(target, 0o750); err != nil {
		return err
	}
	return bindMount(dir, target, readOnly)
}

func publishBlock(image, target string, readOnly bool) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o660)
	if err != nil {
		return err
	}
	f.Close()
	dev, err := attachLoop(image, readOnly)
	if err != nil {
		return err
	}
	if err := bindMount(dev, target, readOnly); err != nil {
		_ = detachLoop(dev)
		return err
	}
	return nil
}

// bindMount binds src on target; a read-only bind needs a second, remounting
// call, since the kernel ignores MS_RDONLY on the first.
func bindMount(src, target string, readOnly bool) error {
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return &os.PathError{Op: "bind mount " + src + " on", Path: target, Err: err}
	}
	if readOnly {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			_ = unix.Unmount(target, 0)
			return &os.PathError{Op: "remount read-only", Path: target, Err: err}
		}
	}
	return nil
}

// NodeUnpublishVolume unmounts the target, detaches the loop device a block
// volume was served by, and removes the target it made.
func (d *Driver) NodeUnpublishVolume(_ context.Context, req *csipb.NodeUnpublishVolumeRequest) (*csipb.NodeUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	target := req.GetTargetPath()
	if target == "" {
		return nil, status.Error(codes.InvalidArgument, "target_path is required")
	}
	isMounted, err := mounted(target)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if isMounted {
		loop := loopDeviceOf(target)
		if err := unix.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "unmounting %s: %v", target, err)
		}
		if loop != "" {
			if err := detachLoop(loop); err != nil {
				return nil, status.Error(codes.Internal, err.Error())
			}
		}
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, status.Errorf(codes.Internal, "removing %s: %v", target, err)
	}
	return &csipb.NodeUnpublishVolumeResponse{}, nil
}

// NodeGetVolumeStats reports a block volume's size, and a filesystem volume's
// nominal capacity against the bytes and inodes its tree uses.
func (d *Driver) NodeGetVolumeStats(_ context.Context, req *csipb.NodeGetVolumeStatsRequest) (*csipb.NodeGetVolumeStatsResponse, error) {
	id, path := req.GetVolumeId(), req.GetVolumePath()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if path == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_path is required")
	}
	v, found, err := d.volume(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !found {
		return nil, status.Errorf(codes.NotFound, "volume %q does not exist", id)
	}
	if ok, err := mounted(path); err != nil || !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q is not published at %s", id, path)
	}
	if v.Block {
		return &csipb.NodeGetVolumeStatsResponse{Usage: []*csipb.VolumeUsage{{
			Unit: csipb.VolumeUsage_BYTES, Total: v.CapacityBytes}}}, nil
	}
	var bytes, inodes int64
	err = filepath.WalkDir(path, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		inodes++
		if st, ok := info.Sys().(*unix.Stat_t); ok {
			bytes += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		return nil, status.Errorf(codes.Internal, "measuring %s: %v", path, err)
	}
	var fsStat unix.Statfs_t
	if err := unix.Statfs(path, &fsStat); err != nil {
		return nil, status.Errorf(codes.Internal, "statfs %s: %v", path, err)
	}
	return &csipb.NodeGetVolumeStatsResponse{Usage: []*csipb.VolumeUsage{
		{Unit: csipb.VolumeUsage_BYTES, Total: v.CapacityBytes, Used: bytes, Available: max(v.CapacityBytes-bytes, 0)},
		{Unit: csipb.VolumeUsage_INODES, Total: int64(fsStat.Files), Used: inodes, Available: int64(fsStat.Ffree)},
	}}, nil
}
