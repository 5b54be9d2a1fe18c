package nodeagent

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Container logs are kept as a kubelet keeps them, one file per container run
// in the CRI format ("<RFC3339Nano> <stdout|stderr> <F|P> <text>"), under
//
//	<state>/logs/<namespace>/<pod>_<uid>/<container>/<restartCount>.log
//
// They outlive the pod, so tests can read the logs of a Job's deleted pods.

// logFile is one container run's log, written by two stream copiers.
type logFile struct {
	mu   sync.Mutex
	file *os.File
	path string
}

func containerLogPath(stateDir, ns, pod, uid, container string, restart int32) string {
	return filepath.Join(stateDir, "logs", ns, pod+"_"+uid, container, fmt.Sprintf("%d.log", restart))
}

func openLog(path string) (*logFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &logFile{file: f, path: path}, nil
}

const maxLogLine = 16 * 1024

// copyStream writes what r yields as log lines tagged with the stream name;
// lines longer than 16 KiB are split into partial (P) records.
func (l *logFile) copyStream(stream string, r io.Reader) {
	reader := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, isPrefix, err := reader.ReadLine()
		if len(line) > 0 || (err == nil && !isPrefix) {
			tag := "F"
			if isPrefix {
				tag = "P"
			}
			l.mu.Lock()
			fmt.Fprintf(l.file, "%s %s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), stream, tag, line)
			l.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (l *logFile) close() { _ = l.file.Close() }

// logRecord is one parsed CRI log line.
type logRecord struct {
	time    time.Time
	stream  string
	partial bool
	text    string
}

func parseLogLine(line string) (logRecord, bool) {
	parts := strings.SplitN(line, " ", 4)
	if len(parts) < 3 {
		return logRecord{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, parts[0])
	if err != nil {
		return logRecord{}, false
	}
	rec := logRecord{time: t, stream: parts[1], partial: parts[2] == "P"}
	if len(parts) == 4 {
		rec.text = parts[3]
	}
	return rec, true
}

// tailText is the last lines of a log (at most maxBytes), for
// terminationMessagePolicy FallbackToLogsOnError.
func tailText(path string, lines, maxBytes int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var out []string
	for _, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		if rec, ok := parseLogLine(line); ok {
			out = append(out, rec.text)
		}
	}
	if len(out) > lines {
		out = out[len(out)-lines:]
	}
	text := strings.Join(out, "\n")
	if len(text) > maxBytes {
		text = text[len(text)-maxBytes:]
	}
	return text
}
