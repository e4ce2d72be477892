package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `benchmark,config,condition,checkpoint,task,metric,value,tokens
gamecraft,c1,vanilla,1,t1,overall,40.5,2590000
gamecraft,c1,hoh,3,t1,overall,71.25,
`

func TestDecodeAndRoundTrip(t *testing.T) {
	rows, err := Decode(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Value != 40.5 || rows[0].Tokens != 2590000 || rows[1].HasTokens() {
		t.Fatalf("unexpected rows %+v", rows)
	}
	if rows[1].Arm().String() != "hoh@3" || rows[0].Arm().String() != "vanilla" || rows[0].Rep != 1 {
		t.Fatalf("arms: %v %v", rows[0].Arm(), rows[1].Arm())
	}
	var buf bytes.Buffer
	if err := Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	again, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Value != rows[0].Value || again[0].Tokens != rows[0].Tokens || again[1].HasTokens() {
		t.Fatalf("round trip changed rows: %+v", again)
	}
}

func TestDecodeErrorsNameTheLine(t *testing.T) {
	cases := map[string]string{
		"unknown column \"colour\"":         "benchmark,config,condition,checkpoint,task,metric,value,colour\n",
		"missing required column \"value\"": "benchmark,config,condition,checkpoint,task,metric\n",
		"line 3: value":                     "benchmark,config,condition,checkpoint,task,metric,value\nb,c,hoh,1,t,m,1\nb,c,hoh,1,t2,m,abc\n",
		"line 2: checkp":                    "benchmark,config,condition,checkpoint,task,metric,value\nb,c,hoh,0,t,m,1\n",
		"line 2: empty t":                   "benchmark,config,condition,checkpoint,task,metric,value\nb,c,hoh,1,,m,1\n",
		"line 2: value \"NaN\"":             "benchmark,config,condition,checkpoint,task,metric,value\nb,c,hoh,1,t,m,NaN\n",
	}
	for want, in := range cases {
		_, err := Decode(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("input %q: error %v, want it to contain %q", in, err, want)
		}
	}
}

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

func TestParseArm(t *testing.T) {
	for in, want := range map[string]Arm{"hoh@3": {HoH, 3}, "vanilla": {Vanilla, 1}, "vanilla-continuation@2": {VanillaContinuation, 2}} {
		got, err := ParseArm(in)
		if err != nil || got != want {
			t.Errorf("ParseArm(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"hoh@0", "hoh@x", "@2", ""} {
		if _, err := ParseArm(bad); err == nil {
			t.Errorf("ParseArm(%q) accepted", bad)
		}
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
