package nodeagent

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// serveKubelet serves the part of the kubelet API `kubectl logs` goes through
// (the apiserver proxies /containerLogs to the node's InternalIP and kubelet
// port), with TLS and client certificates from the box CA.
func (a *Agent) serveKubelet(ctx context.Context, node string, port int32) error {
	caPEM, err := os.ReadFile(a.opts.ClientCA)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(a.opts.TLSCert, a.opts.TLSKey)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", a.containerLogs)
	ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", nodeIP, port))
	if err != nil {
		return fmt.Errorf("node %s cannot listen on its kubelet port %d: %w", node, port, err)
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
	}}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && err != http.ErrServerClosed {
			klog.Errorf("kubelet endpoint of %s: %v", node, err)
		}
	}()
	return nil
}

func (a *Agent) containerLogs(w http.ResponseWriter, r *http.Request) {
	ns, name, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	pod, err := a.pods.Pods(ns).Get(name)
	if err != nil {
		http.Error(w, fmt.Sprintf("pod %s/%s not found", ns, name), http.StatusNotFound)
		return
	}
	dir := filepath.Dir(containerLogPath(a.opts.StateDir, ns, name, string(pod.UID), container, 0))
	runs := logRuns(dir)
	q := r.URL.Query()
	index := len(runs) - 1
	if q.Get("previous") == "true" {
		index--
	}
	if index < 0 {
		http.Error(w, fmt.Sprintf("container %s of pod %s/%s has no logs", container, ns, name), http.StatusBadRequest)
		return
	}
	opts := logQuery{timestamps: q.Get("timestamps") == "true", tail: -1, limit: -1}
	if v, err := strconv.Atoi(q.Get("tailLines")); err == nil {
		opts.tail = v
	}
	if v, err := strconv.Atoi(q.Get("limitBytes")); err == nil {
		opts.limit = v
	}
	if v, err := strconv.Atoi(q.Get("sinceSeconds")); err == nil {
		opts.since = time.Now().Add(-time.Duration(v) * time.Second)
	}
	if v, err := time.Parse(time.RFC3339, q.Get("sinceTime")); err == nil {
		opts.since = v
	}
	w.Header().Set("Content-Type", "text/plain")
	offset := writeLog(w, runs[index], opts)
	if q.Get("follow") == "true" && index == len(runs)-1 {
		a.followLog(r.Context(), w, runs[index], offset, pod.UID, container, opts)
	}
}

// logRuns lists a container's log files, oldest run first.
func logRuns(dir string) []string {
	entries, _ := os.ReadDir(dir)
	type run struct {
		n    int
		path string
	}
	var runs []run
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".log")); err == nil {
			runs = append(runs, run{n, filepath.Join(dir, e.Name())})
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].n < runs[j].n })
	paths := make([]string, len(runs))
	for i, r := range runs {
		paths[i] = r.path
	}
	return paths
}

type logQuery struct {
	timestamps bool
	tail       int
	limit      int
	since      time.Time
}

// writeLog writes the selected records and returns how far the file was read.
func writeLog(w io.Writer, path string, q logQuery) int64 {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var recs []logRecord
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		if rec, ok := parseLogLine(line); ok && !rec.time.Before(q.since) {
			recs = append(recs, rec)
		}
	}
	if q.tail >= 0 && len(recs) > q.tail {
		recs = recs[len(recs)-q.tail:]
	}
	out := &limitedWriter{w: w, left: q.limit}
	for _, rec := range recs {
		out.record(rec, q.timestamps)
	}
	return int64(len(raw))
}

// followLog streams what is appended until the container run has ended.
func (a *Agent) followLog(ctx context.Context, w http.ResponseWriter, path string, offset int64, uid types.UID, container string, q logQuery) {
	flusher, _ := w.(http.Flusher)
	out := &limitedWriter{w: w, left: q.limit}
	for {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		_, _ = f.Seek(offset, io.SeekStart)
		reader := bufio.NewReader(f)
		for {
			line, err := reader.ReadString('\n')
			if err != nil {
				break
			}
			offset += int64(len(line))
			if rec, ok := parseLogLine(strings.TrimSuffix(line, "\n")); ok {
				out.record(rec, q.timestamps)
			}
		}
		f.Close()
		if flusher != nil {
			flusher.Flush()
		}
		if !a.containerRunning(uid, container) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (a *Agent) containerRunning(uid types.UID, container string) bool {
	a.mu.Lock()
	w := a.workers[uid]
	a.mu.Unlock()
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, cs := range append(append([]*containerState{}, w.init...), w.main...) {
		if cs.spec.Name == container {
			return cs.running != nil
		}
	}
	return false
}

// limitedWriter honours limitBytes; partial records join the next one.
type limitedWriter struct {
	w    io.Writer
	left int
}

func (l *limitedWriter) record(rec logRecord, timestamps bool) {
	text := rec.text
	if !rec.partial {
		text += "\n"
	}
	if timestamps {
		text = rec.time.Format(time.RFC3339Nano) + " " + text
	}
	if l.left >= 0 {
		if l.left == 0 {
			return
		}
		if len(text) > l.left {
			text = text[:l.left]
		}
		l.left -= len(text)
	}
	_, _ = io.WriteString(l.w, text)
}
