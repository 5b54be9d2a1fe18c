package nodeagent

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memoryCgroup is one container run's memory cgroup, nested under the cgroup
// the agent itself runs in, so the box never touches cgroups it does not own.
// It limits memory, counts OOM kills and finds every process to kill.
type memoryCgroup struct {
	dir string
	v2  bool
}

// cgroupBase finds the agent's own memory cgroup directory (v1 memory
// controller or the v2 unified hierarchy).
func cgroupBase() (dir string, v2 bool, err error) {
	raw, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false, err
	}
	var unified string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			if ctrl == "memory" {
				return filepath.Join("/sys/fs/cgroup/memory", parts[2]), false, nil
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
	}
	if unified == "" {
		return "", false, fmt.Errorf("no memory cgroup found in /proc/self/cgroup")
	}
	return filepath.Join("/sys/fs/cgroup", unified), true, nil
}

func newMemoryCgroup(parent string, v2 bool, name string, limit int64) (*memoryCgroup, error) {
	cg := &memoryCgroup{dir: filepath.Join(parent, name), v2: v2}
	if err := os.MkdirAll(cg.dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating cgroup %s: %w", cg.dir, err)
	}
	if limit <= 0 {
		return cg, nil
	}
	file, value := "memory.limit_in_bytes", strconv.FormatInt(limit, 10)
	if v2 {
		file = "memory.max"
	}
	if err := os.WriteFile(filepath.Join(cg.dir, file), []byte(value), 0o644); err != nil {
		return nil, fmt.Errorf("setting memory limit on %s: %w", cg.dir, err)
	}
	if v2 {
		// Without swap accounting the limit would spill into swap instead of OOM.
		_ = os.WriteFile(filepath.Join(cg.dir, "memory.swap.max"), []byte("0"), 0o644)
	}
	return cg, nil
}

func (cg *memoryCgroup) procsFile() string { return filepath.Join(cg.dir, "cgroup.procs") }

// oomKills is how many processes the kernel OOM killer has killed in this cgroup.
func (cg *memoryCgroup) oomKills() int {
	file := "memory.oom_control"
	if cg.v2 {
		file = "memory.events"
	}
	raw, err := os.ReadFile(filepath.Join(cg.dir, file))
	if err != nil {
		return 0
	}
	scanner := bufio.NewScanner(bytes.NewReader(raw))
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), "oom_kill "); ok {
			n, _ := strconv.Atoi(value)
			return n
		}
	}
	return 0
}

// killAll sends sig to every process still in the cgroup, daemons included.
func (cg *memoryCgroup) killAll(sig syscall.Signal) int {
	raw, err := os.ReadFile(cg.procsFile())
	if err != nil {
		return 0
	}
	n := 0
	for _, field := range strings.Fields(string(raw)) {
		if pid, err := strconv.Atoi(field); err == nil {
			_ = syscall.Kill(pid, sig)
			n++
		}
	}
	return n
}

// remove kills what is left and deletes the cgroup.
func (cg *memoryCgroup) remove() {
	for i := 0; i < 50 && cg.killAll(syscall.SIGKILL) > 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	_ = os.Remove(cg.dir)
}
