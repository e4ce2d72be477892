package status

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/runrecord"
)

// Summary renders the end-of-run table: trials per configuration and
// condition by state, replacements and tokens; scripted runs say that the
// model was the test double.
func Summary(w io.Writer, outcomes []Outcome, scripted bool) error {
	type cell struct {
		done, failed, budget, remaining, replaced int
		tokens                                    int64
	}
	cells := map[[2]string]*cell{}
	var order [][2]string
	for _, o := range outcomes {
		k := [2]string{o.Trial.Config, o.Trial.Arm}
		c, ok := cells[k]
		if !ok {
			c = &cell{}
			cells[k] = c
			order = append(order, k)
		}
		switch o.State {
		case runrecord.StateDone:
			c.done++
		case runrecord.StateFailed:
			c.failed++
		case runrecord.StateBudget:
			c.budget++
		default:
			c.remaining++
		}
		c.replaced += o.Replacements
		c.tokens += o.Usage.Total
	}
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("Config", "Condition", "Done", "Failed", "Not run (budget)", "Remaining", "Replacements", "Tokens")
	for _, k := range order {
		c := cells[k]
		t.Append(k[0], k[1], c.done, c.failed, c.budget, c.remaining, c.replaced, c.tokens)
	}
	if err := t.Render(); err != nil {
		return err
	}
	if scripted {
		fmt.Fprintf(w, "NOTE: %s\n", config.ScriptedNotice)
	}
	return nil
}
