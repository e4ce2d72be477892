package builtin

import (
	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/kind"
	"github.com/hoh-research/hoh/runrecord"
)

// Kind registers the built-in tasks: no path, no options, nothing to check.
var Kind = kind.Kind{
	Name:      Name,
	Open:      func(kind.Opening) (benchmark.Benchmark, error) { return Benchmark{}, nil },
	Reporting: reporting(),
}

func reporting() runrecord.Reporting { r, _ := runrecord.ReportingOf(Name); return r }
