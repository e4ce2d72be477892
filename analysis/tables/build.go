package tables

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hoh-research/hoh/analysis/bootstrap"
	"github.com/hoh-research/hoh/analysis/dominance"
	"github.com/hoh-research/hoh/analysis/metrics"
	"github.com/hoh-research/hoh/analysis/paper"
	"github.com/hoh-research/hoh/runrecord"
)

// Status says how a recomputed cell relates to the printed one.
type Status string

const (
	Match        Status = "match"         // recomputed rounds to the printed value
	Differs      Status = "differs"       // beyond the printed rounding; Note says why
	ReportedOnly Status = "reported-only" // printed, but no per-task data to recompute it
	ComputedOnly Status = "computed-only" // recomputed, nothing printed to compare with
)

// Cell is one value of a table.
type Cell struct {
	paper.Coords // where it is: its ID, and the printed value's key

	Computed float64
	// Exact is the recomputed value in rationals when it was computed
	// exactly (means, deltas, tokens, eta); Computed is its nearest float.
	// Displays round Exact once, half to even; nil: Computed is the value.
	Exact       *big.Rat
	HasComputed bool
	// RoundingBound is how far the recomputed value can move if its per-task
	// inputs were the unrounded values behind their printed digits.
	RoundingBound float64

	Reported      float64
	HasReported   bool
	Decimals      int
	ReportedTable string

	Difference float64 // Computed - Reported, when both exist
	Status     Status
	Note       string
	// N is the number of tasks behind the cell (tables from records).
	N int
}

// Line is a table row; a heading line has no cells.
type Line struct {
	Label   string
	Heading bool
	Cells   []*Cell // nil entries are empty cells
}

// Comparison is a paired comparison of an arm with a baseline over tasks.
type Comparison struct {
	Benchmark, Config  string
	Arm, Baseline      runrecord.Arm
	Metric             string
	N                  int
	MeanDiff, Lo, Hi   float64  // 95% paired CI (Table.Interval)
	MeanDiffExact      *big.Rat // MeanDiff in rationals
	Wins, Ties, Losses int
}

// Table is a built table.
type Table struct {
	Name, Title string
	Columns     []string
	Lines       []Line
	Comparisons []Comparison
	// Interval is the method of the comparisons' CIs (bootstrap.PercentileMethod or TMethod).
	Interval string
	Warnings []string // what the table leaves out and why (missing or unknown labels)
	Remarks  []string // how to read cells of an unusual shape (ragged final checkpoints)
	// Unequal lists arms compared over different task sets
	// (Config.AllowUnequalTasks); such a table says so under it.
	Unequal []string
	// Fewer lists cells over fewer tasks than their column's header says.
	Fewer []string
	// Imported lists the configurations imported from Harbor (their
	// tokens come from Harbor's results, not usage.jsonl).
	Imported     []string
	onlyImported bool
}

