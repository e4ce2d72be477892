// Package conformance checks a benchmark checkout before it is run: every
// file loads, no unknown fields, and no task needs resources the host lacks.
// It backs `hoh tasks list|show|check`; the CLI wiring lives elsewhere.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/gamecraft"
	"github.com/hoh-research/hoh/adapters/benchmark/programbench"
)

// Kinds are the benchmark kinds Check understands.
var Kinds = []string{"gamecraft", "programbench", "harbor"}

// Severity of a problem: errors make a checkout unusable as is, warnings are
// worth knowing before a run.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Problem is one finding, with the file (and line when known) it concerns.
type Problem struct {
	Severity Severity `json:"severity"`
	Path     string   `json:"path,omitempty"`
	Line     int      `json:"line,omitempty"`
	Task     string   `json:"task,omitempty"`
	Message  string   `json:"message"`
}

func (p Problem) String() string {
	loc := p.Path
	if p.Line > 0 {
		loc += ":" + strconv.Itoa(p.Line)
	}
	if loc == "" {
		loc = p.Task
	}
	return fmt.Sprintf("%-7s %s: %s", p.Severity, loc, p.Message)
}

// Host is what the machine offers to tasks.
type Host struct {
	GPUs     int  `json:"gpus"`
	Internet bool `json:"internet"`
}

// DetectHost counts NVIDIA GPU device nodes and takes internet access from
// HOH_HOST_INTERNET=1; it never probes the network.
func DetectHost() Host {
	gpus, _ := filepath.Glob("/dev/nvidia[0-9]*")
	return Host{GPUs: len(gpus), Internet: os.Getenv("HOH_HOST_INTERNET") == "1"}
}

// Report is the result of checking one checkout.
type Report struct {
	Kind     string           `json:"kind"`
	Root     string           `json:"root"`
	Host     Host             `json:"host"`
	Tasks    []benchmark.Task `json:"tasks"`
	Problems []Problem        `json:"problems"`
}

// Count returns the number of problems of a severity.
func (r Report) Count(s Severity) int {
	n := 0
	for _, p := range r.Problems {
		if p.Severity == s {
			n++
		}
	}
	return n
}

// OK reports whether no error-severity problem was found.
func (r Report) OK() bool { return r.Count(Error) == 0 }

// WriteText writes a human-readable report: a summary line, then every
// problem, errors first.
func (r Report) WriteText(w io.Writer) error {
	status := "OK"
	if !r.OK() {
		status = "FAILED"
	}
	if _, err := fmt.Fprintf(w, "%s %s: %d tasks loaded, %d errors, %d warnings (host: %d GPUs, internet %v): %s\n",
		r.Kind, r.Root, len(r.Tasks), r.Count(Error), r.Count(Warning), r.Host.GPUs, r.Host.Internet, status); err != nil {
		return err
	}
	for _, p := range r.Problems {
		if _, err := fmt.Fprintln(w, "  "+p.String()); err != nil {
			return err
		}
	}
	return nil
}

// WriteTaskTable writes tasks as a table (id, name, family, group/category,
// limits) for `hoh tasks list`.
func WriteTaskTable(w io.Writer, tasks []benchmark.Task) error {
	t := tablewriter.NewWriter(w)
	t.Header("ID", "Name", "Family", "Group", "CPUs", "Memory MB", "GPUs", "Internet", "Agent timeout")
	for _, x := range tasks {
		group := x.Group
		if group == "" {
			group = x.Category
		}
		if err := t.Append(x.ID, x.Name, x.Family, group, strconv.FormatFloat(x.Limits.CPUs, 'g', -1, 64),
			strconv.FormatInt(x.Limits.MemoryMB, 10), strconv.Itoa(x.Limits.GPUs),
			strconv.FormatBool(x.Limits.AllowInternet), x.Limits.AgentTimeout.String()); err != nil {
			return err
		}
	}
	return t.Render()
}

// Check checks the checkout at path against the detected host.
func Check(kind, path string) (Report, error) { return CheckHost(kind, path, DetectHost()) }

