package gamecraft

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
)

// TaskFile is a Harbor task.toml: GameCraft-Bench tasks are Harbor tasks.
type TaskFile = harbor.TaskFile

// Rubric is tests/rubric.json: evaluator-only data.
type Rubric struct {
	ScoreFormula   string `json:"score_formula"`
	MaxDemos       int    `json:"max_demos"`
	MaxDemoSeconds int    `json:"max_demo_seconds"`
	BuildCheck     struct {
		ID          string `json:"id"`
		Cmd         string `json:"cmd"`
		Description string `json:"description"`
	} `json:"build_check"`
	Categories []struct {
		Name  string   `json:"name"`
		Items []string `json:"items"`
	} `json:"categories"`
	Requirements []Requirement `json:"requirements"`
}

// Requirement is one judged rubric item.
type Requirement struct {
	ID          string `json:"id"`
	Agg         string `json:"agg"` // max | mean over demos
	Description string `json:"description"`
}

// FileError is the benchmark package's error naming one file of a task.
type FileError = benchmark.FileError

func fileErr(path string, line int, format string, args ...any) error {
	return &FileError{Path: path, Line: line, Err: fmt.Errorf(format, args...)}
}

// decodeTaskFile reads a task.toml strictly.
func decodeTaskFile(path string) (*TaskFile, error) {
	tf, err := harbor.DecodeTaskFile(path)
	if err != nil {
		var pe toml.ParseError
		var unknown *harbor.UnknownFieldsError
		switch {
		case errors.As(err, &pe):
			return nil, fileErr(path, pe.Position.Line, "%s", pe.Message)
		case errors.As(err, &unknown):
			return nil, fileErr(path, 0, "unknown field(s): %s", strings.Join(unknown.Keys, ", "))
		}
		return nil, &FileError{Path: path, Err: err}
	}
	if len(tf.Unknown) > 0 {
		// GameCraft's own tasks are checked strictly (Harbor only warns).
		return nil, fileErr(path, 0, "unknown field(s): %s", strings.Join(tf.Unknown, ", "))
	}
	if tf.SchemaVersion == "" && tf.Version == "" {
		return nil, fileErr(path, 0, "neither schema_version nor version is set")
	}
	if tf.Task.Name == "" {
		return nil, fileErr(path, 0, "[task] name is missing")
	}
	return &tf, nil
}

// decodeRubric reads tests/rubric.json strictly and checks it is coherent:
// every category item is a requirement, and the formula names only BUILD and
// requirement ids.
func decodeRubric(path string) (*Rubric, *Formula, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, &FileError{Path: path, Err: err}
	}
	var r Rubric
	if err := decodeJSONStrict(data, &r); err != nil {
		return nil, nil, jsonFileError(path, data, err)
	}
	if r.ScoreFormula == "" {
		return nil, nil, fileErr(path, 0, "score_formula is missing")
	}
	f, err := parseFormula(r.ScoreFormula)
	if err != nil {
		return nil, nil, fileErr(path, 0, "score_formula: %v", err)
	}
	known := map[string]bool{"BUILD": true}
	for i, q := range r.Requirements {
		if q.ID == "" {
			return nil, nil, fileErr(path, 0, "requirements[%d] has no id", i)
		}
		if known[q.ID] {
			return nil, nil, fileErr(path, 0, "requirement %s is listed twice", q.ID)
		}
		if q.Agg != "max" && q.Agg != "mean" {
			return nil, nil, fileErr(path, 0, "requirement %s: agg %q is neither max nor mean", q.ID, q.Agg)
		}
		known[q.ID] = true
	}
	if err := f.CheckIdentifiers(known); err != nil {
		return nil, nil, fileErr(path, 0, "score_formula: %v", err)
	}
	inCategory := map[string]bool{}
	for _, c := range r.Categories {
		for _, it := range c.Items {
			if !known[it] || it == "BUILD" {
				return nil, nil, fileErr(path, 0, "category %q lists %q, which is not a requirement", c.Name, it)
			}
			if _, err := categoryLetter(it); err != nil {
				return nil, nil, fileErr(path, 0, "category %q: %v", c.Name, err)
			}
			inCategory[it] = true
		}
	}
	for _, q := range r.Requirements {
		if !inCategory[q.ID] {
			return nil, nil, fileErr(path, 0, "requirement %s is in no category", q.ID)
		}
	}
	return &r, f, nil
}

func decodeJSONStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// jsonFileError adds the line number when the JSON decoder gives an offset.
func jsonFileError(path string, data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	line := 0
	if off >= 0 {
		if off > int64(len(data)) {
			off = int64(len(data))
		}
		line = 1 + bytes.Count(data[:off], []byte("\n"))
	}
	return &FileError{Path: path, Line: line, Err: err}
}

// categoryLetter maps a requirement id to its category letter (M, D, V, A).
func categoryLetter(id string) (string, error) {
	if id != "" {
		switch l := id[:1]; l {
		case "M", "D", "V", "A":
			return l, nil
		}
	}
	return "", fmt.Errorf("requirement id %q does not start with M, D, V or A", id)
}

// readInstruction returns instruction.md and its first "# " heading.
func readInstruction(path string) (string, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", &FileError{Path: path, Err: err}
	}
	text := string(data)
	if strings.TrimSpace(text) == "" {
		return "", "", fileErr(path, 0, "instruction is empty")
	}
	for _, line := range strings.Split(text, "\n") {
		if t, ok := strings.CutPrefix(line, "# "); ok {
			return text, strings.TrimSpace(t), nil
		}
	}
	return text, "", nil
}

// taskDirs lists root/tasks/* folders, sorted.
func taskDirs(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "tasks"))
	if err != nil {
		return nil, fmt.Errorf("gamecraft: %w (expected a GameCraft-Bench checkout with tasks/<slug>/)", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, "tasks", e.Name()))
		}
	}
	sort.Strings(dirs)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("gamecraft: %s holds no task folders", filepath.Join(root, "tasks"))
	}
	return dirs, nil
}
