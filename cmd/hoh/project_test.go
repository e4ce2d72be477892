package main

// hoh project and hoh plot dynamics as a subprocess, with the REAL Codex CLI
// and the example project's scripted TEST-DOUBLE provider
// (configs/examples/project/script.yaml): the commands of the README.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoh-research/hoh/experiments/project"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

func TestProjectCommands(t *testing.T) {
	clienv.CLI(t, "codex")
	bin := buildHoh(t)
	root := testenv.RepoRoot(t)
	dir := filepath.Join(t.TempDir(), "greet")
	hoh := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hoh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	hoh("project", "init", "--spec", "configs/examples/project/SPEC.md", "--repo", dir, "--harness", "codex",
		"--scripted", "configs/examples/project/script.yaml", "--check", "build=sh -n greet.sh")
	if _, err := os.Stat(filepath.Join(dir, "SPEC.md")); err != nil {
		t.Fatal("the specification must be copied into the project")
	}

	// Ctrl-C during loop 1: the run stops cleanly and says so.
	stages := filepath.Join(runrecord.ProjectLayout{Project: dir}.Trial(), "stages.jsonl")
	// startUntil starts `hoh project run DIR --loops N` and returns once
	// stages.jsonl has at least lines lines.
	var runOut bytes.Buffer
	startUntil := func(loops string, lines int) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(bin, "project", "run", dir, "--loops", loops)
		cmd.Dir = root
		runOut.Reset()
		cmd.Stdout = &runOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if b, _ := os.ReadFile(stages); strings.Count(string(b), "\n") >= lines {
				return cmd
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("stages.jsonl did not reach %d lines in 4 minutes", lines)
			}
		}
	}
	run := startUntil("5", 1)
	run.Process.Signal(syscall.SIGINT)
	// As hoh run: exit 130 and the command that resumes.
	if err := run.Wait(); run.ProcessState.ExitCode() != exitInterrupted {
		t.Fatalf("interrupted run: %v (want exit %d)", err, exitInterrupted)
	}
	if want := "resume with: " + bin + " project run " + dir + " --loops 5"; !strings.Contains(runOut.String(), want) {
		t.Errorf("interrupted run does not say %q:\n%s", want, runOut.String())
	}
	evs, err := project.ReadEvents(dir)
	if err != nil || evs[len(evs)-1].Reason != project.StopInterrupt {
		t.Fatalf("events %+v %v", evs, err)
	}

	// SIGKILL during loop 2 (its Planner committed): the next run resumes
	// there and the table is the uninterrupted one's.
	kill := startUntil("2", 4)
	kill.Process.Signal(syscall.SIGKILL)
	kill.Wait()
	out := hoh("project", "run", dir, "--loops", "2")
	if !strings.Contains(out, "2 loops completed") || !strings.Contains(out, "scripted test double") {
		t.Fatalf("run:\n%s", out)
	}
	issues, err := project.ReadIssues(dir)
	if err != nil || len(issues) != 1 || issues[0].State != runrecord.IssueOpen || fmt.Sprint(issues[0].GapLoops) != "[1 2]" || len(issues[0].History) != 1 {
		t.Fatalf("issue table after SIGKILL and resume: %+v %v", issues, err)
	}
	out = hoh("project", "status", dir)
	if !strings.Contains(out, "loops completed: 2") || !strings.Contains(out, "1 unresolved") || !strings.Contains(out, "build: pass") {
		t.Fatalf("status:\n%s", out)
	}
	out = hoh("project", "issues", dir, "--format", "csv")
	if !strings.HasPrefix(out, strings.Join(project.IssueColumns, ",")) || !strings.Contains(out, "I-001,open,1,2,usage") {
		t.Fatalf("issues csv:\n%s", out)
	}
	figs := t.TempDir()
	out = hoh("plot", "dynamics", "--project", dir, "--out", figs)
	for _, f := range []string{"dynamics.png", "dynamics.svg", "dynamics.csv"} {
		if _, err := os.Stat(filepath.Join(figs, f)); err != nil {
			t.Fatalf("plot dynamics: %s missing\n%s", f, out)
		}
	}
	// Without --out, not ./figures beside the paper's: the project's reports.
	hoh("plot", "dynamics", "--project", dir)
	if _, err := os.Stat(filepath.Join(runrecord.ProjectLayout{Project: dir}.Reports(), "figures", "dynamics.png")); err != nil {
		t.Errorf("plot dynamics without --out: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "figures", "dynamics.png")); err == nil {
		t.Errorf("plot dynamics wrote into the checkout's figures/")
	}
	hoh("project", "report", dir)
	rep, err := os.ReadFile(filepath.Join(runrecord.ProjectLayout{Project: dir}.Reports(), "report.md"))
	if err != nil || !strings.Contains(string(rep), "greet by name") || !strings.Contains(string(rep), "scripted test double") ||
		!strings.Contains(string(rep), "Agents: Planner codex (responses scripted-model) · Developer codex") {
		t.Fatalf("report: %v\n%s", err, rep)
	}
	hoh("project", "rollback", dir, "--to-loop", "1")
	if out := hoh("project", "status", dir); !strings.Contains(out, "loops completed: 1") {
		t.Fatalf("status after rollback:\n%s", out)
	}
	// A changed model is refused.
	cfg := runrecord.ProjectLayout{Project: dir}.Config()
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(b), "model: scripted-model", "model: another-model", 1)), 0o644)
	cmd := exec.Command(bin, "project", "run", dir, "--loops", "2")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--force") {
		t.Fatalf("changed model accepted: %v\n%s", err, out)
	}
}
