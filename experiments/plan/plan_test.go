package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/experiments/config"
)

func load(t *testing.T, conds string) *Plan {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("entries:\n  - name: a\n    match: .\n    steps:\n      - say: ok\n"), 0o644)
	p := filepath.Join(dir, "e.yaml")
	os.WriteFile(p, []byte(`name: p
output: out
benchmark: {kind: builtin}
configs:
  - label: c
    harness: codex
    provider: {name: scripted, api: responses, key_env: K, model: m}
    scripted: {script: s.yaml}
conditions: `+conds+`
repetitions: 2
`), 0o644)
	e, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Build(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func TestKeysAreStableUniqueAndDirsReadable(t *testing.T) {
	a, b := load(t, "[vanilla, hoh@3]"), load(t, "[vanilla, hoh@3]")
	if len(a.Trials) != 2*3*2 {
		t.Fatalf("%d trials", len(a.Trials))
	}
	seen := map[string]bool{}
	for i, tr := range a.Trials {
		if tr.Key != b.Trials[i].Key || seen[tr.Key] {
			t.Fatalf("key %s not stable or not unique", tr.Key)
		}
		seen[tr.Key] = true
	}
	if a.Trials[0].Dir != "c/vanilla/greet/rep-1" {
		t.Errorf("dir %s", a.Trials[0].Dir)
	}
	// Adding a condition keeps the keys of the existing trials.
	c := load(t, "[vanilla, hoh@3, hoh@2]")
	for i := range a.Trials {
		if c.Trials[i].Key != a.Trials[i].Key {
			t.Errorf("key of %s changed", a.Trials[i].Dir)
		}
	}
	d := Diff(a.Lock, c.Lock)
	if len(d) == 0 || !strings.Contains(strings.Join(d, "\n"), "12 trials -> 18 trials") {
		t.Errorf("diff %v", d)
	}
}

func TestShardsPartitionThePlan(t *testing.T) {
	p := load(t, "[vanilla, hoh@3, wo-warm-start@2]")
	count := map[string]int{}
	for k := 1; k <= 3; k++ {
		for _, tr := range p.Select(Shard{K: k, N: 3}) {
			count[tr.Key]++
		}
	}
	if len(count) != len(p.Trials) {
		t.Fatalf("shards cover %d of %d trials", len(count), len(p.Trials))
	}
	for k, n := range count {
		if n != 1 {
			t.Errorf("trial %s in %d shards", k, n)
		}
	}
	for _, bad := range []string{"0/2", "3/2", "x"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("shard %q accepted", bad)
		}
	}
}
