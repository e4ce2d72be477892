package viewer

import (
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// hoh view shows dollars where the records carry them: Table 2's cost
// column, each arm's exact mean cost per task.
func TestViewShowsCosts(t *testing.T) {
	dir := t.TempDir()
	writeSynthRun(t, dir, synthOpts{Tasks: 4, Configs: []string{"cfg"}, Arms: []string{"vanilla", "hoh@2"}})
	p := filepath.Join(dir, runrecord.ScoresFile)
	rows, err := runrecord.ReadScores(p)
	must(t, err)
	for i := range rows {
		// $1.25 per million tokens, so each row's cost is exact.
		rows[i].CostUSD = new(big.Rat).Mul(big.NewRat(int64(rows[i].Tokens), 1), big.NewRat(125, 100_000_000))
	}
	must(t, runrecord.WriteScores(p, rows))
	res, err := Build(dir, testOpts(t))
	must(t, err)
	idx := read(t, res.Index)
	if !strings.Contains(idx, "Cost (USD)") {
		t.Fatal("no cost column in the report")
	}
	mean := func(arm string) string {
		sum, n := new(big.Rat), int64(0)
		seen := map[string]bool{}
		for _, r := range rows {
			if r.Arm().String() == arm && !seen[r.Task] {
				seen[r.Task] = true
				sum.Add(sum, r.CostUSD)
				n++
			}
		}
		return runrecord.FormatUSD(sum.Quo(sum, big.NewRat(n, 1)))
	}
	for _, arm := range []string{"vanilla", "hoh@2"} {
		if m := mean(arm); !strings.Contains(idx, m) {
			t.Errorf("the report lacks %s's mean cost %s", arm, m)
		}
	}
}
