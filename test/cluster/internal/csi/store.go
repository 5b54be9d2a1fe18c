package csi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"ferry.dev/cluster/internal/layout"
)

// volumeRecord is what the driver keeps beside a volume's data: what
// CreateVolume was asked, so a repeated call can be told from a conflicting one.
type volumeRecord struct {
	Name          string `json:"name"`
	CapacityBytes int64  `json:"capacityBytes"`
	Block         bool   `json:"block"`
	Node          string `json:"node,omitempty"`
	// SourceSnapshot or SourceVolume is the content the volume was made from.
	SourceSnapshot string `json:"sourceSnapshot,omitempty"`
	SourceVolume   string `json:"sourceVolume,omitempty"`
}

// snapshotRecord is the snapshot's meta.json; the first four fields are all a
// snapshot needs, so a snapshot folder written by hand (as a pre-provisioned
// content's snapshotHandle names it) is readable.
type snapshotRecord struct {
	SourceVolume string    `json:"sourceVolume"`
	SizeBytes    int64     `json:"sizeBytes"`
	Block        bool      `json:"block"`
	CreatedAt    time.Time `json:"createdAt"`
	Name         string    `json:"name,omitempty"`
	ReadyAt      time.Time `json:"readyAt,omitzero"`
	Group        string    `json:"group,omitempty"`
}

// groupRecord is a group snapshot: its member snapshots, one per source volume.
type groupRecord struct {
	Name      string            `json:"name"`
	Snapshots map[string]string `json:"snapshots"` // source volume ID -> snapshot ID
	CreatedAt time.Time         `json:"createdAt"`
	ReadyAt   time.Time         `json:"readyAt"`
}

var plainName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,100}$`)

// idFor turns a CO-chosen name into an ID, the same on every call so that a
// retried create finds its earlier result. Names a Kubernetes sidecar makes
// (pvc-<uid>, snapshot-<uid>) are kept as they are; any other string (CSI
// allows all of Unicode) becomes a hash, with a prefix no plain name has.
func idFor(name string) string {
	if plainName.MatchString(name) && !strings.HasPrefix(name, "h.") {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return "h." + hex.EncodeToString(sum[:16])
}

// validID rejects IDs that could leave the storage root.
func validID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\x00") && len(id) <= 128
}

func volumeRecordPath(st layout.Storage, id string) string {
	return filepath.Join(st.Root, "volumes", id+".json")
}

func groupsDir(st layout.Storage) string { return filepath.Join(st.Root, "groups") }

func groupRecordPath(st layout.Storage, id string) string {
	return filepath.Join(groupsDir(st), id+".json")
}

// readJSON reads a record; found is false when the file does not exist.
func readJSON(path string, into any) (found bool, err error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return false, fmt.Errorf("%s is not a record of this driver: %w", path, err)
	}
	return true, nil
}

// writeJSON writes a record whole or not at all.
func writeJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (d *Driver) volume(id string) (*volumeRecord, bool, error) {
	if !validID(id) {
		return nil, false, nil
	}
	var rec volumeRecord
	found, err := readJSON(volumeRecordPath(d.opts.Storage, id), &rec)
	return &rec, found, err
}

func (d *Driver) snapshot(id string) (*snapshotRecord, bool, error) {
	if !validID(id) {
		return nil, false, nil
	}
	var rec snapshotRecord
	found, err := readJSON(d.opts.Storage.SnapshotMeta(id), &rec)
	return &rec, found, err
}

func (d *Driver) group(id string) (*groupRecord, bool, error) {
	if !validID(id) {
		return nil, false, nil
	}
	var rec groupRecord
	found, err := readJSON(groupRecordPath(d.opts.Storage, id), &rec)
	return &rec, found, err
}

// volumeIDs lists the volumes with a record, sorted, for paging.
func (d *Driver) volumeIDs() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(d.opts.Storage.Root, "volumes"))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// snapshotIDs lists the snapshot folders, sorted, for paging.
func (d *Driver) snapshotIDs() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(d.opts.Storage.Root, "snapshots"))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}
