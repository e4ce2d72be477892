package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv"
)

// writeRun makes a run directory holding files (relative path -> content).
func writeRun(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// compare runs the command on two directories: exit code and stdout+stderr.
func compare(a, b string) (int, string) {
	var out bytes.Buffer
	code := run([]string{a, b}, &out, &out)
	return code, out.String()
}

// Each mask hides the noise it exists for, and only that: a changed score,
// status or token count beside the noise still differs.
func TestMasks(t *testing.T) {
	cases := []struct {
		name, a, b string
		equal      bool
	}{
		{"RFC3339 timestamp", `"finished": "2026-12-04T19:50:12.070029756Z"`, `"finished": "2026-12-04T19:51:12.9Z"`, true},
		{"unix ms inside a JSON string", `{\"turn_started_at_unix_ms\":1796413806310}`, `{\"turn_started_at_unix_ms\":1796413861987}`, true},
		{"duration omitted when zero", `{"duration_ms":3,"first_byte_ms":3,"bytes":1}`, `{"duration_ms":1,"bytes":1}`, true},
		{"timings_ms object", "\"timings_ms\": {\n  \"cli\": 4725\n},", "\"timings_ms\": {\n  \"cli\": 12,\n  \"digest\": 1\n},", true},
		{"UUID", `"session_id": "01a2429b-5748-7113-888c-f87880ac7417"`, `"session_id": "01a2429c-3059-7593-a6b6-746eeaed0563"`, true},
		{"UUID with a digit run (masked before temp suffixes)", `"thread_id": "01a2429c-3691-7413-b546-9461772e382c"`, `"thread_id": "01a2429b-6287-7da2-a802-d70a73f11e66"`, true},
		{"git commit", `"commit": "87990b57cee9ae9654e1a8a31a84bad383f0b5cb"`, `"commit": "92a6872aea9045d5b003a8c302c1d7e4d55786c3"`, true},
		{"evaluation MAC", `"mac": "` + strings.Repeat("a", 64) + `"`, `"mac": "` + strings.Repeat("b", 64) + `"`, true},
		{"loopback port", `base_url=http://127.0.0.1:38211/v1`, `base_url=http://127.0.0.1:40001/v1`, true},
		{"temp suffix", `preflight/.state-codex-scripted-3125370153/work`, `preflight/.state-codex-scripted-4048551536/work`, true},
		{"temp path", `cd /tmp/hoh-npm-xdg-123/x`, `cd /tmp/go-build99/y`, true},
		{"hoh version", `"hoh_version": "v0.3.1-4-gabc"`, `"hoh_version": "v0.3.2"`, true},
		{"scripted provider id", `"call_id":"call_scripted000176"`, `"call_id":"call_scripted000089"`, true},
		{"item kind", `"item_completed":1`, `"item_started":1`, false},
		{"codex exec header", `Chunk ID: b24641\nWall time: 0.0012 seconds`, `Chunk ID: 136e36\nWall time: 0.0000 seconds`, true},
		{"docker run label", `hoh-run-30172-1796449001123456789`, `hoh-run-2218-1796449301123456789`, true},
		{"OpenCode ids", `"sessionID":"ses_dbb50350effe9vd1dW2oFxF1QI","id":"prt_244afd5eb001edIPx6vJNQG4Iy"`, `"sessionID":"ses_dbb508687ffeV96o9cOT32Xoc1","id":"prt_244afd24f001upgMFbuhx5LzDS"`, true},
		{"Claude Code device id", `{\"device_id\":\"` + strings.Repeat("c", 64) + `\"`, `{\"device_id\":\"` + strings.Repeat("5", 64) + `\"`, true},
		{"content-length", `Content-Length: 2226`, `Content-Length: 4245`, true},
		{"ls date", `4096 Dec  4 19:50 README.md`, `4096 Dec  4 19:51 README.md`, true},
		{"MAC address", `ether 02:42:ac:11:00:02`, `ether 02:42:ac:11:00:03`, true},
		{"score", `builtin,codex-scripted,vanilla,1,greet,text,,,pass_rate,100,5340,1,e398d741458fdac5`, `builtin,codex-scripted,vanilla,1,greet,text,,,pass_rate,50,5340,1,e398d741458fdac5`, false},
		{"token count", `"usage":{"input":1800,"total":2040}`, `"usage":{"input":1801,"total":2041}`, false},
		{"status beside a timestamp", `{"time":"2026-12-04T19:50:05Z","status":200}`, `{"time":"2026-12-04T19:51:05Z","status":500}`, false},
		{"digest", `"digest":"sha256:` + strings.Repeat("1", 64) + `"`, `"digest":"sha256:` + strings.Repeat("2", 64) + `"`, false},
	}
	for _, c := range cases {
		ma, mb := mask(c.a, "/nonexistent/runA"), mask(c.b, "/nonexistent/runB")
		if (ma == mb) != c.equal {
			t.Errorf("%s: masked equal = %v, want %v\n  a: %s\n  b: %s", c.name, ma == mb, c.equal, ma, mb)
		}
	}
}

// A run's own path is masked however the record spells it.
func TestRunDirectoryMasked(t *testing.T) {
	if mask("/x/runA/codex/workspace", "/x/runA") != mask("/y/other/runB/codex/workspace", "/y/other/runB") {
		t.Error("the run directories' paths were not masked")
	}
	// As OpenCode titles a tool call: relative to /.
	if mask(`"title": "x/runA/codex/workspace/greet.sh"`, "/x/runA") != mask(`"title": "y/other/runB/codex/workspace/greet.sh"`, "/y/other/runB") {
		t.Error("the run directories' paths relative to / were not masked")
	}
}

// Two runs that differ only in a timestamp and a session id are equal.
func TestTimestampDifferenceIsEqual(t *testing.T) {
	a := writeRun(t, map[string]string{
		"t/rep-1/summary.json": "{\n  \"finished\": \"2026-12-04T19:50:12.07Z\",\n  \"session\": \"01a2429b-5748-7113-888c-f87880ac7417\"\n}\n",
		"scores.csv":           "metric,value\npass_rate,100\n",
	})
	b := writeRun(t, map[string]string{
		"t/rep-1/summary.json": "{\n  \"finished\": \"2026-12-05T08:00:00Z\",\n  \"session\": \"01a2429c-3059-7593-a6b6-746eeaed0563\"\n}\n",
		"scores.csv":           "metric,value\npass_rate,100\n",
	})
	if code, out := compare(a, b); code != 0 || out != "records equal\n" {
		t.Errorf("exit %d, output %q; want 0, records equal", code, out)
	}
}

// A changed score is reported with its file, line and both lines.
func TestScoreDifferenceIsReported(t *testing.T) {
	a := writeRun(t, map[string]string{"scores.csv": "metric,value\npass_rate,100\n"})
	b := writeRun(t, map[string]string{"scores.csv": "metric,value\npass_rate,50\n"})
	code, out := compare(a, b)
	want := "scores.csv: line 2\n  A: pass_rate,100\n  B: pass_rate,50\n"
	if code != 1 || !strings.HasPrefix(out, want) {
		t.Errorf("exit %d, output:\n%s\nwant 1 and a prefix:\n%s", code, out, want)
	}
}

// Root JSONL ledgers compare as sets: their order is the order concurrent
// trials finished in. A trial's own JSONL keeps its order.
func TestRootLedgerOrderIgnored(t *testing.T) {
	a := writeRun(t, map[string]string{"trials.jsonl": "{\"k\":1}\n{\"k\":2}\n", "t/stages.jsonl": "{\"k\":1}\n{\"k\":2}\n"})
	b := writeRun(t, map[string]string{"trials.jsonl": "{\"k\":2}\n{\"k\":1}\n", "t/stages.jsonl": "{\"k\":2}\n{\"k\":1}\n"})
	code, out := compare(a, b)
	if code != 1 || strings.Contains(out, "trials.jsonl") || !strings.Contains(out, "t/stages.jsonl: line 1") {
		t.Errorf("exit %d, output:\n%s\nwant only t/stages.jsonl to differ", code, out)
	}
}

// Binary files compare by bytes; non-printable characters of text are
// escaped; a long line is cut near its difference; skipped directories
// are not compared.
func TestBinaryEscapesAndSkips(t *testing.T) {
	long := strings.Repeat("x", 1000)
	a := writeRun(t, map[string]string{"blob": "a\x00b", "log": "ok\tA\x1b[0m1", "long": long + "1", "t/history.git/HEAD": "a"})
	b := writeRun(t, map[string]string{"blob": "a\x00c", "log": "ok\tA\x1b[0m2", "long": long + "2", "t/history.git/HEAD": "b"})
	code, out := compare(a, b)
	for _, want := range []string{"blob: binary files differ", `  A: ok\tA\x1b[0m1`, "long: line 1\n  A: ...xxx", "x1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 || strings.Contains(out, "history.git") || len(out) > 2000 {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// In a project directory, git's part of .git (objects, refs, the index)
// and the state's lock and diff-stat cache are not compared; hoh's state in
// .git/hoh and the artifact are, with the commit Codex reports masked.
func TestProjectDirectoryComparesItsState(t *testing.T) {
	const c1, c2 = "921f5f7aa90baf430666c3ebdd5bae0de2c5f19f", "75fbfeece7c5558e81d3bf29f11be7a0a4d5934c"
	project := func(commit, lock, loops string) map[string]string {
		return map[string]string{
			".git/index": commit, ".git/refs/tags/loop-1": commit, ".git/hoh/lock": lock,
			".git/hoh/diffstat-cache.json": "{\n  \"" + commit + ".." + commit + "\": [1]\n}\n",
			".git/hoh/provider.jsonl":      `{"body":"{\\"latest_git_commit_hash\\":\\"` + commit + `\\"}"}` + "\n",
			".git/hoh/runs.jsonl":          loops, "greet.sh": "echo hi\n",
		}
	}
	a := writeRun(t, project(c1, "6635", `{"loops":3}`+"\n"))
	b := writeRun(t, project(c2, "10058", `{"loops":3}`+"\n"))
	if code, out := compare(a, b); code != 0 || out != "records equal\n" {
		t.Errorf("exit %d, output %q; want 0, records equal", code, out)
	}
	b = writeRun(t, project(c2, "10058", `{"loops":2}`+"\n"))
	if code, out := compare(a, b); code != 1 || !strings.HasPrefix(out, ".git/hoh/runs.jsonl: line 1") {
		t.Errorf("exit %d, output:\n%s\nwant .git/hoh/runs.jsonl to differ", code, out)
	}
}

// Usage and I/O errors exit 2 and name the path.
func TestErrorsExit2(t *testing.T) {
	if code, out := compare(t.TempDir(), "/nonexistent/run-b"); code != 2 || !strings.Contains(out, "/nonexistent/run-b") {
		t.Errorf("missing run: exit %d, output %q", code, out)
	}
	var out bytes.Buffer
	if code := run([]string{"only-one"}, &out, &out); code != 2 || !strings.Contains(out.String(), "usage") {
		t.Errorf("one argument: exit %d, output %q", code, out.String())
	}
}

// smokeConfig is configs/examples/local-smoke.yaml on one task (every
// condition), so two runs fit in a test's time.
func smokeConfig(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "configs/examples/local-smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer(
		"scripts/local-smoke.yaml", filepath.Join(root, "configs/examples/scripts/local-smoke.yaml"),
		"ids: [greet, fizzbuzz, calc]", "ids: [greet]",
	).Replace(string(data))
	if !strings.Contains(text, "ids: [greet]") {
		t.Fatal("local-smoke.yaml no longer lists its tasks as the test expects")
	}
	p := filepath.Join(t.TempDir(), "smoke.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Two real runs of the smoke config (the real Codex CLI against the
// scripted provider) record the same things; a changed score line and a
// removed trial file are each reported by file name.
func TestTwoSmokeRunsCompareEqual(t *testing.T) {
	hoh, config := testenv.BuildHoh(t), smokeConfig(t)
	runs := t.TempDir()
	a, b := filepath.Join(runs, "runA"), filepath.Join(runs, "runB")
	for _, dir := range []string{a, b} {
		cmd := exec.Command(hoh, "run", config, "--output", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hoh run --output %s: %v\n%s", dir, err, out)
		}
	}
	if code, out := compare(a, b); code != 0 {
		t.Fatalf("two runs of the same config: exit %d\n%s", code, out)
	}

	scores := filepath.Join(b, "scores.csv")
	orig, err := os.ReadFile(scores)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(orig), ",pass_rate,100,", ",pass_rate,99,", 1)
	if changed == string(orig) {
		t.Fatalf("no pass_rate,100 score to change in:\n%s", orig)
	}
	os.WriteFile(scores, []byte(changed), 0o644)
	if code, out := compare(a, b); code != 1 || !strings.Contains(out, "scores.csv: line ") {
		t.Errorf("changed score: exit %d\n%s", code, out)
	}
	os.WriteFile(scores, orig, 0o644)

	trial := filepath.Join("codex-scripted", "hoh", "greet", "rep-1", "summary.json")
	if err := os.Remove(filepath.Join(b, trial)); err != nil {
		t.Fatal(err)
	}
	if code, out := compare(a, b); code != 1 || !strings.Contains(out, filepath.ToSlash(trial)+": only in "+a) {
		t.Errorf("removed trial file: exit %d\n%s", code, out)
	}
}
