package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/hoh-research/hoh/internal/fstree"
	"github.com/hoh-research/hoh/internal/splice"
)

// View is the file system one confined invocation sees. It is an
// allow-list: the namespace's root is an empty read-only tmpfs holding only
// the system's read-only runtime (SystemRuntime, /etc without its secrets),
// the install of the command's executable (and of the Node that runs it),
// a fresh /proc, a private /tmp, a minimal /dev, and the paths listed here.
// Every directory in Hide appears as an empty private tmpfs, and every path
// in Show (read-only) or Write (writable) is bound at its own place.
// Entries apply from the shortest path to the longest, so a hidden
// directory inside a shown one stays hidden and a shown file inside a
// hidden directory reappears.
type View struct {
	Hide  []string `json:"hide,omitempty"`
	Show  []string `json:"show,omitempty"`
	Write []string `json:"write,omitempty"`
	// Runtime are further read-only directories a command needs to run
	// (a CLI's install outside the places Confined finds by itself).
	Runtime []string `json:"runtime,omitempty"`
	// Tools are read-only entries for what runs the command: the CLI's
	// install directory and its Node runtime (cliinstall.ViewPaths), shown
	// like Runtime wherever they lie, under /tmp or $TMPDIR included.
	Tools []string `json:"tools,omitempty"`
	// Mounts show sources at fixed targets (Remapped), after the rest.
	Mounts []Mount `json:"mounts,omitempty"`
	// Endpoints are host TCP addresses ("127.0.0.1:PORT", the model
	// relay) the invocation may connect to, at the same address inside
	// its network namespace; nothing else of any network is reachable.
	Endpoints []string `json:"endpoints,omitempty"`
}

// Confined runs each command of a host executor (Local) in its own user,
// mount, PID and network namespace holding View, with a fresh /proc (no
// other process of the machine is visible, so none of their /proc/PID/root
// or cwd leads back into the host's tree). The command runs as an
// unprivileged uid (RoleUID when hoh runs as root, else hoh's own), never
// mapped to the host's root, with no capabilities and no way to gain any
// (no_new_privs); its only way out of the network namespace is a forwarder
// on loopback to each of View.Endpoints, over a unix socket hoh serves.
// The namespace's first process is a small init of hoh's own (this binary,
// re-executed) that builds the view, starts the command and reaps; it dies
// with hoh (parent-death signal), and with it the kernel kills every
// process of the namespace: no agent process outlives the invocation or hoh.
type Confined struct {
	Inner Executor
	View  View
	// Started, when set, is called with the init's pid as soon as it runs
	// (so a crashed run's leftovers can be found and ended on resume).
	Started func(pid int)
	// Limits bound the invocation (zero fields: defaults).
	Limits Limits
}

// RoleUID is the uid (and gid) a confined command runs as when hoh runs as
// root: an unprivileged id no account of the machine uses. Its writable
// paths are handed to it for the invocation and back to root afterwards.
const RoleUID = 60999

// roleIDs are the host uid and gid a confined command runs as.
func roleIDs() (uid, gid int) {
	if os.Getuid() == 0 {
		return RoleUID, RoleUID
	}
	return os.Getuid(), os.Getgid()
}

// SystemRuntime are the host directories every view shows read-only (those
// the host has; a symbolic link such as /bin -> usr/bin is recreated).
var SystemRuntime = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// etcSecrets are the files and directories of /etc a view masks (an empty
// file or folder in their place).
var etcSecrets = []string{"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "ssl/private",
	"security/opasswd", "docker", "containerd", "wireguard", "NetworkManager/system-connections", "munge",
	"ssh/ssh_host_rsa_key", "ssh/ssh_host_ecdsa_key", "ssh/ssh_host_ed25519_key", "ssh/ssh_host_dsa_key", "krb5.keytab"}

// devices are the nodes of the minimal /dev, bound from the host's. No
// terminal is among them: /dev/tty is each process's own controlling
// terminal, and an invocation has none (a session of its own), so opening
// it fails (ENXIO); it is there because Codex's bubblewrap binds it into
// the sandbox it makes for each command, and fails without it.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

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
	v := c.View
	v.Runtime = append(append(append([]string(nil), v.Runtime...), v.Tools...), installOf(cmd.Args, withPath(cmd.Env))...)
	limits := c.Limits.WithDefaults()
	p, err := plan(v, limits.Tmp)
	if err != nil {
		return Exit{Code: -1}, err
	}
	defer p.close()
	if err := p.handOver(); err != nil {
		return Exit{Code: -1}, err
	}
	defer p.takeBack()
	cmd.Args, err = initArgv(p, cmd.Dir, limits, cmd.Args)
	if err != nil {
		return Exit{Code: -1}, err
	}
	cmd.confine = true
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return Exit{Code: -1}, err
	}
	defer statusR.Close()
	gateR, gateW, err := os.Pipe()
	if err != nil {
		statusW.Close()
		return Exit{Code: -1}, err
	}
	defer gateW.Close()
	cmd.status, cmd.extra = statusW, append([]*os.File{gateR}, p.trees...)
	// The init waits at the gate until it is in the invocation's cgroups,
	// so that nothing it starts escapes the bounds.
	cg := newCgroup(limits)
	if cg != nil {
		defer cg.remove()
	}
	cmd.started = c.openGate(cg, gateW)
	inner := c.Inner
	if inner == nil {
		inner = Local{}
	}
	ex, err := inner.Run(ctx, cmd)
	gateR.Close()
	gateW.Close()
	if cg != nil {
		oom, detail := cg.report()
		ex.OOM = ex.OOM || oom
		if detail != "" {
			ex.Detail = joinNote(ex.Detail, detail)
		}
	}
	statusW.Close() // the init's copy is gone with it: the read ends
	why, _ := io.ReadAll(io.LimitReader(statusR, 4096))
	if err == nil && len(why) > 0 {
		return ex, fmt.Errorf("sandbox: the invocation's view could not be made: %s", strings.TrimSpace(string(why)))
	}
	return ex, err
}

