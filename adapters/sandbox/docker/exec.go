package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/hoh-research/hoh/adapters/sandbox"
)

type sandboxCommand = sandbox.Command

// Every command runs under this wrapper: before exec'ing the command
// (which keeps its pid) it announces its pid and start time (clock ticks
// since boot, /proc/<pid>/stat field 22) on stderr, so a timeout can kill
// the command's whole process tree and the processes it leaves behind can
// be told from older ones. hoh reads the announcement from the stream and
// keeps it: no file in the container records it, so nothing the agent
// writes can point the kill elsewhere. The kill walks /proc for descendants
// because exec'd processes are not reliably process-group leaders and
// images may lack setsid/pkill. Builtins only: the wrapper must not fork.
const pidMarker = "hoh-exec-pid:"

const wrapper = `hoh_announce() { echo "` + pidMarker + `$$ ${20}" >&2; }
{ read -r s < /proc/$$/stat; } 2>/dev/null; hoh_announce ${s##*) } && exec "$@"`

const killTree = `
kids() { for s in /proc/[0-9]*/stat; do
  st=$(cat "$s" 2>/dev/null) || continue
  rest=${st##*) }; set -- $rest
  [ "$2" = "$PARENT" ] && echo "${st%% *}"
done; }
all=""; todo="$0"
while [ -n "$todo" ]; do
  set -- $todo; PARENT=$1; shift; todo="$* $(kids)"; todo=$(echo $todo)
  all="$all $PARENT"
done
kill -STOP $all 2>/dev/null; kill -KILL $all 2>/dev/null; exit 0`

// endLeftoversScript ends what a command left running. Its argument is the
// command's start time (as announced by the wrapper). A process is the
// command's if it started no earlier and its chain of parents, followed
// while they too started no earlier, ends at the container's init (an
// orphan: background jobs and double-forked daemons are reparented there)
// or at an exec of its own (the command itself, still running) other than
// this script's. Processes that existed before (init, the keep-alive loop,
// an ENTRYPOINT's services, hoh's relays) are kept, and so are the children
// those start meanwhile (a database's worker for a client's connection).
// Candidates are stopped first and /proc is scanned again until no new one
// appears, so nothing forks away between scan and kill; then all are
// killed, and the script returns only once none of them runs any more (a
// killed process may still finish the system call it is in, a write into
// the workspace included; zombies are done). Prints "pid comm" per process
// ended. Builtins only (no fork, no ps/pkill in minimal images; sleep is
// used where the image has it, else the wait spins); variables named after
// pids stand in for a map in POSIX sh.
const endLeftoversScript = `
T=$1; me=$$; round=0; stopped=" "
case $T in ''|*[!0-9]*) echo "bad start time '$T'" >&2; exit 2;; esac
scan() { seen=""; for f in /proc/[0-9]*/stat; do
  { read -r l < "$f"; } 2>/dev/null || continue
  p=${l%% *}; note $p ${l##*) }
done; }
note() { p=$1; shift; [ "$1" = Z ] && return
  eval "g_$p=$round pp_$p=$2 st_$p=${20}"; seen="$seen $p"; }
mine() { q=$1; while :; do
  eval "g=\${g_$q-} s=\${st_$q-} up=\${pp_$q-}"
  [ "$g" = "$round" ] || { again=1; return 1; }
  [ "$s" -ge "$T" ] || { [ "$q" = 1 ]; return; }
  [ "$up" = 0 ] && { [ "$q" != "$me" ]; return; }
  q=$up
done; }
while [ $round -lt 100 ]; do
  round=$((round+1)); again=0; found=0; scan
  for p in $seen; do
    eval "s=\$st_$p"
    [ "$p" != 1 ] && [ "$s" -ge "$T" ] || continue
    case $stopped in *" $p "*) continue;; esac
    mine $p || continue
    kill -STOP $p 2>/dev/null || continue
    stopped="$stopped$p "; found=1
  done
  [ $found = 0 ] && [ $again = 0 ] && break
done
[ $found = 0 ] || { echo "processes kept appearing" >&2; exit 3; }
for p in $stopped; do
  c=?; { read -r c < /proc/$p/comm; } 2>/dev/null
  kill -KILL $p 2>/dev/null && echo "$p $c"
done
n=0; while [ $n -lt 3000 ]; do
  left=0
  for p in $stopped; do
    { read -r l < /proc/$p/stat; } 2>/dev/null || continue
    set -- ${l##*) }; eval "s=\$st_$p"
    [ "$1" = Z ] || [ "$1" = X ] || [ "${20}" != "$s" ] || left=1
  done
  [ $left = 0 ] && exit 0
  n=$((n+1)); sleep 0.01 2>/dev/null
done
echo "killed processes did not end" >&2; exit 4`

