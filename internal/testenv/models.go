package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// RequestModels are the models the requests in a provider or relay log
// name, in order: each JSON line's "body" (which may be a JSON string
// holding JSON) and its "model"; lines naming none are passed over.
func RequestModels(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if m := bodyModel(sc.Bytes()); m != "" {
			models = append(models, m)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return models
}

func bodyModel(line []byte) string {
	var l struct {
		Body json.RawMessage `json:"body"`
	}
	if json.Unmarshal(line, &l) != nil {
		return ""
	}
	raw := l.Body
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = []byte(s)
	}
	var b struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return ""
	}
	return b.Model
}
