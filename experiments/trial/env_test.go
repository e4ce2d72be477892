package trial

import (
	"testing"

	"github.com/hoh-research/hoh/experiments/served"
)

// A project loop's mode carries the user's directory and repository, its
// open-ended prompts and no evaluation; a benchmark trial's zero mode none
// of it. The route's relay and served log reach both (the no-model-turn
// verdict reads them).
func TestNewEnvModes(t *testing.T) {
	relay := &served.Relay{}
	route := Route{ServedLog: "served.jsonl", Relay: relay}
	loop := &LoopContext{}
	p := NewEnv(Policy{RunDir: "/state"}, Place{}, route, nil, Mode{Project: &ProjectMode{Workspace: "/proj", GitDir: "/proj/.git", Exclude: []string{".git"}, Loop: loop}})
	if p.evaluates() || p.loop() != loop || len(p.exclude()) != 1 || p.RunDir != "/state" {
		t.Errorf("a project loop's env: %+v", p)
	}
	b := NewEnv(Policy{}, Place{}, route, nil, Mode{WithoutScores: true})
	if !b.evaluates() || b.loop() != nil || b.exclude() != nil || !b.WithoutScores {
		t.Errorf("a step's env: %+v", b)
	}
	for _, e := range []Env{p, b} {
		if e.ServedLog != "served.jsonl" || e.Relay != relay {
			t.Errorf("the route's relay is lost: %+v", e)
		}
	}
}
