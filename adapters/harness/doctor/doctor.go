// Package doctor checks that the machine can run an experiment: each
// harness CLI installed at the version its configuration names (default:
// the catalogue's pin) with its provider key variable set (the value is
// never printed), which of the catalogue's pinned package@version installs
// are there, Docker reachable through its API, git, node/npm, and what
// GameCraft-Bench's verifier needs (Godot 4, Xvfb, ffmpeg, xdotool, python3,
// user+mount namespaces, the judge's key). Every failed check carries a
// one-line fix.
package doctor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/client"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/internal/linewrap"
	"github.com/hoh-research/hoh/runrecord"
)

// Fixes for the common problems.
const (
	FixInstall    = "run hoh harnesses install (in a checkout: scripts/install-harnesses.sh)"
	FixDocker     = "run scripts/start-dockerd.sh (needs root and the docker.io package)"
	FixGit        = "apt-get install git"
	FixNode       = "apt-get install nodejs npm"
	FixRipgrep    = "apt-get install ripgrep"
	FixNamespaces = "sysctl -w kernel.unprivileged_userns_clone=1 user.max_user_namespaces=15000 (and kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), or run container benchmarks only"
)

// Target is one harness to check.
type Target struct {
	Label   string // the experiment's label, or the kind
	Kind    string // codex, claude, opencode, pi, command
	Binary  string // override; empty means the kind's catalogue executable
	Version string // override; empty means the kind's catalogue pin
	// Package is the npm package of a command harness's CLI (its spec's
	// package:); catalogued kinds take the catalogue's.
	Package string
	KeyEnv  string // provider key variable; empty: not checked
	// Scripted: the provider is the scripted test double, which needs no key.
	Scripted bool
}

// Env is how checks look at the machine (replaced in tests).
type Env struct {
	// FindCLI locates executable exe of npm package pkg at version
	// (cliinstall.FindVersion); with pkg empty, by name alone
	// (cliinstall.Find).
	FindCLI func(pkg, exe, version string) (string, error)
	// InstalledVersion reads an installed CLI's npm version.
	InstalledVersion func(bin string) (string, error)
	LookPath         func(name string) (string, error)
	Getenv           func(name string) string
	// PingDocker reaches the Docker Engine API.
	PingDocker func(ctx context.Context) error
	// DockerEngine names the engine behind the Docker API (EngineName);
	// nil: not named.
	DockerEngine func(ctx context.Context) (string, error)
	// Output runs a tool's version command.
	Output func(ctx context.Context, bin string, args ...string) (string, error)
	// Namespaces says whether host role invocations can be confined
	// (sandbox.NamespacesAvailable).
	Namespaces func() error
	// ToolSources are where the CLIs are looked for, in order
	// (cliinstall.Sources); nil: not shown.
	ToolSources func() []cliinstall.Source
}

// System is the real machine.
func System() Env {
	return Env{
		FindCLI: func(pkg, exe, version string) (string, error) {
			if pkg == "" || version == "" {
				return cliinstall.Find(exe)
			}
			return cliinstall.FindVersion(pkg, exe, version)
		},
		InstalledVersion: cliinstall.InstalledVersion,
		LookPath:         exec.LookPath,
		Getenv:           os.Getenv,
		PingDocker: func(ctx context.Context) error {
			c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Ping(ctx)
			return err
		},
		DockerEngine: func(ctx context.Context) (string, error) {
			c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
			if err != nil {
				return "", err
			}
			defer c.Close()
			e, err := docker.DetectEngine(ctx, c)
			if err != nil {
				return "", err
			}
			return EngineDetail(e), nil
		},
		Output: func(ctx context.Context, bin string, args ...string) (string, error) {
			out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
			return string(out), err
		},
		Namespaces:  sandbox.NamespacesAvailable,
		ToolSources: cliinstall.Sources,
	}
}

// Check is one finding.
type Check struct {
	Name     string
	OK       bool
	Required bool
	Detail   string
	Fix      string // one line; empty when OK
}

// Report is the outcome of Run.
type Report struct{ Checks []Check }

// Failed reports whether a required check failed.
func (r Report) Failed() bool {
	for _, c := range r.Checks {
		if c.Required && !c.OK {
			return true
		}
	}
	return false
}