// initArgv is the command line re-executing this binary as the
// namespace's init of view p, bounded by limits, to run args in dir.
func initArgv(p *viewPlan, dir string, limits Limits, args []string) ([]string, error) {
	s := newSpec(p, dir, true)
	s.Procs, s.Memory, s.Gate = limits.Procs, limits.Memory, true
	spec, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return append([]string{"/proc/self/exe", initArg, string(spec), "--"}, args...), nil
}

// openGate is the started hook letting the init at pid start the command:
// once pid is in the invocation's cgroup (cg, if any), it writes at the
// gate whether the cgroup bounds its memory, then calls c.Started.
func (c Confined) openGate(cg *cgroup, gateW *os.File) func(pid int) {
	return func(pid int) {
		mode := byte(gateRlimits)
		if cg != nil && cg.add(pid) == nil && cg.memory {
			mode = gateCgroup
		}
		_, _ = gateW.Write([]byte{mode})
		gateW.Close()
		if c.Started != nil {
			c.Started(pid)
		}
	}
}

// What hoh writes at the init's gate: the invocation's memory is bounded
// by a cgroup, or the init must bound each process with RLIMIT_DATA.
const (
	gateCgroup  = 'c'
	gateRlimits = 'r'
)

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// initArg marks a re-execution of this binary as a namespace's init.
const initArg = "-hoh-sandbox-init"

// exitViewFailed is the init's exit code when the view could not be made.
const exitViewFailed = 125

// Kinds of a view entry.
const (
	kindBind  = "bind"  // Source bound at Target
	kindTmpfs = "tmpfs" // an empty private tmpfs (Mode, "1777" for a /tmp)
	kindMask  = "mask"  // an empty file in place of one of /etc's secrets
	kindLink  = "link"  // a symbolic link to Link
	kindProc  = "proc"  // the PID namespace's own /proc
	kindFile  = "file"  // a read-only file holding Content, over Target
)

// entry is one step of building a view, in the namespace's terms.
type entry struct {
	Target   string `json:"t"`
	Kind     string `json:"k"`
	Source   string `json:"src,omitempty"`
	fd       int
	Dir      bool   `json:"dir,omitempty"`
	Writable bool   `json:"w,omitempty"`
	Mode     string `json:"mode,omitempty"`
	Link     string `json:"link,omitempty"`
	Content  string `json:"content,omitempty"`
	Size     int64  `json:"size,omitempty"` // a tmpfs's size in bytes (0: the kernel's default)
	// Tree is the init's descriptor of an idmapped copy of Source to
	// attach instead of binding it (mapWritable), 0 if none.
	Tree int `json:"tree,omitempty"`
}

// endpoint is one forwarded address: the init listens on Listen and
// forwards each connection to the unix socket in directory Dir.
type endpoint struct {
	Listen string `json:"listen"`
	Dir    string `json:"dir"`
	fd     int
}

type initSpec struct {
	Entries   []entry    `json:"entries"`
	Endpoints []endpoint `json:"endpoints,omitempty"`
	Dir       string     `json:"dir,omitempty"`
	// UID and GID are the role's (roleIDs, decided by hoh: the init's own
	// ids are not mapped when hoh runs as root); DropGroups: hoh may drop
	// its supplementary groups.
	UID, GID   int
	DropGroups bool `json:"drop_groups,omitempty"`
	// Status: the init got the status pipe as fd statusFD.
	Status bool `json:"status,omitempty"`
	// Gate: the init waits for hoh's word on fd gateFD before it starts
	// the command (gateCgroup or gateRlimits; nothing: hoh is gone).
	Gate bool `json:"gate,omitempty"`
	// Procs and Memory are the invocation's bounds (Limits) the init
	// applies as rlimits.
	Procs  int   `json:"procs,omitempty"`
	Memory int64 `json:"memory,omitempty"`
}

func newSpec(p *viewPlan, dir string, status bool) initSpec {
	uid, gid := roleIDs()
	return initSpec{Entries: p.entries, Endpoints: p.endpoints, Dir: dir, Status: status,
		UID: uid, GID: gid, DropGroups: os.Getuid() == 0}
}

// viewPlan is a view resolved on the host: its entries, the endpoints'
// host forwarders, and the paths handed to the role's uid for the
// invocation.
type viewPlan struct {
	entries   []entry
	endpoints []endpoint
	closers   []func()
	// handed are the paths whose owner is the role's uid for the
	// invocation (hoh as root), owners what they were; shown are those of
	// them the view shows read-only, chowned those in which handOver
	// changed an owner.
	handed  []string
	shown   map[string]bool
	chowned map[string]bool
	owners  map[string][2]int
	// trees are the idmapped trees of writable paths, passed to the init
	// from firstTreeFD on; idmapped the paths they show.
	trees    []*os.File
	idmapped map[string]bool
	// asRole are the read-only mount sources shown as the role's
	// (Mount.AsRole).
	asRole []string
}

