// Package layout is what the CSI driver and the box's tests agree on: the
// driver's name and where volumes and snapshots live on the host.
package layout

import (
	"os"
	"path/filepath"
)

// DriverName is the CSI driver name on PVs, StorageClasses and VolumeSnapshotClasses.
const DriverName = "local.csi.ferry.dev"

// Storage is the root folder of the driver's data.
type Storage struct{ Root string }

// Volume is the data of a volume: a directory, or an image file for block volumes.
func (s Storage) Volume(handle string, block bool) string {
	if block {
		return filepath.Join(s.Root, "volumes", handle+".img")
	}
	return filepath.Join(s.Root, "volumes", handle)
}

// Snapshot is the folder of one snapshot: its data (a directory, or an image
// file for block volumes) and a metadata file.
func (s Storage) Snapshot(handle string) string {
	return filepath.Join(s.Root, "snapshots", handle)
}

// SnapshotData is the copied volume inside a snapshot folder.
func (s Storage) SnapshotData(handle string) string {
	return filepath.Join(s.Snapshot(handle), "data")
}

// SnapshotMeta is the metadata file inside a snapshot folder.
func (s Storage) SnapshotMeta(handle string) string {
	return filepath.Join(s.Snapshot(handle), "meta.json")
}

// IsBlockVolume reports whether a volume handle names an image file.
func (s Storage) IsBlockVolume(handle string) bool {
	info, err := os.Stat(s.Volume(handle, true))
	return err == nil && info.Mode().IsRegular()
}

// Ensure creates the driver's folders.
func (s Storage) Ensure() error {
	for _, dir := range []string{"volumes", "snapshots"} {
		if err := os.MkdirAll(filepath.Join(s.Root, dir), 0o755); err != nil {
			return err
		}
	}
	return nil
}