// CheckHost checks the checkout at path against the given host. The error is
// for an unknown kind only; everything wrong with the checkout is a Problem.
func CheckHost(kind, path string, host Host) (Report, error) {
	r := Report{Kind: kind, Root: path, Host: host}
	switch kind {
	case "gamecraft":
		checkGamecraft(&r)
	case "programbench":
		checkProgramBench(&r)
	case "harbor":
		checkHarbor(&r)
	default:
		return r, fmt.Errorf("conformance: unknown kind %q (known: %s)", kind, strings.Join(Kinds, ", "))
	}
	sort.SliceStable(r.Problems, func(i, j int) bool {
		a, b := r.Problems[i], r.Problems[j]
		if a.Severity != b.Severity {
			return a.Severity == Error
		}
		return a.Path < b.Path
	})
	return r, nil
}

// List loads the checkout and returns its tasks; any load problem is an error.
func List(kind, path string) ([]benchmark.Task, error) {
	switch kind {
	case "gamecraft":
		b, err := gamecraft.Load(path)
		if err != nil {
			return nil, err
		}
		return b.Tasks(context.Background())
	case "programbench":
		b, err := programbench.Load(path)
		if err != nil {
			return nil, err
		}
		return b.Tasks(context.Background())
	case "harbor":
		return listHarbor(path)
	}
	return nil, fmt.Errorf("conformance: unknown kind %q (known: %s)", kind, strings.Join(Kinds, ", "))
}

// problemOf turns a loader error into a Problem with its file and line.
func problemOf(err error) Problem {
	p := Problem{Severity: Error, Message: err.Error()}
	var fe *benchmark.FileError
	if errors.As(err, &fe) {
		p.Path, p.Line, p.Message = fe.Path, fe.Line, fe.Err.Error()
	}
	return p
}

// hostProblems flags tasks whose limits ask for what the host lacks.
func hostProblems(r *Report, t benchmark.Task, file string) {
	if t.Limits.GPUs > r.Host.GPUs {
		r.Problems = append(r.Problems, Problem{Severity: Error, Path: file, Task: t.ID,
			Message: fmt.Sprintf("task needs %d GPU(s), host has %d", t.Limits.GPUs, r.Host.GPUs)})
	}
	if t.Limits.AllowInternet && !r.Host.Internet {
		r.Problems = append(r.Problems, Problem{Severity: Warning, Path: file, Task: t.ID,
			Message: "task allows internet access (allow_internet=true) but the host has none: it will run offline"})
	}
}

func checkGamecraft(r *Report) {
	b, errs := gamecraft.Scan(r.Root)
	for _, err := range errs {
		r.Problems = append(r.Problems, problemOf(err))
	}
	if b == nil {
		return
	}
	r.Tasks, _ = b.Tasks(context.Background())
	for _, t := range r.Tasks {
		hostProblems(r, t, filepath.Join(t.Dir, "task.toml"))
		td, _ := b.Task(t.ID)
		if cmd := td.Rubric.BuildCheck.Cmd; cmd != "" && cmd != "godot --headless --path /workspace/game --quit-after 5" {
			r.Problems = append(r.Problems, Problem{Severity: Warning, Path: filepath.Join(t.Dir, "tests", "rubric.json"), Task: t.ID,
				Message: "build_check.cmd differs from the public build command hoh runs: " + cmd})
		}
		if !td.Weights.Equal(gamecraft.PaperWeights) {
			r.Problems = append(r.Problems, Problem{Severity: Warning, Path: filepath.Join(t.Dir, "tests", "rubric.json"), Task: t.ID,
				Message: fmt.Sprintf("score_formula weights %s differ from the paper's %s", td.Weights, gamecraft.PaperWeights)})
		}
	}
}

func checkProgramBench(r *Report) {
	insts, errs := programbench.Scan(r.Root)
	for _, err := range errs {
		r.Problems = append(r.Problems, problemOf(err))
	}
	for _, in := range insts {
		r.Tasks = append(r.Tasks, programbench.TaskOf(in))
		if in.Tests == nil {
			r.Problems = append(r.Problems, Problem{Severity: Warning, Path: filepath.Join(in.Dir, "tests.json"), Task: in.ID,
				Message: "no tests.json: ignored tests cannot be dropped when scoring this instance"})
		}
	}
}
