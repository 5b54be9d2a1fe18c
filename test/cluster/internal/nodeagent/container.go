package nodeagent

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"ferry.dev/cluster/internal/runspec"
)

// process is one running container process.
type process struct {
	cmd     *exec.Cmd
	cgroup  *memoryCgroup
	log     *logFile
	started time.Time
	done    chan struct{}
	exit    exitResult
}

// exitResult is how a container run ended, in the words of a pod status.
type exitResult struct {
	code     int32
	signal   syscall.Signal
	reason   string // Completed, Error, OOMKilled, StartError
	message  string // start failure, when there is one
	finished time.Time
}

// startProcess writes the run spec and starts container-init in fresh mount,
// UTS and IPC namespaces. It returns once the command is executing or has
// failed to start; a start failure is reported as the process's exit.
func (a *Agent) startProcess(runDir, cgroupName string, spec *runspec.Spec, memLimit int64, log *logFile) (*process, error) {
	cg, err := newMemoryCgroup(a.cgroupDir, a.cgroupV2, cgroupName, memLimit)
	if err != nil {
		return nil, err
	}
	spec.CgroupProcs = []string{cg.procsFile()}
	specPath := filepath.Join(runDir, "spec.json")
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(specPath, raw, 0o600); err != nil {
		return nil, err
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer reportR.Close()
	cmd := exec.Command(a.self, "container-init", specPath)
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{reportW}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC,
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	p := &process{cmd: cmd, cgroup: cg, log: log, done: make(chan struct{}), started: time.Now()}
	err = cmd.Start()
	for _, f := range []*os.File{reportW, outW, errW} {
		f.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		cg.remove()
		return nil, fmt.Errorf("starting container-init: %w", err)
	}
	startErr, _ := io.ReadAll(reportR)
	go p.wait(outR, errR, string(startErr))
	return p, nil
}

// wait follows the process to its end. As when a container's PID 1 exits,
// whatever it left running is killed, which also closes the log pipes.
func (p *process) wait(stdout, stderr *os.File, startErr string) {
	copied := make(chan struct{}, 2)
	go func() { p.log.copyStream("stdout", stdout); copied <- struct{}{} }()
	go func() { p.log.copyStream("stderr", stderr); copied <- struct{}{} }()
	err := p.cmd.Wait()
	p.exit = classify(p.cmd, err, p.cgroup.oomKills() > 0, startErr)
	p.cgroup.remove()
	timeout := time.After(2 * time.Second)
	for i := 0; i < 2; i++ {
		select {
		case <-copied:
		case <-timeout:
			stdout.Close()
			stderr.Close()
		}
	}
	stdout.Close()
	stderr.Close()
	p.log.close()
	close(p.done)
}

func classify(cmd *exec.Cmd, err error, oom bool, startErr string) exitResult {
	res := exitResult{finished: time.Now(), reason: "Completed"}
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case status.Signaled():
			res.signal = status.Signal()
			res.code = 128 + int32(res.signal)
		default:
			res.code = int32(status.ExitStatus())
		}
	} else if err != nil {
		res.code = 128
	}
	switch {
	case startErr != "":
		res.reason, res.message, res.code = "StartError", startErr, 128
	case oom && (res.signal == syscall.SIGKILL || res.code != 0):
		res.reason, res.code = "OOMKilled", 137
	case res.code != 0:
		res.reason = "Error"
	}
	return res
}

// stop sends SIGTERM to the container's processes, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.signal(syscall.SIGKILL)
		<-p.done
	}
}

func (p *process) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	p.cgroup.killAll(sig)
}
