package viewer

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReport10000Trials builds the report of a synthetic run of
// 10,000 trials (500 tasks x 4 configurations x 5 conditions, up to two
// iterations each, with failed, replaced and missing trials): the index page, 9,000 trial pages, the tables and the
// figures. It reports the time of a full build, of a rebuild with nothing
// changed, of what hoh view --serve builds before serving, and the index
// page's size.
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
		t0, cpu0 := time.Now(), cpuTime()
		res, err := Build(dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		full, fullCPU := time.Since(t0), cpuTime()-cpu0
		t1, cpu1 := time.Now(), cpuTime()
		again, err := Build(dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.IndexBytes)/(1<<20), "index-MiB")
		b.ReportMetric(full.Seconds(), "full-build-s")
		rebuild, rebuildCPU := time.Since(t1), cpuTime()-cpu1
		// What hoh view --serve does before serving: everything but the
		// trial pages, which it builds when they are asked for.
		os.RemoveAll(filepath.Join(dir, ReportDir))
		lazyOpts := opts
		lazyOpts.LazyTrials = true
		t2, cpu2 := time.Now(), cpuTime()
		if _, err := Build(dir, lazyOpts); err != nil {
			b.Fatal(err)
		}
		lazy, lazyCPU := time.Since(t2), cpuTime()-cpu2
		b.ReportMetric(lazy.Seconds(), "serve-start-s")
		b.ReportMetric(rebuild.Seconds(), "rebuild-s")
		b.Logf("%d trials: full build %s wall, %s CPU (%d trial pages); rebuild with nothing changed %s wall, %s CPU (%d pages rewritten); index.html %.2f MiB",
			len(trials), full.Round(time.Millisecond), fullCPU.Round(time.Millisecond), res.Rebuilt, rebuild.Round(time.Millisecond),
			rebuildCPU.Round(time.Millisecond), again.Rebuilt, float64(res.IndexBytes)/(1<<20))
		b.Logf("hoh view --serve start (index, tables, figures; trial pages on request): %s wall, %s CPU",
			lazy.Round(time.Millisecond), lazyCPU.Round(time.Millisecond))
	}
}

// cpuTime is the process's user + system time: on a shared machine the
// wall time says more about the neighbours than about the build.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
