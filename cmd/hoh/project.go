package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/analysis/figures"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/project"
	"github.com/hoh-research/hoh/internal/textsafe"
	"github.com/hoh-research/hoh/runrecord"
)

func init() {
	register("project", "multi-day project mode: project init|run|status|issues|report|rollback DIR (hoh project -h)", projectCmd)
}

const projectUsage = `Usage:
  hoh project init --spec SPEC.md --repo DIR --harness codex --model MODEL [--roles FILE] [flags]
  hoh project run DIR --loops N [--max-tokens N] [--until TIME | --for DURATION] [--force]
  hoh project status DIR [--json]
  hoh project issues DIR [--format table|csv|jsonl|markdown] [--push-github [--github-repo OWNER/NAME]]
  hoh project report DIR
  hoh project rollback DIR --to-loop N
  hoh plot dynamics --project DIR [--out DIR]`

var projectCommands = []string{"init", "run", "status", "issues", "report", "rollback"}

func projectCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, projectUsage)
		if len(args) == 0 {
			return fmt.Errorf("%w: which project command?", errUsage)
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "init":
		return projectInit(rest, stdout, stderr)
	case "run":
		return projectRun(rest, stdout, stderr)
	case "status":
		return projectStatus(rest, stdout, stderr)
	case "issues":
		return projectIssues(rest, stdout, stderr)
	case "report":
		return projectReport(rest, stdout, stderr)
	case "rollback":
		return projectRollback(rest, stdout, stderr)
	}
	fmt.Fprintln(stderr, projectUsage)
	if near := runrecord.Nearest(sub, projectCommands); near != "" {
		return fmt.Errorf("%w: unknown project command %q (did you mean %q?)", errUsage, sub, near)
	}
	return fmt.Errorf("%w: unknown project command %q", errUsage, sub)
}

func projectInit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("project init", stderr)
	spec := fs.String("spec", "", "the specification (Markdown); copied into the project as SPEC.md when outside it")
	repo := fs.String("repo", "", "the project directory (created if missing; its git repository too)")
	var c project.Config
	fs.StringVar(&c.Harness.Harness, "harness", "codex", "harness CLI: "+strings.Join(catalogue.Kinds(), ", "))
	fs.StringVar(&c.Harness.Provider.Model, "model", "", "model name")
	fs.StringVar(&c.Harness.Provider.Name, "provider", "", `provider name ("scripted" for the test double)`)
	fs.StringVar(&c.Harness.Provider.API, "api", "", "wire API: "+strings.Join(harness.APIs, ", ")+" (default: the harness's)")
	fs.StringVar(&c.Harness.Provider.BaseURL, "base-url", "", "provider endpoint")
	fs.StringVar(&c.Harness.Provider.KeyEnv, "key-env", "", "NAME of the environment variable holding the API key (never the key)")
	fs.StringVar(&c.Harness.Binary, "binary", "", "harness CLI binary (default: the pinned install)")
	script := fs.String("scripted", "", "replay script of the scripted test-double provider (sets --provider scripted)")
	rolesFile := fs.String("roles", "", "YAML file of a role team: planner, qa (and developer) agents, each written as a config's roles: entry (docs/roles.md)")
	var checks multiFlag
	fs.Var(&checks, "check", `public runtime check NAME=COMMAND shown to the QA Tester (repeatable; "build" gives the build status)`)
	fs.IntVar(&c.PlannerIssues, "planner-issues", 20, "unresolved and verified issues the Planner sees by name (the rest counted)")
	fs.DurationVar(&c.Timeouts.Planner, "planner-timeout", 30*time.Minute, runrecord.RolePlanner.Display()+" timeout")
	fs.DurationVar(&c.Timeouts.Developer, "developer-timeout", 2*time.Hour, runrecord.RoleDeveloper.Display()+" timeout")
	fs.DurationVar(&c.Timeouts.QA, "qa-timeout", time.Hour, runrecord.RoleQA.Display()+" timeout")
	fs.DurationVar(&c.Timeouts.Idle, "idle-timeout", 10*time.Minute, "time a CLI may stay silent")
	fs.Usage = func() { fmt.Fprintln(stderr, projectUsage); fs.PrintDefaults() }
	dir, err := parseNamed(fs, args)
	if err != nil {
		return err
	}
	if *repo == "" {
		*repo = dir
	}
	if *repo == "" || *spec == "" {
		fs.Usage()
		return fmt.Errorf("%w: --spec and --repo are required", errUsage)
	}
	if p := runrecord.EnvNameProblem(c.Harness.Provider.KeyEnv); p != "" {
		// Refused before anything is written: the project's state would keep it.
		return fmt.Errorf("%w: --key-env %s", errUsage, p)
	}
	for _, ch := range checks {
		name, cmd, ok := strings.Cut(ch, "=")
		if !ok {
			return fmt.Errorf("%w: --check %q: want NAME=COMMAND", errUsage, ch)
		}
		c.Checks = append(c.Checks, project.Check{Name: name, Command: cmd})
	}
	if *script != "" {
		abs, err := filepath.Abs(*script)
		if err != nil {
			return err
		}
		c.Harness.Provider.Name = "scripted"
		c.Harness.Scripted = &config.ScriptedSpec{Script: abs}
		if c.Harness.Provider.KeyEnv == "" {
			c.Harness.Provider.KeyEnv = "HOH_SCRIPTED_KEY"
		}
		if c.Harness.Provider.Model == "" {
			c.Harness.Provider.Model = "scripted-model"
		}
	}
	if *rolesFile != "" {
		// Read and checked as a config's roles: (problems at file:line);
		// its script paths are stored absolute, as --scripted's is.
		if c.Harness.Roles, err = config.LoadRoles(*rolesFile); err != nil {
			return err
		}
	}
	if cli, ok := catalogue.Lookup(c.Harness.Harness); ok && c.Harness.Provider.API == "" {
		c.Harness.Provider.API = cli.DefaultAPI()
	}
	if _, err := project.Init(project.InitOptions{Project: *repo, Spec: *spec, Config: c}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "initialised %s (config %s)\n", *repo, runrecord.ProjectLayout{Project: *repo}.Config())
	return nil
}

func projectRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("project run", stderr)
	loops := fs.Int("loops", 0, "run until the project has completed this many loops (total, not additional)")
	tokens := fs.Int64("max-tokens", 0, "stop before a loop once the project's cumulative tokens reach this (0: no limit)")
	until := fs.String("until", "", "stop before a loop after this time (RFC 3339)")
	forDur := fs.Duration("for", 0, "stop before a loop after this long")
	force := fs.Bool("force", false, "continue although the harness or model changed (recorded)")
	fs.Usage = func() { fmt.Fprintln(stderr, projectUsage); fs.PrintDefaults() }
	dir, err := parseNamed(fs, args)
	if err != nil {
		return err
	}
	if dir == "" || *loops <= 0 {
		fs.Usage()
		return fmt.Errorf("%w: want the project directory and --loops N", errUsage)
	}
	lim := project.RunLimits{Loops: *loops, Tokens: *tokens}
	if *until != "" {
		if lim.Deadline, err = time.Parse(time.RFC3339, *until); err != nil {
			return fmt.Errorf("%w: --until: %v", errUsage, err)
		}
	}
	if *forDur > 0 {
		if d := time.Now().Add(*forDur); lim.Deadline.IsZero() || d.Before(lim.Deadline) {
			lim.Deadline = d
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := project.LoadConfig(dir)
	if err != nil {
		return err
	}
	if c.Scripted() {
		fmt.Fprintln(stdout, "NOTE: the model is the scripted test double: a plumbing check, not a result")
	}
	res, err := project.Run(ctx, dir, project.RunOptions{Limits: lim, Force: *force, Out: stdout})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s completed (%d in this run); stopped: %s\n", plural(res.Loops, "loop"), res.Ran, res.Reason)
	if res.Reason == project.StopInterrupt {
		// As hoh run: say what is kept and how to go on; exit 130.
		resume := shellCommand(append([]string{"project", "run"}, args...))
		fmt.Fprintf(stdout, "every committed stage is kept; the unfinished loop resumes at its next stage\nresume with: %s\n", resume)
		return fmt.Errorf("%w; resume with: %s", errInterrupted, resume)
	}
	return nil
}

func projectStatus(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("project status", stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, projectUsage); fs.PrintDefaults() }
	asJSON := fs.Bool("json", false, "print JSON")
	dir, err := parseNamed(fs, args)
	if err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("%w: want the project directory", errUsage)
	}
	s, err := project.ReadStatus(dir)
	if err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.MarshalIndent(s, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	fmt.Fprintf(stdout, "project %s (%s, model %s)\n", textsafe.Args(s.Name, s.Harness, s.Model)...)
	if s.Team != "" {
		fmt.Fprintf(stdout, "role team: %s\n", textsafe.Term(s.Team))
	}
	fmt.Fprintf(stdout, "loops completed: %d", s.Loops)
	if s.InProgress != "" {
		fmt.Fprintf(stdout, " (unfinished: %s; the next run resumes there)", textsafe.Term(s.InProgress))
	}
	fmt.Fprintf(stdout, "\nissues: %d recorded, %d unresolved (%d reopened)\ntokens: %d\nlast QA status: %s, build: %s\n",
		s.Issues, s.Unresolved, s.Reopened, s.Tokens, dash(s.LastQA), dash(s.LastBuild))
	if s.LastStop != "" {
		fmt.Fprintf(stdout, "last run stopped: %s\n", textsafe.Term(s.LastStop))
	}
	if s.Running {
		fmt.Fprintln(stdout, "a run is in progress")
	}
	return nil
}

