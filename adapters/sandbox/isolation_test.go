package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hoh-research/hoh/internal/testenv"
)

// attackScript is what a scripted agent with a debugger in reach tries
// from inside its view: push a byte into a terminal (TIOCSTI on /dev/tty
// and on fds 0, 1 and 2), attach to its parent (the process serving it, a
// CLI in a trial) and to the init, read the parent's memory. It prints one
// JSON object: what each attempt got.
const attackScript = `
import os, fcntl, termios, ctypes, json
res = {}
def try_(name, f):
    try:
        r = f()
        res[name] = "LANDED" if r is None else r
    except OSError as e:
        res[name] = "errno %d" % e.errno
try_("open /dev/tty", lambda: os.open("/dev/tty", os.O_RDWR) and None)
for fd in (0, 1, 2):
    try_("TIOCSTI fd%d" % fd, lambda fd=fd: fcntl.ioctl(fd, termios.TIOCSTI, b"X") and None)
with open("/proc/self/stat") as f:
    res["tty_nr"] = f.read().rsplit(")", 1)[1].split()[4]
libc = ctypes.CDLL(None, use_errno=True)
def ptrace(req, pid):
    if libc.ptrace(req, pid, 0, 0) == 0:
        return None
    return "errno %d" % ctypes.get_errno()
ppid = os.getppid()
res["PTRACE_ATTACH parent"] = ptrace(16, ppid) or "LANDED"
res["PTRACE_SEIZE parent"] = ptrace(0x4206, ppid) or "LANDED"
res["PTRACE_ATTACH init"] = ptrace(16, 1) or "LANDED"
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(8)
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 8)
remote = iovec(0x400000, 8)
n = libc.process_vm_readv(ppid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
res["process_vm_readv parent"] = "LANDED" if n >= 0 else "errno %d" % ctypes.get_errno()
# A debugger starting a program of its own still works (PTRACE_TRACEME).
pid = os.fork()
if pid == 0:
    os._exit(0 if libc.ptrace(0, 0, 0, 0) == 0 else 1)
res["PTRACE_TRACEME child"] = "ok" if os.waitpid(pid, 0)[1] == 0 else "refused"
print(json.dumps(res))
`

// The pty test: "hoh" (this test binary, re-executed) runs on a real
// terminal as its controlling terminal, and runs the attack confined,
// handing it the terminal as stdin. Afterwards no byte waits in the
// terminal's input, every attempt failed, and a debugger's own child can
// still be traced.
func TestConfinedAgentCannotReachHohsTerminal(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatal("the attack needs /usr/bin/python3:", err)
	}
	result := filepath.Join(t.TempDir(), "result.json")
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), "HOH_TEST_PTY_HOH="+result)
	screen, werr := testenv.RunOnControllingPTY(t, c)
	b, err := os.ReadFile(result)
	if err != nil {
		t.Fatalf("helper: %v %v; terminal: %q", werr, err, screen)
	}
	var r struct {
		Control, Queued int
		Attack          map[string]string
		Exit            int
		Output          string
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err, string(b))
	}
	t.Logf("attack: %v (exit %d)", r.Attack, r.Exit)
	if r.Control != 1 {
		t.Fatalf("the check cannot see injected input: hoh's own TIOCSTI queued %d byte(s)", r.Control)
	}
	if r.Queued != 0 {
		t.Errorf("%d byte(s) reached hoh's terminal input", r.Queued)
	}
	if r.Exit != 0 || len(r.Attack) == 0 {
		t.Fatalf("attack did not run: exit %d: %s", r.Exit, r.Output)
	}
	for name, got := range r.Attack {
		switch {
		case name == "tty_nr":
			if got != "0" {
				t.Errorf("the agent has a controlling terminal (tty_nr %s)", got)
			}
		case name == "PTRACE_TRACEME child":
			if got != "ok" {
				t.Errorf("a debugger cannot trace its own child: %s", got)
			}
		case got == "LANDED":
			t.Errorf("%s landed", name)
		}
	}
	for _, want := range []string{"PTRACE_ATTACH parent", "PTRACE_SEIZE parent", "process_vm_readv parent"} {
		if r.Attack[want] != fmt.Sprintf("errno %d", syscall.EPERM) {
			t.Errorf("%s: %q, want EPERM", want, r.Attack[want])
		}
	}
}

