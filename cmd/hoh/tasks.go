package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/adapters/benchmark/registry"
)

func init() {
	register("tasks", "list, show or check a benchmark checkout: tasks list|show|check BENCHMARK PATH [TASK]", runTasks)
}

func runTasks(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tasks", stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: hoh tasks list|show|check BENCHMARK PATH [TASK]\n\nBENCHMARK is one of %s.\n", strings.Join(registry.Checkable(), ", "))
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) < 3 {
		fs.Usage()
		return fmt.Errorf("%w: need a verb, a benchmark kind and a path", errUsage)
	}
	verb, kind, path := rest[0], rest[1], rest[2]
	switch verb {
	case "list":
		tasks, err := registry.List(kind, path)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(tasks)
		}
		if err := conformance.WriteTaskTable(stdout, tasks); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d tasks\n", len(tasks))
		return nil
	case "show":
		if len(rest) < 4 {
			return fmt.Errorf("%w: show needs a task id", errUsage)
		}
		tasks, err := registry.List(kind, path)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			if t.ID == rest[3] {
				if *asJSON {
					return json.NewEncoder(stdout).Encode(t)
				}
				fmt.Fprintf(stdout, "task:      %s\nbenchmark: %s\nfamily:    %s\ngroup:     %s\ncategory:  %s\nlimits:    %+v\n\n--- public specification ---\n%s\n",
					t.ID, t.Benchmark, t.Family, t.Group, t.Category, t.Limits, t.Spec)
				return nil
			}
		}
		return fmt.Errorf("no task %q in %s", rest[3], path)
	case "check":
		rep, err := registry.Check(kind, path)
		if err != nil {
			return err
		}
		if *asJSON {
			if err := json.NewEncoder(stdout).Encode(rep); err != nil {
				return err
			}
		} else if err := rep.WriteText(stdout); err != nil {
			return err
		}
		if !rep.OK() {
			return fmt.Errorf("%d problem(s) must be fixed before running", rep.Count(conformance.Error))
		}
		return nil
	default:
		return fmt.Errorf("%w: unknown verb %q (list, show, check)", errUsage, verb)
	}
}
