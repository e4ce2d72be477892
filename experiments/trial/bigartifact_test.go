package trial

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// bigArtifact is a Developer that leaves a 100 GiB sparse file (0 blocks)
// and dirs*100 small files in the workspace. The first iteration writes
// them all; a later one changes one of them (d0/changed.txt), as a
// Developer touching a few files does, or with rewriteAll writes every one
// again (same contents, new ctimes: each digest and git re-reads them all).
// It prints how long it took ("shell-ns N"), the CLI's work, not hoh's.
func bigArtifact(dirs int, rewriteAll bool) string {
	write := `i=0; while [ $i -lt ` + strconv.Itoa(dirs) + ` ]; do mkdir -p d$i; j=0; while [ $j -lt 100 ]; do echo "file $i $j" > d$i/f$j.txt; j=$((j+1)); done; i=$((i+1)); done`
	if !rewriteAll {
		write = `[ -f d0/f0.txt ] || { ` + write + `; }`
	}
	return `s=$(date +%s%N); truncate -s 100G sparse.bin && mkdir -p many && cd many && ` + write + ` && ` +
		`date +%s%N > d0/changed.txt; e=$?; echo "shell-ns $(($(date +%s%N) - s))"; exit $e`
}

// shellNanos sums the "shell-ns N" lines bigArtifact's shells printed.
func shellNanos(outs []string) time.Duration {
	var d time.Duration
	for _, o := range outs {
		for _, line := range strings.Split(o, "\n") {
			if n, ok := strings.CutPrefix(line, "shell-ns "); ok {
				v, _ := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
				d += time.Duration(v)
			}
		}
	}
	return d
}

// allocated is the disk space the files under dir take (hard links once).
func allocated(t testing.TB, dir string) int64 {
	t.Helper()
	seen := map[uint64]bool{}
	var n int64
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && !seen[st.Ino] {
			seen[st.Ino] = true
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}

// Red-team: the sparse file is refused above the per-file limit with a
// recorded violation (git and every checkpoint export would write 100 GiB),
// the 20,000 files are the artifact, and the trial's disk use stays within
// twice the workspace's allocated size (no full copy per view).
func TestRedTeamSparseFileAndManyFiles(t *testing.T) {
	dir := t.TempDir()
	h := &fakeHarness{shells: map[runrecord.Role]string{runrecord.RoleDeveloper: bigArtifact(20, false)}} // 2,000 files; the benchmark has 20,000
	s, err := runIn(dir, "hoh@2", h)
	if err != nil {
		t.Fatal(err)
	}
	l := runrecord.TrialLayout{Dir: dir}
	if len(s.Violations) != 2 || !strings.Contains(s.Violations[0], "the developer left sparse.bin of 107374182400 bytes (0 allocated), above the artifact's limit") {
		t.Fatalf("violations %q", s.Violations)
	}
	if _, err := os.Stat(filepath.Join(l.Workspace(), "sparse.bin")); !os.IsNotExist(err) {
		t.Fatalf("sparse.bin is in the workspace: %v", err)
	}
	if ls := testenv.GitShow(t, l.GitDir(), "cp-2:many/d19"); !strings.Contains(ls, "f99.txt") {
		t.Fatalf("cp-2 lacks the many files: %q", ls)
	}
	// Each stage's digest, listed by the walk that refused the sparse
	// file, is its commit's: the refused file is not in it.
	repo, err := history.Open(l.GitDir(), l.Workspace())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stages(t, dir) {
		exp := t.TempDir()
		if err := repo.Export(st.Commit, exp); err != nil {
			t.Fatal(err)
		}
		if want, _ := history.Digest(exp); st.Digest != want {
			t.Errorf("iteration %d %s: recorded digest %s, its commit's tree %s", st.Iteration, st.Role, st.Digest, want)
		}
	}
	ws := allocated(t, l.Workspace())
	total := allocated(t, dir)
	t.Logf("workspace allocates %d KiB, the whole trial directory %d KiB (%.2fx)", ws>>10, total>>10, float64(total)/float64(ws))
	if total > 3*ws { // the workspace itself, plus at most twice it
		t.Errorf("the trial directory allocates %d bytes, over 3x the workspace's %d", total, ws)
	}
}

// BenchmarkHoH2BigArtifact: HoH@2 over the 100 GiB sparse file and 20,000
// files, with a fake CLI (no model): what remains is hoh's own work —
// views, copies, digests, commits, evaluation exports. touch-one is a
// Developer that writes the files once and then changes one; rewrite-all
// writes all of them at each iteration. Reported: seconds of hoh's work per
// stage (the trial's wall time less the Developer's shell, timed inside
// its view, and the fake CLI's own digests), and the trial directory's disk
// use beyond the workspace's.
func BenchmarkHoH2BigArtifact(b *testing.B) {
	for _, c := range []struct {
		name       string
		rewriteAll bool
	}{{"touch-one", false}, {"rewrite-all", true}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				dir := b.TempDir()
				// Every role's CLI starts in its view, as a real one does.
				h := &fakeHarness{shells: map[runrecord.Role]string{runrecord.RoleDeveloper: bigArtifact(200, c.rewriteAll),
					runrecord.RolePlanner: "true", runrecord.RoleQA: "true"}}
				start := time.Now()
				if _, err := runIn(dir, "hoh@2", h); err != nil {
					b.Fatal(err)
				}
				wall := time.Since(start)
				cli := shellNanos(h.shellOut[runrecord.RoleDeveloper]) + h.digestTime
				l := runrecord.TrialLayout{Dir: dir}
				ws := allocated(b, l.Workspace())
				b.ReportMetric((wall-cli).Seconds()/6, "hoh-s/stage")
				b.ReportMetric(float64(allocated(b, dir)-ws)/float64(ws), "extra-disk/workspace")
			}
		})
	}
}

