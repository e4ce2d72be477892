package tables

import (
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoh-research/hoh/analysis/metrics"
	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/internal/testenv"
)

// BenchmarkReportScaling runs `hoh report table1` and `hoh report tasks` on
// synthetic GameCraft-shaped records (scripts/synthetic-records.sh: 8 arms x
// 140 tasks x 5 metrics per configuration) at about 10^4, 10^5 and 10^6 rows,
// from reading the CSV to the rendered text, and reports ns/row: flat when
// the analysis is linear in the number of rows. load/rows=N measures the
// load alone against a Python baseline (benchLoad), also at 2,016,000 rows
// (36 configurations x 10 repetitions, the size of issue 27's measure).
func BenchmarkReportScaling(b *testing.B) {
	root := testenv.RepoRoot(b)
	dir := b.TempDir()
	for _, d := range []struct {
		configs, reps int
		tables        bool
	}{{2, 1, true}, {18, 1, true}, {179, 1, true}, {36, 10, false}} {
		rows := 5600 * d.configs * d.reps
		path := filepath.Join(dir, fmt.Sprintf("records-%d.csv", rows))
		var once sync.Once
		records := func(b *testing.B) string { // written on first use: -bench may select other sizes
			once.Do(func() {
				out, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				defer out.Close()
				gen := exec.Command(filepath.Join(root, "scripts", "synthetic-records.sh"), fmt.Sprint(d.configs), fmt.Sprint(d.reps))
				gen.Stdout = out
				if err := gen.Run(); err != nil {
					b.Fatalf("synthetic-records.sh: %v", err)
				}
			})
			return path
		}
		b.Run(fmt.Sprintf("load/rows=%d", rows), func(b *testing.B) { benchLoad(b, root, records(b), rows) })
		if !d.tables {
			continue
		}
		for _, name := range []string{"table1", "tasks"} {
			b.Run(fmt.Sprintf("%s/rows=%d", name, rows), func(b *testing.B) {
				cfg, err := PaperConfig(name)
				if err != nil {
					b.Fatal(err)
				}
				path := records(b)
				cpu0 := cpuTime(b)
				for b.Loop() {
					if err := Run(name, cfg, []string{path}, "text", io.Discard); err != nil {
						b.Fatal(err)
					}
				}
				per := float64(b.N) * float64(rows)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/row")
				// CPU time of the process: on a shared machine wall time also counts others' work.
				b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/per, "cpu-ns/row")
			})
		}
	}
}

// benchLoad measures what every report does before its first table: read
// the records, validate them into a set, index it and compute each series'
// exact mean over tasks of the tasks' means over repetitions. Beside it, in
// the same run, scripts/load-baseline.py computes the same means with
// Python's csv module (a child process: its CPU time is the children's).
// Reported: CPU ns per row for both, the ratio, the bytes per row the set
// and index keep (live heap after a GC) and Python's peak memory per row.
func benchLoad(b *testing.B, root, path string, rows int) {
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Fatal("python3 is needed for the baseline (scripts/install-test-deps.sh installs it)")
	}
	var hohCPU, pyCPU time.Duration
	var live uint64
	var pyPeak int64
	for b.Loop() {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		cpu0 := cpuTime(b)
		set, err := results.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		ix := metrics.NewSetIndex(set)
		runtime.GC()
		runtime.ReadMemStats(&m1)
		live = max(live, m1.HeapAlloc-m0.HeapAlloc) // the set and its index
		for _, sel := range ix.Selectors() {
			ex, err := ix.TaskExact(sel)
			if err != nil {
				b.Fatal(err)
			}
			vs := make([]*big.Rat, 0, len(ex))
			for _, v := range ex {
				vs = append(vs, v)
			}
			metrics.MeanExact(vs)
		}
		hohCPU += cpuTime(b) - cpu0 // the GCs above are counted: they are the load's garbage
		runtime.KeepAlive(ix)

		c0 := childCPU(b)
		cmd := exec.Command(py, filepath.Join(root, "scripts", "load-baseline.py"), path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("load-baseline.py: %v\n%s", err, out)
		}
		pyCPU += childCPU(b) - c0
		var series int
		var cpuS float64
		var kb int64
		if _, err := fmt.Sscanf(string(out), "series %d cpu_s %g maxrss_kb %d", &series, &cpuS, &kb); err != nil || series != len(ix.Selectors()) {
			b.Fatalf("load-baseline.py printed %q (%v), want %d series", out, err, len(ix.Selectors()))
		}
		pyPeak = max(pyPeak, kb*1024)
	}
	per := float64(b.N) * float64(rows)
	b.ReportMetric(float64(hohCPU.Nanoseconds())/per, "cpu-ns/row")
	b.ReportMetric(float64(pyCPU.Nanoseconds())/per, "python-cpu-ns/row")
	b.ReportMetric(float64(pyCPU)/float64(hohCPU), "x-faster")
	b.ReportMetric(float64(live)/float64(rows), "B/row")
	b.ReportMetric(float64(pyPeak)/float64(rows), "python-peak-B/row")
}

// childCPU is the user + system time of this process's waited-for children.
func childCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTime is the user + system time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
