package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hoh export atif writes one document per trial of a run, mirroring the
// trial directories under --out, and says the run was scripted.
func TestExportATIFCommand(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	run := filepath.Join("..", "..", "experiments", "export", "testdata", "four-harnesses")
	if code := runMain(t, []string{"export", "atif", run, "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, cli := range []string{"codex", "claude", "opencode", "pi"} {
		p := filepath.Join(out, cli+"-scripted", "hoh", "greet", "rep-1", "trajectory.json")
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte(`"schema_version": "ATIF-v1.7"`)) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if !strings.Contains(stdout.String(), "8 ATIF document(s) written") || !strings.Contains(stdout.String(), "scripted test double") {
		t.Errorf("output:\n%s", stdout.String())
	}
	if code := runMain(t, []string{"export", "atif", t.TempDir()}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no trial directories") {
		t.Errorf("an empty directory: exit %d, %s", code, stderr.String())
	}
}

func runMain(t *testing.T, args []string, stdout, stderr *bytes.Buffer) int {
	t.Helper()
	stdout.Reset()
	stderr.Reset()
	return run(args, stdout, stderr)
}

// An imported Harbor baseline (Vanilla) is compared with a scripted HoH run
// of the same task, paired over tasks; a baseline with a task the HoH run
// lacks is refused as not comparable.
func TestImportHarborThenTable1(t *testing.T) {
	var stdout, stderr bytes.Buffer
	jobDir := filepath.Join("..", "..", "adapters", "benchmark", "harbor", "jobs", "testdata", "jobs", "2026-11-30__12-00-00")
	hohRun := filepath.Join("testdata", "harbor-import", "hoh-run")
	baseline := filepath.Join(t.TempDir(), "baseline.csv")
	if code := runMain(t, []string{"import", "harbor", jobDir, "-o", baseline, "--config", "codex-scripted"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "answer__Tm55Rq0") || !strings.Contains(stderr.String(), "nothing written") {
		t.Fatalf("a job with an unscored trial: exit %d, %s", code, stderr.String())
	}
	if _, err := os.Stat(baseline); err == nil {
		t.Fatal("a refused import wrote records")
	}
	if code := runMain(t, []string{"import", "harbor", filepath.Join(jobDir, "answer__Qw3rTy7"), "-o", baseline, "--config", "codex-scripted"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if code := runMain(t, []string{"report", "table1", "--results", baseline, "--results", hohRun}, &stdout, &stderr); code != 0 {
		t.Fatalf("table1: exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"harbor-smoke codex-scripted reward HoH@1 vs Vanilla", "n=1", "Vanilla", "scripted test double"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table1 lacks %q:\n%s", want, stdout.String())
		}
	}
	all := filepath.Join(t.TempDir(), "all.csv")
	if code := runMain(t, []string{"import", "harbor", jobDir, "-o", all, "--config", "codex-scripted", "--partial"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--partial: exit %d: %s", code, stderr.String())
	}
	if code := runMain(t, []string{"report", "table1", "--results", all, "--results", hohRun}, &stdout, &stderr); code == 0 ||
		!strings.Contains(stderr.String(), "cover different tasks") || !strings.Contains(stderr.String(), "hello-world") {
		t.Errorf("a baseline with a task HoH lacks: exit %d, %s", code, stderr.String())
	}
}

// Table 2 shows each arm's mean cost per task beside its tokens, exactly
// the records' cost_usd; an arm with a trial of unknown price is unknown,
// not a mean of the others.
func TestTable2CostColumn(t *testing.T) {
	dir := t.TempDir()
	head := "benchmark,config,condition,checkpoint,task,metric,value,tokens,rep,cost_usd\n"
	rows := "b,c,vanilla,1,t1,reward,1,1000,1,0.0128\nb,c,vanilla,1,t2,reward,0,2000,1,0.00512\n" +
		"b,c,hoh,2,t1,reward,1,3000,1,0.01\nb,c,hoh,2,t2,reward,1,4000,1,0.03\n"
	p := filepath.Join(dir, "scores.csv")
	os.WriteFile(p, []byte(head+rows), 0o644)
	var stdout, stderr bytes.Buffer
	if code := runMain(t, []string{"report", "table2", "--results", p, "--format", "csv"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "vanilla,all,cost_usd,,0.00896,") || !strings.Contains(out, "hoh@2,all,cost_usd,,0.02,") {
		t.Errorf("table2 without exact costs:\n%s", out)
	}
	os.WriteFile(p, []byte(head+strings.Replace(rows, "4000,1,0.03", "4000,1,", 1)), 0o644)
	runMain(t, []string{"report", "table2", "--results", p}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "Cost (USD) of c HoH@2 on b is unknown") {
		t.Errorf("an unknown cost is not said to be unknown:\n%s", stdout.String())
	}
}