// Executor runs commands in the environment's container, as Spec.User.
// When a command ends (exit, timeout, idle, cancel), every process it left
// running is killed, as a role invocation on the host dies with its PID
// namespace: nothing a role started can change the workspace after hoh
// checked it, and nothing an artifact's build started can touch its tests.
// Processes older than the command stay (init, the ENTRYPOINT's services,
// hoh's relays); hoh's own helpers (quickExec) are not wrapped and exempt.
// So commands in one container must not overlap: the end of one would kill
// what the other started. hoh runs a container's commands one at a time.
func (env *Environment) Executor() sandbox.Executor { return &executor{env: env} }

// ExecutorAs runs commands as user (a name or uid[:gid]; "0" is root).
func (env *Environment) ExecutorAs(user string) sandbox.Executor {
	return &executor{env: env, user: user}
}

type executor struct {
	env  *Environment
	user string
}

// activityWriter forwards writes and records when output was last seen.
type activityWriter struct {
	w    io.Writer
	last *atomic.Int64
}

func (a activityWriter) Write(p []byte) (int, error) {
	a.last.Store(time.Now().UnixNano())
	if a.w == nil {
		return len(p), nil
	}
	return a.w.Write(p)
}

func (x *executor) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Exit, error) {
	env := x.env
	api := env.c.API
	start := time.Now()
	if len(cmd.Args) == 0 {
		return sandbox.Exit{Code: -1}, fmt.Errorf("docker exec: empty command")
	}
	args := append([]string{"/bin/sh", "-c", wrapper, "hoh-exec"}, cmd.Args...)
	dir := cmd.Dir
	if dir == "" {
		dir = env.spec.Workdir
	}
	user := x.user
	if user == "" {
		user = env.spec.User
	}
	ec, err := api.ContainerExecCreate(ctx, env.ID, container.ExecOptions{
		Cmd: args, Env: cmd.Env, WorkingDir: dir, User: user,
		AttachStdin: cmd.Stdin != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return sandbox.Exit{Code: -1, Detail: err.Error()}, &InfraError{Stage: "exec", Err: err}
	}
	hj, err := api.ContainerExecAttach(ctx, ec.ID, container.ExecAttachOptions{})
	if err != nil {
		return sandbox.Exit{Code: -1, Detail: err.Error()}, &InfraError{Stage: "exec attach", Err: err}
	}
	defer hj.Close()
	if cmd.Stdin != nil {
		go func() {
			_, _ = io.Copy(hj.Conn, cmd.Stdin)
			_ = hj.CloseWrite()
		}()
	}
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	pids := &pidCatcher{w: activityWriter{cmd.Stderr, &last}}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(activityWriter{cmd.Stdout, &last}, pids, hj.Reader)
		copied <- err
	}()

	exit := sandbox.Exit{}
	copyErr, fired := sandbox.Watch(ctx, copied, cmd.WallTimeout, cmd.IdleTimeout, cmd.IdleFrom, &last, &exit)
	if fired {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		if err := env.killExec(kctx, pids.pid()); err != nil {
			// Last resort: the container goes, and with it the tree.
			exit.Detail += fmt.Sprintf("; tree kill failed (%v), container killed", err)
			_ = env.Kill(kctx)
		}
		cancel()
		copyErr = <-copied
	}
	exit.Duration = time.Since(start)
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	ins, err := env.waitExecEnd(ictx, ec.ID)
	if err != nil {
		exit.Code = -1
		return exit, &InfraError{Stage: "exec inspect", Err: err}
	}
	exit.Code = ins.ExitCode
	if exit.TimedOut || exit.Idle {
		exit.Code = -1
	}
	return env.afterExec(ictx, ins, exit, pids, copyErr)
}

