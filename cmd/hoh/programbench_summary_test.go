package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv"
)

// hoh report prints ProgramBench's two upstream aggregates from records:
// over the real checkout's 200 instances (missing = 0, the toy excluded)
// and over the attempted ones, repetitions averaged first.
func TestReportPrintsProgramBenchAggregatesBothWays(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "pb.csv")
	os.WriteFile(csv, []byte(`benchmark,config,condition,checkpoint,task,metric,value,rep
programbench,c1,vanilla,1,abishekvashok__cmatrix.5c082c6,pass_rate,50,1
programbench,c1,vanilla,1,abishekvashok__cmatrix.5c082c6,pass_rate,70,2
programbench,c1,vanilla,1,testorg__calculator.abc1234,pass_rate,100,1
`), 0o644)
	checkout := testenv.SharedPath(t, "benchmarks", "programbench")
	var out, errw strings.Builder
	if code := run([]string{"report", "table1", "--results", csv, "--programbench", checkout}, &out, &errw); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	for _, want := range []string{
		"c1 Vanilla:",
		"all instances (missing = 0): avg pass rate 0.30% over 200 instances (1 scored)",
		"attempted:                   avg pass rate 60.00% over 1 instances (1 scored)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	// CSV output stays CSV; the aggregates go to stderr.
	out.Reset()
	errw.Reset()
	if code := run([]string{"report", "table1", "--results", csv, "--format", "csv"}, &out, &errw); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	if strings.Contains(out.String(), "aggregates") || !strings.Contains(errw.String(), "give --programbench CHECKOUT") {
		t.Errorf("csv stdout:\n%s\nstderr:\n%s", out.String(), errw.String())
	}
}
