package preflight

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/cliproc"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

// lookupCLI is a stand-in CLI that looks names up (with the C library's
// resolver, as a Node CLI does) before its turn, which it then completes
// or not.
type lookupCLI struct {
	names  []string
	answer bool
}

func (lookupCLI) Name() string    { return "lookupcli" }
func (lookupCLI) Version() string { return "0.0.0" }

func (c lookupCLI) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	script := ""
	for _, n := range c.names {
		script += "getent hosts '" + n + "'; "
	}
	p, err := cliproc.Execute(ctx, inv, cliproc.Launch{Args: []string{"/bin/sh", "-c", script + "echo OK"}})
	if err != nil {
		return runrecord.Result{}, err
	}
	if p.RunErr != nil {
		return runrecord.Result{}, p.RunErr
	}
	if !c.answer {
		return runrecord.Result{Outcome: runrecord.OutcomeInfraFailure, Evidence: "no answer from the provider"}, nil
	}
	return runrecord.Result{Outcome: runrecord.OutcomeCompleted, FinalMessage: "OK", Usage: runrecord.Usage{Total: 1}}, nil
}

// A CLI that looks names up in its role's view passes the preflight if it
// still takes its turn, and the operator is told which names it tried;
// if it fails, the failure says so too.
func TestThePreflightSaysWhichNamesACLITriedToLookUp(t *testing.T) {
	// A missing prerequisite fails the test: a skip would pass unchecked.
	if err := sandbox.NamespacesAvailable(); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("getent"); err != nil {
		t.Fatal("no getent on this machine (Debian's libc-bin has it)")
	}
	confine := func(work, state string) sandbox.Executor {
		return sandbox.Confined{Inner: sandbox.Local{KillGrace: 200 * time.Millisecond},
			View: sandbox.View{Write: []string{work, state}}}
	}
	dir := t.TempDir()
	var notes bytes.Buffer
	names := []string{"models.example", "telemetry.example", "models.example"}
	start := time.Now()
	err := Run(context.Background(), dir, []Target{{Label: "passes", Harness: lookupCLI{names: names, answer: true},
		Confine: confine, Notes: &notes}})
	if err != nil {
		t.Fatalf("a CLI that tried DNS but took its turn failed the preflight: %v", err)
	}
	t.Logf("took %s", time.Since(start))
	want := `preflight: passes: lookupcli tried the network: DNS lookups of "models.example", "telemetry.example"`
	if !strings.HasPrefix(notes.String(), want) || strings.Count(notes.String(), "\n") != 1 {
		t.Fatalf("notes:\n%s\nwant one line starting %q", notes.String(), want)
	}

	notes.Reset()
	err = Run(context.Background(), dir, []Target{{Label: "fails", Harness: lookupCLI{names: []string{"api.example"}},
		Confine: confine, Notes: &notes}})
	var pe Error
	if !errors.As(err, &pe) || len(pe) != 1 || !strings.Contains(pe[0].Cause, `lookupcli tried the network: a DNS lookup of "api.example"`) {
		t.Fatalf("got %v, want a failure saying which name the CLI tried", err)
	}
	if notes.Len() != 0 {
		t.Fatalf("a failure's note belongs in its cause, got notes %q", notes.String())
	}

	notes.Reset()
	if err := Run(context.Background(), dir, []Target{{Label: "quiet", Harness: lookupCLI{answer: true}, Confine: confine, Notes: &notes}}); err != nil || notes.Len() != 0 {
		t.Fatalf("a CLI that looked nothing up: %v, notes %q", err, notes.String())
	}
}

// The note quotes each name (the agent chooses them) and bounds the list.
func TestTheNetworkNoteQuotesAndBoundsTheNames(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	log.WriteString("some output\n")
	log.WriteString(sandbox.DNSRefusedLine + `"evil\n\"name"` + "\n")
	for i := 0; i < 20; i++ {
		log.WriteString(sandbox.DNSRefusedLine + `"n` + strings.Repeat("x", i) + `.example"` + "\n")
	}
	path := dir + "/stderr.log"
	if err := os.WriteFile(path, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := NetworkNote("codex", path)
	if !strings.HasPrefix(got, `codex tried the network: DNS lookups of "evil\n\"name", "n.example", `) ||
		!strings.Contains(got, ", and 13 more") || strings.Contains(got, "\n") {
		t.Fatalf("note %q", got)
	}
	if NetworkNote("codex", dir+"/none.log") != "" {
		t.Fatal("a missing log has no note")
	}
}