// waitExecEnd inspects exec id until its process has ended, for at most
// 50 tries 100ms apart (the output stream may close before the engine
// records the exit).
func (env *Environment) waitExecEnd(ctx context.Context, id string) (container.ExecInspect, error) {
	var ins container.ExecInspect
	var err error
	for i := 0; i < 50; i++ {
		ins, err = env.c.API.ContainerExecInspect(ctx, id)
		if err != nil || !ins.Running {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ins, err
}

// afterExec completes exit of the ended exec ins: an infrastructure error
// if the container stopped during it, the processes it left ended, and an
// OOM kill or the output stream's error explained.
func (env *Environment) afterExec(ctx context.Context, ins container.ExecInspect, exit sandbox.Exit, pids *pidCatcher, copyErr error) (sandbox.Exit, error) {
	st, serr := env.State(ctx)
	// A process killed by a signal may be the first sign of a dying
	// container: give the engine a moment to report the container's end.
	for i := 0; serr == nil && st.Running && ins.ExitCode >= 128 && i < 20; i++ {
		time.Sleep(100 * time.Millisecond)
		st, serr = env.State(ctx)
	}
	if serr != nil {
		return exit, &InfraError{Stage: "inspect", Err: serr}
	}
	if !st.Running {
		ev := fmt.Sprintf("container %s stopped during command (status %s, exit %d, OOMKilled %v, error %q)",
			short(env.ID), st.Status, st.ExitCode, st.OOMKilled, st.Error)
		if exit.Detail != "" && strings.Contains(exit.Detail, "container killed") {
			return exit, nil // we killed it ourselves on timeout
		}
		exit.Code = -1
		exit.OOM = st.OOMKilled
		exit.Detail = ev
		return exit, &InfraError{Stage: "run", Err: fmt.Errorf("%s", ev), OOM: st.OOMKilled}
	}
	// Nothing the command started outlives it (see endLeftoversScript).
	ended, err := env.endLeftovers(ctx, pids.startTime())
	if err != nil {
		// Whatever keeps running would race with the next command: the
		// container goes, and with it everything in it.
		_ = env.Kill(ctx)
		exit.Detail = joinDetail(exit.Detail, "container killed")
		return exit, &InfraError{Stage: "ending leftover processes", Err: err}
	}
	if len(ended) > 0 {
		exit.Detail = joinDetail(exit.Detail, fmt.Sprintf("ended %d process(es) the command left running: %s", len(ended), strings.Join(ended, ", ")))
	}
	if copyErr != nil && exit.Detail == "" {
		exit.Detail = "output stream: " + copyErr.Error()
	}
	if exit.Code == 137 && !exit.TimedOut && !exit.Idle {
		if n, ok := env.oomKills(ctx); ok && n > 0 {
			exit.OOM = true
			exit.Detail = fmt.Sprintf("killed by the OOM killer (memory limit %d MB; %d OOM kill(s) in the container cgroup)", env.spec.MemoryMB, n)
		}
	}
	return exit, nil
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// pidCatcher passes stderr on, except the wrapper's first line announcing
// the command's pid and start time, which it keeps.
type pidCatcher struct {
	w     io.Writer
	mu    sync.Mutex
	done  bool
	buf   []byte
	got   int
	start int64
}

func (p *pidCatcher) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return p.w.Write(b)
	}
	p.buf = append(p.buf, b...)
	i := bytes.IndexByte(p.buf, '\n')
	if i < 0 && len(p.buf) < 64 {
		return len(b), nil
	}
	p.done = true
	rest := p.buf
	if i >= 0 && bytes.HasPrefix(p.buf, []byte(pidMarker)) {
		f := strings.Fields(string(p.buf[len(pidMarker):i]))
		if len(f) > 0 {
			p.got, _ = strconv.Atoi(f[0])
		}
		if len(f) > 1 {
			p.start, _ = strconv.ParseInt(f[1], 10, 64)
		}
		rest = p.buf[i+1:]
	}
	p.buf = nil
	if len(rest) > 0 {
		if _, err := p.w.Write(rest); err != nil {
			return len(b), err
		}
	}
	return len(b), nil
}

func (p *pidCatcher) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got
}

