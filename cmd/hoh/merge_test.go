package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// hoh merge refuses, before writing anything, a set of shards with one
// missing (naming it), a directory that holds no run, and shards run by
// different hoh versions.
func TestMergeNamesMissingShardsAndRefusesMixedVersions(t *testing.T) {
	base := t.TempDir()
	shard := func(name, sh, version string) string {
		d := filepath.Join(base, name)
		if err := runrecord.WriteJSON(runrecord.RunLayout{Dir: d}.Lock(), runrecord.Lock{Experiment: "x", Shard: sh, HohVersion: version}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	s1, s3 := shard("shard-1", "1/3", "v1"), shard("shard-3", "3/3", "v1")
	for _, c := range []struct {
		dirs []string
		want string
	}{
		{[]string{s1, s3}, "shard(s) 2/3 missing"},
		{[]string{s1, filepath.Join(base, "shard-2"), s3}, "no run in " + filepath.Join(base, "shard-2")},
		{[]string{s1, shard("shard-2v", "2/3", "v2"), s3}, "different hoh versions: v1 ("},
		{[]string{s1, shard("other", "1/2", "v1")}, "a shard of 3"},
	} {
		out := filepath.Join(base, "merged")
		err := mergeCmd(append([]string{"-o", out}, c.dirs...), &strings.Builder{}, &strings.Builder{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("merge %v: %v, want %q", c.dirs, err, c.want)
		}
		if _, err := runrecord.ReadScores(filepath.Join(out, "scores.csv")); err == nil {
			t.Errorf("merge %v wrote %s", c.dirs, out)
		}
	}
	if err := checkShards([]string{s1, shard("shard-2b", "2/3", "v1"), s3}); err != nil {
		t.Errorf("a complete set of shards: %v", err)
	}
}
