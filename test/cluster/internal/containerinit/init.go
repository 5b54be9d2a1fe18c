// Package containerinit turns a freshly cloned process (own mount and UTS
// namespaces, created by the node agent) into a container: it builds a
// copy-on-write view of the host root, mounts the pod's volumes at the pod's
// own paths, drops to the pod's user and executes the container's command.
//
// Failures before exec are written to fd 3, a close-on-exec pipe the agent
// reads: EOF without data means the exec succeeded.
package containerinit

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"ferry.dev/cluster/internal/runspec"
)

// Main runs container-init with the spec file named in args and never returns.
func Main(args []string) {
	report := os.NewFile(3, "init-report")
	if len(args) != 1 {
		fail(report, fmt.Errorf("container-init needs exactly one argument, the spec file"))
	}
	spec, err := readSpec(args[0])
	if err == nil {
		err = run(spec, report)
	}
	fail(report, err)
}

func fail(report *os.File, err error) {
	msg := fmt.Sprintf("container-init: %v", err)
	if report != nil {
		_, _ = report.WriteString(msg)
	}
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(128)
}

func readSpec(path string) (*runspec.Spec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec runspec.Spec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("spec file %s is not valid JSON: %w", path, err)
	}
	return &spec, nil
}

func run(spec *runspec.Spec, report *os.File) error {
	syscall.CloseOnExec(3)
	for _, procs := range spec.CgroupProcs {
		if err := os.WriteFile(procs, []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
			return fmt.Errorf("joining cgroup %s: %w", procs, err)
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	root, err := overlayRoot(spec.ScratchDir)
	if err != nil {
		return err
	}
	sources, err := openSources(spec.Mounts)
	if err != nil {
		return err
	}
	hostDev, err := openHostDevices()
	if err != nil {
		return err
	}
	if err := unix.Chroot(root); err != nil {
		return fmt.Errorf("chroot into %s: %w", root, err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := mountSystem(hostDev); err != nil {
		return err
	}
	if err := mountVolumes(spec.Mounts, sources); err != nil {
		return err
	}
	if err := os.MkdirAll(spec.WorkingDir, 0o755); err != nil {
		return fmt.Errorf("creating working directory %s: %w", spec.WorkingDir, err)
	}
	if spec.ReadOnlyRoot {
		if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("making the root filesystem read-only: %w", err)
		}
	}
	if err := os.Chdir(spec.WorkingDir); err != nil {
		return err
	}
	if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
		return fmt.Errorf("setting hostname: %w", err)
	}
	if err := dropPrivileges(spec); err != nil {
		return err
	}
	return execute(spec)
}

// overlayRoot mounts a tmpfs in the scratch directory and an overlay of the
// host root on it, so the container may write anywhere without touching the host.
func overlayRoot(scratch string) (string, error) {
	if err := unix.Mount("tmpfs", scratch, "tmpfs", 0, "mode=0755"); err != nil {
		return "", fmt.Errorf("mounting scratch tmpfs on %s: %w", scratch, err)
	}
	upper, work, merged := filepath.Join(scratch, "upper"), filepath.Join(scratch, "work"), filepath.Join(scratch, "merged")
	for _, dir := range []string{upper, work, merged} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
	}
	opts := fmt.Sprintf("lowerdir=/,upperdir=%s,workdir=%s", upper, work)
	if err := unix.Mount("overlay", merged, "overlay", 0, opts); err != nil {
		return "", fmt.Errorf("mounting overlay root: %w", err)
	}
	return merged, nil
}

// openSources opens every mount source before chroot; the mounts themselves
// happen after chroot so that symlinks in target paths (/var/run -> /run)
// resolve inside the container root, never on the host.
func openSources(mounts []runspec.Mount) ([]*os.File, error) {
	files := make([]*os.File, len(mounts))
	for i, m := range mounts {
		fd, err := unix.Open(m.Source, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("opening mount source %s: %w", m.Source, err)
		}
		files[i] = os.NewFile(uintptr(fd), m.Source)
	}
	return files, nil
}

var deviceNodes = []string{"null", "zero", "full", "random", "urandom", "tty", "pts"}

func openHostDevices() (map[string]*os.File, error) {
	files := map[string]*os.File{}
	for _, name := range append(deviceNodes, "/sys") {
		path := name
		if !strings.HasPrefix(name, "/") {
			path = "/dev/" + name
		}
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // a missing optional device is not fatal
		}
		files[name] = os.NewFile(uintptr(fd), path)
	}
	return files, nil
}

