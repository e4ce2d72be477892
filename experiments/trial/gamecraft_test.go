package trial

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/gamecraft"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// GameCraft trials evaluated by the real upstream verifier
// (../shared/benchmarks/gamecraft-bench/gamecraft_bench, stub judge) in
// hoh's user+mount namespace. The fake harness stands in for the agent; it
// leaves a one-file Godot project in game/.

const gamecraftTask = "platformer-arcborne"

func gamecraftTrial(t *testing.T, v *gamecraft.Verifier) (*gamecraft.Benchmark, Env, string) {
	t.Helper()
	b, err := gamecraft.Load(testenv.SharedPath(t, "benchmarks", "gamecraft-bench"))
	if err != nil {
		t.Fatal(err)
	}
	b.Opts.Verifier = v
	td, ok := b.Task(gamecraftTask)
	if !ok {
		t.Fatalf("%s is missing from the real checkout", gamecraftTask)
	}
	h := &fakeHarness{devWrites: map[string]string{"game/project.godot": "config_version=5\n"}}
	return b, NewEnv(Policy{}, Place{Bench: b, Task: td.Task}, Route{}, h, Mode{}), t.TempDir()
}

func gamecraftSpec(arm string) runrecord.TrialSpec {
	s := runrecord.TrialSpec{Key: "gamecraft/" + gamecraftTask, Benchmark: gamecraft.Name, Task: gamecraftTask, Config: "fake", Rep: 1}
	if err := s.Arm.UnmarshalText([]byte(arm)); err != nil {
		panic(err)
	}
	return s
}

// upstreamScores are Overall and the four components as upstream's
// breakdown.json gives them (reward x 100, category means of the aggregated
// requirement scores x 100), and build from build_ok.
func upstreamScores(t *testing.T, path string) map[string]float64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bd struct {
		Reward       float64 `json:"reward"`
		BuildOK      bool    `json:"build_ok"`
		Requirements []struct {
			ID         string  `json:"id"`
			Aggregated float64 `json:"aggregated"`
		} `json:"requirements"`
	}
	if err := json.Unmarshal(raw, &bd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	sums, counts := map[string]float64{}, map[string]float64{}
	for _, q := range bd.Requirements {
		sums[q.ID[:1]] += q.Aggregated
		counts[q.ID[:1]]++
	}
	want := map[string]float64{"overall": 100 * bd.Reward, "build": 0}
	if bd.BuildOK {
		want["build"] = 1
	}
	for l, m := range map[string]string{"M": "mechanics", "D": "depth", "V": "visuals", "A": "art"} {
		if counts[l] == 0 {
			t.Fatalf("%s has no %s requirements", path, l)
		}
		want[m] = 100 * sums[l] / counts[l]
	}
	return want
}

// checkRecordsFollowUpstream checks that checkpoint 1's records (summary,
// scores.csv) equal upstream's breakdown.json kept in cp-1-verifier/ and
// that every verifier output was kept there.
func checkRecordsFollowUpstream(t *testing.T, dir string, s *runrecord.Summary) map[string]float64 {
	t.Helper()
	l := runrecord.TrialLayout{Dir: dir}
	out := filepath.Join(l.Evaluation(), "cp-1-verifier")
	for _, f := range gamecraft.VerifierFiles {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("verifier output %s was not kept with the checkpoint's records: %v", f, err)
		}
	}
	want := upstreamScores(t, filepath.Join(out, gamecraft.BreakdownFile))
	if len(s.Checkpoints) != 1 {
		t.Fatalf("want one checkpoint, got %+v", s.Checkpoints)
	}
	rows, err := runrecord.ReadScores(l.Scores())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[r.Metric] = r.Value
	}
	for m, w := range want {
		if math.Abs(s.Checkpoints[0].Metrics[m]-w) > 1e-9 || math.Abs(got[m]-w) > 1e-9 {
			t.Errorf("%s: summary %v, scores.csv %v, upstream's breakdown.json %v", m, s.Checkpoints[0].Metrics[m], got[m], w)
		}
	}
	return want
}

