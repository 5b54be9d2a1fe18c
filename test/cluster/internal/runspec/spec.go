// Package runspec is the contract between the node agent and container-init:
// everything a container process needs, written as JSON by the agent and read
// by container-init inside the container's fresh mount namespace.
package runspec

// Mount places a host path at a container path.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Spec describes one container process.
type Spec struct {
	// ScratchDir is an empty host directory where container-init builds the root
	// filesystem (a tmpfs-backed overlay of the host root).
	ScratchDir string   `json:"scratchDir"`
	Hostname   string   `json:"hostname"`
	Argv       []string `json:"argv"`
	Env        []string `json:"env"`
	WorkingDir string   `json:"workingDir"`
	// UID and GID are nil when the container runs as the image's user (root here).
	UID                *int64  `json:"uid,omitempty"`
	GID                *int64  `json:"gid,omitempty"`
	SupplementalGroups []int64 `json:"supplementalGroups,omitempty"`
	ReadOnlyRoot       bool    `json:"readOnlyRoot,omitempty"`
	Mounts             []Mount `json:"mounts"`
	// CgroupProcs lists cgroup.procs files the process joins before exec, so
	// everything it runs is accounted and limited.
	CgroupProcs []string `json:"cgroupProcs,omitempty"`
}
