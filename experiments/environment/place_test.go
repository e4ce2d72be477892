package environment

import (
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
)

// On the host an attempt's place is the host executor alone: no role
// containers and no kept checkpoints, whatever the benchmark asks to keep.
func TestPlaceOnTheHost(t *testing.T) {
	env, err := Open(t.Context(), nil, benchmark.Task{ID: "t"}, t.TempDir(), Options{HostExec: sandbox.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	p := env.Place(nil, benchmark.Task{ID: "t"}, &Keep{Trial: "x"})
	if p.Exec != env.Exec || p.Task.ID != "t" || p.Checkpoints != nil || p.RoleEnvironment != nil || p.Exchange != nil {
		t.Fatalf("a host place: %+v", p)
	}
}

type namedHarness struct {
	harness.Harness
	spec harness.Spec
}

// On the host a CLI built for the provider it reaches is used as built (a
// test double stays the one instance); one built for another provider (the
// configured endpoint, when hoh's relay stands in between) is rebuilt for
// the relay, on the host, with no container tools.
func TestCLIOnTheHost(t *testing.T) {
	env, err := Open(t.Context(), nil, benchmark.Task{ID: "t"}, t.TempDir(), Options{HostExec: sandbox.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	configured := harness.Provider{BaseURL: "https://api.example/v1", Model: "m"}
	relay := harness.Provider{BaseURL: "http://127.0.0.1:1234/v1", Model: "m"}
	built := &namedHarness{}
	build := func(s harness.Spec) (harness.Harness, error) { return &namedHarness{spec: s}, nil }
	spec := harness.Spec{Kind: "codex", Provider: configured}
	if h, _ := env.CLI(built, spec, configured, build); h != built {
		t.Fatalf("a host CLI for its own provider was rebuilt: %+v", h)
	}
	h, err := env.CLI(built, spec, relay, build)
	if err != nil {
		t.Fatal(err)
	}
	got := h.(*namedHarness).spec
	if h == built || got.Provider != relay || got.InContainer || got.Kind != "codex" {
		t.Fatalf("a host CLI for the relay: %+v", got)
	}
}