func TestGameCraftTrialWithoutGodotFailsTheBuildGate(t *testing.T) {
	// godot_bin names a file that does not exist: it shadows any godot on PATH.
	_, env, dir := gamecraftTrial(t, &gamecraft.Verifier{Judge: "stub", GodotBin: filepath.Join(t.TempDir(), "no-godot-here")})
	s, err := Run(context.Background(), dir, gamecraftSpec("hoh@1"), env)
	if err != nil {
		t.Fatalf("no Godot is a result (build gate 0), not a failed evaluation: %v", err)
	}
	want := checkRecordsFollowUpstream(t, dir, s)
	if want["build"] != 0 || s.Checkpoints[0].Metrics["build"] != 0 || s.Checkpoints[0].Metrics["overall"] != 0 {
		t.Fatalf("no Godot must fail the build gate: upstream %v, hoh %v", want, s.Checkpoints[0].Metrics)
	}
	if s.Status != runrecord.StatusCompleted {
		t.Fatalf("a failed build gate is a score, not an evaluation failure: %s %s", s.Status, s.Reason)
	}
}

func TestGameCraftTrialVerifierThatCannotRunIsNoScore(t *testing.T) {
	// gamecraft_bench cannot be imported: the verifier never runs.
	_, env, dir := gamecraftTrial(t, &gamecraft.Verifier{Judge: "stub", PythonPath: t.TempDir(), GodotBin: filepath.Join(t.TempDir(), "no-godot-here")})
	s, err := Run(context.Background(), dir, gamecraftSpec("hoh@1"), env)
	if err == nil || !strings.Contains(err.Error(), "could not run") || IsInfra(err) {
		t.Fatalf("want an evaluation that could not run (no score, not an infrastructure failure), got %v, %+v", err, s)
	}
	l := runrecord.TrialLayout{Dir: dir}
	if _, err := os.Stat(l.Summary()); err == nil {
		t.Fatal("a trial whose evaluation could not run must not be recorded as finished")
	}
	if _, err := os.Stat(l.Scores()); err == nil {
		t.Fatal("a trial whose evaluation could not run must have no scores")
	}
}

func TestGameCraftTrialWithStandInGodotEvaluatedTwiceAndRescored(t *testing.T) {
	b, env, dir := gamecraftTrial(t, &gamecraft.Verifier{Judge: "stub", GodotBin: testenv.StandInGodot(t)})
	spec := gamecraftSpec("hoh@1")
	s1, err := Run(context.Background(), dir, spec, env)
	if err != nil {
		t.Fatal(err)
	}
	want := checkRecordsFollowUpstream(t, dir, s1)
	if want["build"] != 1 || s1.Checkpoints[0].Metrics["build"] != 1 {
		t.Fatalf("the stand-in Godot must pass the build gate: upstream %v, hoh %v", want, s1.Checkpoints[0].Metrics)
	}
	l := runrecord.TrialLayout{Dir: dir}
	out := filepath.Join(l.Evaluation(), "cp-1-verifier")
	if log, _ := os.ReadFile(filepath.Join(out, "build.log")); !strings.Contains(string(log), "--path /workspace/game") {
		t.Errorf("the build check did not see /workspace/game: build.log %q", log)
	}
	records := func() [][]byte {
		var got [][]byte
		for _, p := range []string{l.CheckpointEvaluation(1), l.Scores()} {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, data)
		}
		return got
	}
	first := records()

	// The same checkpoint evaluated again from scratch: the verifier runs
	// anew and the records come out identical.
	if err := os.Remove(l.CheckpointEvaluation(1)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(l.Summary()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "stale-marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Run(context.Background(), dir, spec, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "stale-marker")); err == nil {
		t.Fatal("the second evaluation did not run the verifier afresh")
	}
	if second := records(); !reflect.DeepEqual(first, second) || !reflect.DeepEqual(s1.Checkpoints, s2.Checkpoints) {
		t.Fatalf("the same checkpoint evaluated twice gives different records:\n%s\n%s", bytes.Join(first, nil), bytes.Join(second, nil))
	}

	// Rescoring unchanged outputs changes nothing, byte for byte.
	summary, _ := os.ReadFile(l.Summary())
	res, err := Rescore(dir, b, env.Task)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 0 || len(res.Kept) != 0 {
		t.Fatalf("rescore of unchanged outputs: %+v", res)
	}
	if again, _ := os.ReadFile(l.Summary()); !reflect.DeepEqual(first, records()) || !bytes.Equal(summary, again) {
		t.Fatal("rescoring unchanged verifier outputs changed the records")
	}

	// Rescoring an edited breakdown.json (as a judge rerun would leave it)
	// recomputes the records from it alone: nothing runs (no Godot now).
	env.Bench.(*gamecraft.Benchmark).Opts.Verifier.GodotBin = filepath.Join(t.TempDir(), "no-godot-here")
	edited := editBreakdown(t, filepath.Join(out, gamecraft.BreakdownFile), 0.5)
	res, err = Rescore(dir, b, env.Task)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Changed, []int{1}) || res.Status != runrecord.StatusCompleted {
		t.Fatalf("rescore after an edited breakdown.json: %+v", res)
	}
	var s3 runrecord.Summary
	if err := runrecord.ReadJSON(l.Summary(), &s3); err != nil {
		t.Fatal(err)
	}
	want = checkRecordsFollowUpstream(t, dir, &s3)
	if want["overall"] != 100*edited || s3.Checkpoints[0].Metrics["mechanics"] != 50 {
		t.Fatalf("rescored records do not follow the edited breakdown.json: want %v, got %v", want, s3.Checkpoints[0].Metrics)
	}
	// The rescored evaluation is hoh's sealed record: a rerun takes it as is.
	before := records()
	if _, err := Run(context.Background(), dir, spec, env); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, records()) {
		t.Fatal("a rerun re-evaluated the rescored checkpoint instead of keeping its sealed record")
	}
}

