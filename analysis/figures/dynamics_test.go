package figures

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestDynamicsWritesEveryLoopAndSeries(t *testing.T) {
	var loops []LoopIssues
	for l := 1; l <= 70; l++ {
		loops = append(loops, LoopIssues{Loop: l, New: l % 3, Closed: l % 2, Reopened: l % 5 / 4, Unresolved: l / 2, Total: l})
	}
	dir := t.TempDir()
	outs, err := Dynamics("dynamics", "test", loops, Options{OutDir: dir, DPI: 72})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 3 {
		t.Fatalf("outputs %v", outs)
	}
	for _, o := range outs {
		if st, err := os.Stat(o.Path); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", o.Path, err)
		}
	}
	pts, err := ReadPoints(filepath.Join(dir, "dynamics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, p := range pts {
		got[p.Series+"@"+p.X] = p.Y
	}
	if len(pts) != 5*70 {
		t.Fatalf("%d points, want 5 series x 70 loops", len(pts))
	}
	for _, l := range loops {
		x := strconv.Itoa(l.Loop)
		if got["new@"+x] != float64(l.New) || got["closed (QA-verified)@"+x] != float64(l.Closed) ||
			got["reopened@"+x] != float64(l.Reopened) || got["unresolved@"+x] != float64(l.Unresolved) || got["recorded@"+x] != float64(l.Total) {
			t.Fatalf("loop %d: points do not match the data", l.Loop)
		}
	}
	if _, err := Dynamics("dynamics", "", nil, Options{OutDir: dir}); err == nil {
		t.Fatal("no loops must be an error")
	}
}
