package sandbox

import "context"

// ReadOnlyView runs each command of a host executor confined (see Confined)
// with Paths read-only: a write under them fails with EROFS whatever the
// process's uid (root included, which plain file modes do not stop). It is
// the QA Tester's frozen candidate when nothing else is hidden.
type ReadOnlyView struct {
	Inner Executor
	Paths []string
}

// Run implements Executor.
func (v ReadOnlyView) Run(ctx context.Context, cmd Command) (Exit, error) {
	if len(v.Paths) == 0 {
		return v.Inner.Run(ctx, cmd)
	}
	return Confined{Inner: v.Inner, View: View{Show: v.Paths}}.Run(ctx, cmd)
}
