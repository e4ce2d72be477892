package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hoh export atif writes one document per trial of a run, mirroring the
// trial directories under --out, and says the run was scripted.
func TestExportATIFCommand(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	run := filepath.Join("..", "..", "experiments", "export", "testdata", "four-harnesses")
	if code := runMain(t, []string{"export", "atif", run, "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, cli := range []string{"codex", "claude", "opencode", "pi"} {
		p := filepath.Join(out, cli+"-scripted", "hoh", "greet", "rep-1", "trajectory.json")
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte(`"schema_version": "ATIF-v1.7"`)) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if !strings.Contains(stdout.String(), "8 ATIF document(s) written") || !strings.Contains(stdout.String(), "scripted test double") {
		t.Errorf("output:\n%s", stdout.String())
	}
	if code := runMain(t, []string{"export", "atif", t.TempDir()}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no trial directories") {
		t.Errorf("an empty directory: exit %d, %s", code, stderr.String())
	}
}

func runMain(t *testing.T, args []string, stdout, stderr *bytes.Buffer) int {
	t.Helper()
	stdout.Reset()
	stderr.Reset()
	return run(args, stdout, stderr)
}
