package main

import (
	"fmt"
	"io"

	"github.com/hoh-research/hoh/adapters/benchmark/harbor/jobs"
	"github.com/hoh-research/hoh/runrecord"
)

func init() {
	register("import", "read another harness's results as hoh records: import harbor JOBDIR... -o RECORDS.csv [--benchmark B] [--config LABEL] [--condition ARM]", importCmd)
}

func importCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import", stderr)
	out := fs.String("o", "", "the records file to write (required)")
	bench := fs.String("benchmark", "", "benchmark name of the records (default: each trial's dataset, without its @version)")
	config := fs.String("config", "", "configuration label of the records (default: <agent>-<model> of each trial); name it as in the hoh run to compare with")
	cond := fs.String("condition", "vanilla", "the arm the trials ran, condition[@checkpoint]")
	partial := fs.Bool("partial", false, "write the trials that map and list the others, instead of refusing the import")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: hoh import harbor JOBDIR... -o RECORDS.csv [flags]\n\nEach <trial>/result.json of Harbor's job directories becomes one record per reward key.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 2 || fs.Arg(0) != "harbor" || *out == "" {
		fs.Usage()
		return fmt.Errorf("%w: hoh import harbor JOBDIR... -o RECORDS.csv", errUsage)
	}
	arm, err := runrecord.ParseArm(*cond)
	if err != nil {
		return fmt.Errorf("--condition: %w", err)
	}
	rows, refused, err := jobs.ImportJobs(fs.Args()[1:], jobs.ImportOptions{Benchmark: *bench, Config: *config, Arm: arm})
	if err != nil {
		return err
	}
	for _, r := range refused {
		fmt.Fprintf(stderr, "refused: %s\n", r.Error())
	}
	if len(refused) > 0 && !*partial {
		return fmt.Errorf("%d Harbor trial(s) cannot be imported (listed above); nothing written (--partial writes the others)", len(refused))
	}
	if len(rows) == 0 {
		return fmt.Errorf("no Harbor trial could be imported")
	}
	if err := runrecord.WriteScores(*out, rows); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d record(s) from Harbor trials", *out, len(rows))
	if len(refused) > 0 {
		fmt.Fprintf(stdout, " (%d trial(s) refused)", len(refused))
	}
	fmt.Fprintln(stdout)
	return nil
}
