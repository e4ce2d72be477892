package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv/clienv"
)

// A small run of the benchmark (real Codex, the scripted test double):
// both trials complete, the large one's Developer left its tree (changed
// at iteration 2), and the report prints hoh's time per stage by phase for
// both and the ratio against the goal.
func TestWorkPerStageMeasuresBothTrials(t *testing.T) {
	clienv.CLI(t, "codex")
	dir := t.TempDir()
	var out, progress bytes.Buffer
	if code := run([]string{"-files", "150", "-sparse", "1M", "-keep", dir}, &out, &progress); code != 0 {
		t.Fatalf("exit %d\n%s", code, progress.String())
	}
	report := out.String()
	for _, want := range []string{"plain", "large", "commit", "digest", "hoh, all phases", "all stages: large/plain ", "iteration 2 (each stage changes at most one file): ", "plumbing check"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if !regexp.MustCompile(`(?m)^\s+stages\s+6\s+6\s*$`).MatchString(report) {
		t.Errorf("want 6 stages per HoH@2 trial:\n%s", report)
	}
	big := filepath.Join(dir, "runs", "large", "codex-scripted", "hoh", "greet", "rep-1", "workspace", "big")
	n := 0
	filepath.WalkDir(big, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if changed, _ := os.ReadFile(filepath.Join(big, "0", "0")); n < 150 || string(changed) != "changed\n" {
		t.Errorf("the large artifact: %d files, big/0/0 = %q", n, changed)
	}
}

func TestWorkPerStageRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-files", "0"}, {"-sparse", "1G; rm -rf /"}, {"-nope"}} {
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 2 || errs.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs.String())
		}
	}
}
