// Package programbench adapts ProgramBench (clean-room reimplementation of a
// program from its executable and docs) to hoh: it loads task.yaml and
// tests.json, builds the clean-room workspace, and scores eval.json output
// (passed / non-ignored tests) and the benchmark-level summary.
package programbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/adapters/benchmark"
)

// TaskYAML is tasks/<instance>/task.yaml.
type TaskYAML struct {
	Repository      string   `yaml:"repository"`
	Commit          string   `yaml:"commit"`
	Language        string   `yaml:"language"`
	Difficulty      string   `yaml:"difficulty"`
	EvalCleanHashes []string `yaml:"eval_clean_hashes"`
}

// TestsFile is tasks/<instance>/tests.json: the evaluator's test list.
type TestsFile struct {
	Branches map[string]Branch `json:"branches"`
}

// Branch is one test branch of tests.json.
type Branch struct {
	Ignored      bool          `json:"ignored"`
	IgnoreReason string        `json:"ignore_reason"`
	Tests        []string      `json:"tests"`
	IgnoredTests []IgnoredTest `json:"ignored_tests"`
}

// IgnoredTest is a test dropped from scoring, with the reasons kept whole.
type IgnoredTest struct {
	Name    string `json:"name"`
	Reasons []any  `json:"reasons"`
}

// Instance is one loaded ProgramBench instance.
type Instance struct {
	ID   string
	Dir  string
	Task TaskYAML
	// Tests is nil when the instance has no tests.json (the shared copy keeps
	// only files under 60 KB).
	Tests *TestsFile
}

// FileError is the benchmark package's error naming one file of a task.
type FileError = benchmark.FileError

// stripTrailingCommas removes commas that directly precede (up to
// whitespace) a closing } or ], outside JSON strings. String contents,
// including escaped quotes, are left untouched.
func stripTrailingCommas(data []byte) []byte {
	out := make([]byte, 0, len(data))
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
		}
		if c == ',' {
			j := i + 1
			for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
				j++
			}
			if j < len(data) && (data[j] == '}' || data[j] == ']') {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// parseTests parses a tests.json leniently (trailing commas allowed) but
// rejects unknown fields.
func parseTests(path string, data []byte) (*TestsFile, error) {
	clean := stripTrailingCommas(data)
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.DisallowUnknownFields()
	var tf TestsFile
	if err := dec.Decode(&tf); err != nil {
		return nil, jsonError(path, clean, err)
	}
	if tf.Branches == nil {
		return nil, &FileError{Path: path, Err: errors.New("no \"branches\" object")}
	}
	for id, b := range tf.Branches {
		for i, it := range b.IgnoredTests {
			if it.Name == "" {
				return nil, &FileError{Path: path, Err: fmt.Errorf("branch %s: ignored_tests[%d] has no name", id, i)}
			}
		}
	}
	return &tf, nil
}

// jsonError adds a line number from the decoder's offset. Stripping commas
// never removes a newline, so lines match the original file.
func jsonError(path string, data []byte, err error) error {
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
		off = min(off, int64(len(data)))
		line = 1 + bytes.Count(data[:off], []byte("\n"))
	}
	return &FileError{Path: path, Line: line, Err: err}
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// parseTaskYAML reads a task.yaml strictly (unknown fields are errors).
func parseTaskYAML(path string, data []byte) (TaskYAML, error) {
	var ty TaskYAML
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&ty); err != nil {
		line := 0
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		return ty, &FileError{Path: path, Line: line, Err: err}
	}
	if ty.Repository == "" || ty.Commit == "" || ty.Language == "" {
		return ty, &FileError{Path: path, Err: errors.New("repository, commit and language are required")}
	}
	return ty, nil
}

// loadInstance reads one tasks/<instance>/ folder.
func loadInstance(dir string) (*Instance, error) {
	inst := &Instance{ID: filepath.Base(dir), Dir: dir}
	path := filepath.Join(dir, "task.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if inst.Task, err = parseTaskYAML(path, data); err != nil {
		return nil, err
	}
	path = filepath.Join(dir, "tests.json")
	data, err = os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, &FileError{Path: path, Err: err}
	default:
		if inst.Tests, err = parseTests(path, data); err != nil {
			return nil, err
		}
	}
	return inst, nil
}

// scan loads every root/tasks/<instance>/ and returns the problems found; a
// nil slice of instances with an error means root itself is unusable.
func scan(root string) ([]*Instance, []error) {
	entries, err := os.ReadDir(filepath.Join(root, "tasks"))
	if err != nil {
		return nil, []error{fmt.Errorf("programbench: %w (expected a ProgramBench checkout with tasks/<instance>/)", err)}
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, []error{fmt.Errorf("programbench: %s holds no instances", filepath.Join(root, "tasks"))}
	}
	var out []*Instance
	var errs []error
	for _, n := range names {
		inst, err := loadInstance(filepath.Join(root, "tasks", n))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, inst)
	}
	return out, errs
}
