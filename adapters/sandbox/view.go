package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// View is the file system one confined invocation sees: every directory in
// Hide appears as an empty private tmpfs, and every path in Show (read-only)
// or Write (writable) is bound back at its own place, whether or not it lies
// under a hidden directory. A path in Show outside every hidden directory is
// made read-only in place (the QA Tester's candidate). Entries apply from the
// shortest path to the longest, so a hidden directory inside a shown one stays
// hidden and a shown file inside a hidden directory reappears.
type View struct {
	Hide  []string `json:"hide,omitempty"`
	Show  []string `json:"show,omitempty"`
	Write []string `json:"write,omitempty"`
	// Tools are read-only allow entries for what runs the command: the
	// CLI's install directory and its Node runtime (cliinstall.ViewPaths),
	// shown like Show wherever they lie, under /tmp or $TMPDIR included.
	Tools []string `json:"tools,omitempty"`
}

// Confined runs each command of a host executor (Local) in its own
// unprivileged user, mount and PID namespace holding View, with a fresh /proc
// (no other process of the machine is visible, so none of their /proc/PID/root
// or cwd leads back into the host's tree). The namespace's first process is a
// small init of hoh's own (this binary, re-executed) that builds the view,
// starts the command and reaps; it dies with hoh (parent-death signal), and
// with it the kernel kills every process of the namespace: no agent process
// outlives the invocation or hoh.
type Confined struct {
	Inner Executor
	View  View
	// Started, when set, is called with the init's pid as soon as it runs
	// (so a crashed run's leftovers can be found and ended on resume).
	Started func(pid int)
}

// Run implements Executor.
func (c Confined) Run(ctx context.Context, cmd Command) (Exit, error) {
	if len(cmd.Args) == 0 {
		return Exit{Code: -1}, errors.New("sandbox: empty command")
	}
	if err := NamespacesAvailable(); err != nil {
		return Exit{Code: -1}, err
	}
	if cmd.Dir != "" {
		// The init enters the directory by name, from its own.
		abs, err := filepath.Abs(cmd.Dir)
		if err != nil {
			return Exit{Code: -1}, err
		}
		cmd.Dir = abs
	}
	spec, err := json.Marshal(initSpec{View: c.View, Dir: cmd.Dir, Status: true})
	if err != nil {
		return Exit{Code: -1}, err
	}
	cmd.Args = append([]string{"/proc/self/exe", initArg, string(spec), "--"}, cmd.Args...)
	cmd.confine = true
	cmd.started = c.Started
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return Exit{Code: -1}, err
	}
	defer statusR.Close()
	cmd.status = statusW
	inner := c.Inner
	if inner == nil {
		inner = Local{}
	}
	ex, err := inner.Run(ctx, cmd)
	statusW.Close() // the init's copy is gone with it: the read ends
	why, _ := io.ReadAll(io.LimitReader(statusR, 4096))
	if err == nil && len(why) > 0 {
		return ex, fmt.Errorf("sandbox: the invocation's view could not be made: %s", strings.TrimSpace(string(why)))
	}
	return ex, err
}

// initArg marks a re-execution of this binary as a namespace's init.
const initArg = "-hoh-sandbox-init"

// exitViewFailed is the init's exit code when the view could not be made.
const exitViewFailed = 125

type initSpec struct {
	View View   `json:"view"`
	Dir  string `json:"dir,omitempty"`
	// Status: the init got the status pipe as fd statusFD.
	Status bool `json:"status,omitempty"`
}

func init() {
	if len(os.Args) > 3 && os.Args[1] == initArg && os.Args[3] == "--" {
		os.Exit(namespaceInit(os.Args[2], os.Args[4:]))
	}
}

