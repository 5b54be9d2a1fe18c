// Package logkeeper keeps real nodes' container logs after their pods are
// gone. A kubelet writes <podLogsDir>/<ns>_<pod>_<uid>/<container>/<n>.log and
// deletes them with the pod or with a dead container; the box's tests read the
// logs of finished Jobs' pods and of a container's earlier runs. Each log file
// is hard-linked, as soon as it appears, into the layout the tests read
// (<logs>/<ns>/<pod>_<uid>/<container>/<n>.log): the link shares the inode the
// runtime appends to, and outlives the kubelet's removal of its own name.
package logkeeper

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Run links new log files of every podLogsDir into logs until ctx ends.
func Run(ctx context.Context, podLogsDirs []string, logs string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, dir := range podLogsDirs {
			sweep(dir, logs)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func sweep(podLogsDir, logs string) {
	_ = filepath.WalkDir(podLogsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".log") {
			return nil // a pod's folder may vanish mid-walk
		}
		rel, _ := filepath.Rel(podLogsDir, path)
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) != 3 {
			return nil
		}
		// namespace and pod names are DNS labels/subdomains: no '_'
		fields := strings.SplitN(parts[0], "_", 3)
		if len(fields) != 3 {
			return nil
		}
		target := filepath.Join(logs, fields[0], fields[1]+"_"+fields[2], parts[1], parts[2])
		if _, err := os.Lstat(target); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if os.MkdirAll(filepath.Dir(target), 0o755) == nil {
			_ = os.Link(path, target)
		}
		return nil
	})
}
