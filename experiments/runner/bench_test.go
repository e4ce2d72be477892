package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkRunnerOverheadPerTrial measures what the runner itself costs per
// trial (planning, lock, A_0 snapshot, digests, stage commits, records,
// evaluation of the builtin task) with 64 concurrent trials of an in-process
// harness that answers at once, so harness time is ~0 and everything
// measured is overhead. Reported per trial: ns, bytes allocated, and heap in
// use after the run divided by the trial count (not a peak).
func BenchmarkRunnerOverheadPerTrial(b *testing.B) {
	const trials = 64
	var perTrialNs, perTrialBytes, heapPerTrial float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		out := filepath.Join(b.TempDir(), fmt.Sprint("run", i))
		e := experiment(b, out, "")
		e.Conditions = []string{"vanilla"}
		e.Repetitions, e.Concurrency = 32, 64 // 2 tasks x 32 reps = 64 concurrent trials
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h := &instantHarness{}
		b.StartTimer()
		res, err := Run(context.Background(), e, opts(h))
		b.StopTimer()
		if err != nil || res.Count(StateDone) != trials {
			b.Fatalf("run: %v (%d done)", err, res.Count(StateDone))
		}
		runtime.ReadMemStats(&after)
		perTrialBytes += float64(after.TotalAlloc-before.TotalAlloc) / trials
		heapPerTrial += float64(after.HeapInuse) / trials
	}
	perTrialNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N) / trials
	b.ReportMetric(perTrialNs, "ns/trial")
	b.ReportMetric(perTrialBytes/float64(b.N), "B/trial")
	b.ReportMetric(heapPerTrial/float64(b.N), "heap-inuse-B/trial")
}
