package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The roles report of the synthetic 2x2x2 factorial (analysis/roles's
// fixture, no model ran) in every format: what a user reads. The numbers
// themselves are checked against independently computed effects and
// Shapley values in analysis/roles.
func TestReportRolesGolden(t *testing.T) {
	run := filepath.Join("..", "..", "analysis", "roles", "testdata", "factorial-run")
	for _, format := range []string{"text", "markdown", "csv"} {
		t.Run(format, func(t *testing.T) {
			golden(t, "report-roles-"+format, "report", "roles", "--results", run, "--format", format, "--resamples", "2000")
		})
	}
}

// --figure draws the Pareto figure as a PNG; a run without a team, or
// no --results, is refused with a message saying why.
func TestReportRolesFigureAndRefusals(t *testing.T) {
	run := filepath.Join("..", "..", "analysis", "roles", "testdata", "factorial-run")
	fig := filepath.Join(t.TempDir(), "pareto.png")
	code, _, stderr := runCLI(t, "report", "roles", "--results", run, "--figure", fig, "--resamples", "200")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(fig)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil || img.Bounds().Dx() < 400 {
		t.Fatalf("figure: %v %v", err, img)
	}
	if code, _, stderr := runCLI(t, "report", "roles"); code != 2 || !strings.Contains(stderr, "--results RUNDIR is required") {
		t.Errorf("no --results: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "report", "roles", "--results", run, "--agents", "cheap,medium")
	if code == 0 || !strings.Contains(stderr, "role planner plays cheap only of agents cheap, medium") {
		t.Errorf("unknown agent: exit %d, %s", code, stderr)
	}
}

// Tables 1 and 2 over a role-team run spell each team out under the table
// (a row names only its label): every configuration's Planner, Developer
// and QA Tester, from the trials' summaries; in CSV the table stays pure
// and the teams go to stderr. A run without a team prints no such block.
func TestReportTablesSpellOutEachRoleTeam(t *testing.T) {
	run := filepath.Join("..", "..", "analysis", "roles", "testdata", "factorial-run")
	want := "team.planner-strong.developer-cheap.qa-strong: Planner strong: codex (strong-model) · Developer cheap: opencode (cheap-model) · QA Tester strong: codex (strong-model)"
	for _, table := range []string{"table1", "table2"} {
		code, stdout, stderr := runCLI(t, "report", table, "--results", run)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", table, code, stderr)
		}
		_, teams, ok := strings.Cut(stdout, "Role teams (who played each role; docs/roles.md):\n")
		if !ok || strings.Count(teams, "  team.") != 8 || !strings.Contains(teams, "  "+want+"\n") {
			t.Errorf("%s: the teams are not spelled out under the table:\n%s", table, stdout)
		}
	}
	code, stdout, stderr := runCLI(t, "report", "table1", "--results", run, "--format", "csv")
	if code != 0 || strings.Contains(stdout, "Role teams") || !strings.Contains(stderr, want) {
		t.Errorf("csv: exit %d, teams in the CSV or not on stderr:\n%s\n%s", code, stdout, stderr)
	}
	plain := filepath.Join("testdata", "compare", "local-smoke-a")
	if code, stdout, stderr := runCLI(t, "report", "table1", "--results", plain); code != 0 || strings.Contains(stdout, "Role teams") {
		t.Errorf("a run without a team: exit %d\n%s%s", code, stdout, stderr)
	}
}
