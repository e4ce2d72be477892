package figures

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/analysis/paper"
	"github.com/hoh-research/hoh/analysis/results"
)

// Invocation is one usage.jsonl entry of a trial, with the trial's identity
// read from the trial.json beside it.
type Invocation struct {
	Benchmark, Config, Arm, Task string
	Rep                          int
	Iteration                    int
	Role                         string
	Attempt                      int
	Outcome                      string
	Input, CachedInput, Output   int64
	Reasoning, Total             int64
	Source                       string // file:line
}

// The fields of a trial's records that figures read; the files are written
// by experiments/trial (Layout.Spec, Layout.Usage).
type trialSpec struct {
	Benchmark string `json:"benchmark"`
	Task      string `json:"task"`
	Config    string `json:"config"`
	Arm       string `json:"arm"`
	Rep       int    `json:"rep"`
}

type ledgerLine struct {
	Iteration int    `json:"iteration"`
	Role      string `json:"role"`
	Attempt   int    `json:"attempt"`
	Outcome   string `json:"outcome"`
	Usage     *struct {
		Input       int64 `json:"input"`
		CachedInput int64 `json:"cached_input"`
		Output      int64 `json:"output"`
		Reasoning   int64 `json:"reasoning"`
		Total       int64 `json:"total"`
	} `json:"usage"`
}

const (
	usageFile = "usage.jsonl"
	specFile  = "trial.json"
)

// ReadUsage reads every usage.jsonl below the given folders (or named
// directly), in lexical order. Each needs its trial.json beside it. A bad
// line is an error naming file and line.
func ReadUsage(paths ...string) ([]Invocation, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("figures: %w", err)
		}
		if !st.IsDir() {
			if filepath.Base(p) == usageFile {
				files = append(files, p)
			}
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && d.Name() == usageFile {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("figures: %w", err)
		}
	}
	sort.Strings(files)
	var out []Invocation
	for _, f := range files {
		invs, err := readLedger(f)
		if err != nil {
			return nil, err
		}
		out = append(out, invs...)
	}
	return out, nil
}

func readLedger(path string) ([]Invocation, error) {
	specPath := filepath.Join(filepath.Dir(path), specFile)
	b, err := os.ReadFile(specPath)
	if err != nil {
		return nil, fmt.Errorf("figures: %s has no trial identity: %w", path, err)
	}
	var spec trialSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return nil, fmt.Errorf("figures: %s: %w", specPath, err)
	}
	if spec.Config == "" || spec.Task == "" || spec.Arm == "" {
		return nil, fmt.Errorf("figures: %s: config, task and arm are required", specPath)
	}
	if spec.Rep == 0 {
		spec.Rep = 1
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("figures: %w", err)
	}
	defer f.Close()
	var out []Invocation
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var l ledgerLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return nil, fmt.Errorf("figures: %s line %d: %w", path, n, err)
		}
		if l.Role == "" || l.Usage == nil {
			return nil, fmt.Errorf("figures: %s line %d: role and usage are required", path, n)
		}
		u := l.Usage
		out = append(out, Invocation{
			Benchmark: spec.Benchmark, Config: spec.Config, Arm: spec.Arm, Task: spec.Task, Rep: spec.Rep,
			Iteration: l.Iteration, Role: l.Role, Attempt: l.Attempt, Outcome: l.Outcome,
			Input: u.Input, CachedInput: u.CachedInput, Output: u.Output, Reasoning: u.Reasoning, Total: u.Total,
			Source: fmt.Sprintf("%s:%d", path, n),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("figures: %s: %w", path, err)
	}
	return out, nil
}

// LoadRuns reads run records: per-task rows through results.Load and token
// ledgers (usage.jsonl) found under the same paths. Either may be absent,
// not both.
func LoadRuns(paths ...string) (Data, error) {
	if len(paths) == 0 {
		return Data{}, errors.New("figures: no result paths given")
	}
	var d Data
	set, setErr := results.Load(paths...)
	if setErr == nil {
		d.Set = set
	} else if !strings.Contains(setErr.Error(), "no result CSV files") {
		return d, setErr
	}
	usage, err := ReadUsage(paths...)
	if err != nil {
		return d, err
	}
	d.Usage = usage
	if d.Set == nil && len(d.Usage) == 0 {
		return d, fmt.Errorf("figures: no result CSV files and no %s under %s", usageFile, strings.Join(paths, ", "))
	}
	return d, nil
}

