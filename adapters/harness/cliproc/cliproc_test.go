package cliproc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

func TestRedactingLogHidesSecretsAcrossWrites(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out")
	l := newRedactingLog(p, []string{"sk-SECRET"}, true)
	l.Write([]byte("key is sk-SE"))
	l.Write([]byte("CRET here\npartial sk-SECRET"))
	l.Close()
	b, _ := os.ReadFile(p)
	if strings.Contains(string(b), "sk-SECRET") || strings.Count(string(b), "[REDACTED]") != 2 {
		t.Errorf("log %q", b)
	}
	if len(l.lines) != 2 || strings.Contains(l.lines[0], "SECRET") {
		t.Errorf("lines %q", l.lines)
	}
}

func TestConcludeClassifiesAndWritesRecords(t *testing.T) {
	inv := harness.Invocation{LogDir: t.TempDir()}
	proc := Process{Exit: sandbox.Exit{Code: 0}, Command: []string{"cli"},
		Lines: []string{"banner", `{"type":"done"}`}}
	res, err := Conclude(context.Background(), "x", inv, proc, func(raw []json.RawMessage) Report {
		if len(raw) != 1 {
			t.Errorf("parser got %d events, want the one JSON line", len(raw))
		}
		return Report{SessionID: "s1", FinalMessage: "ok", Completed: true}
	})
	if err != nil || res.Outcome != runrecord.OutcomeCompleted || res.SessionID != "s1" || res.FinalMessage != "ok" {
		t.Fatalf("res %+v err %v", res, err)
	}
	for _, f := range []string{"events.json", "result.json"} {
		if _, err := os.Stat(filepath.Join(inv.LogDir, f)); err != nil {
			t.Error(err)
		}
	}

	proc.RunErr = errors.New("no such container")
	res, err = Conclude(context.Background(), "x", inv, proc, func([]json.RawMessage) Report {
		t.Error("parser called after an executor failure")
		return Report{}
	})
	if err != nil || res.Outcome != runrecord.OutcomeInfraFailure || !strings.Contains(res.Evidence, "executor: no such container") {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestEnvNamesListsEachNameOnce(t *testing.T) {
	got := EnvNames([]string{"HOH_SCRIPTED_KEY=a", "PATH=/bin", "HOH_SCRIPTED_KEY=a"})
	if strings.Join(got, ",") != "HOH_SCRIPTED_KEY,PATH" {
		t.Fatalf("env names %q", got)
	}
}

func TestFinishedTurnWithoutAModelAnswerIsNotCompleted(t *testing.T) {
	exit0 := Process{Exit: sandbox.Exit{Code: 0}}
	if o, ev := Outcome(exit0, Report{Completed: true}); o == runrecord.OutcomeCompleted || !strings.Contains(ev, "no model turn") {
		t.Errorf("empty finished turn: %s %q", o, ev)
	}
	answered := Report{Completed: true, FinalMessage: "done"}
	if o, _ := Outcome(exit0, answered); o != runrecord.OutcomeCompleted {
		t.Errorf("answered turn: %s", o)
	}
	stopped := exit0
	stopped.Stopped = "provider unreachable: stopped"
	if o, _ := Outcome(stopped, answered); o != runrecord.OutcomeInfraFailure {
		t.Errorf("stopped run: %s", o)
	}
}