// Cells lists the table's non-empty cells in row order.
func (t *Table) Cells() []*Cell {
	var out []*Cell
	for _, l := range t.Lines {
		for _, c := range l.Cells {
			if c != nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// Notes are the explanations of the cells that differ, one per cell.
func (t *Table) Notes() []string {
	var out []string
	for _, c := range t.Cells() {
		if c.Status == Differs {
			out = append(out, fmt.Sprintf("%s: recomputed %s, printed %s: %s", c.ID(),
				c.computed(c.Decimals+2), fmtNum(c.Reported, c.Decimals), c.Note))
		}
	}
	return out
}

type builder struct {
	spec      Spec
	boot      Bootstrap
	ix        *metrics.Index
	printed   map[paper.Coords]paper.Reported
	dominance map[string]*dominance.Result // benchmark -> pool result

	poolValues  map[string]map[string]float64 // member -> task -> reward
	poolDomains map[string]string

	fromRecords bool // shaped by the records (--results), not the paper
	// allowUnequal: arms over different task sets are compared anyway;
	// differences are then taken over the tasks both have.
	allowUnequal bool
	lay          layout // what adapt chose
	warnings     []string
}

// warn records what the table leaves out and why, once.
func (b *builder) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	for _, x := range b.warnings {
		if x == w {
			return
		}
	}
	b.warnings = append(b.warnings, w)
}

func newBuilder(s Spec, boot Bootstrap, ix *metrics.Index, reported []paper.Reported) *builder {
	b := &builder{spec: s, boot: boot, ix: ix, printed: map[paper.Coords]paper.Reported{}, dominance: map[string]*dominance.Result{}}
	// First table in ReportedTables order wins.
	for i := len(s.ReportedTables) - 1; i >= 0; i-- {
		for _, r := range reported {
			if r.Table == s.ReportedTables[i] {
				b.printed[r.Coords] = r
			}
		}
	}
	return b
}

// computeFn returns the value (exact, or nil with a float computed),
// its per-task rounding bound, and ok=false when the data needed are absent
// (not an error: the cell is reported-only).
type computeFn func() (v float64, exact *big.Rat, bound float64, ok bool, err error)

func (b *builder) cell(at paper.Coords, f computeFn) (*Cell, error) {
	c := &Cell{Coords: at, Decimals: 2}
	if f != nil {
		v, exact, bound, ok, err := f()
		if err != nil {
			return nil, fmt.Errorf("table %s: %s: %w", b.spec.Name, c.ID(), err)
		}
		if exact != nil {
			v = metrics.Float(exact)
		}
		c.Computed, c.Exact, c.RoundingBound, c.HasComputed = v+0, exact, bound, ok
	}
	if r, ok := b.printed[at]; ok {
		c.Reported, c.HasReported, c.Decimals, c.ReportedTable = r.Value, true, r.Decimals, r.Table
	}
	switch {
	case c.HasComputed && c.HasReported:
		c.Difference = c.Computed - c.Reported
		if c.Exact != nil {
			c.Difference = metrics.Float(new(big.Rat).Sub(c.Exact, metrics.FloatExact(c.Reported)))
		}
		c.Status = Match
		if !paper.Matches(c.Computed, c.Reported, c.Decimals) {
			c.Status = Differs
			c.Note = b.explain(c)
		}
	case c.HasComputed:
		c.Status = ComputedOnly
		if b.fromRecords {
			c.N = b.count(at.Benchmark, at.Config, at.Arm, at.Scope)
		}
		if at.Metric == "tokens_m" && c.Computed > 0 && c.Computed < 1 {
			// Own runs are often far below a million tokens: keep 3 significant digits.
			c.Decimals = min(9, 2+int(math.Ceil(-math.Log10(c.Computed))))
		}
	case c.HasReported:
		c.Status = ReportedOnly
	default:
		return nil, nil
	}
	return c, nil
}

func (b *builder) explain(c *Cell) string {
	if n, ok := b.spec.Notes[c.ID()]; ok {
		return n
	}
	if math.Abs(c.Difference) <= paper.Tolerance(c.Decimals)+c.RoundingBound && strings.HasPrefix(c.Metric, "dominance") {
		return fmt.Sprintf("within what rounding allows: rewards printed to 2 decimals tie where the unrounded rewards need not; resolving the ties between equal nonzero printed rewards either way moves this value by up to %.2f points", c.RoundingBound)
	}
	if math.Abs(c.Difference) <= paper.Tolerance(c.Decimals)+c.RoundingBound {
		return fmt.Sprintf("within the rounding of the per-task values: they are printed rounded, so the value from the unrounded scores can lie up to %s from the recomputed one", strconv.FormatFloat(c.RoundingBound, 'g', 3, 64))
	}
	return "not explained by rounding; no explanation recorded"
}

// tieBound is how far a member's dominance (0-1 scale) can move when its
// ties with other members are resolved either way. Only ties between equal
// nonzero rewards that carry rounded digits count: two rewards printed as
// 0.15 may differ unrounded, while 0.00 is a failed gate. Data at full
// precision have real ties and no bound.
func (b *builder) tieBound(bench, member string) float64 {
	mine := b.poolValues[member]
	if halfUnit(values(mine)) == 0 {
		return 0
	}
	perDomain := map[string][]float64{}
	for task, d := range b.poolDomains {
		ties := 0
		for other, vals := range b.poolValues {
			if other != member && mine[task] != 0 && vals[task] == mine[task] {
				ties++
			}
		}
		perDomain[d] = append(perDomain[d], 0.5*float64(ties)/float64(len(b.poolValues)-1))
	}
	total := 0.0
	for _, xs := range perDomain {
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		total += sum / float64(len(xs))
	}
	return total / float64(len(perDomain))
}

func (b *builder) has(bench, config string, arm runrecord.Arm, metric string) bool {
	return b.ix.Has(metrics.Selector{Benchmark: bench, Config: config, Arm: arm, Metric: metric})
}

// halfUnit is half a unit in the last decimal any input carries (up to 6):
// how far each input may be from the unrounded value behind it.
func halfUnit(values []float64) float64 {
	d := 0
	for _, v := range values {
		k := 0
		for ; k <= 6; k++ {
			x := v * math.Pow(10, float64(k))
			if math.Abs(x-math.Round(x)) < 1e-6 {
				break
			}
		}
		if k > 6 {
			return 0 // full precision: nothing was rounded
		}
		d = max(d, k)
	}
	return 0.5 * math.Pow(10, -float64(d))
}

// scoped returns the per-task values of a series restricted to scope,
// each rounded once from its exact value.
func (b *builder) scoped(bench, config string, arm runrecord.Arm, metric, scope string) (map[string]float64, bool, error) {
	ex, ok, err := b.scopedExact(bench, config, arm, metric, scope)
	if !ok || err != nil {
		return nil, ok, err
	}
	return metrics.Floats(ex), true, nil
}

// scopedExact returns the exact per-task values of a series restricted to scope.
func (b *builder) scopedExact(bench, config string, arm runrecord.Arm, metric, scope string) (map[string]*big.Rat, bool, error) {
	if !b.has(bench, config, arm, metric) {
		return nil, false, nil
	}
	vals, err := b.ix.TaskExact(metrics.Selector{Benchmark: bench, Config: config, Arm: arm, Metric: metric})
	if err != nil {
		return nil, false, err
	}
	kind, label, _ := strings.Cut(scope, ":")
	switch kind {
	case "all":
		return vals, true, nil
	case "task":
		v, ok := vals[label]
		if !ok {
			return nil, false, nil
		}
		return map[string]*big.Rat{label: v}, true, nil
	case "group", "category":
		g := metrics.Group
		if kind == "category" {
			g = metrics.Category
		}
		labels, err := b.ix.Labels(bench, g)
		if errors.Is(err, metrics.ErrNoLabels) {
			b.warn("%s records carry no %s labels: the %s columns are empty", bench, kind, kind)
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		out := map[string]*big.Rat{}
		for t, v := range vals {
			if labels[t] == label {
				out[t] = v
			}
		}
		return out, len(out) > 0, nil
	}
	return nil, false, fmt.Errorf("unknown scope %q", scope)
}

func values(m map[string]float64) []float64 {
	out := make([]float64, 0, len(m))
	for _, t := range metrics.Tasks(m) {
		out = append(out, m[t])
	}
	return out
}

func (b *builder) mean(bench, config string, arm runrecord.Arm, metric, scope string) computeFn {
	return func() (float64, *big.Rat, float64, bool, error) {
		if task, one := strings.CutPrefix(scope, "task:"); one {
			// A per-task table's cell: what SummarizeExact gives for the
			// one task, without a map and a sort per cell.
			if !b.has(bench, config, arm, metric) {
				return 0, nil, 0, false, nil
			}
			vals, err := b.ix.TaskExact(metrics.Selector{Benchmark: bench, Config: config, Arm: arm, Metric: metric})
			if err != nil {
				return 0, nil, 0, false, err
			}
			v, ok := vals[task]
			if !ok {
				return 0, nil, 0, false, nil
			}
			ex := metrics.MeanExact([]*big.Rat{v})
			return metrics.Float(ex), ex, halfUnit([]float64{metrics.Float(v)}), true, nil
		}
		vals, ok, err := b.scopedExact(bench, config, arm, metric, scope)
		if !ok || err != nil {
			return 0, nil, 0, false, err
		}
		s, err := metrics.SummarizeExact(vals)
		return s.Mean, s.Exact, halfUnit(exactValues(vals)), err == nil, err
	}
}

func (b *builder) delta(bench, config string, arm, baseline runrecord.Arm, metric, scope string) computeFn {
	return func() (float64, *big.Rat, float64, bool, error) {
		t, ok, err := b.scopedExact(bench, config, arm, metric, scope)
		if !ok || err != nil {
			return 0, nil, 0, false, err
		}
		base, ok, err := b.scopedExact(bench, config, baseline, metric, scope)
		if !ok || err != nil {
			return 0, nil, 0, false, err
		}
		if b.allowUnequal {
			t, base = common(t, base)
		}
		d, err := metrics.MeanDeltaExact(t, base)
		if err != nil {
			return 0, nil, 0, false, err
		}
		return metrics.Float(d), d, halfUnit(exactValues(t)) + halfUnit(exactValues(base)), true, nil
	}
}

func (b *builder) tokens(bench, config string, arm runrecord.Arm) computeFn {
	return func() (float64, *big.Rat, float64, bool, error) {
		sel := metrics.Selector{Benchmark: bench, Config: config, Arm: arm}
		tok, err := b.tokensByTask(bench, config, arm)
		if err != nil || tok == nil {
			return 0, nil, 0, false, err
		}
		s, err := b.ix.MeanTokensMillions(sel)
		if err != nil {
			return 0, nil, 0, false, err
		}
		ms := values(tok)
		for i := range ms {
			ms[i] *= 1e-6
		}
		return s.Mean, s.Exact, halfUnit(ms), true, nil
	}
}

func (b *builder) eta(bench, config string, arm, vanilla runrecord.Arm, metric string) computeFn {
	return func() (float64, *big.Rat, float64, bool, error) {
		sel := func(a runrecord.Arm) metrics.Selector {
			return metrics.Selector{Benchmark: bench, Config: config, Arm: a, Metric: metric}
		}
		if !b.has(bench, config, arm, metric) || !b.has(bench, config, vanilla, metric) {
			return 0, nil, 0, false, nil
		}
		e, err := b.ix.Efficiency(sel(arm), sel(vanilla))
		var undef *metrics.UndefinedError
		if errors.As(err, &undef) {
			return 0, nil, 0, false, nil
		}
		if err != nil {
			return 0, nil, 0, false, err
		}
		return e.Eta, e.EtaExact, 0, true, nil
	}
}

// dominancePct is FrontierSWE Dominance (Eq. 13-16, macro over categories)
// of config/arm within the configured pool, in percent.
func (b *builder) dominancePct(bench, config string, arm, baseline runrecord.Arm) computeFn {
	return func() (float64, *big.Rat, float64, bool, error) {
		res, ok, err := b.pool(bench)
		if !ok || err != nil {
			return 0, nil, 0, false, err
		}
		x, ok := res.Exact[member(config, arm)]
		if !ok {
			return 0, nil, 0, false, nil
		}
		v := new(big.Rat).Set(x)
		bound := b.tieBound(bench, member(config, arm))
		if !baseline.IsZero() {
			base, ok := res.Exact[member(config, baseline)]
			if !ok {
				return 0, nil, 0, false, nil
			}
			v.Sub(v, base)
			bound += b.tieBound(bench, member(config, baseline))
		}
		v.Mul(v, big.NewRat(100, 1))
		f, _ := v.Float64()
		return f, v, 100 * bound, true, nil
	}
}

// member names config at arm in the dominance pool.
func member(config string, arm runrecord.Arm) string { return config + "|" + arm.String() }

// pool is bench's Dominance over the pool of configs x arms (ok false:
// not computed, said in a warning where the records are why), computed once.
func (b *builder) pool(bench string) (*dominance.Result, bool, error) {
	if r, ok := b.dominance[bench]; ok {
		return r, r != nil, nil
	}
	b.dominance[bench] = nil
	pool, ok, err := b.poolMembers(bench)
	if !ok || err != nil {
		return nil, false, err
	}
	domains, ok, err := b.poolLabels(bench, pool)
	if !ok || err != nil {
		return nil, false, err
	}
	compared := b.commonTasks(bench, pool, domains)
	b.poolValues = map[string]map[string]float64{}
	for m, vals := range pool {
		b.poolValues[m] = metrics.Floats(vals)
	}
	b.poolDomains = compared
	res, err := dominance.ComputeExact(pool, compared, dominance.Macro)
	if err != nil {
		return nil, false, err
	}
	b.dominance[bench] = res
	return res, true, nil
}

// poolMembers is each pool member's exact per-task reward (ok false: fewer
// than two members, or a spec's pool incomplete).
func (b *builder) poolMembers(bench string) (map[string]map[string]*big.Rat, bool, error) {
	pool := map[string]map[string]*big.Rat{}
	for _, c := range b.spec.Pool.Configs {
		for _, a := range b.spec.Pool.Arms {
			if !b.has(bench, c, a, "reward") {
				if b.fromRecords {
					continue // the pool is the config x arm pairs present
				}
				return nil, false, nil // an incomplete pool changes every value: do not compute
			}
			v, err := b.ix.TaskExact(metrics.Selector{Benchmark: bench, Config: c, Arm: a, Metric: "reward"})
			if err != nil {
				return nil, false, err
			}
			pool[member(c, a)] = v
		}
	}
	if len(pool) < 2 {
		return nil, false, nil
	}
	return pool, true, nil
}

// poolLabels is each task's category (ok false, with a warning: some task
// of the pool has none, so the macro average cannot be taken).
func (b *builder) poolLabels(bench string, pool map[string]map[string]*big.Rat) (map[string]string, bool, error) {
	domains, err := b.ix.Labels(bench, metrics.Category)
	if errors.Is(err, metrics.ErrNoLabels) {
		b.warn("%s records carry no category labels: Dominance (a macro average over categories) is not computed", bench)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var unlabelled []string
	for _, vals := range pool {
		for t := range vals {
			if domains[t] == "" && !slices.Contains(unlabelled, t) {
				unlabelled = append(unlabelled, t)
			}
		}
	}
	if len(unlabelled) > 0 {
		sort.Strings(unlabelled)
		b.warn("%s tasks without a category: %s; Dominance (a macro average over categories) is not computed", bench, strings.Join(unlabelled, ", "))
		return nil, false, nil
	}
	return domains, true, nil
}

// commonTasks is the category of each task every pool member has, cutting
// the pool's members down to them.
func (b *builder) commonTasks(bench string, pool map[string]map[string]*big.Rat, domains map[string]string) map[string]string {
	// Dominance compares members task by task: it is taken over the tasks
	// every member has (with --allow-unequal-tasks; else the table was
	// refused), and the table says which it left out.
	compared := map[string]string{}
	var left []string
	for t, d := range domains {
		inAll, inAny := true, false
		for _, vals := range pool {
			_, ok := vals[t]
			inAll, inAny = inAll && ok, inAny || ok
		}
		switch {
		case inAll:
			compared[t] = d
		case inAny:
			left = append(left, t)
		}
	}
	if len(left) > 0 {
		sort.Strings(left)
		b.warn("%s Dominance is computed over the %d task(s) every pool member has; left out, missing from some member: %s",
			bench, len(compared), strings.Join(left, ", "))
		for m, vals := range pool {
			kept := make(map[string]*big.Rat, len(compared))
			for t := range compared {
				kept[t] = vals[t]
			}
			pool[m] = kept // a copy: the index's series are shared
		}
	}
	return compared
}

// pairInput is what a comparison is computed from: each arm's exact
// per-task values and, aligned by task, their floats.
type pairInput struct {
	x, y   map[string]*big.Rat
	tasks  []string
	xv, yv []float64
}

// compareInput finds arm's and baseline's values (nil: either lacks the
// metric).
func (b *builder) compareInput(bench, config string, arm, baseline runrecord.Arm, metric string) (*pairInput, error) {
	if !b.has(bench, config, arm, metric) || !b.has(bench, config, baseline, metric) {
		return nil, nil
	}
	sel := func(a runrecord.Arm) metrics.Selector {
		return metrics.Selector{Benchmark: bench, Config: config, Arm: a, Metric: metric}
	}
	x, err := b.ix.TaskExact(sel(arm))
	if err != nil {
		return nil, err
	}
	y, err := b.ix.TaskExact(sel(baseline))
	if err != nil {
		return nil, err
	}
	if b.allowUnequal {
		x, y = common(x, y)
	}
	tasks, xv, yv, err := metrics.Align(metrics.Floats(x), metrics.Floats(y))
	if err != nil {
		hint := ""
		if b.ix != nil && b.fromRecords || b.spec.Name == "tasks" {
			hint = "; run the missing trials, or pass --allow-unequal-tasks to compare over the tasks both have"
		}
		return nil, fmt.Errorf("table %s: %s %s vs %s: %w%s", b.spec.Name, config, arm, baseline, err, hint)
	}
	return &pairInput{x: x, y: y, tasks: tasks, xv: xv, yv: yv}, nil
}

// compare is arm vs baseline given the paired bootstrap's interval ci of
// in: the interval resamples floats; the mean difference and win/tie/loss
// are exact (1000000.000000000001 beats 1000000).
func compare(bench, config string, arm, baseline runrecord.Arm, metric string, in *pairInput, ci bootstrap.Interval) (*Comparison, error) {
	x, y := in.x, in.y
	cmp := &Comparison{Benchmark: bench, Config: config, Arm: arm, Baseline: baseline, Metric: metric,
		N: len(in.xv), Lo: ci.Lo, Hi: ci.Hi}
	d, err := metrics.MeanDeltaExact(x, y)
	if err != nil {
		return nil, err
	}
	cmp.MeanDiff, cmp.MeanDiffExact = metrics.Float(d), d
	for _, t := range in.tasks {
		switch x[t].Cmp(y[t]) {
		case 1:
			cmp.Wins++
		case 0:
			cmp.Ties++
		default:
			cmp.Losses++
		}
	}
	return cmp, nil
}

// comparisonJob is an arm to compare with a baseline in a config.
type comparisonJob struct {
	config        string
	arm, baseline runrecord.Arm
}

// comparisonJobs lists a table's comparisons in order. Arms are compared
// with Vanilla and, where the table has another baseline (Table 3: Full
// HoH@T), with that too: the paper claims every ablation loses to Full
// HoH@3 on every task, which win/tie/loss checks.
func (b *builder) comparisonJobs(configs []string) []comparisonJob {
	var jobs []comparisonJob
	for _, toVanilla := range []bool{true, false} {
		for _, c := range configs {
			for _, a := range b.spec.Compare {
				base := b.spec.Vanilla
				if !toVanilla {
					base = b.baselineOf(a)
					if base.IsZero() || base == b.spec.Vanilla {
						continue
					}
				}
				if a != base {
					jobs = append(jobs, comparisonJob{c, a, base})
				}
			}
		}
	}
	return jobs
}

// comparisons adds a table's comparisons, failing at the first one that
// fails, as if each were computed in turn; their bootstraps are computed
// together first (bootstrap.PairedDifferences: the same intervals, faster).
func (b *builder) comparisons(t *Table, bench string, configs []string, metric string) error {
	jobs := b.comparisonJobs(configs)
	inputs, errs := make([]*pairInput, len(jobs)), make([]error, len(jobs))
	pairOf := make([]int, len(jobs))
	var pairs []bootstrap.Pair
	for i, j := range jobs {
		inputs[i], errs[i] = b.compareInput(bench, j.config, j.arm, j.baseline, metric)
		if errs[i] == nil && inputs[i] != nil {
			pairOf[i] = len(pairs)
			pairs = append(pairs, bootstrap.Pair{A: inputs[i].xv, B: inputs[i].yv})
		}
	}
	cis, ciErrs := bootstrap.PairedDifferences(pairs, bootstrap.Options{Resamples: b.boot.Resamples, Seed: b.boot.Seed, Method: b.boot.Interval})
	for i, j := range jobs {
		if errs[i] != nil {
			return errs[i]
		}
		if inputs[i] == nil {
			continue
		}
		if err := ciErrs[pairOf[i]]; err != nil {
			return err
		}
		cmp, err := compare(bench, j.config, j.arm, j.baseline, metric, inputs[i], cis[pairOf[i]])
		if err != nil {
			return err
		}
		t.Comparisons = append(t.Comparisons, *cmp)
		t.Interval = b.boot.Interval
	}
	return nil
}

// armLabelAmong labels a among the arms shown beside it: an ablation's
// label omits the paper's T=3 only when no other checkpoint of it is shown.
func armLabelAmong(a runrecord.Arm, shown []runrecord.Arm) string {
	c, _ := runrecord.LookupCondition(a.Condition)
	for _, o := range shown {
		if o != a && o.Condition == a.Condition && c.Ablation {
			return fmt.Sprintf("%s@%d", c.Label, a.Checkpoint)
		}
	}
	return armLabel(a)
}

// armLabel is the arm as the paper prints it (runrecord's catalogue).
func armLabel(a runrecord.Arm) string { return a.Label() }

func configLabel(c string) string {
	if n, ok := paper.ConfigNames[c]; ok {
		return n
	}
	return c
}

// uncovered reports the tasks of a benchmark that count in its overall
// columns but in none of the label columns shown: no label, or a label
// that is not a column.
func (b *builder) uncovered(bench string, g metrics.Grouping, shown []string) {
	labels, err := b.ix.Labels(bench, g)
	if err != nil {
		return // no labels at all is reported where a column needs them
	}
	var out []string
	for _, r := range b.ix.TaskFirstRows(bench) {
		switch l := labels[r.Task]; {
		case l == "":
			out = append(out, r.Task+" (no "+string(g)+")")
		case !slices.Contains(shown, l):
			out = append(out, fmt.Sprintf("%s (%s %q)", r.Task, g, l))
		}
	}
	if len(out) > 0 {
		b.warn("%s: %d task(s) count in the benchmark's overall values but in no %s column: %s",
			bench, len(out), g, strings.Join(out, ", "))
	}
}

// taskOrder lists a benchmark's tasks in first-appearance order with their label.
func taskOrder(ix *metrics.Index, bench string) (tasks []string, label map[string]string) {
	label = map[string]string{}
	for _, r := range ix.TaskFirstRows(bench) {
		tasks = append(tasks, r.Task)
		label[r.Task] = r.Group + r.Category
	}
	// Keep paper order inside a label but group tasks of one label together.
	first := map[string]int{}
	for i, t := range tasks {
		if _, ok := first[label[t]]; !ok {
			first[label[t]] = i
		}
	}
	sort.SliceStable(tasks, func(i, j int) bool { return first[label[tasks[i]]] < first[label[tasks[j]]] })
	return tasks, label
}

func (b *builder) tokensByTask(bench, config string, arm runrecord.Arm) (map[string]float64, error) {
	if !b.ix.HasArm(metrics.Selector{Benchmark: bench, Config: config, Arm: arm}) {
		return nil, nil
	}
	tok, err := b.ix.TaskTokens(metrics.Selector{Benchmark: bench, Config: config, Arm: arm})
	if err != nil || len(tok) == 0 {
		return nil, err // len 0: the arm has no token counts, so nothing to recompute
	}
	return tok, nil
}

// exactValues is values of an exact series, each rounded once.
func exactValues(m map[string]*big.Rat) []float64 {
	out := make([]float64, 0, len(m)) // values(metrics.Floats(m)) without the map
	for _, t := range metrics.TasksOf(m) {
		out = append(out, metrics.Float(m[t]))
	}
	return out
}

// common restricts two per-task series to the tasks both have.
func common[V any](a, b map[string]V) (map[string]V, map[string]V) {
	x, y := map[string]V{}, map[string]V{}
	for t, v := range a {
		if w, ok := b[t]; ok {
			x[t], y[t] = v, w
		}
	}
	return x, y
}