// editBreakdown sets every requirement's per-demo and aggregated score to v
// and the reward to what the task's formula then gives, and returns it.
func editBreakdown(t *testing.T, path string, v float64) float64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bd map[string]any
	if err := json.Unmarshal(raw, &bd); err != nil {
		t.Fatal(err)
	}
	b, err := gamecraft.Load(testenv.SharedPath(t, "benchmarks", "gamecraft-bench"))
	if err != nil {
		t.Fatal(err)
	}
	td, _ := b.Task(gamecraftTask)
	vars := map[string]float64{"BUILD": 1}
	for _, q := range bd["requirements"].([]any) {
		r := q.(map[string]any)
		r["per_demo"] = map[string]any{"demo-1": v}
		r["aggregated"] = v
		vars[r["id"].(string)] = v
	}
	reward, err := td.Formula.Eval(vars)
	if err != nil {
		t.Fatal(err)
	}
	bd["reward"] = reward
	data, _ := json.Marshal(bd)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return reward
}

// Agents of a GameCraft trial see the paths the task addresses: the
// Developer writes the game at /workspace/game (it lands in the artifact),
// everyone reads the public tools at /workspace/tools, /tests is empty and
// the QA Tester's /workspace/game is read-only; what an agent leaves at
// /workspace's top level (a screenshot) stays with its stage, outside the
// artifact.
func TestGameCraftAgentsSeeTheTaskPaths(t *testing.T) {
	_, env, dir := gamecraftTrial(t, &gamecraft.Verifier{Judge: "stub", GodotBin: testenv.StandInGodot(t)})
	h := env.Harness.(*fakeHarness)
	rubric := filepath.Join(env.Task.Dir, "tests", "rubric.json")
	if _, err := os.Stat(rubric); err != nil {
		t.Fatal(err)
	}
	h.devShell = `set -e
test ! -e ` + shellQuote(rubric) + `
printf 'extends Node\n' > /workspace/game/main.gd
echo frame > /workspace/frame.png
test -x /workspace/tools/screenshot.sh
test -z "$(ls -A /tests)"
test -d /logs && echo log > /logs/agent.txt`
	h.qaShell = `set -e
grep -q 'extends Node' /workspace/game/main.gd
test -f /workspace/tools/screenshot.sh
if echo qa > /workspace/game/qa.gd 2>/dev/null; then echo 'QA wrote the candidate' >&2; exit 1; fi
test -z "$(ls -A /tests)"
echo qa-frame > /workspace/qa-frame.png`
	if _, err := Run(context.Background(), dir, gamecraftSpec("hoh@1"), env); err != nil {
		t.Fatal(err)
	}
	if h.devShellErr != nil || h.qaShellErr != nil {
		t.Fatalf("developer view: %v\nQA view: %v", h.devShellErr, h.qaShellErr)
	}
	l := runrecord.TrialLayout{Dir: dir}
	if b, _ := os.ReadFile(filepath.Join(l.Workspace(), "game", "main.gd")); string(b) != "extends Node\n" {
		t.Fatalf("the Developer's /workspace/game/main.gd is not in the artifact: %q", b)
	}
	for _, p := range []string{filepath.Join(l.Stage(1, "developer"), ViewScratch, "frame.png"), filepath.Join(l.Stage(1, "qa"), ViewScratch, "qa-frame.png")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("an agent's file at /workspace's top level was not kept with its stage: %v", err)
		}
	}
	for _, p := range []string{"frame.png", "game/qa.gd", "qa-frame.png"} {
		if _, err := os.Stat(filepath.Join(l.Workspace(), p)); err == nil {
			t.Errorf("%s is in the artifact", p)
		}
	}
}

