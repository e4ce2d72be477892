package benchmark

// Reporting is how reports name a benchmark's records (the benchmark column
// of scores.csv) and which metric they show when none is asked for.
type Reporting struct {
	Benchmark     string // the name in records
	Label         string // the name in titles and column headers
	PrimaryMetric string // the per-task metric a table or figure reports
}

// reportings are the record names hoh's kinds write, including datasets of
// a kind (FrontierSWE is a Harbor dataset). They are a table here, not only
// in each kind's registration, because the analysis reads records without
// linking the adapters (no Docker client in `hoh report`'s dependencies):
// this package is the one both layers already share, and it imports
// nothing. Each kind's Reporting (adapters/benchmark/kind) is its entry of
// this table; the registry's test checks that they agree.
var reportings = []Reporting{
	{Benchmark: "builtin", Label: "builtin", PrimaryMetric: "pass_rate"},
	{Benchmark: "gamecraft", Label: "GameCraft-Bench", PrimaryMetric: "overall"},
	{Benchmark: "harbor", Label: "harbor", PrimaryMetric: "reward"},
	{Benchmark: "frontierswe", Label: "FrontierSWE", PrimaryMetric: "reward"},
	{Benchmark: "programbench", Label: "ProgramBench", PrimaryMetric: "pass_rate"},
}

// ReportingOf returns the reporting facts of a record name. A name hoh does
// not know is labelled with itself and has no primary metric: the caller
// picks one from the rows it has.
func ReportingOf(name string) (Reporting, bool) {
	for _, r := range reportings {
		if r.Benchmark == name {
			return r, true
		}
	}
	return Reporting{Benchmark: name, Label: name}, false
}
