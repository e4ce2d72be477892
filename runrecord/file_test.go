package runrecord

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAppendAndTornLastLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log.jsonl")
	for i := 0; i < 3; i++ {
		if err := Append(p, map[string]int{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"n": 9`) // a crash mid-append
	f.Close()
	var got []int
	torn, err := ReadLines(p, func(b []byte) error {
		var v map[string]int
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		got = append(got, v["n"])
		return nil
	})
	if err != nil || !torn || len(got) != 3 || got[2] != 2 {
		t.Fatalf("got %v torn=%v err=%v", got, torn, err)
	}
}

func TestCorruptMiddleLineIsNamed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log.jsonl")
	os.WriteFile(p, []byte("{\"n\":1}\nnot json\n{\"n\":2}\n"), 0o644)
	_, err := ReadLines(p, func(b []byte) error { var v any; return json.Unmarshal(b, &v) })
	if err == nil || !strings.Contains(err.Error(), "log.jsonl:2: corrupt record") {
		t.Fatalf("got %v", err)
	}
}

func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b.json")
	if err := WriteJSON(p, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
	var v map[string]string
	if err := ReadJSON(p, &v); err != nil || v["k"] != "v" {
		t.Fatal(err)
	}
}
