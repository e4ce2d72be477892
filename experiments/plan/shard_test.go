package plan

import (
	"context"
	"hash/fnv"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/runrecord"
)

func TestTrialCostCountsRoleInvocations(t *testing.T) {
	for arm, want := range map[string]int{"vanilla@1": 1, "vanilla-continuation@3": 3, "hoh@3": 9, "wo-warm-start@2": 6, "wo-plan-update@3": 7} {
		a, err := runrecord.ParseArm(arm)
		if err != nil {
			t.Fatal(err)
		}
		if got := TrialCost(Trial{Arm: a}); got != want {
			t.Errorf("TrialCost(%s) = %d, want %d", arm, got, want)
		}
	}
}

func TestShardsAreBalancedByEstimatedCost(t *testing.T) {
	p := load(t, "[vanilla, hoh@3, wo-warm-start@2, wo-plan-update@3]")
	const n = 4
	cost, most := make([]int, n+1), 0
	in := map[string]int{}
	for k := 1; k <= n; k++ {
		for _, tr := range p.Select(Shard{K: k, N: n}) {
			cost[k] += TrialCost(tr)
			in[tr.Key]++
		}
	}
	for _, tr := range p.Trials {
		most = max(most, TrialCost(tr))
		if in[tr.Key] != 1 {
			t.Errorf("trial %s is in %d shards", tr.Dir, in[tr.Key])
		}
	}
	if len(in) != len(p.Trials) {
		t.Errorf("the shards hold %d trials, the plan %d", len(in), len(p.Trials))
	}
	lo, hi := cost[1], cost[1]
	for _, c := range cost[1:] {
		lo, hi = min(lo, c), max(hi, c)
	}
	if hi-lo > most {
		t.Errorf("shard costs %v differ by %d, more than the costliest trial's %d", cost[1:], hi-lo, most)
	}
	if again := Deal(load(t, "[vanilla, hoh@3, wo-warm-start@2, wo-plan-update@3]").Trials, n); !reflect.DeepEqual(again, Deal(p.Trials, n)) {
		t.Error("the same plan dealt two ways")
	}
}

func TestAResumedShardKeepsItsDeal(t *testing.T) {
	const n = 4
	p, cfg, err := buildFrom(t, strings.Replace(loadText, "CONDS", "[vanilla, hoh@3, wo-warm-start@2]", 1))
	if err != nil {
		t.Fatal(err)
	}
	out := p.Experiment.Output
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	writeLock := func(l runrecord.Lock) {
		t.Helper()
		if err := runrecord.WriteJSON(runrecord.RunLayout{Dir: out}.Lock(), l); err != nil {
			t.Fatal(err)
		}
	}
	reload := func() *Plan {
		t.Helper()
		e, err := config.Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Build(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	shardOf := func(p *Plan) map[string]int {
		got := map[string]int{}
		for k := 1; k <= n; k++ {
			for _, tr := range p.Select(Shard{K: k, N: n}) {
				got[tr.Key] = k
			}
		}
		return got
	}

	p.LockShard(Shard{K: 2, N: n})
	if p.Lock.ShardBy != runrecord.ShardByCost || !reflect.DeepEqual(p.Lock.ShardOf, shardOf(p)) {
		t.Fatalf("the lock holds deal %s %v, the shards are %v", p.Lock.ShardBy, p.Lock.ShardOf, shardOf(p))
	}
	writeLock(p.Lock)
	if got := shardOf(reload()); !reflect.DeepEqual(got, p.Lock.ShardOf) {
		t.Errorf("resumed shards %v, locked %v", got, p.Lock.ShardOf)
	}

	// The lock decides, not a new deal: a trial moved in the lock (as a
	// changed cost estimate or plan would move it) stays where the lock says;
	// a trial the lock lacks (added since) takes its key's hash.
	moved, added := p.Trials[0].Key, p.Trials[1].Key
	locked := p.Lock
	locked.ShardOf = map[string]int{}
	for k, v := range p.Lock.ShardOf {
		locked.ShardOf[k] = v
	}
	locked.ShardOf[moved] = locked.ShardOf[moved]%n + 1
	delete(locked.ShardOf, added)
	writeLock(locked)
	resumed := reload()
	got := shardOf(resumed)
	if got[moved] != locked.ShardOf[moved] || got[added] != fnvShard(added, n) {
		t.Errorf("moved trial in shard %d (locked %d), added trial in %d (hash %d)", got[moved], locked.ShardOf[moved], got[added], fnvShard(added, n))
	}
	resumed.LockShard(Shard{K: 2, N: n})
	if !reflect.DeepEqual(resumed.Lock.ShardOf, locked.ShardOf) {
		t.Error("a resume rewrote the locked deal")
	}

	// A lock from before deals keeps every trial on its key's hash.
	legacy := p.Lock
	legacy.ShardBy, legacy.ShardOf = "", nil
	writeLock(legacy)
	resumed = reload()
	for key, k := range shardOf(resumed) {
		if k != fnvShard(key, n) {
			t.Errorf("legacy trial %s in shard %d, its hash says %d", key, k, fnvShard(key, n))
		}
	}
	if resumed.LockShard(Shard{K: 2, N: n}); resumed.Lock.ShardBy != "" || resumed.Lock.ShardOf != nil {
		t.Errorf("a legacy run's resume locked a deal: %s %v", resumed.Lock.ShardBy, resumed.Lock.ShardOf)
	}
}

// fnvShard is how trials were sharded before deals.
func fnvShard(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32()%uint32(n)) + 1
}