func mountSystem(hostDev map[string]*os.File) error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NOEXEC|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	if sys, ok := hostDev["/sys"]; ok {
		if err := bindFd(sys, "/sys", true); err != nil {
			return err
		}
	}
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID, "mode=0755"); err != nil {
		return fmt.Errorf("mounting /dev: %w", err)
	}
	for _, name := range deviceNodes {
		file, ok := hostDev[name]
		if !ok {
			continue
		}
		if err := bindFd(file, "/dev/"+name, false); err != nil {
			return err
		}
	}
	if err := os.Mkdir("/dev/shm", 0o1777); err != nil {
		return err
	}
	if err := unix.Mount("shm", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mounting /dev/shm: %w", err)
	}
	links := map[string]string{"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
		"/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2", "/dev/ptmx": "pts/ptmx"}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	return nil
}

// mountVolumes binds the sources at their targets, shallow paths first so a
// volume mounted inside another one stays visible.
func mountVolumes(mounts []runspec.Mount, sources []*os.File) error {
	order := make([]int, len(mounts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return depth(mounts[order[a]].Target) < depth(mounts[order[b]].Target)
	})
	for _, i := range order {
		if err := bindFd(sources[i], mounts[i].Target, mounts[i].ReadOnly); err != nil {
			return err
		}
	}
	return nil
}

func depth(path string) int { return strings.Count(filepath.Clean(path), "/") }

// bindFd bind-mounts an opened source at target, creating a directory or an
// empty file as the mount point to match the source.
func bindFd(source *os.File, target string, readOnly bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(source.Fd()), &st); err != nil {
		return fmt.Errorf("inspecting %s: %w", source.Name(), err)
	}
	if err := mountPoint(target, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return fmt.Errorf("creating mount point %s: %w", target, err)
	}
	from := fmt.Sprintf("/proc/self/fd/%d", source.Fd())
	if err := unix.Mount(from, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("mounting %s at %s: %w", source.Name(), target, err)
	}
	if readOnly {
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		if err := unix.Mount("", target, "", flags, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", target, err)
		}
	}
	return nil
}

func mountPoint(target string, dir bool) error {
	if dir {
		return os.MkdirAll(target, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

func dropPrivileges(spec *runspec.Spec) error {
	groups := make([]int, 0, len(spec.SupplementalGroups))
	for _, g := range spec.SupplementalGroups {
		groups = append(groups, int(g))
	}
	if err := unix.Setgroups(groups); err != nil {
		return fmt.Errorf("setting supplemental groups: %w", err)
	}
	if spec.GID != nil {
		if err := unix.Setgid(int(*spec.GID)); err != nil {
			return fmt.Errorf("setting group %d: %w", *spec.GID, err)
		}
	}
	if spec.UID != nil {
		if err := unix.Setuid(int(*spec.UID)); err != nil {
			return fmt.Errorf("setting user %d: %w", *spec.UID, err)
		}
		// A credential change clears the parent-death signal; re-arm it so the
		// container dies with the node agent.
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

func execute(spec *runspec.Spec) error {
	if len(spec.Argv) == 0 {
		return fmt.Errorf("the container has no command")
	}
	for _, kv := range spec.Env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			_ = os.Setenv("PATH", path)
		}
	}
	binary, err := exec.LookPath(spec.Argv[0])
	if err != nil {
		return fmt.Errorf("executable %q not found in the container's PATH", spec.Argv[0])
	}
	unix.Umask(0o022)
	err = unix.Exec(binary, spec.Argv, spec.Env)
	return fmt.Errorf("exec %s: %w", binary, err)
}
