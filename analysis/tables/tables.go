package tables

import (
	"fmt"
	"io"

	"github.com/hoh-research/hoh/analysis/paper"
	"github.com/hoh-research/hoh/analysis/results"
)

// Names lists the tables Report knows.
var Names = []string{"table1", "table2", "table3", "tasks"}

// Build builds the named table(s). A nil set means "the paper data the
// config names" (each spec loads its own filtered sources); a non-nil set
// replaces them for every spec. A nil reported leaves every cell
// computed-only or empty.
func Build(name string, cfg Config, set *results.Set, reported []paper.Reported) ([]*Table, error) {
	var out []*Table
	for _, s := range cfg.specs() {
		data := set
		if data == nil {
			var err error
			if data, err = cfg.LoadResults(s); err != nil {
				return nil, err
			}
		}
		b := newBuilder(s, cfg.Bootstrap, data, reported)
		var t *Table
		var err error
		switch name {
		case "table1":
			t, err = b.table1()
		case "table2":
			t, err = b.table2()
		case "table3":
			t, err = b.table3()
		case "tasks":
			t, err = b.tasks()
		default:
			return nil, fmt.Errorf("tables: unknown table %q (known: %v)", name, Names)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Report builds the named table(s) and renders them in format
// (text | markdown | latex | csv).
func Report(name string, cfg Config, set *results.Set, reported []paper.Reported, format string, w io.Writer) error {
	render, err := Renderer(format)
	if err != nil {
		return err
	}
	ts, err := Build(name, cfg, set, reported)
	if err != nil {
		return err
	}
	return render(w, ts)
}

// Run is the CLI's entry: with no override paths it reports the paper data
// the config names against the printed values; with override paths (files or
// folders of result records) it reports those, computed-only.
func Run(name, configPath string, override []string, format string, w io.Writer) error {
	cfg, err := LoadConfig(configPath)
	if err != nil {
		return err
	}
	if len(override) > 0 {
		set, err := results.Load(override...)
		if err != nil {
			return err
		}
		return Report(name, cfg, set, nil, format, w)
	}
	reported, err := paper.LoadReported(cfg.ReportedDir())
	if err != nil {
		return err
	}
	return Report(name, cfg, nil, reported, format, w)
}

func (b *builder) add(line *Line, c *Cell, err error) error {
	if err != nil {
		return err
	}
	line.Cells = append(line.Cells, c)
	return nil
}

func (b *builder) isGainArm(a string) bool {
	for _, g := range b.spec.GainArms {
		if g == a {
			return true
		}
	}
	return false
}

// table1: GameCraft group means + Overall, FrontierSWE category means +
// Dominance, ProgramBench pass rate, with gains over Vanilla for GainArms.
func (b *builder) table1() (*Table, error) {
	t := &Table{Name: b.spec.Name, Title: b.spec.Title}
	for _, g := range b.spec.Groups {
		t.Columns = append(t.Columns, "GameCraft "+g)
	}
	t.Columns = append(t.Columns, "GameCraft Overall", "Overall gain")
	for _, c := range b.spec.Categories {
		t.Columns = append(t.Columns, "FrontierSWE "+c)
	}
	t.Columns = append(t.Columns, "Dominance %", "Dominance gain", "ProgramBench Pass Rate %", "Pass Rate gain")
	van := b.spec.Vanilla
	for _, config := range b.spec.Configs {
		t.Lines = append(t.Lines, Line{Label: configLabel(config), Heading: true})
		for _, arm := range b.spec.Arms {
			line := Line{Label: armLabel(arm)}
			gain := b.isGainArm(arm)
			for _, g := range b.spec.Groups {
				c, err := b.cell("gamecraft", config, arm, "group:"+g, "overall", "", b.mean("gamecraft", config, arm, "overall", "group:"+g))
				if err := b.add(&line, c, err); err != nil {
					return nil, err
				}
			}
			c, err := b.cell("gamecraft", config, arm, "all", "overall", "", b.mean("gamecraft", config, arm, "overall", "all"))
			if err := b.add(&line, c, err); err != nil {
				return nil, err
			}
			c, err = nil, nil
			if gain {
				c, err = b.cell("gamecraft", config, arm, "all", "overall_delta", van, b.delta("gamecraft", config, arm, van, "overall", "all"))
			}
			if err := b.add(&line, c, err); err != nil {
				return nil, err
			}
			for _, cat := range b.spec.Categories {
				c, err := b.cell("frontierswe", config, arm, "category:"+cat, "reward", "", b.mean("frontierswe", config, arm, "reward", "category:"+cat))
				if err := b.add(&line, c, err); err != nil {
					return nil, err
				}
			}
			c, err = b.cell("frontierswe", config, arm, "all", "dominance_pct", "", b.dominancePct("frontierswe", config, arm, ""))
			if err := b.add(&line, c, err); err != nil {
				return nil, err
			}
			c, err = nil, nil
			if gain {
				c, err = b.cell("frontierswe", config, arm, "all", "dominance_pct_delta", van, b.dominancePct("frontierswe", config, arm, van))
			}
			if err := b.add(&line, c, err); err != nil {
				return nil, err
			}
			c, err = b.cell("programbench", config, arm, "all", "pass_rate_pct", "", b.mean("programbench", config, arm, "pass_rate", "all"))
			if err := b.add(&line, c, err); err != nil {
				return nil, err
			}
			c, err = nil, nil
			if gain {
				c, err = b.cell("programbench", config, arm, "all", "pass_rate_pct_delta", van, b.delta("programbench", config, arm, van, "pass_rate", "all"))
			}
			if err := b.add(&line, c, err); err != nil {
				return nil, err
			}
			t.Lines = append(t.Lines, line)
		}
	}
	for _, bench := range []struct{ name, metric string }{{"gamecraft", "overall"}, {"frontierswe", "reward"}, {"programbench", "pass_rate"}} {
		if err := b.comparisons(t, bench.name, b.spec.Configs, bench.metric); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// table2: pass-controlled score, mean tokens and eta vs Vanilla.
func (b *builder) table2() (*Table, error) {
	t := &Table{Name: b.spec.Name, Title: b.spec.Title, Columns: []string{"Score", "Tokens (M)", "eta vs Vanilla"}}
	config, van := b.spec.Configs[0], b.spec.Vanilla
	for _, arm := range b.spec.Arms {
		line := Line{Label: armLabel(arm)}
		c, err := b.cell("gamecraft", config, arm, "all", "overall", "", b.mean("gamecraft", config, arm, "overall", "all"))
		if err := b.add(&line, c, err); err != nil {
			return nil, err
		}
		c, err = b.cell("gamecraft", config, arm, "all", "tokens_m", "", b.tokens("gamecraft", config, arm))
		if err := b.add(&line, c, err); err != nil {
			return nil, err
		}
		c, err = nil, nil
		if arm != van {
			c, err = b.cell("gamecraft", config, arm, "all", "eta", van, b.eta("gamecraft", config, arm, van))
		}
		if err := b.add(&line, c, err); err != nil {
			return nil, err
		}
		t.Lines = append(t.Lines, line)
	}
	return t, b.comparisons(t, "gamecraft", []string{config}, "overall")
}

// table3: ablation scores, differences from the full method, tokens and eta.
func (b *builder) table3() (*Table, error) {
	t := &Table{Name: b.spec.Name, Title: b.spec.Title,
		Columns: []string{"Score", "Diff. vs " + armLabel(b.spec.Baseline), "Tokens (M)", "eta vs Vanilla"}}
	config, base, van := b.spec.Configs[0], b.spec.Baseline, b.spec.Vanilla
	for _, arm := range b.spec.Arms {
		line := Line{Label: armLabel(arm)}
		c, err := b.cell("gamecraft", config, arm, "all", "overall", "", b.mean("gamecraft", config, arm, "overall", "all"))
		if err := b.add(&line, c, err); err != nil {
			return nil, err
		}
		c, err = nil, nil
		if arm != base {
			c, err = b.cell("gamecraft", config, arm, "all", "overall_delta", base, b.delta("gamecraft", config, arm, base, "overall", "all"))
		}
		if err := b.add(&line, c, err); err != nil {
			return nil, err
		}
		c, err = b.cell("gamecraft", config, arm, "all", "tokens_m", "", b.tokens("gamecraft", config, arm))
		if err := b.add(&line, c, err); err != nil {
			return nil, err
		}
		c, err = b.cell("gamecraft", config, arm, "all", "eta", van, b.eta("gamecraft", config, arm, van))
		if err := b.add(&line, c, err); err != nil {
			return nil, err
		}
		t.Lines = append(t.Lines, line)
	}
	return t, b.comparisons(t, "gamecraft", []string{config}, "overall")
}

// tasks: one per-task table (Tables 14-22): arms as columns, a Delta column,
// a Mean row.
func (b *builder) tasks() (*Table, error) {
	s := b.spec
	t := &Table{Name: s.Name, Title: s.Title}
	config, bench, van := s.Configs[0], s.Benchmark, s.Vanilla
	for _, a := range s.Arms {
		t.Columns = append(t.Columns, armLabel(a))
	}
	if s.Delta != "" {
		t.Columns = append(t.Columns, "Delta "+armLabel(s.Delta)+" - "+armLabel(van))
	}
	value := func(arm, scope string) computeFn {
		if s.Metric == "tokens_m" {
			if scope == "all" {
				return b.tokens(bench, config, arm)
			}
			return b.taskTokens(bench, config, arm, scope)
		}
		return b.mean(bench, config, arm, s.Metric, scope)
	}
	row := func(label, scope string) error {
		line := Line{Label: label}
		for _, a := range s.Arms {
			c, err := b.cell(bench, config, a, scope, s.Metric, "", value(a, scope))
			if err := b.add(&line, c, err); err != nil {
				return err
			}
		}
		if s.Delta != "" {
			c, err := b.cell(bench, config, s.Delta, scope, s.Metric+"_delta", van, b.delta(bench, config, s.Delta, van, s.Metric, scope))
			if err := b.add(&line, c, err); err != nil {
				return err
			}
		}
		t.Lines = append(t.Lines, line)
		return nil
	}
	tasks, label := taskOrder(b.rows, bench)
	prev := ""
	for _, task := range tasks {
		if label[task] != prev {
			t.Lines = append(t.Lines, Line{Label: label[task], Heading: true})
			prev = label[task]
		}
		if err := row(task, "task:"+task); err != nil {
			return nil, err
		}
	}
	if err := row("Mean", "all"); err != nil {
		return nil, err
	}
	if s.Metric != "tokens_m" {
		if err := b.comparisons(t, bench, []string{config}, s.Metric); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (b *builder) taskTokens(bench, config, arm, scope string) computeFn {
	return func() (float64, float64, bool, error) {
		tok, err := b.tokensByTask(bench, config, arm)
		if err != nil || tok == nil {
			return 0, 0, false, err
		}
		v, ok := tok[scope[len("task:"):]]
		return v * 1e-6, 0, ok, nil
	}
}
