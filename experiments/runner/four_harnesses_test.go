package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/experiments/config"
	relaylog "github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// The same HoH@2 smoke run through each of the four real CLIs (installed by
// scripts/install-harnesses.sh), each against the scripted test-double
// provider on one of its wire APIs: every trial completes, every checkpoint
// is scored, and each trial's token ledger equals what its provider served.
func TestHoH2SmokeCompletesWithEachOfTheFourCLIs(t *testing.T) {
	e, err := config.Load(filepath.Join(repoRoot(t), "configs", "examples", "four-harnesses.yaml"))
	if err != nil {
		t.Fatalf("%v (the four CLIs are installed by scripts/install-harnesses.sh)", err)
	}
	out := filepath.Join(t.TempDir(), "run")
	e.Output = out
	var log strings.Builder
	res, err := Run(context.Background(), e, Options{Out: &log})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	harnesses := map[string]bool{}
	for _, o := range res.Outcomes {
		harnesses[o.Trial.Config] = true
		if o.State != runrecord.StateDone || o.Status != runrecord.StatusCompleted {
			t.Errorf("%s: %+v\n%s", o.Trial.Dir, o, log.String())
			continue
		}
		var s runrecord.Summary
		if err := runrecord.ReadJSON(filepath.Join(out, o.Trial.Dir, "summary.json"), &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Checkpoints) != 2 || s.Checkpoints[1].Metrics["pass_rate"] != 100 {
			t.Errorf("%s: checkpoints %+v", o.Trial.Config, s.Checkpoints)
		}
		served := servedTokens(t, filepath.Join(out, "provider-"+o.Trial.Config+".jsonl"))
		if got := s.Usage.Input + s.Usage.Output; got != served || got == 0 {
			t.Errorf("%s: ledger %d tokens, provider served %d", o.Trial.Config, got, served)
		}
		// hoh's relay reads the same usage out of the responses of each API.
		if _, rel, err := relaylog.Read(filepath.Join(out, o.Trial.Dir, relaylog.File)); err != nil || rel.Input+rel.Output != servedTokens(t, filepath.Join(out, "provider-"+o.Trial.Config+".jsonl")) {
			t.Errorf("%s: relay counted %+v (%v), provider served %d", o.Trial.Config, rel, err, servedTokens(t, filepath.Join(out, "provider-"+o.Trial.Config+".jsonl")))
		}
	}
	for _, want := range []string{"codex-scripted", "claude-scripted", "opencode-scripted", "pi-scripted"} {
		if !harnesses[want] {
			t.Errorf("no trial for %s", want)
		}
	}
	checkDatabases(t, out)
	testenv.AssertNoSecret(t, scriptedKeyValue, out)
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil || len(rows) != 8 {
		t.Fatalf("scores.csv: %v, %d rows (want 4 CLIs x 2 checkpoints)", err, len(rows))
	}
}

// servedTokens sums input + output over the provider's request log.
func servedTokens(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			Served struct {
				Usage struct{ Input, Output int64 } `json:"usage"`
			} `json:"served"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		n += line.Served.Usage.Input + line.Served.Usage.Output
	}
	return n
}

// checkDatabases runs sqlite3's integrity check on every SQLite database
// the CLIs left in out (their state, after hoh scrubbed the key from it).
func checkDatabases(t *testing.T, out string) {
	t.Helper()
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatal("sqlite3 is required (scripts/install-test-deps.sh installs it)")
	}
	n := 0
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		head := make([]byte, 16)
		_, rerr := io.ReadFull(f, head)
		f.Close()
		if rerr != nil || string(head) != "SQLite format 3\x00" {
			return nil
		}
		n++
		if res, err := exec.Command(sqlite, "-readonly", p, "PRAGMA integrity_check;").CombinedOutput(); err != nil || strings.TrimSpace(string(res)) != "ok" {
			t.Errorf("%s: integrity check: %v %s", p, err, res)
		}
		return nil
	})
	if n == 0 {
		t.Error("no CLI database found to check")
	}
	t.Logf("%d SQLite database(s) pass the integrity check", n)
}