func (p *viewPlan) close() {
	for _, c := range p.closers {
		c()
	}
	for _, t := range p.trees {
		t.Close()
	}
}

func (p *viewPlan) bind(path string, writable bool) error {
	path = filepath.Clean(path)
	if _, err := os.Stat(path); err != nil {
		return err
	}
	p.entries = append(p.entries, entry{Target: path, Kind: kindBind, Source: path, Writable: writable})
	return nil
}

// plan resolves v; every writable tmpfs of the view holds at most tmp
// bytes (0: the kernel's default, half the machine's memory).
func plan(v View, tmp int64) (*viewPlan, error) {
	p := &viewPlan{}
	fail := func(err error) (*viewPlan, error) { p.close(); return nil, err }
	for _, list := range [][]string{v.Hide, v.Show, v.Write, v.Runtime} {
		for _, x := range list {
			if x == "" || !filepath.IsAbs(x) {
				return fail(fmt.Errorf("sandbox: view path %q is not absolute", x))
			}
		}
	}
	system, err := p.systemRuntime()
	if err != nil {
		return fail(err)
	}
	if err := p.systemFiles(tmp); err != nil {
		return fail(err)
	}
	for _, h := range v.Hide {
		h = filepath.Clean(h)
		if fi, err := os.Stat(h); err != nil || !fi.IsDir() || system[h] {
			continue // nothing there to hide, or private already
		}
		p.entries = append(p.entries, entry{Target: h, Kind: kindTmpfs, Writable: true, Mode: "0755", Size: tmp})
	}
	seen := map[string]bool{}
	for _, r := range v.Runtime {
		r = filepath.Clean(r)
		if seen[r] || underAny(r, SystemRuntime) {
			continue
		}
		seen[r] = true
		if err := p.bind(r, false); err != nil {
			return fail(fmt.Errorf("sandbox: runtime %s: %w", r, err))
		}
	}
	p.shown = map[string]bool{}
	for _, s := range v.Show {
		if err := p.bind(s, false); err != nil {
			return fail(fmt.Errorf("sandbox: show %s: %w", s, err))
		}
		p.handed = append(p.handed, filepath.Clean(s))
		p.shown[filepath.Clean(s)] = true
	}
	for _, w := range v.Write {
		if err := p.bind(w, true); err != nil {
			return fail(fmt.Errorf("sandbox: write %s: %w", w, err))
		}
		p.handed = append(p.handed, filepath.Clean(w))
		delete(p.shown, filepath.Clean(w))
	}
	// Fixed targets come after the view they are placed in.
	mounts, err := p.fixedMounts(v.Mounts, tmp)
	if err != nil {
		return fail(err)
	}
	sort.SliceStable(p.entries, func(i, j int) bool { return depth(p.entries[i].Target) < depth(p.entries[j].Target) })
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].Target) < depth(mounts[j].Target) })
	p.entries = append(p.entries, mounts...)
	for _, addr := range v.Endpoints {
		ep, err := p.forward(addr)
		if err != nil {
			return fail(err)
		}
		p.endpoints = append(p.endpoints, ep)
	}
	return p, nil
}

// systemRuntime adds SystemRuntime's folders the host has, read-only (a
// link as a link), and returns them with the view's own /tmp, /dev and
// /proc: the system folders a Hide leaves as they are.
func (p *viewPlan) systemRuntime() (map[string]bool, error) {
	system := map[string]bool{"/tmp": true, "/dev": true, "/proc": true}
	for _, d := range SystemRuntime {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&fs.ModeSymlink != 0:
			to, err := os.Readlink(d)
			if err != nil {
				return nil, err
			}
			p.entries = append(p.entries, entry{Target: d, Kind: kindLink, Link: to})
		default:
			if err := p.bind(d, false); err != nil {
				return nil, fmt.Errorf("sandbox: runtime %s: %w", d, err)
			}
		}
		system[d] = true
	}
	return system, nil
}

// systemFiles adds the role's accounts, resolv.conf, /etc's secrets
// masked, the namespace's /proc, private tmpfs for /tmp, /var/tmp, /dev and
// /dev/shm, and the minimal /dev's devices and links.
func (p *viewPlan) systemFiles(tmp int64) error {
	p.accounts()
	if e, ok := resolvConfEntry(); ok {
		p.entries = append(p.entries, e)
	}
	for _, s := range etcSecrets {
		t := filepath.Join("/etc", s)
		if fi, err := os.Lstat(t); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			p.entries = append(p.entries, entry{Target: t, Kind: kindMask, Dir: fi.IsDir()})
		}
	}
	p.entries = append(p.entries, entry{Target: "/proc", Kind: kindProc},
		entry{Target: "/tmp", Kind: kindTmpfs, Writable: true, Mode: "1777", Size: tmp},
		entry{Target: "/var/tmp", Kind: kindTmpfs, Writable: true, Mode: "1777", Size: tmp},
		entry{Target: "/dev", Kind: kindTmpfs, Writable: true, Mode: "0755", Size: 1 << 20},
		entry{Target: "/dev/shm", Kind: kindTmpfs, Writable: true, Mode: "1777", Size: tmp})
	for _, d := range devices {
		if _, err := os.Stat("/dev/" + d); err == nil {
			if err := p.bind("/dev/"+d, true); err != nil {
				return err
			}
		}
	}
	for name, to := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		p.entries = append(p.entries, entry{Target: "/dev/" + name, Kind: kindLink, Link: to})
	}
	return nil
}