// The real Codex CLI (scripted test-double provider) in a GameCraft trial:
// its shell tool runs in the task's view. With Codex's own sandbox, the
// Developer's write to /workspace/game passes it (hoh names /workspace as a
// writable root) and lands in the artifact. With Codex's sandbox bypassed
// (as in a container; Codex's sandbox cannot start in QA's read-only
// candidate: bwrap cannot create candidate/.git there), the QA Tester reads
// the game at /workspace/game, cannot write it, and finds /tests empty.
func TestCodexGameCraftTrialWorksAtTheTaskPaths(t *testing.T) {
	for _, bypass := range []bool{false, true} {
		l, qa := runCodexGameCraft(t, bypass)
		if b, _ := os.ReadFile(filepath.Join(l.Workspace(), "game", "main.gd")); string(b) != "extends Node\n" {
			logs, _ := filepath.Glob(filepath.Join(l.Stage(1, "developer"), "attempt-*", "logs", "stdout.jsonl"))
			var all []byte
			for _, p := range logs {
				b, _ := os.ReadFile(p)
				all = append(all, b...)
			}
			t.Fatalf("bypass=%v: Codex's write to /workspace/game did not reach the artifact (%q); developer log:\n%s", bypass, b, all)
		}
		if !bypass {
			continue
		}
		if !bytes.Contains(qa, []byte(`extends Node\ntests-entries=0\nqa-write=refused`)) {
			t.Fatalf("QA did not read the game at /workspace/game read-only with an empty /tests: %s", qa)
		}
		if _, err := os.Stat(filepath.Join(l.Workspace(), "game", "qa.gd")); err == nil {
			t.Fatal("QA wrote the game")
		}
	}
}

func runCodexGameCraft(t *testing.T, bypass bool) (runrecord.TrialLayout, []byte) {
	t.Helper()
	sc := scripted.Script{Entries: []scripted.Entry{
		goodPlanner,
		{Name: "developer", Match: `Role: Developer`, Repeat: true, Steps: []scripted.Step{
			{Shell: `printf 'extends Node\n' > /workspace/game/main.gd && head -c 11 /workspace/tools/screenshot.sh`}, {Say: devJSON}}},
		{Name: "qa", Match: `Role: QA Tester`, Repeat: true, Steps: []scripted.Step{
			{Shell: `cat /workspace/game/main.gd; echo tests-entries=$(ls -A /tests | wc -l); echo qa-write=$( (echo x > /workspace/game/qa.gd) 2>/dev/null && echo done || echo refused)`}, {Say: qaJSON}}},
	}}
	_, h := scriptedCodex(t, sc, bypass)
	_, env, dir := gamecraftTrial(t, &gamecraft.Verifier{Judge: "stub", GodotBin: testenv.StandInGodot(t)})
	env.Harness, env.Exec = h, sandbox.Local{KillGrace: 500 * time.Millisecond}
	env.Timeouts = Timeouts{Planner: 2 * time.Minute, Developer: 2 * time.Minute, QA: 2 * time.Minute, Idle: time.Minute}
	env.Env, env.Secrets = []string{itKeyEnv + "=" + itKey}, []string{itKey}
	s, err := Run(context.Background(), dir, gamecraftSpec("hoh@1"), env)
	if err != nil {
		t.Fatal(err)
	}
	if s.Checkpoints[0].Metrics["build"] != 1 {
		t.Errorf("the stand-in godot passes the build gate: %v", s.Checkpoints[0].Metrics)
	}
	l := runrecord.TrialLayout{Dir: dir}
	logs, _ := filepath.Glob(filepath.Join(l.Stage(1, "qa"), "attempt-*", "logs", "stdout.jsonl"))
	var qa []byte
	for _, p := range logs {
		b, _ := os.ReadFile(p)
		qa = append(qa, b...)
	}
	return l, qa
}

