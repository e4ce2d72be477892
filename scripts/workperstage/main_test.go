package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	for _, want := range []string{"plain", "large", "commit", "digest", "hoh, all phases", "all stages: ", " per stage, large/plain ", "iteration 2 (each stage changes at most one file): ", "plumbing check"} {
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

// The 3x goal is for stages that change one file; every stage must be
// under 5 s.
func TestVerdictJudgesEachGoalWhereItApplies(t *testing.T) {
	for _, c := range []struct {
		large, plain time.Duration
		proportional bool
		want         string
	}{
		{3 * time.Second, 300 * time.Millisecond, false, "large/plain 10.0x; issue 42's goal (under 5 s per stage): met"},
		{6 * time.Second, 3 * time.Second, false, "large/plain 2.0x; issue 42's goal (under 5 s per stage): missed"},
		{500 * time.Millisecond, 200 * time.Millisecond, true, "large/plain 2.5x; issue 42's goal (under 5 s per stage and under 3x plain): met"},
		{700 * time.Millisecond, 200 * time.Millisecond, true, "large/plain 3.5x; issue 42's goal (under 5 s per stage and under 3x plain): missed"},
	} {
		if got := verdict(c.large, c.plain, c.proportional); got != c.want {
			t.Errorf("verdict(%v, %v, %v) = %q, want %q", c.large, c.plain, c.proportional, got, c.want)
		}
	}
}
