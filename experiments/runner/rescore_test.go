package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// snapshot reads every file of a run directory (the lock aside).
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == runrecord.RunnerLockFile {
			return err
		}
		data, err := os.ReadFile(p)
		files[p] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A GameCraft run scored by the real upstream verifier (stub judge, a
// test-only stand-in godot that only exits 0), then rescored from the kept
// outputs: unchanged outputs leave every file as it was; an edited
// breakdown.json reaches the trial's and the run's records.
func TestRescoreRecomputesRunRecordsFromKeptVerifierOutputs(t *testing.T) {
	godot := testenv.StandInGodot(t)
	out := filepath.Join(t.TempDir(), "run")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("entries:\n  - name: any\n    match: .\n    repeat: true\n    steps:\n      - say: ok\n"), 0o644)
	text := `name: rescore
output: ` + out + `
benchmark: {kind: gamecraft, path: ` + testenv.SharedPath(t, "benchmarks", "gamecraft-bench") + `, options: {judge: stub, godot_bin: ` + godot + `}}
tasks: {ids: [platformer-arcborne]}
configs:
  - label: instant
    harness: codex
    provider: {name: scripted, api: responses, key_env: HOH_UNIT_KEY, model: m}
    scripted: {script: script.yaml}
conditions: [vanilla]
`
	path := filepath.Join(dir, "exp.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	e, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, e, opts(&instantHarness{}))
	before := snapshot(t, out)

	rep, err := Rescore(context.Background(), e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Trials != 1 || len(rep.Changed) != 0 || len(rep.Kept) != 0 {
		t.Fatalf("rescore of an unchanged run: %+v", rep)
	}
	after := snapshot(t, out)
	if len(after) != len(before) {
		t.Fatalf("rescore added or removed files: %d -> %d", len(before), len(after))
	}
	for p, data := range before {
		if !bytes.Equal(after[p], data) {
			t.Errorf("rescore of unchanged outputs changed %s", p)
		}
	}

	var bd map[string]any
	matches, _ := filepath.Glob(filepath.Join(out, "*", "*", "*", "*", "evaluation", "cp-1-verifier", "breakdown.json"))
	if len(matches) != 1 {
		t.Fatalf("want one kept breakdown.json, found %v", matches)
	}
	raw, _ := os.ReadFile(matches[0])
	json.Unmarshal(raw, &bd)
	if bd["build_ok"] != true {
		t.Fatalf("the stand-in godot should pass the build gate: %s", raw)
	}
	// Every requirement judged 1: the platformer formula gives reward 1.
	for _, q := range bd["requirements"].([]any) {
		r := q.(map[string]any)
		r["per_demo"], r["aggregated"] = map[string]any{"demo-1": 1.0}, 1.0
	}
	bd["reward"] = 1.0
	raw, _ = json.Marshal(bd)
	os.WriteFile(matches[0], raw, 0o644)
	rep, err = Rescore(context.Background(), e, nil)
	if err != nil || len(rep.Changed) != 1 {
		t.Fatalf("rescore after an edited breakdown.json: %+v, %v", rep, err)
	}
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[r.Metric] = r.Value
	}
	if got["overall"] != 100 || got["mechanics"] != 100 || got["art"] != 100 || got["build"] != 1 {
		t.Fatalf("the run's scores.csv does not follow the edited breakdown.json: %v", got)
	}
	lines, _ := os.ReadFile(filepath.Join(out, "trials.jsonl"))
	if !strings.Contains(string(lines), `"overall":100`) {
		t.Fatalf("trials.jsonl's final metrics were not rescored: %s", lines)
	}
}
