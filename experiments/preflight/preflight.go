// Package preflight finds, before any trial runs, what would otherwise turn
// every trial of a configuration into a fault recorded as a result: a CLI
// that is missing or at another version (Harnesses, at hoh run --check), an
// endpoint nobody answers at, and a CLI that rejects the config hoh writes
// for it or gets no model answer (Run: one trivial turn per configuration,
// with exactly the harness, provider, environment and key the trials use).
package preflight

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/runrecord"
)

// Prompt is the preflight turn. It carries scripted.PreflightMarker so the
// scripted test double answers it without spending a script entry.
const Prompt = scripted.PreflightMarker + ": reply with the single word OK. Do not use any tool."

// Timeout bounds the preflight turn of one configuration.
const Timeout = 3 * time.Minute

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+`)

// Harnesses checks that each configuration's harness can be built (binary
// found, provider accepted) and that its binary runs and reports the
// expected version. It returns one line per configuration for the operator
// and the problems, each at the line of its configuration.
func Harnesses(ctx context.Context, e *config.Experiment) ([]string, config.Problems) {
	var lines []string
	var ps config.Problems
	for i, c := range e.Configs {
		key := fmt.Sprintf("configs[%d]", i)
		line, p := harnessOf(ctx, e, key, c.Label, "", c)
		lines, ps = append(lines, line...), append(ps, p...)
		// A role team's every role's CLI is checked, named by its role.
		for _, role := range runrecord.Roles {
			if c.Roles.Agent(role) == nil {
				continue
			}
			line, p := harnessOf(ctx, e, fmt.Sprintf("%s.roles.%s", key, role), c.Label, role, c.ForRole(role))
			lines, ps = append(lines, line...), append(ps, p...)
		}
	}
	return lines, ps
}

// harnessOf checks one agent's CLI: the configuration's own (role ""), or
// a role's; key is its config key.
func harnessOf(ctx context.Context, e *config.Experiment, key, label string, role runrecord.Role, c config.HarnessModel) ([]string, config.Problems) {
	name, quoted := "config "+label, fmt.Sprintf("config %q", label)
	if role != "" {
		name, quoted = name+" role "+string(role), quoted+" role "+string(role)
	}
	at := key + ".harness"
	if c.Binary != "" {
		at = key + ".binary"
	}
	spec := c.HarnessSpec()
	if c.IsScripted() {
		spec.Provider.BaseURL = "http://127.0.0.1:1/v1" // chosen when the run starts
	}
	if _, err := catalogue.New(spec); err != nil {
		return nil, config.Problems{e.Problem(at, "%s: %v", quoted, err)}
	}
	cli, _ := catalogue.Lookup(c.Harness)
	exe := cli.Executable
	if exe == "" {
		return []string{fmt.Sprintf("%s: harness %s (described in YAML; version not probed)", name, c.Harness)}, nil
	}
	want := c.Version
	if want == "" {
		want = cli.Pin() // an empty version in the config means the catalogue's pin
	}
	bin := c.Binary
	var err error
	if bin == "" {
		bin, err = cliinstall.FindVersion(cli.Package, exe, want)
	} else {
		bin, err = exec.LookPath(bin)
	}
	if err != nil {
		return nil, config.Problems{e.Problem(at, "%s: %v", quoted, err)}
	}
	got, err := Version(ctx, bin)
	switch {
	case err != nil:
		return nil, config.Problems{e.Problem(at, "%s: %s --version: %v", quoted, bin, err)}
	case got != want:
		return nil, config.Problems{e.Problem(at, "%s: %s reports version %s, want %s: %s", quoted, bin, got, want, cliinstall.InstallHint)}
	}
	return []string{fmt.Sprintf("%s: %s %s (%s)", name, c.Harness, got, bin)}, nil
}

// Version runs bin --version with a throw-away HOME (the CLIs write state
// even then) and returns the first x.y.z it prints.
func Version(ctx context.Context, bin string) (string, error) {
	home, err := os.MkdirTemp("", "hoh-version-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	argv := cliinstall.Command([]string{bin, "--version"})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, firstLine(string(out)))
	}
	v := versionRE.FindString(string(out))
	if v == "" {
		return "", fmt.Errorf("no version in its output %q", firstLine(string(out)))
	}
	return v, nil
}

// Target is one configuration as the run will use it.
type Target struct {
	Label    string
	Harness  harness.Harness
	Provider harness.Provider // BaseURL as the trials see it
	Env      []string         // KEY=VALUE the trials get (the provider key)
	Secrets  []string
	// Reach is the endpoint the host connects to first; default
	// Provider.BaseURL (which, in a container, is the in-container relay);
	// neither: nothing to reach.
	Reach string
	// Exec runs the CLI where the trials run it (a task container); nil:
	// the host, through Confine when set.
	Exec sandbox.Executor
	// Confine, for a host benchmark, is the executor a role invocation
	// with this working and state directory gets (trial.RoleExecutor: the
	// confined view): the turn runs exactly as a role's would.
	Confine func(workDir, stateDir string) sandbox.Executor
	// Idle is the trials' idle timeout (0: Timeout): a provider silent
	// that long fails the turn as it would fail a role.
	Idle time.Duration
	// Settle, when set, waits until the relay has logged every response
	// it forwarded (a CLI may exit before the relay reads a stream's end).
	Settle func()
	// Dir holds the turn's working and state directories; it must be at
	// the same path for Exec (default: beside the logs).
	Dir string
	// ServedLog is hoh's relay log of the turn's traffic: when set, the
	// turn passes only if the relay saw the model answer it.
	ServedLog string
	// Notes, when set, gets a line for what a passing turn did that the
	// operator should know (a CLI that tried the network: NetworkNote).
	Notes io.Writer
}

// Failure is why one configuration cannot run.
type Failure struct {
	Label string
	Cause string
}

// Error lists every configuration that failed its preflight.
type Error []Failure

func (e Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "preflight failed for %d configuration(s); no trial was started (--preflight=off skips this check):", len(e))
	for _, f := range e {
		fmt.Fprintf(&b, "\n  config %s: %s", f.Label, f.Cause)
	}
	return b.String()
}

// Run checks each target: its endpoint accepts a connection, and one
// trivial turn of its CLI completes with a model answer. Logs of the turn go
// to dir/<label>; the CLI's state is deleted afterwards.
func Run(ctx context.Context, dir string, targets []Target) error {
	var fails Error
	for _, t := range targets {
		cause, note := check(ctx, dir, t)
		if cause == "" && note != "" && t.Notes != nil {
			fmt.Fprintf(t.Notes, "preflight: %s: %s\n", t.Label, note)
		}
		if cause != "" {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fails = append(fails, Failure{Label: t.Label, Cause: cause})
		}
	}
	if len(fails) > 0 {
		return fails
	}
	return nil
}

// check takes t's turn: cause is why it failed (""; it passed), note what
// the operator should know of it either way (a failure's cause has it).
func check(ctx context.Context, dir string, t Target) (cause, note string) {
	cause = turn(ctx, dir, t, &note)
	if cause != "" && note != "" {
		cause += "; " + note
	}
	return cause, note
}

// turn is check's body; once the CLI ran, note is set from its stderr.
func turn(ctx context.Context, dir string, t Target, note *string) string {
	reach := t.Reach
	if reach == "" {
		reach = t.Provider.BaseURL
	}
	// A harness with no endpoint (provider.Offline: in process) reaches
	// no provider; its turn is still taken.
	if reach != "" {
		if err := Reach(ctx, reach); err != nil {
			return err.Error()
		}
	}
	// State beside the logs, as a trial's is (not under /tmp, where Codex
	// refuses to place its helpers); deleted since it may hold the key.
	stateRoot := dir
	if t.Dir != "" {
		stateRoot = t.Dir
	}
	if err := os.MkdirAll(stateRoot, 0o755); err != nil {
		return err.Error()
	}
	tmp, err := os.MkdirTemp(stateRoot, ".state-"+t.Label+"-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err.Error()
	}
	logDir := filepath.Join(dir, t.Label)
	os.RemoveAll(logDir) // a previous run's preflight
	idle := Timeout
	if t.Idle > 0 && t.Idle < idle {
		idle = t.Idle
	}
	state := filepath.Join(tmp, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err.Error()
	}
	inv := harness.Invocation{Role: runrecord.RolePlanner, Access: harness.AccessReadOnly, Prompt: Prompt,
		WorkDir: work, StateDir: state, LogDir: logDir,
		WallTimeout: Timeout, IdleTimeout: idle, Env: t.Env, Secrets: t.Secrets, Exec: t.Exec}
	where := fmt.Sprintf(" (%s %s at %s; logs in %s)", t.Harness.Name(), t.Provider.API, t.Provider.BaseURL, logDir)
	switch {
	case t.Exec != nil:
		where = fmt.Sprintf(" (%s %s at %s inside the task container; logs in %s)", t.Harness.Name(), t.Provider.API, t.Provider.BaseURL, logDir)
	case t.Confine != nil:
		inv.Exec = t.Confine(work, state)
		where = fmt.Sprintf(" (%s %s at %s in a role's confined view; logs in %s)", t.Harness.Name(), t.Provider.API, t.Provider.BaseURL, logDir)
	}
	started := time.Now().UTC()
	res, err := t.Harness.Run(ctx, inv)
	*note = NetworkNote(t.Harness.Name(), filepath.Join(logDir, runrecord.StderrLog))
	if err != nil {
		return fmt.Sprintf("%s could not be started: %v", t.Harness.Name(), err)
	}
	// The relay's view first: a turn without a model response is the
	// provider's or the CLI's start-up's, whatever the CLI says.
	if t.Settle != nil {
		t.Settle()
	}
	if t.ServedLog != "" {
		if tr, err := served.Of(t.ServedLog, "", started); err == nil {
			if cause, ev := tr.NoTurn(idle); cause != "" {
				return fmt.Sprintf("%s [%s]; the CLI's own account: %s: %s%s", ev, cause, res.Outcome, firstLine(res.Evidence), where)
			}
		}
	}
	switch {
	case res.Outcome != runrecord.OutcomeCompleted:
		return fmt.Sprintf("one trivial turn ended as %s: %s%s", res.Outcome, firstLine(res.Evidence), where)
	case res.Usage.Total == 0 && strings.TrimSpace(res.FinalMessage) == "":
		return "the CLI exited without any model answer (no tokens, no message)" + where
	case t.ServedLog != "" && !relayAnswered(t.ServedLog, started):
		return "the CLI reported an answer, but hoh's relay saw none" + where
	}
	return ""
}

// maxNoted bounds the names a note lists (the CLI chooses them).
const maxNoted = 8

// NetworkNote says which names the CLI tried to look up, as its view's
// DNS sink reported them on its stderr (sandbox.DNSRefusedLine): a view has
// no network, so such a CLI waits for nothing, but may miss what it
// wanted. "" when there were none (or the CLI ran outside a view).
func NetworkNote(cli, stderrLog string) string {
	data, err := os.ReadFile(stderrLog)
	if err != nil {
		return ""
	}
	names := sandbox.DNSLookups(string(data))
	if len(names) == 0 {
		return ""
	}
	var quoted []string
	for i, n := range names {
		if i == maxNoted {
			quoted = append(quoted, fmt.Sprintf("and %d more", len(names)-maxNoted))
			break
		}
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	what := "a DNS lookup of "
	if len(names) > 1 {
		what = "DNS lookups of "
	}
	return fmt.Sprintf("%s tried the network: %s%s (refused in its view, which has no network)", cli, what, strings.Join(quoted, ", "))
}

func relayAnswered(log string, since time.Time) bool {
	ok, _ := served.Answered(log, "", since)
	return ok
}

// Reach opens a TCP connection to the host of baseURL.
func Reach(ctx context.Context, baseURL string) error {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("provider base_url %q is not a URL", baseURL)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return fmt.Errorf("cannot reach the provider at %s: %v", baseURL, err)
	}
	c.Close()
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