// fixedMounts are the entries of the view's mounts (a tmpfs where a mount
// has no source); a writable source is handed to the role's uid like a
// Write path.
func (p *viewPlan) fixedMounts(ms []Mount, tmp int64) ([]entry, error) {
	var mounts []entry
	for _, m := range ms {
		if !filepath.IsAbs(m.Target) || (m.Source != "" && !filepath.IsAbs(m.Source)) {
			return nil, fmt.Errorf("sandbox: mount %s -> %s: paths must be absolute", m.Source, m.Target)
		}
		t := filepath.Clean(m.Target)
		if m.Source == "" {
			mounts = append(mounts, entry{Target: t, Kind: kindTmpfs, Writable: m.Writable, Mode: "0755", Size: tmp})
			continue
		}
		if _, err := os.Stat(m.Source); err != nil {
			return nil, fmt.Errorf("sandbox: mount %s -> %s: %w", m.Source, m.Target, err)
		}
		mounts = append(mounts, entry{Target: t, Kind: kindBind, Source: filepath.Clean(m.Source), Writable: m.Writable})
		if m.AsRole && !m.Writable {
			p.asRole = append(p.asRole, filepath.Clean(m.Source))
		}
		if m.Writable {
			p.handed = append(p.handed, filepath.Clean(m.Source))
			delete(p.shown, filepath.Clean(m.Source))
		}
	}
	return mounts, nil
}

