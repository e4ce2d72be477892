package trial

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/roles"
)

// A task container never sees the trial directory: it mounts the exchange
// (Env.Exchange) only. These place one role's inputs, its CLI state and,
// for the Developer, the workspace there for one invocation, so a container
// role, like a confined host role, reaches nothing beyond its contract
// (withheld evidence, other iterations, the history, evaluation outputs,
// other trials, and for the Planner and QA the live workspace).

// inputs is what placeInputs put in the exchange for one stage.
type inputs struct {
	workDir string            // the working directory as the role sees it
	mats    []roles.Material  // the prompt's materials, at their view paths
	moved   map[string]string // view path -> where it came from and goes back to
	x       *sandbox.Exchange
}

// placeInputs places the stage's working directory (when it is not the
// workspace, which placeWork moves in for the invocation alone) and the
// prompt's materials
// under the exchange's read-only inputs and returns the paths the prompt
// and the invocation name. On the host (no exchange) nothing moves. The
// working directory is moved, not copied (it is a copy made for the stage);
// done moves it back.
func (r *runner) placeInputs(workDir string, mats []roles.Material) (*inputs, error) {
	in := &inputs{workDir: workDir, mats: mats, moved: map[string]string{}, x: r.env.Exchange}
	if in.x == nil {
		return in, nil
	}
	if err := sandbox.EmptyDir(in.x.Inputs); err != nil {
		return nil, err
	}
	used := map[string]bool{}
	place := func(src string) string {
		name := filepath.Base(src)
		for i := 2; used[name]; i++ {
			name = fmt.Sprintf("%d-%s", i, filepath.Base(src))
		}
		used[name] = true
		return filepath.Join(in.x.Inputs, name)
	}
	if workDir != r.ws {
		dst := place(workDir)
		if err := os.Rename(workDir, dst); err != nil {
			return nil, fmt.Errorf("placing the working directory in the container's view: %w", err)
		}
		in.moved[dst], in.workDir = workDir, dst
	}
	in.mats = make([]roles.Material, len(mats))
	for i, m := range mats {
		in.mats[i] = m
		switch {
		case m.Path == "":
		case m.Path == workDir:
			in.mats[i].Path = in.workDir
		default:
			dst := place(m.Path)
			if err := history.CopyTree(m.Path, dst); err != nil {
				in.done()
				return nil, fmt.Errorf("placing %s in the container's view: %w", m.Category, err)
			}
			in.mats[i].Path = dst
		}
	}
	// Readable by whichever user the container runs the role as; the mount
	// makes it read-only.
	if err := filepath.WalkDir(in.x.Inputs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := fi.Mode().Perm() | 0o444
		if d.IsDir() || fi.Mode().Perm()&0o100 != 0 {
			mode |= 0o111
		}
		// A chmod changes the ctime even to the same mode, and the working
		// directory's files are links of the workspace's: an unneeded one
		// would make the next digest and git re-read them.
		if fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) == mode {
			return nil
		}
		return os.Chmod(p, mode)
	}); err != nil {
		in.done()
		return nil, err
	}
	return in, nil
}

// done puts moved working directories back and empties the inputs.
func (in *inputs) done() error {
	if in == nil || in.x == nil {
		return nil
	}
	var first error
	for view, orig := range in.moved {
		if err := os.Rename(view, orig); err != nil && first == nil {
			first = err
		}
	}
	in.moved = nil
	if err := sandbox.EmptyDir(in.x.Inputs); err != nil && first == nil {
		first = err
	}
	return first
}

// mounts maps the view paths of moved directories to their own, for
// resolving paths a role's records cite.
func (in *inputs) mounts() []sandbox.Mount {
	var m []sandbox.Mount
	for view, orig := range in.moved {
		m = append(m, sandbox.Mount{Source: orig, Target: view})
	}
	return m
}

// stateIn gives an invocation in a container its CLI state directory in
// the exchange's scratch, holding what stateDir holds (a continued
// session); stateOut brings it back and empties the scratch.
func (r *runner) stateIn(ctx context.Context, stateDir string) (string, error) {
	x := r.env.Exchange
	if x == nil {
		return stateDir, nil
	}
	if err := x.Empty(ctx); err != nil {
		return "", fmt.Errorf("emptying the container's scratch: %w", err)
	}
	view := filepath.Join(x.Scratch, "state")
	if err := history.CopyTree(stateDir, view); err != nil {
		return "", fmt.Errorf("placing the CLI state in the container's view: %w", err)
	}
	return view, nil
}

func (r *runner) stateOut(ctx context.Context, view, stateDir string) error {
	x := r.env.Exchange
	if x == nil {
		return nil
	}
	if err := sandbox.EmptyDir(stateDir); err != nil {
		return err
	}
	if err := history.CopyTree(view, stateDir); err != nil {
		return fmt.Errorf("keeping the CLI state from the container: %w", err)
	}
	return x.Empty(ctx)
}

// viewWorkspace is where the Developer's workspace is while a container
// role works in it: in the exchange's scratch, so no other role's
// invocation has it in its container at all.
func (r *runner) viewWorkspace() string {
	return filepath.Join(r.env.Exchange.Scratch, "workspace")
}

// placeWork, in a container, moves the workspace into the exchange for an
// invocation that works in it and points the exchange's Current link (the
// image's working directory links there) at the role's working directory;
// back undoes it and must run before the scratch is emptied.
func (r *runner) placeWork(workDir string) (view string, back func() error, err error) {
	x := r.env.Exchange
	if x == nil {
		return workDir, func() error { return nil }, nil
	}
	view = workDir
	back = func() error { return nil }
	if workDir == r.ws {
		view = r.viewWorkspace()
		if err := os.Rename(r.ws, view); err != nil {
			return "", nil, fmt.Errorf("placing the workspace in the container's view: %w", err)
		}
		back = func() error { return os.Rename(view, r.ws) }
	}
	if x.Current != "" {
		if err := sandbox.PointLink(x.Current, view); err != nil {
			return "", nil, errors.Join(err, back())
		}
		moveBack := back
		back = func() error { return errors.Join(sandbox.PointLink(x.Current, x.Idle), moveBack()) }
	}
	return view, back, nil
}

// recoverWorkspace puts back a workspace a killed run left in the
// exchange; when the exchange is gone too, the workspace is an empty
// directory that the restore to the last committed stage fills.
func (r *runner) recoverWorkspace() error {
	if r.env.Exchange == nil {
		return nil
	}
	if _, err := os.Stat(r.viewWorkspace()); err == nil {
		if err := os.RemoveAll(r.ws); err != nil {
			return err
		}
		return os.Rename(r.viewWorkspace(), r.ws)
	}
	return os.MkdirAll(r.ws, 0o755)
}
