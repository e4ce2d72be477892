package trial

import (
	"os"
	"path/filepath"

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
	Shown, Writes     []string
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
	var inner sandbox.Executor
	switch e := exec.(type) {
	case nil:
		inner = sandbox.Local{}
	case sandbox.Local:
		inner = e
	default:
		return exec
	}
	view := sandbox.View{Hide: hiddenFrom(runDir), Show: append([]string(nil), v.Shown...), Write: append([]string{v.StateDir}, v.Writes...)}
	if in, ok := h.(harness.Installed); ok {
		view.Tools = cliinstall.ViewPaths(in.Binary()) // a CLI installed under a hidden directory still runs
	}
	if v.Access == harness.AccessWrite {
		view.Write = append(view.Write, v.WorkDir)
	} else {
		view.Show = append(view.Show, v.WorkDir)
	}
	return sandbox.Confined{Inner: inner, View: view, Started: started}
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
