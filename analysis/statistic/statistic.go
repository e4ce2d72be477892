// Package statistic says what a statistic is for the tables: a function of
// one arm's per-task values (and, when it compares, its baseline arm's),
// with the name a table config lists it by and the column label it prints
// under. The statistics themselves are packages of their own (median,
// winrate); analysis/statistic/registry lists them.
package statistic

// Input is what a statistic is computed from: the tasks of one benchmark,
// configuration and arm.
type Input struct {
	// Values maps each task to the arm's value of the table's metric.
	Values map[string]float64
	// Baseline maps each task to the baseline arm's value (the table's
	// Vanilla); nil for the baseline arm itself.
	Baseline map[string]float64
}

// Statistic is one registered statistic.
type Statistic struct {
	Name  string // listed in a table config's statistics:, e.g. median
	Label string // the column header
	About string // one line for hoh report's help
	// NeedsBaseline: the statistic compares with the baseline arm, so the
	// baseline's own row has no value.
	NeedsBaseline bool
	// Compute returns the value; ok=false when the input cannot give one
	// (an empty cell, not an error).
	Compute func(Input) (v float64, ok bool, err error)
}