// Write prints one line per check (and its fix), then a summary, each on
// one line however long.
func (r Report) Write(w io.Writer) { r.WriteWidth(w, 0) }

// WriteWidth is Write with every line wrapped to cols columns (0: no
// wrapping): a detail goes beside its check's name while its words fit
// there, else under it; a path longer than a whole line is cut after a
// slash. Only whitespace differs from Write's output.
func (r Report) WriteWidth(w io.Writer, cols int) {
	nameW := 0 // the names' column, no wider than the built-in checks' longest
	for _, c := range r.Checks {
		nameW = min(max(nameW, len(c.Name)), maxNameColumn)
	}
	for _, c := range r.Checks {
		mark := "ok  "
		switch {
		case !c.OK && c.Required:
			mark = "FAIL"
		case !c.OK:
			mark = "warn"
		}
		head := fmt.Sprintf("%s %-*s ", mark, nameW, c.Name)
		linewrap.Write(w, head, c.Detail, cols, detailIndent)
		if !c.OK && c.Fix != "" {
			linewrap.Write(w, "     fix: ", c.Fix, cols, detailIndent)
		}
	}
	if r.Failed() {
		fmt.Fprintln(w, "doctor: required checks failed")
	} else {
		fmt.Fprintln(w, "doctor: all required checks passed")
	}
}

// maxNameColumn is the names' column at most: a longer name (a config's
// label) pushes only its own detail right, or under it.
const maxNameColumn = 34

// detailIndent is where a detail that does not fit beside its name starts
// on the lines under it.
const detailIndent = "       "

// Run checks every target, the catalogue's pinned installs, Docker, git,
// node/npm, and what GameCraft-Bench's verifier needs (warnings only).
func Run(ctx context.Context, env Env, targets []Target) Report {
	return RunWith(ctx, env, targets, GameCraft{})
}

// RunWith is Run with GameCraft-Bench's settings (required when a config
// runs it).
func RunWith(ctx context.Context, env Env, targets []Target, gc GameCraft) Report {
	var r Report
	for _, t := range targets {
		r.Checks = append(r.Checks, checkHarness(env, t)...)
	}
	r.Checks = append(r.Checks, checkToolSources(env)...)
	r.Checks = append(r.Checks, checkPins(env)...)
	r.Checks = append(r.Checks, checkDocker(ctx, env))
	r.Checks = append(r.Checks, checkNamespaces(env))
	r.Checks = append(r.Checks, checkTool(env, "git", "git", true, "repositories for stage commits and diffs", FixGit))
	r.Checks = append(r.Checks, checkTool(env, "node", "node", true, "runs the npm-installed harness CLIs", FixNode))
	r.Checks = append(r.Checks, checkTool(env, "npm", "npm", true, "installs the harness CLIs", FixNode))
	r.Checks = append(r.Checks, checkGameCraft(ctx, env, gc)...)
	return r
}

func checkHarness(env Env, t Target) []Check {
	name := t.Label
	if name == "" {
		name = t.Kind
	}
	var out []Check
	cli, _ := catalogue.Lookup(t.Kind)
	bin, pkg := t.Binary, t.Package
	if bin == "" {
		bin = cli.Executable
	}
	if pkg == "" {
		pkg = cli.Package
	}
	want := t.Version
	if want == "" {
		want = cli.Pin()
	}
	if err := cli.Check(t.Version); cli.Package != "" && err != nil {
		return append(out, Check{Name: name + ": version", Required: true, Detail: err.Error(),
			Fix: "name a supported version in the config (`hoh harnesses` lists the pins)"})
	}
	if bin == "" { // the command harness: its YAML spec names the CLI
		out = append(out, Check{Name: name + ": installed", OK: true, Required: true,
			Detail: "command harness: the CLI is named in its YAML spec, not checked here"})
	} else {
		lookPkg := pkg
		if t.Binary != "" && t.Package == "" {
			lookPkg = "" // a configured binary is found by its name
		}
		path, err := findBinary(env, lookPkg, bin, want)
		switch {
		case err != nil:
			what := bin
			if pkg != "" && want != "" {
				what = fmt.Sprintf("%s (%s@%s)", bin, pkg, want)
			}
			out = append(out, Check{Name: name + ": installed", Required: true,
				Detail: what + " not found", Fix: FixInstall})
		case want == "":
			out = append(out, Check{Name: name + ": installed", OK: true, Required: true, Detail: path})
		default:
			v, err := env.InstalledVersion(path)
			switch {
			case err != nil:
				out = append(out, Check{Name: name + ": version", Required: true,
					Detail: fmt.Sprintf("%s: cannot read its npm version (%v), want %s", path, err, want), Fix: FixInstall})
			case v != want:
				out = append(out, Check{Name: name + ": version", Required: true,
					Detail: fmt.Sprintf("%s is %s, pinned %s", path, v, want), Fix: FixInstall})
			default:
				out = append(out, Check{Name: name + ": version", OK: true, Required: true,
					Detail: fmt.Sprintf("%s %s (%s)", path, v, pinNote(cli, v))})
			}
		}
	}
	out = append(out, checkKey(env, t, name))
	if t.Kind == "opencode" {
		// Without rg OpenCode fetches ripgrep from GitHub at start, which a
		// role's view (no network but the model endpoint) refuses.
		out = append(out, checkTool(env, name+": ripgrep", "rg", false,
			"OpenCode downloads ripgrep from GitHub when none is on PATH; a role's view has no network", FixRipgrep))
	}
	return out
}

