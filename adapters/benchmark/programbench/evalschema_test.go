package programbench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv"
)

// upstreamEvalSchema is derived by hand from ProgramBench's pydantic models
// in src/programbench/eval/eval.py (facebookresearch/ProgramBench, read at
// commit 01407ae7): EvaluationResult, TestResult and TestBranchError all
// forbid extra fields; TestResult requires name, status (a Literal of six
// values) and extra (a dict; branch defaults to ""); TestBranchError requires
// error_code and error_details (strings); test_branch_errors maps a branch to
// a list of TestBranchError; every EvaluationResult field has a default, and
// error_code, error_details, solution_branch and executable_hash may be null.
var upstreamEvalSchema = obj{
	props: map[string]any{
		"test_results": list{obj{
			props: map[string]any{
				"name":   "string",
				"branch": "string",
				"status": enum{"passed", "skipped", "failure", "error", "system_error", "not_run"},
				"extra":  dict{},
			},
			required: []string{"name", "status", "extra"},
		}},
		"error_code":      "string|null",
		"error_details":   "string|null",
		"log":             list{dict{}},
		"solution_branch": "string|null",
		"test_branches":   list{"string"},
		"test_branch_errors": dictOf{list{obj{
			props:    map[string]any{"error_code": "string", "error_details": "string"},
			required: []string{"error_code", "error_details"},
		}}},
		"executable_hash": "string|null",
		"warnings":        list{"string"},
	},
}

// Schema nodes: a type name ("string", "string|null"), enum, list (items),
// dict (any JSON object), dictOf (object of one value schema), obj (closed
// object with required keys).
type (
	enum   []string
	list   struct{ items any }
	dict   struct{}
	dictOf struct{ values any }
	obj    struct {
		props    map[string]any
		required []string
	}
)

func validateUpstreamEval(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return validate(upstreamEvalSchema, v, "$")
}

func validate(schema, v any, at string) error {
	switch s := schema.(type) {
	case string:
		if _, ok := v.(string); ok {
			return nil
		}
		if v == nil && s == "string|null" {
			return nil
		}
		return fmt.Errorf("%s: want %s, got %T", at, s, v)
	case enum:
		for _, e := range s {
			if v == e {
				return nil
			}
		}
		return fmt.Errorf("%s: %v is not one of %v", at, v, []string(s))
	case list:
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want a list, got %T", at, v)
		}
		for i, x := range a {
			if err := validate(s.items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		return nil
	case dict:
		if _, ok := v.(map[string]any); !ok {
			return fmt.Errorf("%s: want an object, got %T", at, v)
		}
		return nil
	case dictOf:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %T", at, v)
		}
		for k, x := range m {
			if err := validate(s.values, x, at+"."+k); err != nil {
				return err
			}
		}
		return nil
	case obj:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %T", at, v)
		}
		for _, r := range s.required {
			if _, ok := m[r]; !ok {
				return fmt.Errorf("%s: %s is required", at, r)
			}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := s.props[k]
			if !ok {
				return fmt.Errorf("%s: extra field %s is forbidden", at, k)
			}
			if err := validate(ps, m[k], at+"."+k); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: unknown schema node %T", at, schema)
}

// Upstream's own fixtures validate, and the shapes hoh used to write
// (test_branch_errors as strings, no extra) do not: the schema can fail.
func TestUpstreamFixturesValidateAgainstTheDerivedSchema(t *testing.T) {
	runs := testenv.SharedPath(t, "benchmarks", "programbench", "test_runs")
	files, _ := filepath.Glob(filepath.Join(runs, "*", "*.eval.json"))
	if len(files) < 2 {
		t.Fatalf("want upstream's correct and incorrect eval.json fixtures under %s, got %v", runs, files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := validateUpstreamEval(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, bad := range []string{
		`{"test_branch_errors": {"b1": "no results"}}`,
		`{"test_results": [{"name": "t", "branch": "b", "status": "passed"}]}`,
		`{"test_results": [{"name": "t", "status": "ok", "extra": {}}]}`,
		`{"score": 1}`,
	} {
		if validateUpstreamEval([]byte(bad)) == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