// ptyHoh is the "hoh" of TestConfinedAgentCannotReachHohsTerminal: its
// controlling terminal is fd 0.
func ptyHoh(result string) {
	tty := os.Stdin
	var raw syscall.Termios
	ioctl(tty, syscall.TCGETS, unsafe.Pointer(&raw))
	raw.Lflag &^= syscall.ICANON | syscall.ECHO
	ioctl(tty, syscall.TCSETS, unsafe.Pointer(&raw))
	out := map[string]any{}
	// Control: hoh itself may push a byte into its terminal, and sees it.
	x := byte('C')
	ioctl(tty, syscall.TIOCSTI, unsafe.Pointer(&x))
	out["Control"] = queued(tty)
	drain := make([]byte, 16)
	_, _ = tty.Read(drain[:out["Control"].(int)])
	var buf bytes.Buffer
	// The attack's parent stands for the CLI that serves the agent.
	ex, err := Confined{Inner: Local{}}.Run(context.Background(), Command{Args: []string{"/bin/sh", "-c", `/usr/bin/python3 -c "$ATTACK"; exit $?`},
		Env: []string{"ATTACK=" + attackScript}, Dir: "/", Stdin: tty, Stdout: &buf, Stderr: &buf, WallTimeout: time.Minute})
	out["Queued"] = queued(tty)
	out["Exit"] = ex.Code
	out["Output"] = buf.String() + fmt.Sprint(err)
	var attack map[string]string
	if json.Unmarshal(buf.Bytes(), &attack) == nil {
		out["Attack"] = attack
	}
	b, _ := json.Marshal(out)
	_ = os.WriteFile(result, b, 0o644)
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) syscall.Errno {
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg))
	return e
}

func queued(f *os.File) int {
	var n int32
	if ioctl(f, syscall.TIOCINQ, unsafe.Pointer(&n)) != 0 {
		return -1
	}
	return int(n)
}

// No role sees the host's System V IPC objects or another invocation's:
// a queue the host made and one an earlier invocation left are not listed,
// and the host name is the view's own.
func TestConfinedHasItsOwnIPCAndHostName(t *testing.T) {
	const key = 0x484f48                                                  // "HOH"
	id, _, e := syscall.Syscall(syscall.SYS_MSGGET, key, 0o1000|0o600, 0) // IPC_CREAT
	if e != 0 {
		t.Fatal("msgget:", e)
	}
	defer syscall.Syscall(syscall.SYS_MSGCTL, id, 0, 0) // IPC_RMID
	host, _ := os.ReadFile("/proc/sysvipc/msg")
	if !strings.Contains(string(host), fmt.Sprint(key)) {
		t.Fatalf("the host's queue is not listed on the host: %s", host)
	}
	out, code := runConfined(t, View{}, "/", "ipcmk -Q >/dev/null && cat /proc/sysvipc/msg | wc -l")
	if code != 0 || strings.TrimSpace(out) != "2" {
		t.Fatalf("the first invocation cannot make its own queue: exit %d: %s", code, out)
	}
	out, code = runConfined(t, View{}, "/", "cat /proc/sysvipc/msg /proc/sysvipc/shm /proc/sysvipc/sem; echo host=$(cat /proc/sys/kernel/hostname)")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(strings.TrimSpace(l), "key") {
			t.Errorf("an IPC object of the host or of another invocation is visible: %q", l)
		}
	}
	if last := lines[len(lines)-1]; last != "host=hoh-role" {
		t.Errorf("host name: %q", last)
	}
}

// alongside runs script confined (a concurrent invocation of another
// trial) and reports its output and exit.
func alongside(script string) (wait func() (string, int, error)) {
	var out bytes.Buffer
	var ex Exit
	var err error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ex, err = Confined{Inner: Local{}}.Run(context.Background(), Command{Args: []string{"/bin/sh", "-c", script},
			Dir: "/", Stdout: &out, Stderr: &out, WallTimeout: 2 * time.Minute})
	}()
	return func() (string, int, error) { wg.Wait(); return out.String(), ex.Code, err }
}

func boundedRun(t *testing.T, l Limits, wall time.Duration, script string) (string, Exit) {
	t.Helper()
	var out bytes.Buffer
	ex, err := Confined{Inner: Local{KillGrace: 200 * time.Millisecond}, Limits: l}.Run(context.Background(),
		Command{Args: []string{"/bin/sh", "-c", script}, Dir: "/", Stdout: &out, Stderr: &out, WallTimeout: wall})
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), ex
}

