package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkConfinedEntry measures what confining one invocation costs: a
// Confined `true` with a role-sized view (the run directory and /tmp
// hidden, a writable workspace, a state directory and three listed files
// shown) against the same `true` run by Local. The difference is the cost of
// entering the sandbox (target: under 50 ms per invocation).
func BenchmarkConfinedEntry(b *testing.B) {
	root := b.TempDir()
	var show []string
	for _, f := range []string{"spec.md", "plan.md", "plan.json"} {
		p := filepath.Join(root, "iter-01", "context", f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
		show = append(show, p)
	}
	ws, state := filepath.Join(root, "workspace"), filepath.Join(root, "iter-01", "state")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(state, 0o755)
	v := View{Hide: []string{root, "/tmp"}, Show: show, Write: []string{ws, state}}
	cmd := Command{Args: []string{"true"}, Dir: ws}
	for _, c := range []struct {
		name string
		x    Executor
	}{{"local", Local{}}, {"confined", Confined{Inner: Local{}, View: v}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ex, err := c.x.Run(context.Background(), cmd)
				if err != nil || ex.Code != 0 {
					b.Fatalf("%+v %v", ex, err)
				}
			}
		})
	}
}