// checkKey says whether the harness's provider key variable is set (never
// what it holds); a scripted provider needs none.
func checkKey(env Env, t Target, name string) Check {
	switch {
	case t.Scripted:
		return Check{Name: name + ": key", OK: true, Required: true,
			Detail: "scripted test-double provider: no key needed"}
	case t.KeyEnv == "":
		return Check{Name: name + ": key", OK: true, Required: false,
			Detail: "no provider key variable named (pass --key-env or an experiment config)"}
	case runrecord.EnvNameProblem(t.KeyEnv) != "":
		return Check{Name: name + ": key", Required: true,
			Detail: "the key variable " + runrecord.EnvNameProblem(t.KeyEnv), Fix: "export OPENAI_API_KEY=<your API key>, and name OPENAI_API_KEY as the key variable"}
	case env.Getenv(t.KeyEnv) == "":
		return Check{Name: name + ": key", Required: true,
			Detail: "$" + t.KeyEnv + " is not set", Fix: "export " + t.KeyEnv + "=<your API key>"}
	default:
		// Say it is there, never what it is.
		return Check{Name: name + ": key", OK: true, Required: true, Detail: "$" + t.KeyEnv + " is set"}
	}
}

// pinNote says how version relates to the catalogue's pins.
func pinNote(cli harness.CLI, version string) string {
	switch {
	case len(cli.Pins) == 0:
		return "pinned by its spec"
	case version == cli.Paper:
		return "pinned, the paper's version"
	case cli.Pinned(version):
		return "pinned"
	default:
		return "supported, not a tested pin (tested: " + strings.Join(cli.Pins, ", ") + ")"
	}
}

// findBinary finds bin by its path, else as the executable of pkg at
// version (pkg empty: by name alone).
func findBinary(env Env, pkg, bin, version string) (string, error) {
	if filepath.IsAbs(bin) {
		if st, err := os.Stat(bin); err != nil || st.IsDir() {
			return "", fmt.Errorf("%s not found", bin)
		}
		return bin, nil
	}
	if strings.Contains(bin, "/") {
		return env.LookPath(bin)
	}
	return env.FindCLI(pkg, bin, version)
}

// checkToolSources shows where the CLIs are looked for, in order, and
// which of those directories exist; PATH comes last.
func checkToolSources(env Env) []Check {
	if env.ToolSources == nil {
		return nil
	}
	var out []Check
	for i, s := range env.ToolSources() {
		c := Check{Name: fmt.Sprintf("tools %d: %s", i+1, s.Why), OK: true, Detail: s.Dir + " (absent)"}
		if st, err := os.Stat(s.Dir); err == nil && st.IsDir() {
			c.Detail = s.Dir
		}
		out = append(out, c)
	}
	return append(out, Check{Name: fmt.Sprintf("tools %d: PATH", len(out)+1), OK: true,
		Detail: "an executable of exactly the pinned package@version"})
}