// forEachBound runs f with the cgroups hoh may use and without (the
// rlimits alone), where this machine has cgroups.
func forEachBound(t *testing.T, f func(t *testing.T, cgroups bool)) {
	t.Run("rlimits", func(t *testing.T) {
		noCgroups = true
		defer func() { noCgroups = false }()
		f(t, false)
	})
	if cg := newCgroup(Limits{}.WithDefaults()); cg != nil {
		cg.remove()
		t.Run("cgroups", func(t *testing.T) { f(t, true) })
	} else {
		t.Log("no cgroup hoh may use here: rlimits only")
	}
}

// A fork bomb ends as the invocation's outcome (the process limit holds
// it to a few dozen processes, the wall bound ends what is left) while
// another invocation runs to its end.
func TestConfinedForkBombIsBounded(t *testing.T) {
	forEachBound(t, func(t *testing.T, cgroups bool) {
		wait := alongside("sleep 1; echo survived")
		out, ex := boundedRun(t, Limits{Procs: 48}, 8*time.Second,
			`n=0; f() { f | f & }; f; sleep 2; echo "tasks: $(ls /proc | grep -c '^[0-9]')"; wait`)
		if cgroups && !strings.Contains(ex.Detail, "process limit (48)") {
			t.Errorf("the outcome does not name the process limit: %q", ex.Detail)
		}
		if strings.Count(out, "fork") == 0 && !strings.Contains(out, "Resource temporarily unavailable") && !strings.Contains(out, "Cannot fork") {
			t.Errorf("no fork was refused: %.300s", out)
		}
		got, code, err := wait()
		if err != nil || code != 0 || strings.TrimSpace(got) != "survived" {
			t.Errorf("the concurrent invocation: exit %d err %v: %q", code, err, got)
		}
	})
}

// A process allocating (and touching) four times the invocation's memory
// is ended (the OOM killer, or refused memory) as the invocation's
// outcome; another invocation runs to its end. The bound is small, so a
// broken limit costs the machine 256 MiB at most.
func TestConfinedMemoryHogIsBounded(t *testing.T) {
	forEachBound(t, func(t *testing.T, cgroups bool) {
		wait := alongside("sleep 1; echo survived")
		out, ex := boundedRun(t, Limits{Memory: 64 << 20}, time.Minute,
			`/usr/bin/python3 -c '
chunks = []
for i in range(16):
    chunks.append(b"x" * (16 << 20))
print("ALLOCATED-ALL")'`)
		if ex.Code == 0 || strings.Contains(out, "ALLOCATED-ALL") {
			t.Errorf("the hog got its memory: exit %d: %.300s", ex.Code, out)
		}
		if cgroups && (!ex.OOM || !strings.Contains(ex.Detail, "memory limit (64 MiB)")) {
			t.Errorf("the outcome does not name the memory limit: OOM %v %q", ex.OOM, ex.Detail)
		}
		if !cgroups && !strings.Contains(out, "MemoryError") {
			t.Errorf("no allocation was refused: %.300s", out)
		}
		got, code, err := wait()
		if err != nil || code != 0 || strings.TrimSpace(got) != "survived" {
			t.Errorf("the concurrent invocation: exit %d err %v: %q", code, err, got)
		}
	})
}

