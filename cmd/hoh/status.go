package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/internal/textsafe"
	"github.com/hoh-research/hoh/runrecord"
)

func init() {
	register("status", "show done/running/failed/remaining trials and tokens of a run directory", statusCmd)
}

func statusCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", stderr)
	verbose := fs.Bool("v", false, "also list every finished trial (running and failed ones are always listed)")
	pricesFile := fs.String("prices", "", "a YAML price table (prices: {provider/model: {input, cached_input, output}} in USD per million tokens) for trials whose records carry no cost_usd")
	fs.Usage = func() { fmt.Fprintln(stderr, "Usage: hoh status [-v] [--prices FILE] RUN_DIR"); fs.PrintDefaults() }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("%w: want one run directory", errUsage)
	}
	in, err := status.Inspect(fs.Arg(0))
	if err != nil {
		return err
	}
	// The price file is read before anything is printed: an error in it
	// must not come after half the table.
	price, err := statusPricer(in, *pricesFile)
	if err != nil {
		return err
	}
	running := printRunnerState(stdout, in)
	if err := printStatusTable(stdout, in, price, running); err != nil {
		return err
	}
	if line := timeShare(finishedTimings(in.Dir, in.Trials)); line != "" {
		fmt.Fprintln(stdout, line)
	}
	if servedNote(in) {
		fmt.Fprintln(stdout, "An arm served by a longer trial of its series (vanilla by vanilla-continuation@k, hoh@2 by hoh@3) shares its trial's state; its tokens are those up to its checkpoint.")
	}
	printStatusTrials(stdout, in, running, *verbose)
	return nil
}

// printRunnerState prints the run's heading and whether its runner is
// alive; it returns what to call running trials: "Interrupted" when no
// runner is left to finish them.
func printRunnerState(stdout io.Writer, in *status.Inspection) string {
	fmt.Fprintf(stdout, "run %s: experiment %s", in.Dir, in.Lock.Experiment)
	if in.Lock.Shard != "" {
		fmt.Fprintf(stdout, ", shard %s", in.Lock.Shard)
	}
	fmt.Fprintln(stdout)
	running := "Running"
	switch r := in.Runner; {
	case r.Alive:
		fmt.Fprintf(stdout, "runner: running (pid %d)\n", r.PID)
	case r.PID > 0:
		// Its "running" trials were interrupted: the same hoh run resumes them.
		fmt.Fprintf(stdout, "runner: not running (last runner pid %d gone)\n", r.PID)
		running = "Interrupted"
	default:
		fmt.Fprintln(stdout, "runner: not running")
		running = "Interrupted"
	}
	if in.Lock.Notice != "" {
		fmt.Fprintf(stdout, "NOTE: %s\n", in.Lock.Notice)
	}
	return running
}

// printStatusTable prints the trials' counts and tokens per
// configuration and condition, with their cost when it is known.
func printStatusTable(stdout io.Writer, in *status.Inspection, price status.Pricer, running string) error {
	costs, totalCost := in.Costs(price)
	withCost := price != nil || totalCost.USD != nil
	t := tablewriter.NewTable(stdout, tablewriter.WithHeaderAutoFormat(tw.Off))
	header := []any{"Config", "Condition", "Done", running, "Failed", "Remaining", "Not run (budget)", "Tokens"}
	if withCost {
		header = append(header, "Cost (USD)")
	}
	t.Header(header...)
	for i, g := range in.Groups() {
		row := []any{g.Config, g.Arm.String(), g.Done, g.Running, g.Failed, g.Remaining, g.NotRun, g.Tokens}
		if withCost {
			row = append(row, costs[i].String())
		}
		t.Append(row...)
	}
	tot := in.Total()
	footer := []any{"Total (trials)", "", tot.Done, tot.Running, tot.Failed, tot.Remaining, tot.NotRun, tot.Tokens}
	if withCost {
		footer = append(footer, totalCost.String())
	}
	t.Footer(footer...)
	return t.Render()
}

// printStatusTrials lists the running and failed trials, and with -v the
// done ones.
func printStatusTrials(stdout io.Writer, in *status.Inspection, running string, verbose bool) {
	for _, ts := range in.Trials {
		switch {
		case ts.State == runrecord.StateRunning:
			// Where it is (or was, when the runner is gone): a multi-step
			// trial's step k of n, then the role stage within it.
			a := runrecord.ReadActivity(runrecord.RunLayout{Dir: in.Dir}.Trial(ts.Trial.Dir))
			fmt.Fprintf(stdout, "%s %s (%s %s): %s, %d tokens\n", textsafe.Args(strings.ToLower(running), ts.Trial.Dir, ts.Trial.Arm, ts.Trial.Task.ID, a, ts.Usage.Total)...)
		case ts.State == runrecord.StateFailed:
			fmt.Fprintf(stdout, "%s %s: %s %s\n", textsafe.Args(ts.State, ts.Trial.Dir, ts.Status, ts.Reason)...)
		case verbose && ts.State == runrecord.StateDone:
			fmt.Fprintf(stdout, "%s %s: %s, %d tokens\n", textsafe.Args(ts.State, ts.Trial.Dir, ts.Status, ts.Usage.Total)...)
		}
	}
}

// servedNote reports whether some trial serves more than one arm.
func servedNote(in *status.Inspection) bool {
	for _, t := range in.Trials {
		if len(t.Trial.Arms) > 1 {
			return true
		}
	}
	return false
}

// statusPricer prices usage with a --prices file, looked up by each
// configuration's provider and model as the lock records them; nil without
// a file.
func statusPricer(in *status.Inspection, file string) (status.Pricer, error) {
	if file == "" {
		return nil, nil
	}
	ps, err := config.LoadPrices(file)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Configs []struct {
			Label    string `json:"label"`
			Provider struct {
				Name  string `json:"name"`
				Model string `json:"model"`
			} `json:"provider"`
		} `json:"configs"`
	}
	_ = json.Unmarshal(in.Lock.Config, &cfg)
	byLabel := map[string]runrecord.Price{}
	for _, c := range cfg.Configs {
		if p, ok := ps.Lookup(c.Provider.Name, c.Provider.Model); ok {
			byLabel[c.Label] = p
		}
	}
	return func(label string, u runrecord.Usage) *big.Rat {
		if p, ok := byLabel[label]; ok {
			return p.Cost(u)
		}
		return nil
	}, nil
}