// plural is "1 loop", "2 loops".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func projectIssues(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("project issues", stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, projectUsage); fs.PrintDefaults() }
	format := fs.String("format", "table", "table, csv, jsonl or markdown")
	push := fs.Bool("push-github", false, "mirror the table to GitHub issues with the gh CLI (optional)")
	ghRepo := fs.String("github-repo", "", "OWNER/NAME for --push-github (default: gh's repository of the project)")
	dir, err := parseNamed(fs, args)
	if err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("%w: want the project directory", errUsage)
	}
	if _, err := project.LoadConfig(dir); err != nil {
		return err
	}
	issues, err := project.ReadIssues(dir)
	if err != nil {
		return err
	}
	if *push {
		log, err := project.PushGitHub(dir, *ghRepo)
		for _, l := range log {
			fmt.Fprintln(stdout, textsafe.Term(l))
		}
		return err
	}
	switch *format {
	case "csv":
		_, err = stdout.Write(project.IssuesCSV(issues))
	case "jsonl":
		_, err = stdout.Write(runrecord.IssuesJSONL(issues))
	case "markdown", "md":
		_, err = stdout.Write(project.IssuesMarkdown(issues))
	case "table":
		for _, is := range issues {
			fmt.Fprintf(stdout, "%-6s %-8s opened %-3d closed %-12s reopened %-8s %s\n", textsafe.Term(is.ID), is.State, is.Opened,
				dash(ints(is.ClosedLoops)), dash(ints(is.ReopenedLoops)), textsafe.Term(is.Claim))
		}
	default:
		return fmt.Errorf("%w: --format %q: want table, csv, jsonl or markdown", errUsage, *format)
	}
	return err
}

func ints(ls []int) string {
	var s []string
	for _, l := range ls {
		s = append(s, fmt.Sprint(l))
	}
	return strings.Join(s, ",")
}

func projectReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("project report", stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, projectUsage); fs.PrintDefaults() }
	dir, err := parseNamed(fs, args)
	if err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("%w: want the project directory", errUsage)
	}
	p, err := project.Report(dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "wrote", p)
	return nil
}

func projectRollback(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("project rollback", stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, projectUsage); fs.PrintDefaults() }
	to := fs.Int("to-loop", -1, "restore the artifact and state to the end of this loop")
	dir, err := parseNamed(fs, args)
	if err != nil {
		return err
	}
	if dir == "" || *to < 0 {
		return fmt.Errorf("%w: want the project directory and --to-loop N", errUsage)
	}
	if err := project.Rollback(dir, *to); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rolled %s back to the end of loop %d (history kept; see %s)\n", dir, *to, runrecord.ProjectLayout{Project: dir}.Runs())
	return nil
}

// plotDynamics draws `hoh plot dynamics --project DIR`.
func plotDynamics(dir, out string, stdout io.Writer) error {
	c, err := project.LoadConfig(dir)
	if err != nil {
		return err
	}
	rows, err := runrecord.ReadDynamics(runrecord.ProjectLayout{Project: dir}.Dynamics())
	if err != nil {
		return err
	}
	var loops []figures.LoopIssues
	for _, r := range rows {
		loops = append(loops, figures.LoopIssues{Loop: r.Loop, New: r.New, Closed: r.Closed, Reopened: r.Reopened, Unresolved: r.Unresolved, Total: r.Total})
	}
	scope := "project " + c.Name
	if c.Scripted() {
		scope += " (scripted test-double model: a plumbing check, not a result)"
	}
	outs, err := figures.Dynamics("dynamics", scope, loops, figures.Options{OutDir: out})
	for _, o := range outs {
		fmt.Fprintln(stdout, "wrote", o.Path)
	}
	return err
}