// startTime is the command's start in clock ticks since boot; 0 if never
// announced.
func (p *pidCatcher) startTime() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.start
}

// endLeftovers kills every process the command that started at start left
// running (see the script) and names them ("pid comm").
func (env *Environment) endLeftovers(ctx context.Context, start int64) ([]string, error) {
	if start <= 0 {
		return nil, fmt.Errorf("the command's start time was never announced")
	}
	out, err := env.quickExec(ctx, "/bin/sh", "-c", endLeftoversScript, "hoh-end-leftovers", strconv.FormatInt(start, 10))
	if err != nil {
		return nil, err
	}
	var ended []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			q := strconv.QuoteToGraphic(l) // a comm is the agent's to choose
			ended = append(ended, q[1:len(q)-1])
		}
	}
	return ended, nil
}

// killExec kills the process tree rooted at pid (as announced by the
// wrapper).
func (env *Environment) killExec(ctx context.Context, pid int) error {
	if pid <= 1 {
		return fmt.Errorf("the command's pid was never announced")
	}
	_, err := env.quickExec(ctx, "/bin/sh", "-c", killTree, strconv.Itoa(pid))
	return err
}

// quickExec runs a short helper command directly (no wrapper, no timeouts
// beyond ctx) and returns its stdout; a non-zero exit is an error.
func (env *Environment) quickExec(ctx context.Context, args ...string) (string, error) {
	api := env.c.API
	// As root: the helpers kill and clean up after any user's commands. In
	// /: the container's working directory may have been replaced (by a
	// link to the trial workspace) or removed, and exec fails to chdir.
	ec, err := api.ContainerExecCreate(ctx, env.ID, container.ExecOptions{Cmd: args, User: "0", WorkingDir: "/", AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "", err
	}
	hj, err := api.ContainerExecAttach(ctx, ec.ID, container.ExecAttachOptions{})
	if err != nil {
		return "", err
	}
	defer hj.Close()
	// A helper stopped by what it works on (a leftover running as root)
	// must not hang hoh: the stream closes when ctx ends.
	defer context.AfterFunc(ctx, func() { hj.Close() })()
	var out, errb bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errb, hj.Reader); err != nil {
		return "", err
	}
	ins, err := api.ContainerExecInspect(ctx, ec.ID)
	if err != nil {
		return "", err
	}
	if ins.ExitCode != 0 {
		return out.String(), fmt.Errorf("%s: exit %d: %s", strings.Join(args, " "), ins.ExitCode, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// oomKills reads the container's memory cgroup OOM-kill counter (cgroup v1
// memory.oom_control or v2 memory.events, as seen from inside).
func (env *Environment) oomKills(ctx context.Context) (int, bool) {
	for _, f := range []string{"/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"} {
		out, err := env.quickExec(ctx, "cat", f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			fs := strings.Fields(line)
			if len(fs) == 2 && fs[0] == "oom_kill" {
				n, err := strconv.Atoi(fs[1])
				return n, err == nil
			}
		}
	}
	return 0, false
}