// accounts adds the role's uid to /etc/passwd and /etc/group when the host
// has no entry for it (RoleUID), so that tools asking who they are get an
// answer.
func (p *viewPlan) accounts() {
	uid, gid := roleIDs()
	for _, f := range []struct {
		path, line string
		id         int
	}{{"/etc/passwd", fmt.Sprintf("hoh-role:x:%d:%d:hoh role:/tmp:/bin/sh\n", uid, gid), uid},
		{"/etc/group", fmt.Sprintf("hoh-role:x:%d:\n", gid), gid}} {
		b, err := os.ReadFile(f.path)
		if err != nil || hasID(string(b), f.id) {
			continue
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
		p.entries = append(p.entries, entry{Target: f.path, Kind: kindFile, Content: string(b) + f.line})
	}
}

// hasID reports whether a passwd or group file has a line for id.
func hasID(file string, id int) bool {
	for _, line := range strings.Split(file, "\n") {
		if f := strings.Split(line, ":"); len(f) > 2 && f[2] == fmt.Sprint(id) {
			return true
		}
	}
	return false
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// endpointSocket is the socket's name in an endpoint's directory.
const endpointSocket = "s"

// forward serves a unix socket in a fresh directory whose every connection
// hoh forwards to addr, and nowhere else.
func (p *viewPlan) forward(addr string) (endpoint, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return endpoint{}, fmt.Errorf("sandbox: endpoint %q is not a loopback host:port", addr)
	}
	dir, err := os.MkdirTemp("", "hoh-endpoint-")
	if err != nil {
		return endpoint{}, err
	}
	os.Chmod(dir, 0o755)
	ln, err := net.Listen("unix", filepath.Join(dir, endpointSocket))
	if err != nil {
		os.RemoveAll(dir)
		return endpoint{}, err
	}
	os.Chmod(filepath.Join(dir, endpointSocket), 0o777)
	p.closers = append(p.closers, func() { ln.Close(); os.RemoveAll(dir) })
	go splice.Each(ln, func() (net.Conn, error) { return net.Dial("tcp", addr) }, nil)
	return endpoint{Listen: addr, Dir: dir}, nil
}

// handOver gives the view's paths to the role's uid when hoh runs as root
// (the role's uid could not write them, nor read what hoh wrote 0600,
// otherwise; the shown ones stay read-only in the view whoever owns them);
// takeBack returns them to their owners, and whatever the role made there
// to root. In a shown path, what any user may read already (a directory
// others can list and enter, a file others can read) keeps its owner, and
// no entry is changed to the owner it has: each chown changes the file's
// ctime, after which every digest and git re-read it, so a read-only view
// of a 20,000-file workspace would cost two full re-reads per invocation.
// A writable path root owns entirely is not chowned at all: it is shown
// through an idmapped mount (mapWritable).
func (p *viewPlan) handOver() error {
	if os.Getuid() != 0 {
		return nil
	}
	p.owners, p.chowned, p.idmapped = map[string][2]int{}, map[string]bool{}, map[string]bool{}
	for _, src := range p.asRole {
		if p.idmapped[src] || p.mapWritable(src) {
			p.idmapped[src] = true
			continue
		}
		p.handed = append(p.handed, src)
		p.shown[src] = true
	}
	// Every owner is read before any is changed, shallow paths first: a
	// path inside one that is chowned cannot be idmapped (its files would
	// show as nobody's).
	type handing struct {
		path     string
		give     []string
		rootOnly bool
	}
	var all []handing
	for i, h := range p.handed {
		if slices.Contains(p.handed[:i], h) {
			continue
		}
		give, rootOnly, err := p.ownersUnder(h)
		if err != nil {
			return fmt.Errorf("sandbox: hand %s to the role's uid: %w", h, err)
		}
		all = append(all, handing{h, give, rootOnly})
	}
	sort.SliceStable(all, func(i, j int) bool { return depth(all[i].path) < depth(all[j].path) })
	var chowning []string
	for _, h := range all {
		if !p.shown[h.path] && h.rootOnly && !underAny(h.path, chowning) && p.mapWritable(h.path) {
			p.idmapped[h.path] = true
			continue
		}
		if len(h.give) > 0 {
			chowning = append(chowning, h.path)
			p.chowned[h.path] = true
		}
	}
	for _, h := range all {
		if p.idmapped[h.path] {
			continue
		}
		for _, path := range h.give {
			if err := os.Lchown(path, RoleUID, RoleUID); err != nil {
				return fmt.Errorf("sandbox: hand %s to the role's uid: %w", h.path, err)
			}
		}
	}
	return nil
}

// ownersUnder records the owner of each entry under h and lists those to
// chown to the role's uid; rootOnly says whether root owns every entry
// (so an idmapped mount can show all of them as the role's).
func (p *viewPlan) ownersUnder(h string) (give []string, rootOnly bool, err error) {
	rootOnly = true
	err = walkWith(h, func(path string, info fs.FileInfo) {
		st, ok := info.Sys().(*syscall.Stat_t)
		if ok {
			rootOnly = rootOnly && st.Uid == 0 && st.Gid == 0
			if (st.Uid == RoleUID && st.Gid == RoleUID) || (p.shown[h] && othersRead(info.Mode())) {
				if !p.shown[h] {
					p.noteOwner(path, st)
				}
				return
			}
			// Under a read-only path only what is chowned can need taking
			// back: the rest is not remembered (a shown workspace has
			// 20,000 entries, handed over at every invocation).
			p.noteOwner(path, st)
		}
		give = append(give, path)
	})
	return give, rootOnly, err
}

func (p *viewPlan) noteOwner(path string, st *syscall.Stat_t) {
	if _, seen := p.owners[path]; !seen {
		p.owners[path] = [2]int{int(st.Uid), int(st.Gid)}
	}
}

// othersRead reports whether any user may read an entry of this mode: a
// directory others can list and enter, a regular file others can read.
func othersRead(m fs.FileMode) bool {
	switch {
	case m.IsDir():
		return m.Perm()&0o005 == 0o005
	case m.IsRegular():
		return m.Perm()&0o004 != 0
	}
	return false
}

func (p *viewPlan) takeBack() {
	if os.Getuid() != 0 {
		return
	}
	for i, h := range p.handed {
		// Nothing under a read-only path can change owner in the view.
		if slices.Contains(p.handed[:i], h) || p.idmapped[h] || (p.shown[h] && !p.chowned[h]) {
			continue
		}
		_ = walkWith(h, func(path string, info fs.FileInfo) {
			o, ok := p.owners[path]
			if !ok && p.shown[h] {
				return // not chowned, and nothing is made under a read-only path
			}
			if !ok {
				o = [2]int{0, 0}
			}
			if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == o[0] && int(st.Gid) == o[1] {
				return
			}
			_ = os.Lchown(path, o[0], o[1])
		})
	}
}

// walkWith calls visit for h and, if h is a directory, every entry under
// it, with its lstat (fstree.Walk: a stat relative to each directory, as
// a role's view is handed over and back for every invocation and may hold
// a 20,000-file workspace). A path that does not exist is nothing to visit.
func walkWith(h string, visit func(path string, info fs.FileInfo)) error {
	info, err := os.Lstat(h)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	visit(h, info)
	if !info.IsDir() {
		return nil
	}
	return fstree.Walk(h, func(rel string, info fs.FileInfo) (bool, error) {
		visit(filepath.Join(h, rel), info)
		return true, nil
	})
}

// installOf are the directories the command's executable needs besides the
// system's runtime: an npm package's install (everything above its first
// node_modules, which holds its dependencies and any platform binary it
// starts), else the executable's own directory; and for a Node script, the
// Node found on the command's PATH.
func installOf(args, env []string) []string {
	path := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			path = kv[len("PATH="):]
		}
	}
	lookup := func(name string) string {
		if strings.Contains(name, "/") {
			return name
		}
		for _, d := range filepath.SplitList(path) {
			if p := filepath.Join(d, name); isExec(p) {
				return p
			}
		}
		return ""
	}
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return
		}
		for _, q := range []string{abs, realPath(abs)} {
			if i := strings.Index(q, "/node_modules/"); i > 0 {
				out = append(out, q[:i])
			} else {
				out = append(out, filepath.Dir(q))
			}
		}
	}
	exe := lookup(args[0])
	add(exe)
	if filepath.Base(args[0]) == "node" && len(args) > 1 && strings.Contains(args[1], "/") {
		add(args[1])
	} else if exe != "" && nodeScript(exe) {
		add(lookup("node"))
	}
	return out
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// nodeScript reports whether p starts with a shebang naming node.
func nodeScript(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 128)
	n, _ := f.Read(head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	return strings.HasPrefix(line, "#!") && strings.Contains(line, "node")
}