// Filling /tmp (or /dev/shm, or a hidden directory) stops at the
// invocation's tmp size.
func TestConfinedTmpFillIsBounded(t *testing.T) {
	hidden := t.TempDir()
	wait := alongside("sleep 1; echo survived")
	var out bytes.Buffer
	ex, err := Confined{Inner: Local{}, View: View{Hide: []string{hidden}}, Limits: Limits{Tmp: 8 << 20}}.Run(context.Background(),
		Command{Args: []string{"/bin/sh", "-c", `for d in /tmp /var/tmp /dev/shm ` + hidden + `; do
  dd if=/dev/zero of=$d/fill bs=1M count=64 2>/dev/null; echo "$d $(stat -c %s $d/fill)"; done`},
			Dir: "/", Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if ex.Code != 0 || len(lines) != 4 {
		t.Fatalf("exit %d: %s", ex.Code, out.String())
	}
	for _, l := range lines {
		var dir string
		var size int64
		if _, err := fmt.Sscan(l, &dir, &size); err != nil || size > 8<<20 || size == 0 {
			t.Errorf("%q: more than the 8 MiB bound, or nothing written", l)
		}
	}
	got, code, err := wait()
	if err != nil || code != 0 || strings.TrimSpace(got) != "survived" {
		t.Errorf("the concurrent invocation: exit %d err %v: %q", code, err, got)
	}
}

// When Run returns, every process the invocation started is gone: no
// grace period, no polling afterwards.
func TestConfinedOrphansAreDeadWhenRunReturns(t *testing.T) {
	marker := fmt.Sprintf("hoh-orphan-%d", time.Now().UnixNano())
	out, code := runConfined(t, View{}, "/",
		`(setsid sh -c 'while :; do sleep 0.1; done' `+marker+` </dev/null >/dev/null 2>&1 &); (sh -c 'trap "" TERM HUP; while :; do :; done' `+marker+` &); echo started`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if left := findProc(marker); len(left) != 0 {
		t.Fatalf("processes of the invocation still run after Run returned: %v", left)
	}
}

// memProbe looks, among the processes its /proc lists, for hoh (a Go test
// binary: "-test." in its command line) and for processes carrying the
// marker in theirs, and tries to write each one's memory through
// /proc/PID/mem and to read it with process_vm_readv. It prints one JSON
// object: how many it saw and what each attempt got. The needles are
// joined at run time, so the probe's own command line never holds them.
const memProbe = `
import os, sys, ctypes, json
only_list = sys.argv[1:] == ["list"]
marks = ["OTHER-ROLE" + "-MARK", "-te" + "st."]
seen, res = [], {}
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
for p in os.listdir("/proc"):
    if not p.isdigit() or int(p) == os.getpid():
        continue
    try:
        cmd = open("/proc/%s/cmdline" % p, "rb").read().decode("utf-8", "replace")
    except OSError:
        continue
    if not any(m in cmd for m in marks):
        continue
    seen.append(p)
    if only_list:
        continue
    try:
        os.close(os.open("/proc/%s/mem" % p, os.O_RDWR))
        res["mem " + p] = "LANDED"
    except OSError as e:
        res["mem " + p] = "errno %d" % e.errno
    buf = ctypes.create_string_buffer(8)
    local, remote = iovec(ctypes.cast(buf, ctypes.c_void_p), 8), iovec(0x400000, 8)
    n = libc.process_vm_readv(int(p), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    res["vm_readv " + p] = "LANDED" if n >= 0 else "errno %d" % ctypes.get_errno()
print(json.dumps({"seen": seen, "attempts": res}))
`

// A role reaches neither hoh's memory nor another role's: hoh (this test
// process), a process of the host carrying a marker, and a concurrent
// confined invocation (same RoleUID, so only its own PID namespace keeps
// the probe from writing its memory) are not even listed in the role's
// /proc. The same probe run unconfined lists them all (the control: it
// would find them if the namespace did not hide them).
func TestConfinedCannotReachHohsOrAnotherRolesMemory(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatal("the probe needs /usr/bin/python3:", err)
	}
	host := exec.Command("/bin/sleep", "120")
	host.Args[0] = "OTHER-ROLE-MARK-host"
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = host.Process.Kill(); _ = host.Wait() }()
	other := alongside(`sleep 20; : OTHER-ROLE-MARK-confined`)
	// The other invocation has started once its sh is listed.
	deadline := time.Now().Add(time.Minute)
	for len(findProc("OTHER-ROLE-MARK-confined")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the concurrent invocation did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	probe := func(confined bool) (seen []string, attempts map[string]string) {
		t.Helper()
		var out bytes.Buffer
		args := []string{"/usr/bin/python3", "-c", memProbe}
		if !confined {
			args = append(args, "list") // the control only looks
		}
		cmd := Command{Args: args, Dir: "/", Stdout: &out, Stderr: &out, WallTimeout: time.Minute}
		var ex Exit
		var err error
		if confined {
			ex, err = Confined{Inner: Local{}}.Run(context.Background(), cmd)
		} else {
			ex, err = Local{}.Run(context.Background(), cmd)
		}
		var r struct {
			Seen     []string
			Attempts map[string]string
		}
		if err != nil || ex.Code != 0 || json.Unmarshal(out.Bytes(), &r) != nil {
			t.Fatalf("probe (confined %v): exit %d err %v: %s", confined, ex.Code, err, out.String())
		}
		return r.Seen, r.Attempts
	}
	if seen, _ := probe(false); len(seen) < 3 {
		t.Fatalf("unconfined, the probe sees %d of hoh, the host's marked process and the other invocation: it proves nothing", len(seen))
	}
	seen, attempts := probe(true)
	if len(seen) != 0 {
		t.Errorf("a role lists processes of hoh or of another role: %v %v", seen, attempts)
	}
	for name, got := range attempts {
		if got == "LANDED" {
			t.Errorf("%s landed", name)
		}
	}
	if out, code, err := other(); err != nil || code != 0 {
		t.Errorf("the concurrent invocation: exit %d err %v: %s", code, err, out)
	}
}

// setIDProbe tries every way to give a file in the current directory a
// setuid or setgid bit, and the calls whose modes a filter cannot read.
const setIDProbe = `
import ctypes, errno, json, os, stat
libc = ctypes.CDLL(None, use_errno=True)
res = {}
def try_(name, f):
    try:
        f()
        res[name] = "LANDED"
    except OSError as e:
        res[name] = errno.errorcode.get(e.errno, str(e.errno))
open("f", "w").close()
os.mkdir("d")
try_("chmod u+s", lambda: os.chmod("f", 0o4755))
try_("chmod g+s dir", lambda: os.chmod("d", 0o2775))
fd = os.open("f", os.O_RDONLY)
try_("fchmod u+s", lambda: os.fchmod(fd, 0o4755))
try_("open O_CREAT 4755", lambda: os.close(os.open("c", os.O_CREAT | os.O_WRONLY, 0o4755)))
try_("mkdir 2775", lambda: os.mkdir("m", 0o2775))
try_("mknod fifo 4644", lambda: os.mknod("p", stat.S_IFIFO | 0o4644))
def raw(nr, *args):
    if libc.syscall(nr, *args) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
try_("openat2", lambda: raw(437, -100, b"f", None, 0))
try_("io_uring_setup", lambda: raw(425, 1, ctypes.create_string_buffer(120)))
try_("chmod 755 (allowed)", lambda: os.chmod("f", 0o755))
try_("open O_CREAT 644 (allowed)", lambda: os.close(os.open("ok", os.O_CREAT | os.O_WRONLY, 0o644)))
print(json.dumps(res))
`

// A role cannot give what it writes a setuid or setgid bit: in a writable
// view that is root's on disk, such a file would be a root-owned setuid
// program on the host. Unconfined, the same probe lands each (control).
func TestConfinedCannotMakeSetIDFiles(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatal("the probe needs /usr/bin/python3:", err)
	}
	probe := func(confined bool) map[string]string {
		t.Helper()
		ws := t.TempDir()
		var out bytes.Buffer
		cmd := Command{Args: []string{"/usr/bin/python3", "-c", setIDProbe}, Dir: ws, Stdout: &out, Stderr: &out, WallTimeout: time.Minute}
		var ex Exit
		var err error
		if confined {
			ex, err = Confined{Inner: Local{}, View: View{Hide: []string{filepath.Dir(ws)}, Write: []string{ws}}}.Run(context.Background(), cmd)
		} else {
			ex, err = Local{}.Run(context.Background(), cmd)
		}
		var res map[string]string
		if err != nil || ex.Code != 0 || json.Unmarshal(out.Bytes(), &res) != nil {
			t.Fatalf("probe (confined %v): exit %d err %v: %s", confined, ex.Code, err, out.String())
		}
		filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
			if info, e := os.Lstat(p); e == nil && info.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 && confined {
				t.Errorf("%s is %v on the host", p, info.Mode())
			}
			return nil
		})
		return res
	}
	control := probe(false)
	for name, got := range control {
		if name != "openat2" && name != "io_uring_setup" && got != "LANDED" {
			t.Fatalf("unconfined, %s did not land (%s): the probe proves nothing", name, got)
		}
	}
	for name, got := range probe(true) {
		want := "EPERM"
		switch {
		case strings.HasSuffix(name, "(allowed)"):
			want = "LANDED"
		case name == "openat2" || name == "io_uring_setup":
			want = "ENOSYS"
		}
		if got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}
