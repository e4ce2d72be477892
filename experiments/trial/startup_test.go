package trial

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/cliproc"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/runrecord"
)

// Start-up is not silence: a CLI that has sent no model request when the
// first-request deadline expires is ended by hoh, and the attempt is an
// infrastructure failure of its own (replaced; the breaker stops the
// configuration only when it repeats), never "no model request", which
// stops the configuration at its first trial. A CLI that asked the model
// in time is not touched by the deadline however long its turn lasts; one
// killed by its idle timeout before asking is a start-up fault too.
func TestFirstRequestDeadline(t *testing.T) {
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet/vanilla", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "vanilla", Checkpoint: 1}, Rep: 1}
	srv, err := scripted.Start(scripted.Script{}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const deadline = 2 * time.Second
	run := func(t *testing.T, h harness.Harness) (string, *runrecord.Summary, error) {
		dir := t.TempDir()
		log := runrecord.TrialLayout{Dir: dir}.Served()
		relay, err := served.Start(srv.URL()+"/v1", log)
		if err != nil {
			t.Fatal(err)
		}
		defer relay.Close()
		if s, ok := h.(*askingHarness); ok {
			s.base = relay.BaseURL()
		}
		s, err := Run(context.Background(), dir, spec, NewEnv(
			Policy{Timeouts: Timeouts{Idle: time.Hour, FirstRequest: deadline}},
			Place{Bench: b, Task: ts[0]},
			Route{ServedLog: log, Relay: relay},
			h,
			Mode{},
		))
		return dir, s, err
	}

	t.Run("never asks", func(t *testing.T) {
		dir, _, err := run(t, &startingHarness{})
		if CauseOf(err) != CauseStartup || StopsConfig(err) || !strings.Contains(err.Error(), "first-request deadline 2s") {
			t.Fatalf("want a start-up fault of the attempt that does not stop the configuration, got %v", err)
		}
		reps, _, _ := runrecord.ReadLedgerTolerant(runrecord.TrialLayout{Dir: dir}.ReplacedUsage())
		if len(reps) != 1 || reps[0].Outcome != runrecord.OutcomeInfraFailure {
			t.Errorf("the attempt is not recorded as replaced: %+v", reps)
		}
		if _, err := os.Stat(runrecord.TrialLayout{Dir: dir}.Summary()); err == nil {
			t.Error("a summary was written for a CLI that never asked the model")
		}
	})
	t.Run("asks, then works past the deadline", func(t *testing.T) {
		_, s, err := run(t, &askingHarness{work: 2 * deadline})
		if err != nil || s.Status != runrecord.StatusCompleted {
			t.Fatalf("a CLI that asked the model in time was ended: %v %+v", err, s)
		}
	})
	t.Run("killed by its idle timeout before asking", func(t *testing.T) {
		_, _, err := run(t, &startingHarness{outcome: runrecord.OutcomeTimeout})
		if CauseOf(err) != CauseStartup || StopsConfig(err) || !strings.Contains(err.Error(), "had not started its turn") {
			t.Fatalf("want a start-up fault, got %v", err)
		}
	})
	t.Run("exits before asking", func(t *testing.T) {
		_, _, err := run(t, &startingHarness{outcome: runrecord.OutcomeAgentFailure})
		if CauseOf(err) != served.CauseNoRequest || !StopsConfig(err) {
			t.Fatalf("a CLI that exits without asking the model stops its configuration, got %v", err)
		}
	})
}

// startingHarness never sends a model request: with an outcome it ends
// with it at once (an idle kill, an exit), else it waits for hoh to end it
// (bounded, so a deadline that never fires fails the test).
type startingHarness struct{ outcome runrecord.Outcome }

func (h *startingHarness) Name() string    { return "fake" }
func (h *startingHarness) Version() string { return "0" }

func (h *startingHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	if h.outcome != "" {
		return runrecord.Result{Outcome: h.outcome, Evidence: "the CLI's own account"}, nil
	}
	select {
	case <-ctx.Done():
		return runrecord.Result{Outcome: runrecord.OutcomeAgentFailure, Evidence: "killed"}, errors.New("fake: invocation cancelled")
	case <-time.After(5 * time.Minute):
		return runrecord.Result{Outcome: runrecord.OutcomeCompleted, FinalMessage: "never ended by hoh"}, nil
	}
}

// askingHarness asks the model through the relay at once, then works for
// work before it completes (or is ended).
type askingHarness struct {
	base string
	work time.Duration
}

func (h *askingHarness) Name() string    { return "fake" }
func (h *askingHarness) Version() string { return "0" }

func (h *askingHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"/responses", strings.NewReader(`{"model":"m","stream":true,"input":"hi"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return runrecord.Result{}, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case <-ctx.Done():
		return runrecord.Result{Outcome: runrecord.OutcomeAgentFailure, Evidence: "killed"}, errors.New("fake: invocation cancelled")
	case <-time.After(h.work):
	}
	os.WriteFile(inv.WorkDir+"/greet.sh", []byte("#!/bin/sh\necho \"Hello, $1!\"\n"), 0o755)
	return runrecord.Result{Outcome: runrecord.OutcomeCompleted, FinalMessage: "done", Usage: runrecord.Usage{Input: 1, Output: 1, Total: 2}}, nil
}

// The idle timeout judges silence during a turn: before the attempt's first
// model request a CLI that prints nothing (starting slowly on a busy
// machine) is not ended by it; after the request it is, and the exit says
// so. The harness gets the executor of its role as it is (on the host, hoh's
// confinement): Codex reads that type to leave its own sandbox, which fails
// inside hoh's read-only view, to hoh; a wrapped executor made every QA
// command fail and QA's verified claims gaps.
func TestIdleCountsFromTheFirstModelRequest(t *testing.T) {
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet/vanilla", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "vanilla", Checkpoint: 1}, Rep: 1}
	srv, err := scripted.Start(scripted.Script{}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	log := runrecord.TrialLayout{Dir: dir}.Served()
	relay, err := served.Start(srv.URL()+"/v1", log)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	h := &slowStartHarness{base: relay.BaseURL()}
	const idle = 500 * time.Millisecond
	if _, err := Run(context.Background(), dir, spec, NewEnv(
		Policy{Timeouts: Timeouts{Idle: idle, Developer: 5 * time.Minute, FirstRequest: time.Hour}},
		Place{Bench: b, Task: ts[0]},
		Route{ServedLog: log, Relay: relay},
		h,
		Mode{},
	)); err != nil {
		t.Fatal(err)
	}
	if h.proc == nil {
		t.Fatal("the harness was not run")
	}
	if _, ok := h.exec.(sandbox.Confined); !ok {
		t.Errorf("the harness got a %T, not the role's confined executor", h.exec)
	}
	if p := h.proc; p.RunErr != nil || len(p.Lines) == 0 || p.Lines[0] != "started" {
		t.Fatalf("a silent start-up (2s, idle timeout %s) was ended by the idle timeout: %+v", idle, p)
	}
	if p := h.proc; !p.Exit.Idle || !strings.Contains(p.Exit.Detail, "counted from the first model request") {
		t.Fatalf("silence after the first model request was not ended as idle: %+v", p.Exit)
	}
}

// slowStartHarness runs a real process through cliproc (as every CLI
// adapter does) that is silent for 2 s, prints "started", then is silent
// for good; it asks the model through the relay only after "started". It
// records its first process and completes every invocation.
type slowStartHarness struct {
	base string
	exec sandbox.Executor
	proc *cliproc.Process
}

func (h *slowStartHarness) Name() string    { return "fake" }
func (h *slowStartHarness) Version() string { return "0" }

func (h *slowStartHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	if h.proc == nil {
		h.exec = inv.Exec
		askCtx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			// After the start-up: the command's silence before this
			// counted for nothing.
			select {
			case <-askCtx.Done():
				return
			case <-time.After(2500 * time.Millisecond):
			}
			req, _ := http.NewRequestWithContext(askCtx, http.MethodPost, h.base+"/responses", strings.NewReader(`{"model":"m","stream":true,"input":"hi"}`))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		p, err := cliproc.Execute(ctx, inv, cliproc.Launch{Args: []string{"sh", "-c", "sleep 2; echo started; exec sleep 600"}})
		if err != nil {
			return runrecord.Result{}, err
		}
		h.proc = &p
	}
	os.WriteFile(inv.WorkDir+"/greet.sh", []byte("#!/bin/sh\necho \"Hello, $1!\"\n"), 0o755)
	return runrecord.Result{Outcome: runrecord.OutcomeCompleted, FinalMessage: "done", Usage: runrecord.Usage{Input: 1, Output: 1, Total: 2}}, nil
}
