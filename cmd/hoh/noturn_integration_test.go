package main

// Integration test: the REAL Codex CLI against the scripted TEST-DOUBLE
// provider (no model), each fault injected into one configuration of a run
// whose other configuration is healthy. Nothing scored here is a result.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

// No model turn, no score: a CLI that exits 127, a CLI the role's view
// hides, a provider that refuses, one that hangs without a byte and one
// that answers only garbage. With the preflight the run is refused naming
// the configuration and the relay's cause; without it, the faulty
// configuration stops (at once for a CLI that never asks the model, by the
// circuit breaker for a provider), says why, and has no score row, so hoh
// report --results shows only the healthy configuration.
func TestNoModelTurnNoScore(t *testing.T) {
	codex := clienv.CLI(t, "codex")
	root := testenv.RepoRoot(t)
	smoke, err := os.ReadFile(filepath.Join(root, "configs/examples/scripts/local-smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		fault  string // a server-wide scripted fault of the faulty config
		binary func(dir string) string
		cause  string
		why    string // in the preflight's refusal
		// once: the configuration stops at its first attempt (a local
		// fault), not after the breaker's attempts.
		once bool
	}{
		{name: "exit 127", binary: func(dir string) string { return script(t, dir, "exit127.sh", "#!/bin/sh\nexit 127\n") },
			cause: served.CauseNoRequest, why: "no model request", once: true},
		{name: "CLI hidden from the view", binary: func(dir string) string {
			// The wrapper is shown (the CLI's install path); what it runs
			// lies in a directory no role sees.
			hidden := filepath.Join(t.TempDir(), "hidden")
			os.MkdirAll(hidden, 0o755)
			os.Symlink(codex, filepath.Join(hidden, "codex"))
			return script(t, dir, "codex-wrapper.sh", "#!/bin/sh\nexec "+filepath.Join(hidden, "codex")+" \"$@\"\n")
		}, cause: served.CauseNoRequest, why: "no model request", once: true},
		{name: "provider refuses", fault: `{kind: status, status: 401, message: "invalid api key"}`, cause: served.CauseRefused, why: "HTTP 401"},
		{name: "provider hangs without a byte", fault: `{kind: hang}`, cause: served.CauseSilent, why: "without a byte"},
		{name: "provider answers garbage", fault: `{kind: garbage}`, cause: served.CauseGarbage, why: "nothing that parses"},
	}
	for _, c := range cases {
		for _, pre := range []string{"on", "off"} {
			t.Run(c.name+"/preflight="+pre, func(t *testing.T) {
				dir := t.TempDir()
				os.WriteFile(filepath.Join(dir, "healthy.yaml"), smoke, 0o644)
				faulty := smoke
				if c.fault != "" {
					faulty = append(append([]byte(nil), smoke...), []byte("\nfault: "+c.fault+"\n")...)
				}
				os.WriteFile(filepath.Join(dir, "faulty.yaml"), faulty, 0o644)
				bin := codex
				if c.binary != nil {
					bin = c.binary(dir)
				}
				out := filepath.Join(dir, "run")
				os.WriteFile(filepath.Join(dir, "exp.yaml"), []byte(`name: noturn
output: run
benchmark: {kind: builtin}
tasks: {ids: [greet, fizzbuzz, calc]}
configs:
  - label: faulty
    harness: codex
    binary: `+bin+`
    provider: {name: scripted, api: responses, key_env: HOH_SCRIPTED_KEY, model: scripted-model}
    scripted: {script: faulty.yaml}
    concurrency: 1
  - label: healthy
    harness: codex
    binary: `+codex+`
    provider: {name: scripted, api: responses, key_env: HOH_SCRIPTED_KEY, model: scripted-model}
    scripted: {script: healthy.yaml}
    concurrency: 1
conditions: [vanilla]
concurrency: 2
timeouts: {planner: 2m, developer: 2m, qa: 2m, idle: 6s}
retries: {contract: 0, infrastructure: 3, backoff: 10ms}
`), 0o644)
				var stdout, stderr bytes.Buffer
				if c.binary != nil && pre == "on" {
					// hoh run --check knows it offline: the CLI cannot run in a role's view.
					if code := runMain(t, []string{"run", "--check", filepath.Join(dir, "exp.yaml")}, &stdout, &stderr); code == 0 ||
						!strings.Contains(stderr.String(), `config "faulty"`) || strings.Contains(stderr.String(), `config "healthy"`) {
						t.Errorf("run --check: exit %d\n%s%s", code, stdout.String(), stderr.String())
					}
				}
				code := runMain(t, []string{"run", "--preflight=" + pre, filepath.Join(dir, "exp.yaml")}, &stdout, &stderr)
				if code == 0 {
					t.Fatalf("a run with a faulty configuration exited 0:\n%s", stdout.String())
				}
				if pre == "on" {
					msg := stderr.String()
					if !strings.Contains(msg, "preflight failed") || !strings.Contains(msg, "config faulty") || !strings.Contains(msg, c.why) || strings.Contains(msg, "config healthy") {
						t.Fatalf("the preflight's refusal:\n%s\nstdout:\n%s", msg, stdout.String())
					}
					if _, err := os.Stat(filepath.Join(out, "scores.csv")); err == nil {
						t.Error("a run the preflight refused wrote scores.csv")
					}
					return
				}
				if !strings.Contains(stdout.String(), "STOPPED faulty: configuration faulty stopped") || strings.Contains(stdout.String(), "STOPPED healthy") {
					t.Errorf("the run's summary does not say why faulty stopped:\n%s", stdout.String())
				}
				stops, err := runrecord.ReadStops(runrecord.RunLayout{Dir: out}.Stops())
				if err != nil || len(stops) != 1 || stops[0].Config != "faulty" || stops[0].Cause != c.cause {
					t.Fatalf("stops.jsonl %+v %v, want faulty stopped for %s", stops, err, c.cause)
				}
				rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
				if err != nil {
					t.Fatal(err)
				}
				healthy := 0
				for _, r := range rows {
					switch r.Config {
					case "faulty":
						t.Errorf("score row of an invocation without a model turn: %+v", r)
					case "healthy":
						healthy++
					}
				}
				if healthy != 3 {
					t.Errorf("%d score rows of the healthy configuration, want 3", healthy)
				}
				lines, _ := runrecord.ReadTrialLines(runrecord.RunLayout{Dir: out}.Trials())
				for _, l := range lines {
					if l.Config == "faulty" && (l.State != runrecord.StateFailed || l.Status != "" || !strings.Contains(l.Reason, "configuration faulty stopped")) {
						t.Errorf("trials.jsonl: %+v", l)
					}
				}
				reps, _ := runrecord.ReadReplacements(runrecord.RunLayout{Dir: out}.Replacements())
				if c.once && len(reps) != 0 {
					t.Errorf("a CLI that never asked the model was replaced %d time(s)", len(reps))
				}
				if !c.once && len(reps) == 0 {
					t.Error("a provider fault was not replaced before the breaker stopped the configuration")
				}
				if code := runMain(t, []string{"report", "tasks", "--results", out}, &stdout, &stderr); code != 0 {
					t.Fatalf("report tasks --results: exit %d: %s", code, stderr.String())
				}
				if strings.Contains(stdout.String(), "faulty") || !strings.Contains(stdout.String(), "healthy") {
					t.Errorf("report --results shows the stopped configuration (or not the healthy one):\n%s", stdout.String())
				}
			})
		}
	}
}

func script(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A model that streams slowly is not a provider fault: with events 400ms
// apart (a reply longer than the 3s idle timeout) the relay sees the
// provider send bytes all along, so whatever the CLI makes of it (a
// finished turn, or its own idle timeout) is the role's result: scored,
// never replaced, and the configuration does not stop.
func TestSlowStreamingModelIsNotAProviderFault(t *testing.T) {
	codex := clienv.CLI(t, "codex")
	root := testenv.RepoRoot(t)
	smoke, err := os.ReadFile(filepath.Join(root, "configs/examples/scripts/local-smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "slow.yaml"), append(smoke, []byte("\nfault: {kind: slow, delay: 400ms}\n")...), 0o644)
	out := filepath.Join(dir, "run")
	os.WriteFile(filepath.Join(dir, "exp.yaml"), []byte(`name: slow
output: run
benchmark: {kind: builtin}
tasks: {ids: [greet]}
configs:
  - label: slow
    harness: codex
    binary: `+codex+`
    provider: {name: scripted, api: responses, key_env: HOH_SCRIPTED_KEY, model: scripted-model}
    scripted: {script: slow.yaml}
conditions: [vanilla]
timeouts: {planner: 2m, developer: 2m, qa: 2m, idle: 3s}
retries: {contract: 0, infrastructure: 3, backoff: 10ms}
`), 0o644)
	var stdout, stderr bytes.Buffer
	runMain(t, []string{"run", "--preflight=off", filepath.Join(dir, "exp.yaml")}, &stdout, &stderr)
	if strings.Contains(stdout.String(), "STOPPED") {
		t.Errorf("a slow model stopped its configuration:\n%s", stdout.String())
	}
	if reps, _ := runrecord.ReadReplacements(runrecord.RunLayout{Dir: out}.Replacements()); len(reps) != 0 {
		t.Errorf("a slow model's invocation was replaced as infrastructure: %+v", reps)
	}
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil || len(rows) != 1 {
		t.Fatalf("score rows %+v, %v: want the slow model's one\n%s%s", rows, err, stdout.String(), stderr.String())
	}
	lines, _, _ := served.Read(runrecord.RunLayout{Dir: out}.Trial(rows[0].Config + "/vanilla/greet/rep-1").Served())
	slow := false
	for _, l := range lines {
		if l.MaxGapMS >= 300 {
			slow = true
		}
	}
	if !slow {
		t.Errorf("the relay saw no slow stream: %+v", lines)
	}
}
