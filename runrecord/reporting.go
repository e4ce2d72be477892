package runrecord

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
// the record package is the one both layers share. Each kind's Reporting
// (adapters/benchmark/kind) is its entry of this table; the plan's registry
// test checks that they agree.
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

// Metric is a metric a kind writes and the range of its values on the
// record scale (inclusive).
type Metric struct {
	Name     string
	Min, Max float64
}

const unbounded = 1e308

// metricsOf lists the metrics each kind writes. A kind whose records may
// carry further metrics (Harbor: every key of reward.json) is in
// openMetrics; its rewards have no range the benchmark fixes.
var metricsOf = map[string][]Metric{
	"builtin": {{"pass_rate", 0, 100}},
	"gamecraft": {{"overall", 0, 100}, {"mechanics", 0, 100}, {"depth", 0, 100}, {"visuals", 0, 100},
		{"art", 0, 100}, {"build", 0, 1}, {"reward", 0, 1}},
	"harbor":      {{"reward", -unbounded, unbounded}},
	"frontierswe": {{"reward", -unbounded, unbounded}},
	"programbench": {{"pass_rate", 0, 100}, {"tests_passed", 0, unbounded}, {"tests_total", 0, unbounded},
		{"resolved", 0, 1}, {"almost_resolved", 0, 1}},
}

var openMetrics = map[string]bool{"harbor": true, "frontierswe": true}

// MetricsOf returns the metrics records of a benchmark carry and whether
// its metric names are open (any key of a reward file, or a benchmark hoh
// does not know), so that a name near a listed one is no typo.
func MetricsOf(name string) (metrics []Metric, open bool) {
	ms, known := metricsOf[name]
	return ms, !known || openMetrics[name]
}

// KnownBenchmarks lists the record names hoh knows.
func KnownBenchmarks() []string {
	names := make([]string, len(reportings))
	for i, r := range reportings {
		names[i] = r.Benchmark
	}
	return names
}
