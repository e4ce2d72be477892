package trial

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox"
)

// RoleView is what one role invocation's contract shows: its working
// directory (writable for AccessWrite, read-only otherwise), its CLI state
// directory (writable), the files its prompt lists (Shown, read-only) and
// further writable paths (Writes).
type RoleView struct {
	Access            harness.Access
	WorkDir, StateDir string
	// WorkSource, for a read-only working directory on the host, is the
	// tree shown at WorkDir instead of WorkDir's own (the workspace itself,
	// as the role's: sandbox.Mount.AsRole), so a read-only stage needs no
	// snapshot of it. WorkDir must exist, empty, on the host.
	WorkSource    string
	Shown, Writes []string
	// Endpoints are further model endpoints (base URLs or host:port) the
	// invocation may reach, such as hoh's relay.
	Endpoints []string
	// Limits bound the invocation on the host (zero fields: defaults).
	Limits sandbox.Limits
}

// RoleExecutor is the executor a role invocation runs in, the same for a
// trial and for the preflight turn (so that the preflight refuses what a
// role would meet): on the host (exec nil or sandbox.Local) confined to its
// contract (sandbox.Confined): runDir, /tmp and $TMPDIR are hidden (a
// private empty /tmp is the role's scratch space), and only v's paths and
// the CLI's install directory and Node runtime (read-only) are bound back.
// Any other executor (a task container) is returned as it is: containers
// get the view of their mounts (environment package). started, when set,
// gets the confined init's pid.
func RoleExecutor(exec sandbox.Executor, h harness.Harness, runDir string, v RoleView, started func(pid int)) sandbox.Executor {
	if !HostsViews(exec) {
		return exec
	}
	inner := sandbox.Local{}
	if e, ok := exec.(sandbox.Local); ok {
		inner = e
	}
	view := sandbox.View{Hide: hiddenFrom(runDir), Show: append([]string(nil), v.Shown...), Write: append([]string{v.StateDir}, v.Writes...)}
	if in, ok := h.(harness.Installed); ok {
		view.Tools = cliinstall.ViewPaths(in.Binary()) // a CLI installed under a hidden directory still runs
	}
	view.Endpoints = loopbackEndpoints(h, v.Endpoints)
	switch {
	case v.Access == harness.AccessWrite:
		view.Write = append(view.Write, v.WorkDir)
	case v.WorkSource != "":
		view.Mounts = append(view.Mounts, sandbox.Mount{Source: v.WorkSource, Target: v.WorkDir, AsRole: true})
	default:
		view.Show = append(view.Show, v.WorkDir)
	}
	return sandbox.Confined{Inner: inner, View: view, Started: started, Limits: v.Limits}
}

// HostsViews reports whether RoleExecutor confines on the host with exec,
// building the role's view itself (RoleView.WorkSource needs it), rather
// than returning a container's executor as it is.
func HostsViews(exec sandbox.Executor) bool {
	switch exec.(type) {
	case nil, sandbox.Local:
		return true
	}
	return false
}

// hiddenFrom are the directories no role sees beyond its contract: the run
// directory and the shared temporary directory.
func hiddenFrom(runDir string) []string {
	if abs, err := filepath.Abs(runDir); err == nil {
		runDir = abs
	}
	out := []string{runDir, "/tmp"}
	if tmp := filepath.Clean(os.TempDir()); tmp != "/tmp" {
		out = append(out, tmp)
	}
	return out
}

// loopbackEndpoints are the host:port addresses a confined role may reach:
// the harness's model endpoint (harness.Endpointer) and extra, those on
// loopback (hoh's relay, a local provider) only; a remote provider is
// reached through the relay. Its network namespace has no other way out.
func loopbackEndpoints(h harness.Harness, extra []string) []string {
	urls := append([]string(nil), extra...)
	if e, ok := h.(harness.Endpointer); ok {
		urls = append(urls, e.Endpoint())
	}
	var out []string
	for _, s := range urls {
		host := s
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			host = u.Host
			if u.Port() == "" {
				host = net.JoinHostPort(u.Hostname(), map[string]string{"https": "443", "http": "80"}[u.Scheme])
			}
		}
		h, _, err := net.SplitHostPort(host)
		if ip := net.ParseIP(h); err == nil && ip != nil && ip.IsLoopback() && !slices.Contains(out, host) {
			out = append(out, host)
		}
	}
	return out
}