// BenchmarkHoH2WorkPerStageLargeVsSmall: is hoh's own work proportional to
// the changes, not to the artifact? Two HoH@2 trials with a fake CLI (no
// model) whose Developers each write their files at iteration 1 and
// change one at iteration 2: a small artifact (100 files) and a large one
// (20,000 files and the 100 GiB sparse file), run alternately in the same
// session so the machine's load falls on both. hoh's work is read from the
// trials' own phase timings (runrecord.Timings: the wall time less the
// CLI phase, where the fake CLI's shell runs), per stage (6: the 2
// checkpoint evaluations included). Reported: each, their ratio
// (issue 42's goal: under 3x and under 5 s a stage), and the large one's
// milliseconds per stage in each of hoh's phases.
func BenchmarkHoH2WorkPerStageLargeVsSmall(b *testing.B) {
	var small, large time.Duration
	phases := runrecord.Timings{}
	for range b.N {
		for _, dirs := range []int{1, 200} {
			h := &fakeHarness{shells: map[runrecord.Role]string{runrecord.RoleDeveloper: bigArtifact(dirs, false),
				runrecord.RolePlanner: "true", runrecord.RoleQA: "true"}}
			s, err := runIn(b.TempDir(), "hoh@2", h)
			if err != nil {
				b.Fatal(err)
			}
			if len(s.Timings) == 0 {
				b.Fatal("the trial's summary has no phase timings")
			}
			if dirs == 1 {
				small += s.Timings.Hoh()
				continue
			}
			large += s.Timings.Hoh()
			phases = phases.Add(s.Timings)
		}
	}
	const stages = 6
	per := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) / stages }
	b.ReportMetric(per(small), "hoh-s/stage-small")
	b.ReportMetric(per(large), "hoh-s/stage-large")
	b.ReportMetric(float64(large)/float64(small), "large/small")
	for _, p := range runrecord.Phases {
		if p != runrecord.PhaseCLI {
			b.ReportMetric(float64(phases[p])/float64(b.N)/stages, "ms/stage-"+string(p))
		}
	}
}
