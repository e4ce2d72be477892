package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Local runs commands on the host, each in its own session (so its own
// process group, with no controlling terminal) so that a timeout, a cancel,
// or the end of the run kills every process it started.
// The environment is exactly Command.Env, plus the host PATH when Env has none.
type Local struct {
	// KillGrace is how long the group gets between SIGTERM and SIGKILL
	// (default 2s).
	KillGrace time.Duration
}

const defaultKillGrace = 2 * time.Second

// Run implements Executor.
func (l Local) Run(ctx context.Context, cmd Command) (Exit, error) {
	if len(cmd.Args) == 0 {
		return Exit{Code: -1}, errors.New("sandbox: empty command")
	}
	grace := l.KillGrace
	if grace <= 0 {
		grace = defaultKillGrace
	}
	c := sessionCommand(cmd)

	// Own pipes (not exec's) so that Wait returns when the leader exits even
	// if a grandchild still holds the pipe open.
	var lastOutput atomic.Int64
	start := time.Now()
	lastOutput.Store(start.UnixNano())
	var copiers sync.WaitGroup
	readEnds, writeEnds, err := outputPipes(cmd, &lastOutput, &copiers)
	if err != nil {
		return Exit{Code: -1}, err
	}
	c.Stdout, c.Stderr = writeEnds[0], writeEnds[1]
	closeWriteEnds := func() {
		for _, w := range writeEnds {
			w.Close()
		}
	}
	if err := c.Start(); err != nil {
		closeWriteEnds()
		for _, r := range readEnds {
			r.Close()
		}
		copiers.Wait()
		return Exit{Code: -1, Detail: "could not start: " + err.Error()}, fmt.Errorf("sandbox: start %s: %w", cmd.Args[0], err)
	}
	closeWriteEnds()
	pgid := c.Process.Pid
	if cmd.started != nil {
		cmd.started(pgid)
	}

	waited := make(chan error, 1)
	go func() { waited <- c.Wait() }()

	ex := Exit{Code: -1}
	waitErr, killed := Watch(ctx, waited, cmd.WallTimeout, cmd.IdleTimeout, cmd.IdleFrom, &lastOutput, &ex)
	if killed {
		waitErr = killGroup(pgid, grace, waited)
	}
	if !killed {
		// The leader is gone; its leftovers (background jobs) go with it.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	// SIGKILL is delivered asynchronously: return only once no member of the
	// group still runs, so callers may rely on the group being gone.
	waitGroupDead(pgid, 2*time.Second)
	ex.Duration = time.Since(start)

	drainOutput(&copiers, readEnds)
	exitStatus(c.ProcessState, waitErr, &ex)
	return ex, nil
}

// sessionCommand is cmd as a process of a session of its own, its input
// never a terminal, with the status pipe and extra files of a confined
// command.
func sessionCommand(cmd Command) *exec.Cmd {
	c := exec.Command(cmd.Args[0], cmd.Args[1:]...)
	c.Dir = cmd.Dir
	c.Env = withPath(cmd.Env)
	c.Stdin = cmd.Stdin
	if f, ok := cmd.Stdin.(*os.File); ok && isTerminal(f) {
		// Never a terminal as the command's fd (it could write escapes to
		// it, or fake input): no input rather than the operator's.
		c.Stdin = nil
	}
	// A session of its own (so a group of its own too): no controlling
	// terminal, so nothing it starts can reach hoh's terminal (TIOCSTI,
	// job control, SIGHUP). The leader dies with hoh (a Confined leader
	// takes its whole PID namespace with it).
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if cmd.confine {
		confineAttr(c.SysProcAttr)
	}
	if cmd.status != nil {
		c.ExtraFiles = append([]*os.File{cmd.status}, cmd.extra...)
	}
	return c
}

// outputPipes makes a pipe for cmd's stdout and one for its stderr, each
// copied to its writer (none: discarded) by a copier of copiers that
// records in lastOutput when output was last seen. The two copiers never
// write at once: callers often give both streams one buffer, or two
// writers over one. On an error no pipe is left open.
func outputPipes(cmd Command, lastOutput *atomic.Int64, copiers *sync.WaitGroup) (readEnds, writeEnds []*os.File, err error) {
	var writing sync.Mutex
	for _, dst := range []io.Writer{cmd.Stdout, cmd.Stderr} {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range append(readEnds, writeEnds...) {
				f.Close()
			}
			return nil, nil, fmt.Errorf("sandbox: pipe: %w", err)
		}
		readEnds, writeEnds = append(readEnds, r), append(writeEnds, w)
		if dst == nil {
			dst = io.Discard
		}
		copiers.Add(1)
		go func() {
			defer copiers.Done()
			copyTracking(dst, r, lastOutput, &writing)
		}()
	}
	return readEnds, writeEnds, nil
}

// drainOutput waits for the copiers to copy what is still buffered in the
// pipes, then closes the read ends; a process outside the group holding a
// pipe open must not block us for long (2s).
func drainOutput(copiers *sync.WaitGroup, readEnds []*os.File) {
	drained := make(chan struct{})
	go func() { copiers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(2 * time.Second):
		for _, r := range readEnds {
			r.Close()
		}
		<-drained
	}
	for _, r := range readEnds {
		r.Close()
	}
}

// exitStatus sets ex's code from the leader's state ps (-1 if a signal
// killed it, said in the detail), or says why there is none.
func exitStatus(ps *os.ProcessState, waitErr error, ex *Exit) {
	if ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ex.Code = -1
			if ex.Detail == "" {
				ex.Detail = "killed by signal " + ws.Signal().String()
			}
		} else {
			ex.Code = ps.ExitCode()
		}
	} else if waitErr != nil && ex.Detail == "" {
		ex.Detail = "wait: " + waitErr.Error()
	}
}

// killGroup sends SIGTERM to the group, waits up to grace for the leader,
// then SIGKILLs whatever is left of the group (children may ignore SIGTERM).
func killGroup(pgid int, grace time.Duration, waited <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	var err error
	select {
	case err = <-waited:
		// The leader left; give the rest of the group the remaining grace.
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) && groupAlive(pgid) {
			time.Sleep(20 * time.Millisecond)
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		err = <-waited
	}
	return err
}

func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}

// waitGroupDead polls until no process of the group is running, at most
// limit. Zombies do not count: an orphan's zombie stays until its new parent
// reaps it, which may be never where PID 1 does not reap.
func waitGroupDead(pgid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for groupRunning(pgid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

func groupRunning(pgid int) bool {
	if !groupAlive(pgid) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: assume the worst, the poll is bounded
	}
	want := fmt.Sprint(pgid)
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid pgrp ...
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

func copyTracking(dst io.Writer, src io.Reader, last *atomic.Int64, writing *sync.Mutex) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			writing.Lock()
			_, _ = dst.Write(buf[:n])
			writing.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// withPath returns env plus the host PATH when env does not set one.
func withPath(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			return env
		}
	}
	out := append([]string(nil), env...)
	if env == nil {
		out = []string{} // a nil Env would make exec inherit everything
	}
	return append(out, "PATH="+os.Getenv("PATH"))
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return e == 0
}