// PaperData assembles each figure's source from the paper's per-task data
// under root/results/paper. The paper's files overlap (the same codex cells
// appear in several tables), so each figure reads only the files and arms
// it needs instead of one merged set.
func PaperData(root string) (map[string]Data, error) {
	dir := filepath.Join(root, "results", "paper")
	read := func(name string, keep func(results.Row) bool) ([]results.Row, error) {
		rows, err := results.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		var out []results.Row
		for _, r := range rows {
			if keep == nil || keep(r) {
				out = append(out, r)
			}
		}
		return out, nil
	}
	set := func(parts ...[]results.Row) (*results.Set, error) {
		var all []results.Row
		for _, p := range parts {
			all = append(all, p...)
		}
		return results.NewSet(all)
	}
	reported, err := paper.LoadReported(filepath.Join(dir, "reported"))
	if err != nil {
		return nil, err
	}
	tables := func(names ...string) []paper.Reported {
		var out []paper.Reported
		for _, r := range reported {
			for _, n := range names {
				if r.Table == n {
					out = append(out, r)
				}
			}
		}
		return out
	}
	arms := func(names ...string) func(results.Row) bool {
		return func(r results.Row) bool {
			for _, n := range names {
				if r.Arm().String() == n {
					return true
				}
			}
			return false
		}
	}
	out := map[string]Data{}

	comps, err := read("gamecraft-components.csv", nil)
	if err != nil {
		return nil, err
	}
	main, err := read("gamecraft-main.csv", nil)
	if err != nil {
		return nil, err
	}
	fswe, err := read("frontierswe-main.csv", nil)
	if err != nil {
		return nil, err
	}
	pass, err := read("gamecraft-pass-controlled.csv", nil)
	if err != nil {
		return nil, err
	}
	hoh12, err := read("gamecraft-main.csv", func(r results.Row) bool {
		return r.Config == "codex-gpt-5.5-high" && arms("hoh@1", "hoh@2")(r)
	})
	if err != nil {
		return nil, err
	}
	abl, err := read("gamecraft-ablations.csv", arms("wo-plan-update@3", "wo-evidence-feedback@3", "wo-warm-start@3"))
	if err != nil {
		return nil, err
	}
	passVH := make([]results.Row, 0, len(pass))
	for _, r := range pass {
		if arms("vanilla", "hoh@3")(r) {
			passVH = append(passVH, r)
		}
	}

	add := func(name string, d Data, parts ...[]results.Row) error {
		s, err := set(parts...)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		d.Set = s
		out[name] = d
		return nil
	}
	for _, e := range []struct {
		name  string
		d     Data
		parts [][]results.Row
	}{
		{"fig4", Data{Scope: "15 games of Table 25, Codex + GPT-5.5 (high) only"}, [][]results.Row{comps}},
		{"fig7", Data{}, [][]results.Row{main}},
		{"fig8", Data{}, [][]results.Row{fswe}},
		{"fig9", Data{Reported: tables("table2")}, [][]results.Row{pass, hoh12}},
		{"fig10", Data{Reported: tables("table3", "table23")}, [][]results.Row{abl, passVH}},
		{"deltas", Data{}, [][]results.Row{main}},
	} {
		if err := add(e.name, e.d, e.parts...); err != nil {
			return nil, err
		}
	}
	out["fig5"] = Data{Missing: "the paper prints no per-task FrontierSWE rewards for HoH@4..10 " +
		"(Figure 5 needs Vanilla and HoH@1..T of one configuration from run records)"}
	out["fig11"] = Data{Missing: "the paper publishes no per-invocation token ledgers " +
		"(Figure 11 needs usage.jsonl from run records)"}
	return out, nil
}

// PaperAll draws every figure the paper's per-task data supports (for
// `make figures`) and skips the others with a reason.
func PaperAll(root string, opts Options) ([]Output, []Skip, error) {
	src, err := PaperData(root)
	if err != nil {
		return nil, nil, err
	}
	return All(src, opts)
}
