package runner

// Integration test: the REAL Codex CLI against the scripted TEST-DOUBLE
// provider, with the run directory on a small tmpfs that the test fills
// mid-run (needs root, as CI has).

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

// smokeExperiment is the local-smoke script on greet under HoH@2 (real
// Codex), writing to out.
func smokeExperiment(t *testing.T, out string) *config.Experiment {
	t.Helper()
	bin := clienv.CLI(t, "codex")
	root := testenv.RepoRoot(t)
	p := filepath.Join(t.TempDir(), "exp.yaml")
	os.WriteFile(p, []byte(`name: enospc
output: `+out+`
benchmark: {kind: builtin}
tasks: {ids: [greet]}
configs:
  - label: codex
    harness: codex
    binary: `+bin+`
    provider: {name: scripted, api: responses, key_env: HOH_SCRIPTED_KEY, model: scripted-model}
    scripted: {script: `+filepath.Join(root, "configs/examples/scripts/local-smoke.yaml")+`}
conditions: [hoh@2]
timeouts: {planner: 2m, developer: 2m, qa: 2m, idle: 1m}
retries: {contract: 1, infrastructure: 2, backoff: 300ms}
`), 0o644)
	e, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// fill writes zeros to path until the file system is full.
func fill(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

// A disk that fills up mid-trial stops the run without any score row from
// the attempts that met it; after space is freed the same run resumes to
// exactly the scores and tokens of a run that never met a full disk.
func TestFullDiskMidRunStopsWithoutScoresAndResumesExactly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test mounts a tmpfs and needs root (CI runs as root)")
	}
	clean := filepath.Join(t.TempDir(), "clean")
	if _, err := Run(context.Background(), smokeExperiment(t, clean), Options{}); err != nil {
		t.Fatal(err)
	}
	want := scoreRows(t, clean)
	if len(want) == 0 || !strings.Contains(strings.Join(want, "\n"), "pass_rate=100") {
		t.Fatalf("clean run rows: %v", want)
	}

	disk := t.TempDir()
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=48m"); err != nil {
		t.Fatalf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(disk, syscall.MNT_DETACH) })
	out := filepath.Join(disk, "run")
	e := smokeExperiment(t, out)
	filler := filepath.Join(disk, "filler")
	filled := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if committedStages(out) >= 1 {
				filled <- fill(filler)
				return
			}
		}
		filled <- errors.New("no stage committed within 3 minutes")
	}()
	res, err := Run(context.Background(), e, Options{})
	if res != nil {
		for _, o := range res.Outcomes {
			t.Logf("first run: %s %s %s", o.Trial.Dir, o.State, o.Reason)
		}
	}
	if ferr := <-filled; ferr != nil {
		t.Fatal(ferr)
	}
	if err == nil || !strings.Contains(err.Error(), "local fault persists") {
		t.Fatalf("want the run stopped by the persistent local fault, got %v", err)
	}
	if rows, rerr := os.ReadFile(filepath.Join(out, "scores.csv")); rerr == nil && strings.Count(string(rows), "\n") > 1 {
		t.Fatalf("score rows written from attempts that met a full disk:\n%s", rows)
	}
	in, ierr := status.Inspect(out)
	if ierr != nil || len(in.Trials) != 1 || in.Trials[0].State == runrecord.StateDone {
		t.Fatalf("status after the stop: %+v %v", in, ierr)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), e, Options{}); err != nil {
		t.Fatalf("resume after freeing space: %v", err)
	}
	if got := scoreRows(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the full disk and resume, rows differ from the clean run:\n%s\nvs\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// committedStages counts stage lines over every trial of a run directory.
func committedStages(out string) int {
	n := 0
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == "stages.jsonl" {
			data, _ := os.ReadFile(p)
			n += strings.Count(string(data), "\n")
		}
		return nil
	})
	return n
}
