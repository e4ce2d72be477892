package tables

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hoh-research/hoh/internal/testenv"
)

// BenchmarkReportScaling runs `hoh report table1` and `hoh report tasks` on
// synthetic GameCraft-shaped records (scripts/synthetic-records.sh: 8 arms x
// 140 tasks x 5 metrics per configuration) at about 10^4, 10^5 and 10^6 rows,
// from reading the CSV to the rendered text, and reports ns/row: flat when
// the analysis is linear in the number of rows.
func BenchmarkReportScaling(b *testing.B) {
	root := testenv.RepoRoot(b)
	dir := b.TempDir()
	for _, configs := range []int{2, 18, 179} {
		rows := 5600 * configs
		path := filepath.Join(dir, fmt.Sprintf("records-%d.csv", rows))
		out, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		gen := exec.Command(filepath.Join(root, "scripts", "synthetic-records.sh"), fmt.Sprint(configs), "1")
		gen.Stdout = out
		if err := gen.Run(); err != nil {
			b.Fatalf("synthetic-records.sh: %v", err)
		}
		out.Close()
		for _, name := range []string{"table1", "tasks"} {
			b.Run(fmt.Sprintf("%s/rows=%d", name, rows), func(b *testing.B) {
				cfg, err := PaperConfig(name)
				if err != nil {
					b.Fatal(err)
				}
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

// cpuTime is the user + system time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
