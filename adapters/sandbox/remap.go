package sandbox

import (
	"context"
	"fmt"
)

// Mount shows Source at Target inside an invocation's namespace (a path a
// task addresses, like GameCraft's /workspace/game); read-only unless
// Writable. An empty Source is an empty private tmpfs at Target (a scratch
// /logs, or a host directory hidden).
type Mount struct {
	Source   string `json:"source,omitempty"`
	Target   string `json:"target"`
	Writable bool   `json:"writable,omitempty"`
	// AsRole shows a read-only Source that root owns (a trial's
	// workspace) with root's entries as the role's, through an idmapped
	// mount, as the role that wrote them saw them, without walking it to
	// hand entries over. Where the kernel or file system cannot, Source is
	// handed over as a Show path is.
	AsRole bool `json:"as_role,omitempty"`
}

// Remapped runs each command with Mounts applied, in order, inside the
// view of a confined invocation: Inner is Confined or ReadOnlyView (their
// view applies first), or Local, which is confined with no view of its
// own. Nothing mounted here is seen outside the invocation, and nothing is
// created on the host: the targets are made in the view's own root.
type Remapped struct {
	Inner  Executor
	Mounts []Mount
}

// Run implements Executor.
func (m Remapped) Run(ctx context.Context, cmd Command) (Exit, error) {
	if len(m.Mounts) == 0 {
		return m.Inner.Run(ctx, cmd)
	}
	var c Confined
	switch in := m.Inner.(type) {
	case nil:
		c = Confined{Inner: Local{}}
	case Local:
		c = Confined{Inner: in}
	case Confined:
		c = in
	case ReadOnlyView:
		c = Confined{Inner: in.Inner, View: View{Show: in.Paths}}
	default:
		return Exit{Code: -1}, fmt.Errorf("sandbox: mounts at fixed paths need a host executor, not %T", m.Inner)
	}
	c.View.Mounts = append(append([]Mount(nil), c.View.Mounts...), m.Mounts...)
	return c.Run(ctx, cmd)
}