// Without Godot 4 and Xvfb the Developer's and QA Tester's prompts say that
// nothing can be seen here; a verified claim backed only by a screenshot
// the QA Tester's view does not hold is a gap, while one backed by a frame
// it captured is kept and the evidence bundle's media manifest lists the
// frame (where it is kept, its digest, what the record says it shows).
func TestGameCraftQAMediaManifestAndNoPretendedLooks(t *testing.T) {
	_, env, dir := gamecraftTrial(t, &gamecraft.Verifier{Judge: "stub", GodotBin: filepath.Join(t.TempDir(), "no-godot-here")})
	env.Bench.(*gamecraft.Benchmark).Opts.GodotBin = filepath.Join(t.TempDir(), "no-godot-here")
	h := env.Harness.(*fakeHarness)
	h.qaShell = `printf 'PNG-bytes' > /workspace/title.png && ls /workspace/game`
	h.qaReply = `{"iteration":1,"qa_status":"pass","verified_records":[
		{"claim_id":"c1","claim":"title screen shows the logo","status":"verified","execution_records":[{"type":"screenshot","path":"/workspace/title.png","observation":"the Arcborne logo over a dusk sky"}]},
		{"claim_id":"c2","claim":"the swing looks smooth","status":"verified","execution_records":[{"type":"screenshot","path":"/workspace/frame.png","observation":"a smooth arc"}]},
		{"claim_id":"c3","claim":"project file exists","status":"verified","execution_records":[{"type":"command","command":"ls /workspace/game","observation":"project.godot"}]}],
		"gap_records":[]}`
	if _, err := Run(context.Background(), dir, gamecraftSpec("hoh@1"), env); err != nil {
		t.Fatal(err)
	}
	if h.qaShellErr != nil {
		t.Fatalf("QA shell: %v", h.qaShellErr)
	}
	for _, role := range []runrecord.Role{runrecord.RoleDeveloper, runrecord.RoleQA} {
		p := h.byRole(role)[0].inv.Prompt
		if !strings.Contains(p, "cannot be taken on this machine") || !strings.Contains(p, "Godot 4 is not installed") || !strings.Contains(p, "Do not claim to have seen") {
			t.Errorf("the %s prompt does not say that nothing can be seen here:\n%s", role, p)
		}
	}
	l := runrecord.TrialLayout{Dir: dir}
	var ev runrecord.Evidence
	if err := runrecord.ReadJSON(l.StageFiles(1, "qa").Evidence(), &ev); err != nil {
		t.Fatal(err)
	}
	ids := func(cs []runrecord.Claim) (out []string) {
		for _, c := range cs {
			out = append(out, c.ClaimID)
		}
		return out
	}
	if !reflect.DeepEqual(ids(ev.Verified), []string{"c1", "c3"}) || !reflect.DeepEqual(ids(ev.Gaps), []string{"c2"}) || ev.QAStatus == "pass" {
		t.Fatalf("verified %v, gaps %v, status %s: a screenshot that was never taken must not verify c2", ids(ev.Verified), ids(ev.Gaps), ev.QAStatus)
	}
	if !strings.Contains(strings.Join(ev.Notes, "\n"), `claim "c2" cites only screenshot "/workspace/frame.png"`) {
		t.Errorf("no normalisation note for the demoted claim: %v", ev.Notes)
	}
	want := runrecord.MediaItem{Path: filepath.Join("iter-01", "qa", ViewScratch, "title.png"), ViewPath: "/workspace/title.png", Bytes: 9,
		Shows: []string{"the Arcborne logo over a dusk sky"}, Claims: []string{"c1"}}
	if len(ev.Media) != 1 {
		t.Fatalf("media manifest %+v, want the one captured frame", ev.Media)
	}
	want.SHA256 = ev.Media[0].SHA256 // checked against the file below
	if !reflect.DeepEqual(ev.Media[0], want) {
		t.Fatalf("media manifest %+v, want %+v", ev.Media[0], want)
	}
	data, err := os.ReadFile(filepath.Join(dir, want.Path))
	if err != nil || string(data) != "PNG-bytes" {
		t.Fatalf("the listed frame is not kept at its path: %q %v", data, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != ev.Media[0].SHA256 {
		t.Fatal("the manifest's digest is not the kept file's")
	}
}
