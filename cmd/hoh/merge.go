package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/experiments/plan"
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
	if err := checkShards(fs.Args()); err != nil {
		return err
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

// checkShards refuses, before anything is written, directories that hold no
// run (naming them), shards run by different hoh versions, and an
// incomplete set of shards k/N (naming the missing ones).
func checkShards(dirs []string) error {
	var noRun []string
	versions := map[string][]string{}
	have := map[int]bool{}
	n := 0
	for _, d := range dirs {
		l, err := plan.ReadLock(d)
		if errors.Is(err, os.ErrNotExist) {
			noRun = append(noRun, d)
			continue
		}
		if err != nil {
			return fmt.Errorf("merge: %s: %w", d, err)
		}
		versions[l.HohVersion] = append(versions[l.HohVersion], d)
		if sh, err := plan.ParseShard(l.Shard); err == nil && sh.N > 0 {
			if n != 0 && sh.N != n {
				return fmt.Errorf("merge: %s is shard %s, another directory a shard of %d", d, sh, n)
			}
			n = sh.N
			have[sh.K] = true
		}
	}
	if len(noRun) > 0 {
		return fmt.Errorf("merge: no run in %s (no lock.json: a shard that never started?)", strings.Join(noRun, ", "))
	}
	if len(versions) > 1 {
		var vs []string
		for v, ds := range versions {
			vs = append(vs, fmt.Sprintf("%s (%s)", v, strings.Join(ds, ", ")))
		}
		sort.Strings(vs)
		return fmt.Errorf("merge: the shards were run by different hoh versions: %s", strings.Join(vs, "; "))
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if !have[k] {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("merge: shard(s) %s missing: give every shard's run directory", strings.Join(missing, ", "))
	}
	return nil
}
