package main

import (
	"fmt"
	"io"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/export"
)

func init() {
	register("export", "write a run's trials in another format: export atif RUN|TRIAL|PROJECT [--out DIR] (one ATIF trajectory.json per trial)", exportCmd)
}

func exportCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", stderr)
	out := fs.String("out", "", "directory for the documents, mirroring the trial directories (default: trajectory.json in each trial directory)")
	pricesFile := fs.String("prices", "", "a YAML price table (prices: {provider/model: {input, cached_input, output}} in USD per million tokens): each invocation's and the trial's total_cost_usd")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: hoh export atif RUN|TRIAL|PROJECT [--out DIR] [--prices FILE]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 || fs.Arg(0) != "atif" {
		fs.Usage()
		return fmt.Errorf("%w: hoh export atif PATH", errUsage)
	}
	opt := export.Options{}
	if *pricesFile != "" {
		ps, err := config.LoadPrices(*pricesFile)
		if err != nil {
			return err
		}
		opt = export.PriceByConfig(ps)
	}
	written, err := export.Tree(fs.Arg(1), *out, opt)
	for _, p := range written {
		fmt.Fprintln(stdout, p)
	}
	if err != nil {
		return err
	}
	warnScripted(stdout, []string{fs.Arg(1)})
	fmt.Fprintf(stdout, "%d ATIF document(s) written\n", len(written))
	return nil
}
