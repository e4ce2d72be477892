package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/adapters/benchmark/registry"
)

func init() {
	register("tasks", "list, show or check a benchmark checkout: tasks list|show|check BENCHMARK PATH [TASK]", runTasks)
}

// tasksArgs are hoh tasks' parsed command line.
type tasksArgs struct {
	asJSON          bool
	verb, kind      string
	path            string
	rest            []string // verb, kind, path and task, as given (a builtin's path "")
	withoutCheckout bool     // a builtin benchmark: nothing on disk
}

func runTasks(args []string, stdout, stderr io.Writer) error {
	a, err := parseTasksArgs(args, stderr)
	if err != nil {
		return err
	}
	switch a.verb {
	case "list":
		return tasksList(a, stdout)
	case "show":
		return tasksShow(a, stdout)
	case "check":
		return tasksCheck(a, stdout)
	default:
		return fmt.Errorf("%w: unknown verb %q (list, show, check)", errUsage, a.verb)
	}
}

// parseTasksArgs reads hoh tasks' flags and arguments; a builtin
// benchmark's task list needs no path, so its task comes after the kind.
func parseTasksArgs(args []string, stderr io.Writer) (tasksArgs, error) {
	var a tasksArgs
	fs := newFlags("tasks", stderr)
	fs.BoolVar(&a.asJSON, "json", false, "print JSON instead of text")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: hoh tasks list|show|check BENCHMARK PATH [TASK]\n       hoh tasks list|show builtin [TASK]\n\nBENCHMARK is one of %s; builtin needs no PATH.\n", strings.Join(registry.Checkable(), ", "))
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	rest := fs.Args()
	if len(rest) < 2 {
		fs.Usage()
		return a, fmt.Errorf("%w: need a verb, a benchmark kind and a path", errUsage)
	}
	verb, kind := rest[0], rest[1]
	k, known := registry.Lookup(kind)
	withoutCheckout := known && k.List == nil && !k.NeedsPath // builtin: nothing on disk
	path := ""
	switch {
	case len(rest) >= 3:
		path = rest[2]
	case !withoutCheckout:
		fs.Usage()
		return a, fmt.Errorf("%w: need a verb, a benchmark kind and a path", errUsage)
	}
	if withoutCheckout && verb != "check" {
		// Its task list is built in: an argument after the kind is the task.
		rest = append([]string{verb, kind, ""}, rest[2:]...)
	}
	maxArgs := 3
	if verb == "show" {
		maxArgs = 4
	}
	if len(rest) > maxArgs {
		return a, fmt.Errorf("%w: unexpected argument(s) %q", errUsage, strings.Join(rest[maxArgs:], " "))
	}
	a.verb, a.kind, a.path, a.rest, a.withoutCheckout = verb, kind, path, rest, withoutCheckout
	return a, nil
}

// tasksOf lists the benchmark's tasks: a builtin's from hoh itself, else
// from the checkout at the path.
func tasksOf(a tasksArgs) ([]benchmark.Task, error) {
	if a.withoutCheckout {
		b, err := registry.Open(registry.Spec{Kind: a.kind}, nil)
		if err != nil {
			return nil, err
		}
		return b.Tasks(context.Background())
	}
	return registry.List(a.kind, a.path)
}

// tasksList is hoh tasks list: the tasks as a table or JSON.
func tasksList(a tasksArgs, stdout io.Writer) error {
	tasks, err := tasksOf(a)
	if err != nil {
		return err
	}
	if a.asJSON {
		return json.NewEncoder(stdout).Encode(tasks)
	}
	if err := conformance.WriteTaskTable(stdout, tasks); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d tasks\n", len(tasks))
	return nil
}

// tasksShow is hoh tasks show: one task and its public specification.
func tasksShow(a tasksArgs, stdout io.Writer) error {
	if len(a.rest) < 4 {
		return fmt.Errorf("%w: show needs a task id", errUsage)
	}
	tasks, err := tasksOf(a)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if t.ID == a.rest[3] {
			if a.asJSON {
				return json.NewEncoder(stdout).Encode(t)
			}
			fmt.Fprintf(stdout, "task:      %s\nbenchmark: %s\nfamily:    %s\ngroup:     %s\ncategory:  %s\nlimits:    %+v\n\n--- public specification ---\n%s\n",
				t.ID, t.Benchmark, t.Family, t.Group, t.Category, t.Limits, t.Spec)
			return nil
		}
	}
	return fmt.Errorf("no task %q in %s", a.rest[3], a.path)
}

// tasksCheck is hoh tasks check: the checkout's conformance report, an
// error when it must be fixed before running.
func tasksCheck(a tasksArgs, stdout io.Writer) error {
	if a.withoutCheckout {
		fmt.Fprintf(stdout, "%s has no checkout to check: its tasks are built into hoh (hoh tasks list %s)\n", a.kind, a.kind)
		return nil
	}
	rep, err := registry.Check(a.kind, a.path)
	if err != nil {
		return err
	}
	if a.asJSON {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			return err
		}
	} else if err := rep.WriteTextWidth(stdout, outputColumns(stdout)); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("%d problem(s) must be fixed before running", rep.Count(conformance.Error))
	}
	return nil
}