func init() {
	if len(os.Args) > 3 && os.Args[1] == initArg && os.Args[3] == "--" {
		os.Exit(namespaceInit(os.Args[2], os.Args[4:]))
	}
	if len(os.Args) > 5 && os.Args[1] == rlimitArg && os.Args[4] == "--" {
		os.Exit(startBounded(os.Args[2], os.Args[3], os.Args[5:]))
	}
	if len(os.Args) == 2 && os.Args[1] == holdArg {
		os.Exit(holdUntilEOF())
	}
}

// namespaceInit runs as PID 1 of a fresh user + mount + PID + network
// namespace: it builds the view, starts the DNS sink and the forwarders,
// drops every capability, starts argv and reaps until argv ends, then
// exits with its status (the kernel then kills whatever argv left behind).
func namespaceInit(specJSON string, argv []string) int {
	// Capabilities are a thread's: the one dropping them is the one that
	// starts the command.
	runtime.LockOSThread()
	var spec initSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		initFailed("decode the view:", err)
		return exitViewFailed
	}
	if spec.Status {
		initStatus = os.NewFile(statusFD, "hoh-sandbox-status")
	}
	if !enterView(&spec) {
		return exitViewFailed
	}
	if err := dropPrivileges(); err != nil {
		initFailed("cannot drop privileges:", err)
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
	rlimits := false
	if spec.Gate {
		ok, code := passGate()
		if code != 0 {
			return code
		}
		rlimits = !ok
	}
	// Last: the filter also applies to the init's own later calls.
	if err := installFilter(); err != nil {
		fmt.Fprintln(os.Stderr, "hoh sandbox:", err)
		return exitViewFailed
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "hoh sandbox:", err)
		return 127
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	if rlimits {
		// The rlimits bound the command, not the init (whose runtime would
		// fail to start threads): a copy of this binary sets them and
		// becomes the command.
		argv = append([]string{"/proc/self/exe", rlimitArg, strconv.Itoa(spec.Procs), strconv.FormatInt(spec.Memory, 10), "--", path}, argv...)
		path = "/proc/self/exe"
	}
	return startAndReap(path, argv, dir, sigs)
}

// enterView makes the invocation's view in the init's fresh namespaces and
// becomes the role's uid there, with the DNS sink and the forwarders
// started: each step needs the capabilities the init drops after it. It
// runs on the init's locked thread, as every step of namespaceInit must.
// False: a step failed, already reported through initFailed.
func enterView(spec *initSpec) bool {
	// Nothing done here may propagate back to the host's mounts.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		initFailed("cannot build the view:", fmt.Errorf("make / private: %w", err))
		return false
	}
	// Every source is opened while the init still has hoh's own uid (the
	// paths to them need not be open to the role's), then the init becomes
	// the role's uid, the only one the namespace maps.
	if err := openSources(spec.Entries, spec.Endpoints); err != nil {
		initFailed("cannot build the view:", err)
		return false
	}
	if err := becomeRole(spec.UID, spec.GID, spec.DropGroups); err != nil {
		initFailed("cannot take the role's uid:", err)
		return false
	}
	// A change of credentials clears the parent-death signal: set again.
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); e != 0 {
		initFailed("cannot die with hoh:", e)
		return false
	}
	if err := buildView(spec.Entries); err != nil {
		initFailed("cannot build the view:", err)
		return false
	}
	// Its own host name (sethostname needs the capabilities the init drops
	// next).
	if err := syscall.Sethostname([]byte("hoh-role")); err != nil {
		initFailed("cannot name the host:", err)
		return false
	}
	if err := loopbackUp(); err != nil {
		initFailed("cannot bring up loopback:", err)
		return false
	}
	// The DNS sink binds port 53 while the init still has its capabilities;
	// without it a lookup only waits longer to fail.
	if err := startDNSSink(os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "hoh sandbox: no DNS sink (a lookup waits for the resolver's timeout):", err)
	}
	if err := startForwarders(spec.Endpoints); err != nil {
		initFailed("cannot reach the model endpoint:", err)
		return false
	}
	return true
}

// startAndReap starts the command and, as the namespace's PID 1, forwards
// it the signals of sigs and reaps every process until the command ends,
// returning its exit status (128+signal if killed).
func startAndReap(path string, argv []string, dir string, sigs chan os.Signal) int {
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

// gateFD is where the init reads hoh's word that it may start the command
// (ExtraFiles[1]).
const gateFD = 4

// passGate waits for hoh's word: whether cgroups bound the invocation.
func passGate() (cgroups bool, code int) {
	gate := os.NewFile(gateFD, "hoh-sandbox-gate")
	word := make([]byte, 1)
	n, _ := gate.Read(word)
	gate.Close()
	if n != 1 {
		fmt.Fprintln(os.Stderr, "hoh sandbox: hoh left before the command could start")
		return false, exitViewFailed
	}
	return word[0] == gateCgroup, 0
}

// rlimitArg marks a re-execution of this binary that bounds itself with
// rlimits and becomes the command (startBounded).
const rlimitArg = "-hoh-sandbox-rlimits"

// startBounded sets the rlimits standing in for cgroups and executes argv
// (argv[0] a path): RLIMIT_NPROC, whose count is per user and user
// namespace (Linux 5.14 on), so that each invocation's namespace counts
// its own processes although every invocation runs as RoleUID; and
// RLIMIT_DATA, which bounds each process's memory (not their sum).
func startBounded(procs, memory string, argv []string) int {
	p, _ := strconv.ParseUint(procs, 10, 64)
	m, _ := strconv.ParseUint(memory, 10, 64)
	for _, l := range []struct {
		res int
		max uint64
	}{{rlimitNproc, p}, {syscall.RLIMIT_DATA, m}} {
		if l.max == 0 {
			continue
		}
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.max, Max: l.max}); err != nil {
			fmt.Fprintln(os.Stderr, "hoh sandbox: rlimit:", err)
			return exitViewFailed
		}
	}
	err := syscall.Exec(argv[0], argv[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "hoh sandbox: start:", err)
	return 127
}

