package tables

import (
	"fmt"
	"io"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hoh-research/hoh/analysis/metrics"
	"github.com/hoh-research/hoh/analysis/paper"
	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/runrecord"
)

// Names lists the tables Report knows.
var Names = []string{"table1", "table2", "table3", "tasks"}

// Build builds the named table(s). A nil set means "the paper data the
// config names" (each spec loads its own filtered sources); a non-nil set
// replaces them for every spec, and Tables 1-3 then take their
// configurations, arms and benchmarks from it (see adapt). A nil reported
// leaves every cell computed-only or empty.
func Build(name string, cfg Config, set *results.Set, reported []paper.Reported) ([]*Table, error) {
	var out []*Table
	specs := cfg.specs()
	var given *metrics.Index
	if set != nil {
		given = metrics.NewSetIndex(set)
	}
	if set != nil && name == "tasks" {
		var err error
		if specs, err = taskSpecs(given); err != nil {
			return nil, err
		}
	}
	for _, s := range specs {
		ix := given
		if ix == nil {
			data, err := cfg.LoadResults(s)
			if err != nil {
				return nil, err
			}
			ix = metrics.NewSetIndex(data)
		}
		var lay layout
		fromRecords := set != nil && name != "tasks"
		if fromRecords {
			var err error
			if s, lay, err = adapt(name, s, given); err != nil {
				return nil, err
			}
		}
		b := newBuilder(s, cfg.Bootstrap, ix, reported)
		b.fromRecords, b.lay = fromRecords, lay
		b.allowUnequal = set != nil && cfg.AllowUnequalTasks // "tasks" too: its Mean row and comparisons pair tasks
		var unequal []string
		if set != nil && name == "tasks" && s.Metric != "tokens_m" {
			b.lay.benches = []benchMetric{{bench: s.Benchmark, metric: s.Metric}}
		}
		if fromRecords || set != nil && name == "tasks" {
			if unequal = b.unequalTasks(); len(unequal) > 0 && !cfg.AllowUnequalTasks {
				return nil, fmt.Errorf("tables: %s: the arms cover different tasks, so their means are not comparable:\n  %s\n"+
					"run the missing trials, or pass --allow-unequal-tasks to compare them anyway", name, strings.Join(unequal, "\n  "))
			}
		}
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
		if fromRecords {
			b.unusedRows(t)
			t.Fewer = b.fewerTasks(t)
			t.Imported, t.onlyImported = b.importedConfigs()
		}
		t.Warnings = b.warnings
		t.Unequal = unequal
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
func Run(name string, cfg Config, override []string, format string, w io.Writer) error {
	if len(override) > 0 {
		set, err := results.Load(override...)
		if err != nil {
			return err
		}
		return Report(name, cfg, set, nil, format, w)
	}
	reported, err := cfg.LoadReported()
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

func (b *builder) isGainArm(config string, a runrecord.Arm) bool {
	if b.lay.finalOf != nil {
		return b.lay.finalOf[config] == a
	}
	for _, g := range b.spec.GainArms {
		if g == a {
			return true
		}
	}
	return false
}

// column is one table column: its header and how a line's cell is built.
type column struct {
	name string
	cell func(config string, arm runrecord.Arm) (*Cell, error)
}

// shows says whether a benchmark's columns belong in the table: always for
// the paper's shape, only when present for tables built from records.
func (b *builder) shows(bench string) bool {
	if !b.fromRecords {
		return true
	}
	for _, bm := range b.lay.benches {
		if bm.bench == bench {
			return true
		}
	}
	return false
}

func (bm benchMetric) label() string {
	tasks := "tasks"
	if bm.tasks == 1 {
		tasks = "task"
	}
	return fmt.Sprintf("%s mean %s (%d %s)", bm.bench, bm.metric, bm.tasks, tasks)
}

// hasArm reports whether config has any row of arm; tables from records
// leave out the lines a config never ran.
func (b *builder) hasArm(config string, arm runrecord.Arm) bool {
	for _, bench := range b.ix.Benchmarks() {
		if b.ix.HasArm(metrics.Selector{Benchmark: bench, Config: config, Arm: arm}) {
			return true
		}
	}
	return false
}

// baselineOf is the arm differences are taken against (Table 3).
func (b *builder) baselineOf(arm runrecord.Arm) runrecord.Arm {
	if b.lay.baselines != nil {
		return b.lay.baselines[arm]
	}
	return b.spec.Baseline
}

// lines adds, per configuration, one line per arm with the columns' cells.
// The paper's Tables 2 and 3 show one configuration without a heading.
func (b *builder) lines(t *Table, configs []string, headings bool, cols []column) error {
	for _, col := range cols {
		t.Columns = append(t.Columns, col.name)
	}
	for _, config := range configs {
		if headings {
			t.Lines = append(t.Lines, Line{Label: configLabel(config), Heading: true})
		}
		for _, arm := range b.spec.Arms {
			if b.fromRecords && !b.hasArm(config, arm) {
				continue
			}
			line := Line{Label: armLabel(arm)}
			for _, col := range cols {
				c, err := col.cell(config, arm)
				if err := b.add(&line, c, err); err != nil {
					return err
				}
			}
			t.Lines = append(t.Lines, line)
		}
	}
	return nil
}

// table1Columns is Table 1's columns, per benchmark shown its values then
// its gain, and the benchmarks and metrics whose comparisons follow it.
func (b *builder) table1Columns() ([]column, []benchMetric) {
	van := b.spec.Vanilla
	var cols []column
	value := func(name, bench, scope, metric string, f func(config string, arm runrecord.Arm) computeFn) {
		cols = append(cols, column{name, func(config string, arm runrecord.Arm) (*Cell, error) {
			return b.cell(paper.Coords{Benchmark: bench, Config: config, Arm: arm, Scope: scope, Metric: metric}, f(config, arm))
		}})
	}
	gain := func(name, bench, scope, metric string, f func(config string, arm runrecord.Arm) computeFn) {
		cols = append(cols, column{name, func(config string, arm runrecord.Arm) (*Cell, error) {
			if !b.isGainArm(config, arm) {
				return nil, nil
			}
			return b.cell(paper.Coords{Benchmark: bench, Config: config, Arm: arm, Scope: scope, Metric: metric, Baseline: van}, f(config, arm))
		}})
	}
	mean := func(bench, metric, scope string) func(config string, arm runrecord.Arm) computeFn {
		return func(config string, arm runrecord.Arm) computeFn { return b.mean(bench, config, arm, metric, scope) }
	}
	delta := func(bench, metric string) func(config string, arm runrecord.Arm) computeFn {
		return func(config string, arm runrecord.Arm) computeFn {
			return b.delta(bench, config, arm, van, metric, "all")
		}
	}
	var compared []benchMetric
	if b.shows("gamecraft") {
		for _, g := range b.spec.Groups {
			value("GameCraft "+g, "gamecraft", "group:"+g, "overall", mean("gamecraft", "overall", "group:"+g))
		}
		value("GameCraft Overall", "gamecraft", "all", "overall", mean("gamecraft", "overall", "all"))
		gain("Overall gain", "gamecraft", "all", "overall_delta", delta("gamecraft", "overall"))
		compared = append(compared, benchMetric{bench: "gamecraft", metric: "overall"})
	}
	if b.shows("frontierswe") {
		for _, c := range b.spec.Categories {
			value("FrontierSWE "+c, "frontierswe", "category:"+c, "reward", mean("frontierswe", "reward", "category:"+c))
		}
		value("Dominance %", "frontierswe", "all", "dominance_pct", func(config string, arm runrecord.Arm) computeFn {
			return b.dominancePct("frontierswe", config, arm, runrecord.Arm{})
		})
		gain("Dominance gain", "frontierswe", "all", "dominance_pct_delta", func(config string, arm runrecord.Arm) computeFn {
			return b.dominancePct("frontierswe", config, arm, van)
		})
		compared = append(compared, benchMetric{bench: "frontierswe", metric: "reward"})
	}
	if b.shows("programbench") {
		value("ProgramBench Pass Rate %", "programbench", "all", "pass_rate_pct", mean("programbench", "pass_rate", "all"))
		gain("Pass Rate gain", "programbench", "all", "pass_rate_pct_delta", delta("programbench", "pass_rate"))
		compared = append(compared, benchMetric{bench: "programbench", metric: "pass_rate"})
	}
	for _, bm := range b.lay.benches {
		if contains(paperBenchmarks, bm.bench) {
			continue
		}
		value(bm.label(), bm.bench, "all", bm.metric, mean(bm.bench, bm.metric, "all"))
		gain(bm.bench+" gain", bm.bench, "all", bm.metric+"_delta", delta(bm.bench, bm.metric))
		compared = append(compared, bm)
	}
	return cols, compared
}

// table1: GameCraft group means + Overall, FrontierSWE category means +
// Dominance, ProgramBench pass rate, with gains over Vanilla for GainArms;
// from records, also a mean column per other benchmark.
func (b *builder) table1() (*Table, error) {
	t := &Table{Name: b.spec.Name, Title: b.spec.Title}
	cols, compared := b.table1Columns()
	if err := b.lines(t, b.spec.Configs, true, cols); err != nil {
		return nil, err
	}
	if b.lay.finalOf != nil {
		var each []string
		for _, c := range b.spec.Configs {
			if f, ok := b.lay.finalOf[c]; ok {
				each = append(each, configLabel(c)+" at "+armLabel(f))
			}
		}
		t.Remarks = append(t.Remarks, "the configurations end at different final checkpoints: each gain is at its configuration's own final one ("+strings.Join(each, ", ")+")")
	}
	if b.shows("gamecraft") {
		b.uncovered("gamecraft", metrics.Group, b.spec.Groups)
	}
	if b.shows("frontierswe") {
		b.uncovered("frontierswe", metrics.Category, b.spec.Categories)
	}
	for _, bm := range compared {
		if err := b.comparisons(t, bm.bench, b.spec.Configs, bm.metric); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// scored lists the benchmarks of Tables 2 and 3: the paper's GameCraft, or
// those adapt chose from the records.
func (b *builder) scored() []benchMetric {
	if b.fromRecords {
		return b.lay.benches
	}
	return []benchMetric{{bench: "gamecraft", metric: "overall"}}
}

// header names a Table 2/3 column; from records it says which benchmark.
func (b *builder) header(bm benchMetric, col string) string {
	switch {
	case !b.fromRecords:
		return col
	case col == "Score":
		return bm.label()
	}
	return bm.bench + " " + col
}

// scoreTokenTable builds Tables 2 and 3: per benchmark a score column, the
// given extra columns, mean tokens and eta vs Vanilla.
func (b *builder) scoreTokenTable(extra func(bm benchMetric) []column) (*Table, error) {
	t := &Table{Name: b.spec.Name, Title: b.spec.Title}
	van := b.spec.Vanilla
	var cols []column
	for _, bm := range b.scored() {
		cols = append(cols, column{b.header(bm, "Score"), func(config string, arm runrecord.Arm) (*Cell, error) {
			return b.cell(paper.Coords{Benchmark: bm.bench, Config: config, Arm: arm, Scope: "all", Metric: bm.metric}, b.mean(bm.bench, config, arm, bm.metric, "all"))
		}})
		cols = append(cols, b.statisticColumns(bm)...)
		cols = append(cols, extra(bm)...)
		cols = append(cols, column{b.header(bm, "Tokens (M)"), func(config string, arm runrecord.Arm) (*Cell, error) {
			return b.cell(paper.Coords{Benchmark: bm.bench, Config: config, Arm: arm, Scope: "all", Metric: "tokens_m"}, b.tokens(bm.bench, config, arm))
		}})
		if b.fromRecords && b.ix.HasCosts() {
			cols = append(cols, b.costColumn(bm))
		}
		cols = append(cols, column{b.header(bm, "eta vs Vanilla"), func(config string, arm runrecord.Arm) (*Cell, error) {
			if arm == van {
				return nil, nil
			}
			return b.cell(paper.Coords{Benchmark: bm.bench, Config: config, Arm: arm, Scope: "all", Metric: "eta", Baseline: van}, b.eta(bm.bench, config, arm, van, bm.metric))
		}})
	}
	configs := b.spec.Configs
	if !b.fromRecords {
		configs = configs[:1]
	}
	if err := b.lines(t, configs, b.fromRecords, cols); err != nil {
		return nil, err
	}
	for _, bm := range b.scored() {
		if err := b.comparisons(t, bm.bench, configs, bm.metric); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// table2: pass-controlled score, mean tokens and eta vs Vanilla.
func (b *builder) table2() (*Table, error) {
	return b.scoreTokenTable(func(benchMetric) []column { return nil })
}

// table3: ablation scores, differences from the full method, tokens and eta.
func (b *builder) table3() (*Table, error) {
	diff := "Diff. vs " + armLabel(b.spec.Baseline)
	if b.fromRecords {
		bases := map[runrecord.Arm]bool{}
		for _, base := range b.lay.baselines {
			bases[base] = true
		}
		for base := range bases {
			diff = "Diff. vs " + armLabel(base)
		}
		if len(bases) > 1 {
			diff = "Diff. vs HoH@T (same T)"
		}
	}
	return b.scoreTokenTable(func(bm benchMetric) []column {
		return []column{{b.header(bm, diff), func(config string, arm runrecord.Arm) (*Cell, error) {
			base := b.baselineOf(arm)
			if arm == base || base.IsZero() {
				return nil, nil
			}
			return b.cell(paper.Coords{Benchmark: bm.bench, Config: config, Arm: arm, Scope: "all", Metric: bm.metric + "_delta", Baseline: base}, b.delta(bm.bench, config, arm, base, bm.metric, "all"))
		}}}
	})
}

// tasks: one per-task table (Tables 14-22): arms as columns, a Delta column,
// a Mean row.
func (b *builder) tasks() (*Table, error) {
	s := b.spec
	t := &Table{Name: s.Name, Title: s.Title}
	config, bench, van := s.Configs[0], s.Benchmark, s.Vanilla
	for _, a := range s.Arms {
		t.Columns = append(t.Columns, armLabelAmong(a, s.Arms))
	}
	if !s.Delta.IsZero() {
		t.Columns = append(t.Columns, "Delta "+armLabel(s.Delta)+" - "+armLabel(van))
	}
	value := func(arm runrecord.Arm, scope string) computeFn {
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
			c, err := b.cell(paper.Coords{Benchmark: bench, Config: config, Arm: a, Scope: scope, Metric: s.Metric}, value(a, scope))
			if err := b.add(&line, c, err); err != nil {
				return err
			}
		}
		if !s.Delta.IsZero() {
			c, err := b.cell(paper.Coords{Benchmark: bench, Config: config, Arm: s.Delta, Scope: scope, Metric: s.Metric + "_delta", Baseline: van}, b.delta(bench, config, s.Delta, van, s.Metric, scope))
			if err := b.add(&line, c, err); err != nil {
				return err
			}
		}
		t.Lines = append(t.Lines, line)
		return nil
	}
	tasks, label := taskOrder(b.ix, bench)
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

func (b *builder) taskTokens(bench, config string, arm runrecord.Arm, scope string) computeFn {
	return func() (float64, *big.Rat, float64, bool, error) {
		sel := metrics.Selector{Benchmark: bench, Config: config, Arm: arm}
		if !b.ix.HasArm(sel) {
			return 0, nil, 0, false, nil
		}
		tok, err := b.ix.TaskTokensExact(sel)
		if err != nil || len(tok) == 0 {
			return 0, nil, 0, false, err
		}
		v, ok := tok[scope[len("task:"):]]
		if !ok {
			return 0, nil, 0, false, nil
		}
		m := new(big.Rat).Mul(v, big.NewRat(1, 1_000_000))
		return metrics.Float(m), m, 0, true, nil
	}
}

// unusedRows says under a table from records which rows of its benchmarks
// and configurations it leaves out because their arm is not shown though
// their condition is, for the conditions reported at one checkpoint
// (Vanilla at a checkpoint other than 1, an ablation at another than its
// final one): counted, with the reason, so no row vanishes in silence. Rows
// of conditions or checkpoints other tables report (Table 1 has no
// continuations, Table 3 no HoH@1) are not left out.
func (b *builder) unusedRows(t *Table) {
	benches, configs, arms := map[string]bool{}, map[string]bool{}, map[runrecord.Arm]bool{}
	conds := map[string][]int{}
	for _, c := range t.Cells() {
		benches[c.Benchmark], configs[c.Config] = true, true
		for _, a := range []runrecord.Arm{c.Arm, c.Baseline} {
			if a.IsZero() || arms[a] {
				continue
			}
			arms[a] = true
			conds[a.Condition] = append(conds[a.Condition], a.Checkpoint)
		}
	}
	count := map[armOf]int{}
	var order []armOf
	for _, s := range b.ix.Selectors() {
		a := s.Arm
		if !benches[s.Benchmark] || !configs[s.Config] || arms[a] || conds[s.Arm.Condition] == nil {
			continue
		}
		// Vanilla and the ablations have one checkpoint a table reports;
		// hoh's other checkpoints are other tables' (Table 3 shows HoH@T).
		if c, _ := runrecord.LookupCondition(s.Arm.Condition); s.Arm.Condition != runrecord.Vanilla && !c.Ablation {
			continue
		}
		k := armOf{s.Benchmark, a}
		if _, ok := count[k]; !ok {
			order = append(order, k)
		}
		count[k] += b.ix.SeriesRows(s)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].of != order[j].of {
			return order[i].of < order[j].of
		}
		return order[i].arm.String() < order[j].arm.String()
	})
	for _, k := range order {
		p := k.arm
		cps := slices.Clone(conds[p.Condition])
		slices.Sort(cps)
		var at []string
		for _, c := range slices.Compact(cps) {
			at = append(at, strconv.Itoa(c))
		}
		why := fmt.Sprintf("the table shows %s at checkpoint %s only", p.Condition, strings.Join(at, ", "))
		if p.Condition == runrecord.Vanilla {
			why = "Vanilla is one run, reported at checkpoint 1 (later checkpoints of a plain CLI are vanilla-continuation@k)"
		}
		b.warn("%s: %d row(s) of %s not used: %s", k.of, count[k], k.arm, why)
	}
}