// namespaceInit runs as PID 1 of a fresh user + mount + PID namespace: it
// builds the view, starts argv and reaps until argv ends, then exits with
// its status (the kernel then kills whatever argv left behind).
func namespaceInit(specJSON string, argv []string) int {
	var spec initSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		initFailed("decode the view:", err)
		return exitViewFailed
	}
	if spec.Status {
		initStatus = os.NewFile(statusFD, "hoh-sandbox-status")
	}
	if err := buildView(spec.View); err != nil {
		initFailed("cannot build the view:", err)
		return exitViewFailed
	}
	// The inherited working directory is the host's dentry: entering it by
	// name again lands in the view (and a hidden one is refused).
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		initFailed("working directory outside the view:", err)
		return exitViewFailed
	}
	if initStatus != nil {
		initStatus.Close() // the view is made: nothing more to report
		initStatus = nil
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "hoh sandbox:", err)
		return 127
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Dir: dir, Env: os.Environ(),
		Files: []uintptr{0, 1, 2}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "hoh sandbox: start:", err)
		return 127
	}
	go func() {
		for s := range sigs {
			_ = syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 127
		}
		if got != pid {
			continue // an orphan of the namespace, reaped
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// statusFD is the init's report channel (ExtraFiles[0]): a pipe on which
// it writes why no view could be made, closed before the command starts, so
// nothing the command writes can pass for hoh's failure.
const statusFD = 3

var initStatus *os.File

func initFailed(what string, err error) {
	fmt.Fprintln(os.Stderr, "hoh sandbox:", what, err)
	if initStatus != nil {
		fmt.Fprintln(initStatus, what, err)
	}
}

// buildView applies v inside the init's own mount namespace.
func buildView(v View) error {
	// Nothing done here may propagate back to the host's mounts.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	type entry struct {
		path     string
		hide     bool
		writable bool
		fd       int
		dir      bool
	}
	var entries []entry
	add := func(paths []string, hide, writable bool) error {
		for _, p := range paths {
			if p == "" || !filepath.IsAbs(p) {
				return fmt.Errorf("view path %q is not absolute", p)
			}
			e := entry{path: filepath.Clean(p), hide: hide, writable: writable, fd: -1}
			if !hide {
				// Opened before any mount, so the original is bound even when
				// a hidden directory will cover its path.
				fd, err := syscall.Open(e.path, oPath|syscall.O_CLOEXEC, 0)
				if err != nil {
					return fmt.Errorf("show %s: %w", e.path, err)
				}
				var st syscall.Stat_t
				if err := syscall.Fstat(fd, &st); err != nil {
					return err
				}
				e.fd, e.dir = fd, st.Mode&syscall.S_IFMT == syscall.S_IFDIR
			}
			entries = append(entries, e)
		}
		return nil
	}
	if err := errors.Join(add(v.Hide, true, true), add(v.Show, false, false), add(v.Tools, false, false), add(v.Write, false, true)); err != nil {
		return err
	}
	sort.SliceStable(entries, func(i, j int) bool { return depth(entries[i].path) < depth(entries[j].path) })
	for _, e := range entries {
		if e.hide {
			if fi, err := os.Stat(e.path); err != nil || !fi.IsDir() {
				continue // nothing there to hide
			}
			if err := syscall.Mount("hoh-view", e.path, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755"); err != nil {
				return fmt.Errorf("hide %s: %w", e.path, err)
			}
			continue
		}
		if err := mountPoint(e.path, e.dir); err != nil {
			return fmt.Errorf("show %s: %w", e.path, err)
		}
		src := fmt.Sprintf("/proc/self/fd/%d", e.fd)
		if err := syscall.Mount(src, e.path, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s: %w", e.path, err)
		}
		var fs syscall.Statfs_t
		if err := syscall.Statfs(e.path, &fs); err != nil {
			return err
		}
		// A remount must keep the flags the kernel locked on the original
		// mount (nosuid, nodev, noexec), or a user namespace may not do it.
		flags := uintptr(syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_NOSUID|syscall.MS_NODEV) | lockedFlags(fs.Flags)
		if !e.writable {
			flags |= syscall.MS_RDONLY
		}
		if err := syscall.Mount("", e.path, "", flags, ""); err != nil {
			return fmt.Errorf("remount %s: %w", e.path, err)
		}
	}
	for _, e := range entries {
		if e.fd >= 0 {
			syscall.Close(e.fd)
		}
	}
	// A /proc of this PID namespace only: the host's processes (hoh's own
	// included, whose root and cwd are the host's tree) are not listed.
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// lockedFlags are the statfs flags a bind remount must keep, as mount flags.
func lockedFlags(st int64) uintptr {
	const stNoexec, stNoatime, stNodiratime, stRelatime = 8, 1024, 2048, 4096
	var f uintptr
	if st&stNoexec != 0 {
		f |= syscall.MS_NOEXEC
	}
	if st&stNoatime != 0 {
		f |= syscall.MS_NOATIME
	}
	if st&stNodiratime != 0 {
		f |= syscall.MS_NODIRATIME
	}
	if st&stRelatime != 0 {
		f |= syscall.MS_RELATIME
	}
	return f
}

func depth(p string) int { return strings.Count(p, "/") }

// mountPoint makes sure path exists (in a hidden directory's tmpfs it does
// not yet) as a directory or an empty file to bind onto.
func mountPoint(path string, dir bool) error {
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	if dir {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

var (
	nsOnce sync.Once
	nsErr  error
)

// simulateUnavailable is the variable that makes NamespacesAvailable fail,
// so the refusal paths (hoh doctor, hoh run --check) can be tested on a
// machine that has namespaces.
const simulateUnavailable = "HOH_SANDBOX_SIMULATE_NO_USERNS"

// NamespacesAvailable reports whether this host lets an unprivileged process
// create the user + mount + PID namespace of a Confined invocation, build a
// view in it and mount its /proc.
func NamespacesAvailable() error {
	if os.Getenv(simulateUnavailable) != "" {
		return fmt.Errorf("sandbox: user namespaces unavailable (simulated by %s)", simulateUnavailable)
	}
	nsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hoh-ns-probe-*")
		if err != nil {
			nsErr = err
			return
		}
		defer os.RemoveAll(dir)
		shown := filepath.Join(dir, "shown")
		if nsErr = os.Mkdir(shown, 0o755); nsErr != nil {
			return
		}
		spec, _ := json.Marshal(initSpec{View: View{Hide: []string{dir}, Show: []string{shown}}, Dir: shown})
		c := exec.Command("/proc/self/exe", initArg, string(spec), "--", "true")
		c.Env = []string{"PATH=" + os.Getenv("PATH")}
		c.SysProcAttr = confineAttr(&syscall.SysProcAttr{})
		if out, err := c.CombinedOutput(); err != nil {
			nsErr = fmt.Errorf("sandbox: user + mount + PID namespaces unavailable (%v: %s); host role views need them "+
				"(Linux with unprivileged user namespaces: kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, "+
				"no AppArmor restriction on unprivileged user namespaces)", err, strings.TrimSpace(string(out)))
		}
	})
	return nsErr
}

// confineAttr adds the namespaces of a Confined invocation to attr: the
// caller's uid and gid map to root inside (which may mount there and nowhere
// else).
func confineAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.Pdeathsig = syscall.SIGKILL
	return attr
}

// oPath is Linux's O_PATH (not in package syscall): a handle on a path
// that bind mounts can name through /proc/self/fd.
const oPath = 0x200000
