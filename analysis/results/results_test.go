package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `benchmark,config,condition,checkpoint,task,metric,value,tokens
gamecraft,c1,vanilla,1,t1,overall,40.5,2590000
gamecraft,c1,hoh,3,t1,overall,71.25,
`

func TestLoadRefusesDuplicatesAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.csv", "b.csv"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(sample), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "appears twice") || !strings.Contains(err.Error(), "a.csv") {
		t.Fatalf("want a duplicate error naming a.csv, got %v", err)
	}
}

func TestLoadSkipsNonResultCSVInFolders(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r.csv"), []byte(sample), 0o644)
	os.WriteFile(filepath.Join(dir, "fig.csv"), []byte("x,y\n1,2\n"), 0o644)
	set, err := Load(dir)
	if err != nil || len(set.Rows) != 2 {
		t.Fatalf("Load: %v, %d rows", err, len(set.Rows))
	}
}

func TestTokensMustAgreeWithinATrial(t *testing.T) {
	in := "benchmark,config,condition,checkpoint,task,metric,value,tokens\nb,c,hoh,1,t,overall,1,10\nb,c,hoh,1,t,art,1,11\n"
	rows, err := Decode(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSet(rows); err == nil || !strings.Contains(err.Error(), "tokens differ") {
		t.Fatalf("want tokens disagreement, got %v", err)
	}
}

func TestTheSameRecordReadTwiceIsKeptOnce(t *testing.T) {
	dir := t.TempDir()
	rec := "benchmark,config,condition,checkpoint,task,metric,value,tokens,source\nb,c,hoh,1,t,pass_rate,100,5,trial-1\n"
	os.MkdirAll(filepath.Join(dir, "trial"), 0o755)
	os.WriteFile(filepath.Join(dir, "scores.csv"), []byte(rec), 0o644)
	os.WriteFile(filepath.Join(dir, "trial", "scores.csv"), []byte(rec), 0o644)
	set, err := Load(dir)
	if err != nil || len(set.Rows) != 1 {
		t.Fatalf("want one row, got %v %v", err, set)
	}
	// A different value under the same key and source is still a conflict.
	os.WriteFile(filepath.Join(dir, "trial", "scores.csv"), []byte(strings.Replace(rec, ",100,", ",90,", 1)), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Fatalf("conflicting duplicate accepted: %v", err)
	}
}
