package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv"
)

// A GameCraft-Bench config whose evaluator cannot run here is refused by
// hoh run --check (and hoh run), naming what is missing and how to get it,
// instead of planning trials that would all score 0; godot_bin: none asks
// for a plumbing run, which the check accepts and marks.
func TestRunCheckRefusesGameCraftWithoutItsEvaluator(t *testing.T) {
	requireCodex(t)
	bench := testenv.SharedPath(t, "benchmarks", "gamecraft-bench")
	script := filepath.Join(testenv.RepoRoot(t), "configs/examples/scripts/local-smoke.yaml")
	dir := t.TempDir()
	write := func(godot string) string {
		p := filepath.Join(dir, "gc-"+filepath.Base(godot)+".yaml")
		text := `name: gc
output: runs/gc
benchmark: {kind: gamecraft, path: ` + bench + `, options: {godot_bin: ` + godot + `, judge: openai, judge_key_env: HOH_TEST_JUDGE_KEY}}
tasks: {sample: {per: family, k: 1, seed: 1}}
configs:
  - label: codex-scripted
    harness: codex
    provider: {name: scripted, api: responses, base_url: "", key_env: HOH_SCRIPTED_KEY, model: scripted-model}
    scripted: {script: ` + script + `}
conditions: [vanilla]
`
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	os.Unsetenv("HOH_TEST_JUDGE_KEY")
	code, out, errs := runCLI(t, "run", "--check", write(filepath.Join(dir, "no-such-godot")))
	if code == 0 || strings.Contains(out, "config OK") {
		t.Fatalf("a config without Godot passed the check (exit %d):\n%s%s", code, out, errs)
	}
	for _, want := range []string{"gc-no-such-godot.yaml:3:", "godot_bin) not found", "install Godot 4.6",
		"HOH_TEST_JUDGE_KEY is not set", "godot_bin: none"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, errs)
		}
	}
	code, out, errs = runCLI(t, "run", "--check", write("none"))
	if code != 0 || !strings.Contains(out, "config OK") || !strings.Contains(out, "without its evaluator (godot_bin: none)") {
		t.Errorf("a plumbing run (godot_bin: none) was refused or not marked (exit %d):\n%s%s", code, out, errs)
	}
}

// With agent_environment: docker the verifier runs in the task's image,
// which hoh run checks once it has built it: hoh run --check does not ask
// for Godot or namespaces on this host, only for the judge's key, which
// the verifier gets from here.
func TestRunCheckOfGameCraftInDockerAsksOnlyForTheJudgeKey(t *testing.T) {
	requireCodex(t)
	bench := testenv.SharedPath(t, "benchmarks", "gamecraft-bench")
	script := filepath.Join(testenv.RepoRoot(t), "configs/examples/scripts/local-smoke.yaml")
	dir := t.TempDir()
	p := filepath.Join(dir, "gc-docker.yaml")
	text := `name: gc
output: runs/gc
benchmark: {kind: gamecraft, path: ` + bench + `, options: {agent_environment: docker, godot_bin: ` + filepath.Join(dir, "no-such-godot") + `, judge: openai, judge_key_env: HOH_TEST_JUDGE_KEY}}
tasks: {ids: [platformer-arcborne]}
configs:
  - label: codex-scripted
    harness: codex
    provider: {name: scripted, api: responses, base_url: "", key_env: HOH_SCRIPTED_KEY, model: scripted-model}
    scripted: {script: ` + script + `}
conditions: [vanilla]
`
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("HOH_TEST_JUDGE_KEY")
	code, out, errs := runCLI(t, "run", "--check", p)
	if code == 0 || !strings.Contains(errs, "HOH_TEST_JUDGE_KEY is not set") || strings.Contains(errs, "not found") || strings.Contains(errs, "namespaces") || strings.Contains(errs, "Xvfb") {
		t.Fatalf("without the judge's key (exit %d), want only that refused:\n%s%s", code, out, errs)
	}
	t.Setenv("HOH_TEST_JUDGE_KEY", "test-judge-key")
	if code, out, errs := runCLI(t, "run", "--check", p); code != 0 || !strings.Contains(out, "config OK") {
		t.Errorf("with the key, the host needs nothing else (exit %d):\n%s%s", code, out, errs)
	}
}
