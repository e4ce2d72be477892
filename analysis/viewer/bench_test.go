package viewer

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkReport10000Trials builds the report of a synthetic run of
// 10,000 trials (500 tasks x 4 configurations x 5 conditions, up to two
// iterations each, with failed, replaced and missing trials): the index page, 9,000 trial pages, the tables and the
// figures. It reports the time of a full build, of a rebuild with nothing
// changed, and the index page's size.
func BenchmarkReport10000Trials(b *testing.B) {
	dir := b.TempDir()
	start := time.Now()
	trials := writeSynthRun(b, dir, synthOpts{Tasks: 500, Configs: []string{"codex-a", "codex-b", "pi-a", "pi-b"},
		Arms: []string{"vanilla", "vanilla-continuation@2", "hoh@2", "wo-plan-update@2", "wo-warm-start@2"}, Shapes: true})
	b.Logf("wrote %d synthetic trials in %s", len(trials), time.Since(start).Round(time.Millisecond))
	opts := testOpts(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		os.RemoveAll(filepath.Join(dir, ReportDir))
		t0 := time.Now()
		res, err := Build(dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		full := time.Since(t0)
		t1 := time.Now()
		again, err := Build(dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.IndexBytes)/(1<<20), "index-MiB")
		b.ReportMetric(full.Seconds(), "full-build-s")
		b.ReportMetric(time.Since(t1).Seconds(), "rebuild-s")
		b.Logf("%d trials: full build %s (%d trial pages), rebuild with nothing changed %s (%d pages rewritten), index.html %.2f MiB",
			len(trials), full.Round(time.Millisecond), res.Rebuilt, time.Since(t1).Round(time.Millisecond), again.Rebuilt,
			float64(res.IndexBytes)/(1<<20))
	}
}
