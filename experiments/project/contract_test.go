package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// Red-team: every role tries to read the project's state directory (QA's
// claims in the issue table, the provider's transcripts, the trial's
// records). None gets anything of it beyond its contract: the Planner reads
// the issue table its prompt names (issues.md), nothing else there.
func TestRolesDoNotReadTheProjectState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	if err := newTestProject(dir, nil); err != nil {
		t.Fatal(err)
	}
	l := runrecord.ProjectLayout{Project: dir}
	const transcript = "TRANSCRIPT-OF-EVERY-ROLE-7c1"
	if err := os.WriteFile(filepath.Join(l.State(), "provider.jsonl"), []byte(transcript+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sched := schedule(2)
	// cat's complaints go to stdout: the view's stdout and stderr are copied
	// by two goroutines, so on a busy machine stderr lines landed between
	// "MD" and the table.
	probe := "cd " + dir + " && ls -a .git/hoh; for f in .git/hoh/issues.jsonl .git/hoh/issues.csv .git/hoh/provider.jsonl .git/hoh/trial/stages.jsonl .git/hoh/runs.jsonl; do cat $f 2>&1; done; echo MD; cat " + l.IssuesMD() + "; echo END"
	h := &fakeHarness{sched: sched, Probe: probe}
	runFake(t, dir, 2, h)
	issues, err := ReadIssues(dir)
	if err != nil || len(issues) == 0 {
		t.Fatalf("no issue table after two loops (%v): the probe proves nothing", err)
	}
	claim := issues[0].Claim
	for role, outs := range h.Probed {
		for i, out := range outs {
			if strings.Contains(out, transcript) || strings.Contains(out, "\n{") || strings.HasPrefix(out, "{") || strings.Contains(out, "claim_id") {
				t.Errorf("%s (call %d) read the project state:\n%s", role, i+1, out)
			}
			if role != "planner" && strings.Contains(out, claim) {
				t.Errorf("%s (call %d) read the issue table:\n%s", role, i+1, out)
			}
		}
	}
	if len(h.Probed["developer"]) != 2 || len(h.Probed["planner"]) != 2 {
		t.Fatalf("probes ran %v", h.Probed)
	}
	// Loop 2's Planner reads the table its contract names.
	if out := h.Probed["planner"][1]; !strings.Contains(out, "MD\n# Issue table") || !strings.Contains(out, claim) {
		t.Errorf("the Planner of loop 2 could not read issues.md, which its prompt names:\n%s", out)
	}
}
