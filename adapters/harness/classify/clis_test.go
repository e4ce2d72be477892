package classify_test

// One table of failure cases run through the classification of all four
// CLIs. Each case holds what each real CLI printed (testdata/clis/CASE/CLI.*:
// stdout events, stderr, exit code), recorded from the real CLIs against the
// scripted test-double provider (status faults) or against a closed port, a
// host that does not resolve, a TLS client talking to plain HTTP and a
// listener that resets the connection. Every CLI must reach the same class.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness/claude"
	"github.com/hoh-research/hoh/adapters/harness/cliproc"
	"github.com/hoh-research/hoh/adapters/harness/codex"
	"github.com/hoh-research/hoh/adapters/harness/opencode"
	"github.com/hoh-research/hoh/adapters/harness/pi"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

type cli struct {
	kind  string
	parse func(raw []json.RawMessage) cliproc.Report
	// stop is the adapter's Launch.Stop, replayed over the recorded lines.
	stop func() func(string) string
}

var clis = []cli{
	{"codex", codex.ParseEvents, codex.StopWhenUnreachable},
	{"claude", claude.ParseEvents, nil},
	{"opencode", opencode.ParseEvents, nil},
	{"pi", pi.ParseEvents, nil},
}

// recorded reads what kind printed in case dir as the Process the adapter saw.
func recorded(t *testing.T, dir string, c cli) cliproc.Process {
	t.Helper()
	out, err := os.ReadFile(filepath.Join(dir, c.kind+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	exit, err := os.ReadFile(filepath.Join(dir, c.kind+".exit"))
	if err != nil {
		t.Fatal(err)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(exit)))
	if err != nil {
		t.Fatal(err)
	}
	stderr, _ := os.ReadFile(filepath.Join(dir, c.kind+".stderr"))
	p := cliproc.Process{Exit: sandbox.Exit{Code: code}, StderrTail: string(stderr)}
	if len(out) > 0 {
		p.Lines = strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	}
	if c.stop != nil {
		stop := c.stop()
		for _, l := range p.Lines {
			if why := stop(l); why != "" {
				p.Stopped = why
				p.Exit.Detail = "cancelled: context canceled"
				break
			}
		}
	}
	return p
}

func outcome(c cli, p cliproc.Process) (runrecord.Outcome, string) {
	return cliproc.Outcome(p, c.parse(cliproc.JSONLines(p.Lines)))
}

func TestEveryCLIClassifiesTheSameFailureAlike(t *testing.T) {
	cases := []struct {
		dir  string
		want runrecord.Outcome
	}{
		{"success", runrecord.OutcomeCompleted},
		{"status-500", runrecord.OutcomeInfraFailure},
		{"status-529-overloaded", runrecord.OutcomeInfraFailure},
		{"status-401", runrecord.OutcomeInfraFailure},
		{"status-400", runrecord.OutcomeAgentFailure}, // the request itself was rejected
		{"refused", runrecord.OutcomeInfraFailure},
		{"dns", runrecord.OutcomeInfraFailure},
		{"tls", runrecord.OutcomeInfraFailure},
		{"reset", runrecord.OutcomeInfraFailure},
	}
	for _, tc := range cases {
		for _, c := range clis {
			p := recorded(t, filepath.Join("testdata", "clis", tc.dir), c)
			if got, evidence := outcome(c, p); got != tc.want {
				t.Errorf("%s/%s: %s (%s), want %s", tc.dir, c.kind, got, evidence, tc.want)
			}
		}
	}
}

// Cases without a recorded stream: the exit and stderr decide, the same way
// for every CLI.
func TestEveryCLIReadsTheExitAndStderrAlike(t *testing.T) {
	cases := []struct {
		name   string
		exit   sandbox.Exit
		stderr string
		want   runrecord.Outcome
	}{
		{"exit 0, no turn, fetch failed", sandbox.Exit{Code: 0}, "TypeError: fetch failed", runrecord.OutcomeInfraFailure},
		{"exit 0, no turn, socket hang up", sandbox.Exit{Code: 0}, "Error: socket hang up", runrecord.OutcomeInfraFailure},
		{"exit 0, no turn, nothing said", sandbox.Exit{Code: 0}, "", runrecord.OutcomeAgentFailure},
		{"crash, connect ECONNREFUSED", sandbox.Exit{Code: 1}, "Error: connect ECONNREFUSED 127.0.0.1:1", runrecord.OutcomeInfraFailure},
		{"crash, getaddrinfo ENOTFOUND", sandbox.Exit{Code: 1}, "Error: getaddrinfo ENOTFOUND api.example.invalid", runrecord.OutcomeInfraFailure},
		{"crash, network error", sandbox.Exit{Code: 1}, "network error", runrecord.OutcomeInfraFailure},
		{"crash, bad flag", sandbox.Exit{Code: 2}, "error: unknown option --frobnicate", runrecord.OutcomeAgentFailure},
		{"wall timeout", sandbox.Exit{Code: -1, TimedOut: true, Detail: "killed after wall timeout 5s"}, "", runrecord.OutcomeTimeout},
		{"idle timeout", sandbox.Exit{Code: -1, Idle: true, Detail: "killed after 5s without output"}, "", runrecord.OutcomeTimeout},
	}
	for _, tc := range cases {
		for _, c := range clis {
			if got, evidence := outcome(c, cliproc.Process{Exit: tc.exit, StderrTail: tc.stderr}); got != tc.want {
				t.Errorf("%s/%s: %s (%s), want %s", tc.name, c.kind, got, evidence, tc.want)
			}
		}
	}
}

// A timeout keeps precedence over the recorded errors, for every CLI.
func TestTimeoutWinsOverRecordedErrors(t *testing.T) {
	for _, c := range clis {
		p := recorded(t, filepath.Join("testdata", "clis", "status-500"), c)
		p.Exit = sandbox.Exit{Code: -1, TimedOut: true, Detail: "killed after wall timeout 5s"}
		p.Stopped = ""
		if got, _ := outcome(c, p); got != runrecord.OutcomeTimeout {
			t.Errorf("%s: %s, want timeout", c.kind, got)
		}
	}
}