// checkPins lists every pinned package@version of the catalogue as
// installed or not: what scripts/install-harnesses.sh installs side by
// side. Only the targets' versions are required; a missing pin is a warning.
// An install inside a tools directory listed above is named by its number:
// its path is <dir>/<package>@<version>/node_modules/.bin/<executable>.
func checkPins(env Env) []Check {
	var out []Check
	var sources []cliinstall.Source
	if env.ToolSources != nil {
		sources = env.ToolSources()
	}
	where := func(path string) string {
		for i, s := range sources {
			if strings.HasPrefix(path, s.Dir+string(filepath.Separator)) {
				return fmt.Sprintf("installed in tools %d", i+1)
			}
		}
		return "installed, " + path
	}
	for _, cli := range catalogue.All() {
		for _, pin := range cli.Pins {
			c := Check{Name: fmt.Sprintf("pin %s %s", cli.Kind, pin)}
			label := cli.Package + "@" + pin
			if pin == cli.Paper {
				label += " (the paper's version)"
			}
			path, err := env.FindCLI(cli.Package, cli.Executable, pin)
			v := ""
			if err == nil {
				v, err = env.InstalledVersion(path)
			}
			switch {
			case err != nil:
				c.Detail, c.Fix = label+": not installed", FixInstall
			case v != pin:
				c.Detail, c.Fix = fmt.Sprintf("%s: not installed (%s is %s)", label, path, v), FixInstall
			default:
				c.OK, c.Detail = true, label+": "+where(path)
			}
			out = append(out, c)
		}
	}
	return out
}

func checkDocker(ctx context.Context, env Env) Check {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := env.PingDocker(ctx); err != nil {
		return Check{Name: "docker", Required: true, Detail: "Engine API not reachable: " + firstLine(err.Error()), Fix: FixDocker}
	}
	detail, lacks := "Engine API answers", ""
	if env.DockerEngine != nil {
		if name, err := env.DockerEngine(ctx); err == nil {
			name, lacks, _ = strings.Cut(name, "; lacks: ")
			detail += ": " + name
		}
	}
	if env.Getenv != nil {
		if h := env.Getenv("DOCKER_HOST"); h != "" {
			detail += " at DOCKER_HOST=" + h
		}
	}
	if lacks != "" {
		detail += "; lacks: " + lacks
	}
	return Check{Name: "docker", OK: true, Required: true, Detail: detail}
}

// EngineDetail names the engine and what it lacks that hoh would use.
func EngineDetail(e docker.Engine) string {
	d := e.Name()
	if l := e.Lacks(); len(l) > 0 {
		d += "; lacks: " + strings.Join(l, "; ")
	}
	return d
}

// EngineName is the engine behind a Docker API from its /version and
// /info security options: Podman's Docker-compatible service names itself
// as a component; "rootless" when the daemon runs without root.
func EngineName(v types.Version, securityOptions []string) string {
	name := "Docker Engine " + v.Version
	for _, c := range v.Components {
		if strings.Contains(c.Name, "Podman") {
			name = "Podman " + c.Version
		}
	}
	for _, o := range securityOptions {
		if strings.Contains(o, "name=rootless") {
			return name + " (rootless)"
		}
	}
	return name
}

// checkNamespaces: host trials (built-in, GameCraft-Bench) confine every
// role invocation in user + mount + PID namespaces and are refused without.
func checkNamespaces(env Env) Check {
	const name = "user namespaces"
	if env.Namespaces == nil {
		return Check{Name: name, Required: true, Detail: "not checked", Fix: FixNamespaces}
	}
	if err := env.Namespaces(); err != nil {
		return Check{Name: name, Required: true, Detail: "host role invocations cannot be confined, host trials are refused: " + firstLine(err.Error()), Fix: FixNamespaces}
	}
	return Check{Name: name, OK: true, Required: true, Detail: "host role invocations are confined to their contract"}
}

func checkTool(env Env, name, bin string, required bool, why, fix string) Check {
	p, err := env.LookPath(bin)
	if err != nil {
		return Check{Name: name, Required: required, Detail: bin + " not on PATH (" + why + ")", Fix: fix}
	}
	return Check{Name: name, OK: true, Required: required, Detail: p}
}

var godotVersion = regexp.MustCompile(`\b(\d+)\.(\d+)`)

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// lastLine is the last non-empty line of s: a Python traceback's, the
// exception ("ModuleNotFoundError: No module named 'openai'").
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
