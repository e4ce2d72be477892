package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness/doctor"
)

// A config whose benchmark is gamecraft makes GameCraft-Bench's verifier
// checks required, with its godot_bin and judge key variable.
func TestDoctorConfigWithGameCraftRequiresItsVerifierChecks(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte(`name: gc
benchmark: {kind: gamecraft, path: gc, options: {judge: gemini, judge_key_env: HOH_DOCTOR_JUDGE_KEY, godot_bin: bin/godot}}
configs:
  - label: c
    harness: codex
    provider: {name: scripted, api: responses, key_env: X, model: m}
`), 0o644)
	old := doctorEnv
	defer func() { doctorEnv = old }()
	doctorEnv = func() doctor.Env {
		return doctor.Env{
			FindCLI:          func(string, string, string) (string, error) { return "", errors.New("not found") },
			InstalledVersion: func(string) (string, error) { return "", errors.New("none") },
			LookPath:         func(string) (string, error) { return "", errors.New("not found") },
			Getenv:           func(string) string { return "" },
			PingDocker:       func(context.Context) error { return nil },
			Output:           func(context.Context, string, ...string) (string, error) { return "", errors.New("no") },
		}
	}
	var out, errw strings.Builder
	if code := run([]string{"doctor", "--config", cfg}, &out, &errw); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", code, out.String(), errw.String())
	}
	for _, want := range []string{"FAIL godot 4", filepath.Join(dir, "bin", "godot") + " (godot_bin) not found", "FAIL gamecraft: Xvfb",
		"FAIL gamecraft: user+mount namespaces", "FAIL gamecraft: judge key", "$HOH_DOCTOR_JUDGE_KEY is not set"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out.String())
		}
	}
}
