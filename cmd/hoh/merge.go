package main

import (
	"fmt"
	"io"

	"github.com/hoh-research/hoh/experiments/runner"
)

func init() {
	register("merge", "merge shard run directories into one run directory", mergeCmd)
}

func mergeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", stderr)
	out := fs.String("o", "", "output run directory (must not exist)")
	fs.Usage = func() { fmt.Fprintln(stderr, "Usage: hoh merge -o OUT RUN_DIR..."); fs.PrintDefaults() }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("%w: want -o OUT and at least one run directory", errUsage)
	}
	rep, err := runner.Merge(fs.Args(), *out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged %d finished trial(s) from %d director(ies) into %s\n", rep.Trials, fs.NArg(), *out)
	for _, d := range rep.Duplicates {
		fmt.Fprintf(stdout, "duplicate (first copy kept): %s\n", d)
	}
	for _, t := range rep.Missing {
		fmt.Fprintf(stdout, "missing (finished in no shard): %s %s\n", t.Key, t.Dir)
	}
	if len(rep.Missing) > 0 {
		return fmt.Errorf("%d planned trial(s) are missing from the shards", len(rep.Missing))
	}
	return nil
}
