package runner

// Integration test: the REAL Codex CLI (scripts/install-harnesses.sh)
// against the scripted test-double provider, with injected faults.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

const faultScript = `entries:
  - name: vanilla-greet
    match: '(?s)greet\.sh'
    repeat: true
    fault: {kind: status, status: 500, count: 1}
    steps:
      - write: {path: greet.sh, content: "#!/bin/sh\nif [ $# -eq 0 ]; then echo 'Hello, World!'; else echo \"Hello, $*!\"; fi\n"}
      - say: '{"summary": "wrote greet.sh", "self_tests": []}'
  - name: vanilla-calc
    match: '(?s)calc\.sh'
    repeat: true
    fault: {kind: hang}
    steps:
      - say: '{"summary": "unreachable", "self_tests": []}'
`

func TestRealCodexInjectedTransportErrorAndSilentProviderAreReplaced(t *testing.T) {
	bin := clienv.CLI(t, "codex")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "faults.yaml"), []byte(faultScript), 0o644)
	out := filepath.Join(dir, "run")
	cfg := `name: faults
output: ` + out + `
benchmark: {kind: builtin}
tasks: {ids: [greet, calc]}
configs:
  - label: codex
    harness: codex
    binary: ` + bin + `
    provider: {name: scripted, api: responses, key_env: HOH_SCRIPTED_KEY, model: scripted-model}
    scripted: {script: faults.yaml}
conditions: [vanilla]
concurrency: 2
timeouts: {developer: 60s, idle: 4s}
retries: {contract: 0, infrastructure: 2, backoff: 100ms}
`
	os.WriteFile(filepath.Join(dir, "exp.yaml"), []byte(cfg), 0o644)
	e, err := config.Load(filepath.Join(dir, "exp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byTask := map[string]status.Outcome{}
	for _, o := range res.Outcomes {
		byTask[o.Trial.Task.ID] = o
	}
	g := byTask["greet"]
	if g.State != runrecord.StateDone || g.Replacements != 1 {
		t.Fatalf("greet: %+v", g)
	}
	reps, err := runrecord.ReadReplacements(runrecord.RunLayout{Dir: out}.Replacements())
	var greetReps, calcReps int
	for _, r := range reps {
		switch {
		case r.Key == g.Trial.Key && strings.Contains(r.Reason, "infrastructure failure"):
			greetReps++
		case strings.Contains(r.Reason, "without a byte of answer"):
			calcReps++
		}
	}
	if err != nil || len(reps) != 3 || greetReps != 1 || calcReps != 2 {
		t.Fatalf("replacements.jsonl: %+v %v", reps, err)
	}
	var s runrecord.Summary
	if err := readSummary(filepath.Join(out, g.Trial.Dir), &s); err != nil || s.Checkpoints[0].Metrics["pass_rate"] != 100 {
		t.Errorf("greet summary %+v %v", s, err)
	}
	// A provider that never sends a byte gives no model turn: the idle
	// kill is infrastructure, replaced, and never a result (no summary, no
	// score row), not the role's timeout.
	c := byTask["calc"]
	if c.State != runrecord.StateFailed || c.Status != "" || !strings.Contains(c.Reason, "infrastructure failure persisted") {
		t.Errorf("calc: %+v", c)
	}
	if err := readSummary(filepath.Join(out, c.Trial.Dir), &s); err == nil {
		t.Error("calc has a summary: its silent provider became a result")
	}
	for _, r := range scoreRows(t, out) {
		if strings.Contains(r, " calc ") {
			t.Errorf("score row of the silent provider's trial: %s", r)
		}
	}
	// Every served token is accounted: hoh's relay saw exactly what the
	// provider logged, and for each trial that is its ledger plus its
	// replaced attempts.
	var relayed int64
	for _, o := range res.Outcomes {
		dir := filepath.Join(out, o.Trial.Dir)
		_, rel, err := served.Read(runrecord.TrialLayout{Dir: dir}.Served())
		if err != nil {
			t.Fatal(err)
		}
		relayed += rel.Input + rel.Output
		ledger, _ := runrecord.LedgerUsage(runrecord.TrialLayout{Dir: dir}.Usage())
		replaced, _ := runrecord.LedgerUsage(runrecord.TrialLayout{Dir: dir}.ReplacedUsage())
		if got := ledger.Input + ledger.Output + replaced.Input + replaced.Output; got != rel.Input+rel.Output {
			t.Errorf("%s: ledger %+v + replaced %+v != relayed %+v", o.Trial.Dir, ledger, replaced, rel)
		}
	}
	if want := servedTokens(t, filepath.Join(out, "provider-codex.jsonl")); relayed != want || want == 0 {
		t.Errorf("relay counted %d tokens, the provider served %d", relayed, want)
	}
}

func readSummary(dir string, s *runrecord.Summary) error {
	return runrecord.ReadJSON(runrecord.TrialLayout{Dir: dir}.Summary(), s)
}
