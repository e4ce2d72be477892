package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/analysis/figures"
	"github.com/hoh-research/hoh/analysis/tables"
	"github.com/hoh-research/hoh/internal/testenv"
)

// Every command and project subcommand answers -h and --help with its usage
// on stderr and exit code 0.
func TestEveryCommandsHelpExitsZeroWithUsage(t *testing.T) {
	var invocations [][]string
	for _, name := range commandNames() {
		invocations = append(invocations, []string{name})
	}
	for _, sub := range projectCommands {
		invocations = append(invocations, []string{"project", sub})
	}
	// Every second word a command takes: each must answer -h too.
	invocations = append(invocations, []string{"harnesses", "pins"}, []string{"tasks", "list"}, []string{"tasks", "show"},
		[]string{"tasks", "check"}, []string{"export", "atif"}, []string{"import", "harbor"}, []string{"plan", "power"},
		[]string{"plot", "dynamics"}, []string{"plot", "all"})
	for _, name := range tables.Names {
		invocations = append(invocations, []string{"report", name})
	}
	for _, name := range figures.Names() {
		invocations = append(invocations, []string{"plot", name})
	}
	for _, inv := range invocations {
		for _, h := range []string{"-h", "--help"} {
			code, stdout, stderr := runCLI(t, append(inv, h)...)
			if code != 0 || !strings.Contains(stdout+stderr, "Usage") {
				t.Errorf("hoh %s %s: exit %d, output:\n%s%s", strings.Join(inv, " "), h, code, stdout, stderr)
			}
		}
	}
	_, _, stderr := runCLI(t, "plot", "-h")
	if !strings.Contains(stderr, "dynamics") {
		t.Errorf("plot -h does not list dynamics:\n%s", stderr)
	}
	_, _, stderr = runCLI(t, "show", "-h")
	if strings.Count(stderr, "\n") < 5 || !strings.Contains(stderr, "--condition") && !strings.Contains(stderr, "-condition") {
		t.Errorf("show -h is not a usage:\n%s", stderr)
	}
}

func TestVersionNamesTheModuleAndCommit(t *testing.T) {
	code, stdout, _ := runCLI(t, "--version")
	// A test binary carries no VCS stamp: the commit comes from the checkout.
	if code != 0 || !strings.Contains(stdout, "github.com/hoh-research/hoh") || !strings.Contains(stdout, "commit ") || strings.Contains(stdout, "commit unknown") {
		t.Fatalf("exit %d: %q", code, stdout)
	}
}

func TestMistypedCommandsGetADidYouMean(t *testing.T) {
	code, _, stderr := runCLI(t, "rnu")
	if code != 2 || !strings.Contains(stderr, `did you mean "run"`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "project", "stauts")
	if code != 2 || !strings.Contains(stderr, `did you mean "status"`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

func TestExtraPositionalArgumentsAreRefused(t *testing.T) {
	out := t.TempDir()
	root := testenv.RepoRoot(t)
	for _, args := range [][]string{
		{"plot", "fig7", "--out", out, "extra"},
		{"report", "table1", "extra"},
		{"view", out, "extra"},
		{"show", out, "extra"},
		{"run", "--check", filepath.Join(root, "configs/examples/local-smoke.yaml"), "extra"},
		{"project", "status", out, "extra"},
		{"tasks", "list", "builtin", "x", "y"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, "extra") && !strings.Contains(stderr, `"x y"`) {
			t.Errorf("%q: exit %d, stderr %s", args, code, stderr)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a refused plot wrote %d file(s)", len(entries))
	}
}

func TestTasksListBuiltinNeedsNoPathAndHeadersReadAsWritten(t *testing.T) {
	code, stdout, stderr := runCLI(t, "tasks", "list", "builtin")
	if code != 0 || !strings.Contains(stdout, "greet") || !strings.Contains(stdout, "3 tasks") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "CPUs") || !strings.Contains(stdout, "GPUs") || strings.Contains(stdout, "CP US") {
		t.Errorf("headers:\n%s", stdout)
	}
	if code, stdout, _ := runCLI(t, "tasks", "show", "builtin", "calc"); code != 0 || !strings.Contains(stdout, "task:      calc") {
		t.Errorf("tasks show builtin calc: exit %d: %s", code, stdout)
	}
}