// rlimitNproc is Linux's RLIMIT_NPROC (not in package syscall).
const rlimitNproc = 6

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

// newRoot is where the init assembles the view before making it its root
// (a private tmpfs over the host's /tmp in the init's own mount namespace).
const newRoot = "/tmp"

// openSources opens an O_PATH handle on each bind source (in this mount
// namespace's copy of the host's tree) and each endpoint's directory.
func openSources(entries []entry, eps []endpoint) error {
	open := func(path string) (int, error) {
		return syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	}
	for i := range entries {
		e := &entries[i]
		if e.Kind != kindBind {
			continue
		}
		fd, err := open(e.Source)
		if err != nil {
			return fmt.Errorf("show %s: %w", e.Source, err)
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return err
		}
		e.fd, e.Dir = fd, st.Mode&syscall.S_IFMT == syscall.S_IFDIR
	}
	for i := range eps {
		fd, err := open(eps[i].Dir)
		if err != nil {
			return fmt.Errorf("endpoint %s: %w", eps[i].Listen, err)
		}
		eps[i].fd = fd
	}
	return nil
}

// becomeRole makes this thread the role's uid and gid (roleIDs), without
// supplementary groups where hoh may drop them, keeping its capabilities
// in the namespace for building the view.
func becomeRole(uid, gid int, dropGroups bool) error {
	if dropGroups {
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); e != 0 {
			return fmt.Errorf("setgroups: %w", e)
		}
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return fmt.Errorf("setresgid: %w", e)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return fmt.Errorf("setresuid: %w", e)
	}
	return nil
}

// buildView assembles entries on a fresh tmpfs and makes it the root.
func buildView(entries []entry) error {
	if err := syscall.Mount("hoh-view", newRoot, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("root tmpfs: %w", err)
	}
	for _, e := range entries {
		t := newRoot + e.Target
		if err := place(e, t); err != nil {
			return fmt.Errorf("%s %s: %w", e.Kind, e.Target, err)
		}
	}
	for _, e := range entries {
		if e.fd > 0 {
			syscall.Close(e.fd)
		}
	}
	const old = "/.hoh-old-root"
	if err := os.Mkdir(newRoot+old, 0o700); err != nil {
		return err
	}
	if err := syscall.PivotRoot(newRoot, newRoot+old); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := syscall.Chdir("/"); err != nil {
		return err
	}
	if err := syscall.Unmount(old, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's tree: %w", err)
	}
	if err := os.Remove(old); err != nil {
		return err
	}
	// Only the listed writable places take writes.
	if err := syscall.Mount("", "/", "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV, ""); err != nil {
		return fmt.Errorf("read-only root: %w", err)
	}
	return nil
}

