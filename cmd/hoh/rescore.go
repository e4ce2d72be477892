package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/runner"
)

func init() {
	register("rescore", "recompute a run's records from the evaluator outputs it kept, running nothing: rescore [--output DIR] CONFIG.yaml", rescoreCmd)
}

func rescoreCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rescore", stderr)
	output := fs.String("output", "", "run directory (overrides the config's output)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: hoh rescore [--output DIR] CONFIG.yaml")
		fmt.Fprintln(stderr, "Recomputes every finished trial's checkpoint scores, scores.csv and trials.jsonl from the")
		fmt.Fprintln(stderr, "evaluator outputs kept in evaluation/cp-N-verifier/ (GameCraft breakdown.json, ProgramBench")
		fmt.Fprintln(stderr, "eval.json) with the benchmark the config names. Nothing is run; unchanged outputs change no record.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("%w: want exactly one config file", errUsage)
	}
	exp, err := config.LoadOffline(fs.Arg(0))
	if err != nil {
		return err
	}
	if *output != "" {
		// A flag's path is the working directory's, made absolute now like
		// the config's paths.
		if exp.Output, err = filepath.Abs(*output); err != nil {
			return err
		}
	}
	rep, err := runner.Rescore(context.Background(), exp, nil)
	if err != nil {
		return err
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(stdout, "NOTE", n)
	}
	for _, k := range rep.Kept {
		fmt.Fprintln(stdout, "kept", k)
	}
	for _, c := range rep.Changed {
		fmt.Fprintln(stdout, "rescored", c)
	}
	fmt.Fprintf(stdout, "%s: %d finished trial(s) rescored, %d with changed records\n", exp.Output, rep.Trials, len(rep.Changed))
	warnScripted(stdout, []string{exp.Output})
	return nil
}
