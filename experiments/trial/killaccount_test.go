package trial

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// The test binary doubles as the trial process the SIGKILL test kills,
// and as the hoh on a terminal of the pty test.
func TestMain(m *testing.M) {
	if dir := os.Getenv("HOH_KILLED_TRIAL_DIR"); dir != "" {
		killedTrialChild(dir, os.Getenv("HOH_KILLED_TRIAL_PROVIDER"))
		return
	}
	if cli := os.Getenv(ptyTrialEnv); cli != "" {
		ptyTrialChild(cli, os.Getenv(ptyResultEnv))
		return
	}
	os.Exit(m.Run())
}

// servingHarness is fakeHarness whose every invocation first asks the
// provider (the scripted TEST DOUBLE, through hoh's relay) for one
// response and reports that response's usage, as a CLI does. At call
// hangAt it asks, then signals and blocks until killed.
type servingHarness struct {
	*fakeHarness
	base   string
	calls  atomic.Int32
	hangAt int32
	hung   string // file created once the hanging call was served
}

func (h *servingHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	n := h.calls.Add(1)
	// As Codex snapshots its shell environment, the key included.
	for _, kv := range inv.Env {
		os.WriteFile(filepath.Join(inv.StateDir, "shell-snapshot.sh"), []byte("export "+kv+"\n"), 0o644)
	}
	resp, err := http.Post(h.base+"/responses", "application/json", strings.NewReader(fmt.Sprintf(`{"model":"m","input":"call %d"}`, n)))
	if err != nil {
		return runrecord.Result{Outcome: runrecord.OutcomeInfraFailure, Evidence: err.Error()}, nil
	}
	var body struct {
		Usage struct {
			Input  int64 `json:"input_tokens"`
			Output int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	json.Unmarshal(data, &body)
	if n == h.hangAt {
		os.WriteFile(h.hung, nil, 0o644)
		select {} // SIGKILLed here, mid-attempt
	}
	res, err := h.fakeHarness.Run(ctx, inv)
	res.Usage = runrecord.Usage{Input: body.Usage.Input, Output: body.Usage.Output, Total: body.Usage.Input + body.Usage.Output}
	return res, err
}

const killKey = "sk-killed-trial-key-0123456789"

func killSpec() (runrecord.TrialSpec, Env) {
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	return runrecord.TrialSpec{Key: "builtin/greet/hoh@1", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "hoh", Checkpoint: 1}, Rep: 1},
		NewEnv(
			Policy{},
			Place{Bench: b, Task: ts[0]},
			Route{Env: []string{"HOH_TEST_KEY=" + killKey}, Secrets: []string{killKey}},
			nil,
			Mode{},
		)
}

// killedTrialChild runs the trial until its developer's second attempt
// (the first broke its output contract) has been served, and hangs there.
func killedTrialChild(dir, provider string) {
	relay, err := served.Start(provider, runrecord.TrialLayout{Dir: dir}.Served())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	spec, env := killSpec()
	env.Relay, env.ServedLog = relay, relay.Log()
	env.Harness = &servingHarness{fakeHarness: &fakeHarness{prose: map[runrecord.Role]bool{runrecord.RoleDeveloper: true}},
		base: relay.BaseURL(), hangAt: 3, hung: filepath.Join(dir, "hung")}
	_, err = Run(context.Background(), dir, spec, env)
	fmt.Fprintln(os.Stderr, "the trial was meant to hang:", err)
	os.Exit(3)
}

// SIGKILL of hoh mid-attempt: the relay's served.jsonl names the killed
// attempts, and the resume accounts them as killed before running anything,
// so every token the provider served is in the ledger (valid attempts) or
// among the replaced and killed ones, exactly.
func TestSIGKILLedAttemptsTokensAreAccountedOnResume(t *testing.T) {
	usage := &scripted.Usage{Input: 1000, Output: 50}
	srv, err := scripted.Start(scripted.Script{Entries: []scripted.Entry{{Name: "any", Match: ".", Repeat: true, Usage: usage, Steps: []scripted.Step{{Say: "ok"}}}}}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "HOH_KILLED_TRIAL_DIR="+dir, "HOH_KILLED_TRIAL_PROVIDER="+srv.URL()+"/v1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "hung")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the trial never reached its hanging attempt:\n%s", stderr.String())
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if left, _ := filepath.Glob(filepath.Join(dir, "iter-01", "developer", "attempt-*", "state", "shell-snapshot.sh")); len(left) == 0 {
		t.Fatal("the killed attempt left no state: the test would prove nothing about its removal")
	}

	l := runrecord.TrialLayout{Dir: dir}
	relay, err := served.Start(srv.URL()+"/v1", l.Served())
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	spec, env := killSpec()
	env.Relay, env.ServedLog = relay, relay.Log()
	env.Harness = &servingHarness{fakeHarness: &fakeHarness{}, base: relay.BaseURL()}
	s, err := Run(context.Background(), dir, spec, env)
	if err != nil || s.Status != runrecord.StatusCompleted {
		t.Fatalf("resume: %v %+v", err, s)
	}
	killed, _, err := runrecord.ReadLedgerTolerant(l.ReplacedUsage())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var killedTotal int64
	for _, k := range killed {
		got = append(got, fmt.Sprintf("%s %d/%s/%d %s %d", k.Dir, k.Iteration, k.Role, k.Attempt, k.Outcome, k.Usage.Total))
		killedTotal += k.Usage.Total
	}
	want := []string{"iter-01/developer/attempt-1 1/developer/1 killed 1050", "iter-01/developer/attempt-2 1/developer/2 killed 1050"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("killed attempts in usage-replaced.jsonl:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ledger, err := runrecord.LedgerUsage(l.Usage())
	if err != nil {
		t.Fatal(err)
	}
	_, relayed, _ := served.Read(l.Served())
	provided := srv.TotalUsage()
	if relayed.Total != provided.Total || ledger.Total+killedTotal != provided.Total || ledger.Total != s.Usage.Total || provided.Total != 5*1050 {
		t.Errorf("provider served %d, relay logged %d, ledger %d + killed %d (summary %d)", provided.Total, relayed.Total, ledger.Total, killedTotal, s.Usage.Total)
	}
	// No file the trial left holds the key, and no CLI state is left.
	testenv.AssertNoSecret(t, killKey, dir)
	if left, _ := filepath.Glob(filepath.Join(dir, "iter-*", "*", "attempt-*", "state")); len(left) > 0 {
		t.Errorf("CLI state left after the resumed trial: %v", left)
	}
	// Accounting is idempotent: another resume adds no line.
	if _, err := Run(context.Background(), dir, spec, env); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := runrecord.ReadLedgerTolerant(l.ReplacedUsage()); len(again) != len(killed) {
		t.Errorf("%d lines after another resume, want %d", len(again), len(killed))
	}
}