func place(e entry, t string) error {
	switch e.Kind {
	case kindLink:
		if err := os.MkdirAll(filepath.Dir(t), 0o755); err != nil {
			return err
		}
		return os.Symlink(e.Link, t)
	case kindProc:
		// A /proc of this PID namespace only: the host's processes (hoh's
		// own included, whose root and cwd are the host's tree) are not
		// listed. Mounted while the host's /proc is still in the namespace.
		if err := os.MkdirAll(t, 0o555); err != nil {
			return err
		}
		return syscall.Mount("proc", t, "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	case kindTmpfs:
		if err := os.MkdirAll(t, 0o755); err != nil {
			return err
		}
		flags := uintptr(syscall.MS_NOSUID | syscall.MS_NODEV)
		if !e.Writable {
			flags |= syscall.MS_RDONLY
		}
		opts := "mode=" + e.Mode
		if e.Size > 0 {
			opts += fmt.Sprintf(",size=%d", e.Size)
		}
		return syscall.Mount("hoh-view", t, "tmpfs", flags, opts)
	case kindMask:
		if e.Dir {
			if err := os.MkdirAll(t, 0o755); err != nil {
				return err
			}
			return syscall.Mount("hoh-view", t, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_RDONLY, "mode=0755")
		}
		if err := mountPoint(t, false); err != nil {
			return err
		}
		return bindAt("/dev/null", t, false)
	case kindFile:
		src := newRoot + "/.hoh-file"
		if err := os.WriteFile(src, []byte(e.Content), 0o644); err != nil {
			return err
		}
		defer os.Remove(src) // the mount keeps the file
		if err := mountPoint(t, false); err != nil {
			return err
		}
		return bindAt(src, t, false)
	case kindBind:
		if err := mountPoint(t, e.Dir); err != nil {
			return err
		}
		if e.Tree > 0 {
			return attachTree(e.Tree, t)
		}
		return bindAt(fmt.Sprintf("/proc/self/fd/%d", e.fd), t, e.Writable)
	}
	return fmt.Errorf("unknown kind")
}

// bindAt binds src (with what is mounted below it) at t, read-only unless
// writable.
func bindAt(src, t string, writable bool) error {
	if err := syscall.Mount(src, t, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return err
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(t, &fs); err != nil {
		return err
	}
	// A remount must keep the flags the kernel locked on the original
	// mount (nosuid, nodev, noexec), or a user namespace may not do it.
	flags := uintptr(syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_NOSUID) | lockedFlags(fs.Flags)
	if !strings.HasPrefix(t, newRoot+"/dev/") {
		flags |= syscall.MS_NODEV
	}
	if !writable {
		flags |= syscall.MS_RDONLY
	}
	return syscall.Mount("", t, "", flags, "")
}

// startForwarders forwards each endpoint's address (on the namespace's
// loopback, up already) to its unix socket, reached through the directory
// handle hoh passed (no path to it is in the view).
func startForwarders(eps []endpoint) error {
	for _, ep := range eps {
		ln, err := net.Listen("tcp", ep.Listen)
		if err != nil {
			return err
		}
		sock := fmt.Sprintf("/proc/self/fd/%d/%s", ep.fd, endpointSocket)
		go splice.Each(ln, func() (net.Conn, error) { return net.Dial("unix", sock) }, nil)
	}
	return nil
}

// loopbackUp sets IFF_UP on lo (a new network namespace has it down).
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte
	copy(ifr[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return e
	}
	*(*uint16)(unsafe.Pointer(&ifr[16])) |= syscall.IFF_UP | syscall.IFF_RUNNING
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return e
	}
	return nil
}

// dropPrivileges leaves this thread (which starts the command) without any
// capability, bounding or ambient, and unable to gain one (no_new_privs);
// the init is not dumpable, so the command cannot reach into it.
func dropPrivileges() error {
	const prCapAmbient, prCapAmbientClearAll, prSetNoNewPrivs = 47, 4, 38
	for c := 0; c < 64; c++ {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_CAPBSET_DROP, uintptr(c), 0); e == syscall.EINVAL {
			break
		} else if e != 0 {
			return fmt.Errorf("bounding set: %w", e)
		}
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("ambient set: %w", e)
	}
	hdr := struct {
		version uint32
		pid     int32
	}{0x20080522, 0} // _LINUX_CAPABILITY_VERSION_3
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("no_new_privs: %w", e)
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("dumpable: %w", e)
	}
	return nil
}

// lockedFlags are the statfs flags a bind remount must keep, as mount flags.
func lockedFlags(st int64) uintptr {
	const stNoexec, stNoatime, stNodiratime, stRelatime, stNodev = 8, 1024, 2048, 4096, 4
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
	if st&stNodev != 0 {
		f |= syscall.MS_NODEV
	}
	return f
}

func depth(p string) int { return strings.Count(p, "/") }

// mountPoint makes sure path exists (in a tmpfs of the view it does not
// yet) as a directory or an empty file to bind onto.
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

// NamespacesAvailable reports whether this host lets hoh create the user +
// mount + PID + network namespace of a Confined invocation, build a view in
// it and mount its /proc.
func NamespacesAvailable() error {
	if os.Getenv(simulateUnavailable) != "" {
		return fmt.Errorf("sandbox: user namespaces unavailable (simulated by %s)", simulateUnavailable)
	}
	nsOnce.Do(func() {
		p, err := plan(View{}, 1<<20)
		if err != nil {
			nsErr = err
			return
		}
		defer p.close()
		spec, _ := json.Marshal(newSpec(p, "/", false))
		c := exec.Command("/proc/self/exe", initArg, string(spec), "--", "true")
		c.Env = []string{"PATH=" + os.Getenv("PATH")}
		c.SysProcAttr = confineAttr(&syscall.SysProcAttr{})
		if out, err := c.CombinedOutput(); err != nil {
			nsErr = fmt.Errorf("sandbox: user + mount + PID + network namespaces unavailable (%v: %s); host role views need them "+
				"(Linux with unprivileged user namespaces: kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, "+
				"no AppArmor restriction on unprivileged user namespaces)", err, strings.TrimSpace(string(out)))
		}
	})
	return nsErr
}

// Capabilities the init needs to build a view (mount, pivot_root, bring up
// loopback, bind the DNS sink's port 53, drop the bounding set); it drops
// them all before the command.
const (
	capSetgid         = 6
	capSetuid         = 7
	capSetpcap        = 8
	capNetBindService = 10
	capNetAdmin       = 12
	capSysAdmin       = 21
)

// confineAttr adds the namespaces of a Confined invocation to attr: the
// role's uid and gid (roleIDs) are the only ids mapped, to themselves; the
// init keeps, as ambient capabilities, only what building the view and
// taking the role's uid need.
func confineAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	uid, gid := roleIDs()
	root := os.Getuid() == 0
	// Own IPC (no System V or POSIX queue, semaphore or shared memory of
	// another role or of the host) and UTS (its own host name).
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
		syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	// As root, hoh's supplementary groups are dropped; an unprivileged hoh
	// may not drop its own.
	attr.GidMappingsEnableSetgroups = root
	attr.AmbientCaps = []uintptr{capSetgid, capSetuid, capSetpcap, capNetBindService, capNetAdmin, capSysAdmin}
	attr.Pdeathsig = syscall.SIGKILL
	return attr
}

// oPath is Linux's O_PATH (not in package syscall): a handle on a path
// that bind mounts can name through /proc/self/fd.
const oPath = 0x200000
