package harbor

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
)

// harborRoot is the folder holding the task folders: path itself, or
// path/tasks for a dataset checkout (GameCraft-Bench keeps its tasks there).
func harborRoot(path string) string {
	if hasTaskFolders(path) {
		return path
	}
	if sub := filepath.Join(path, "tasks"); hasTaskFolders(sub) {
		return sub
	}
	return path
}

func hasTaskFolders(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "task.toml")); err == nil {
				return true
			}
		}
	}
	return false
}

// harborTaskDirs lists the folders under root that hold a task.toml.
func harborTaskDirs(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(d, "task.toml")); err == nil {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// harborProblem turns a task load error into a Problem, with the line when
// the TOML decoder reports one.
func harborProblem(dir string, err error) conformance.Problem {
	p := conformance.Problem{Severity: conformance.Error, Path: filepath.Join(dir, "task.toml"), Task: filepath.Base(dir), Message: err.Error()}
	var pe toml.ParseError
	if errors.As(err, &pe) {
		p.Line = pe.Position.Line
		p.Message = pe.Message
	}
	// The loader prefixes the file name; the Problem carries it already.
	p.Message = strings.TrimPrefix(p.Message, p.Path+": ")
	return p
}

// checkConformance is the Harbor Kind's Check.
func checkConformance(r *conformance.Report) {
	root := harborRoot(r.Root)
	dirs, err := harborTaskDirs(root)
	if err != nil {
		r.Problems = append(r.Problems, conformance.Problem{Severity: conformance.Error, Path: r.Root, Message: err.Error()})
		return
	}
	if len(dirs) == 0 {
		r.Problems = append(r.Problems, conformance.Problem{Severity: conformance.Error, Path: r.Root, Message: "no Harbor tasks (folders with task.toml) here or under tasks/"})
		return
	}
	for _, dir := range dirs {
		l, err := LoadTask("harbor", dir, "")
		if err != nil {
			r.Problems = append(r.Problems, harborProblem(dir, err))
			continue
		}
		t := l.Task
		r.Tasks = append(r.Tasks, t)
		file := filepath.Join(dir, "task.toml")
		add := func(sev conformance.Severity, path, msg string) {
			r.Problems = append(r.Problems, conformance.Problem{Severity: sev, Path: path, Task: t.ID, Message: msg})
		}
		for _, ref := range l.Unsupported() {
			add(conformance.Error, ref.Path, "hoh does not run "+ref.Feature+": "+ref.Reason)
		}
		if t.Limits.Image == "" {
			if _, err := os.Stat(filepath.Join(dir, "environment", "Dockerfile")); err != nil {
				add(conformance.Error, filepath.Join(dir, "environment", "Dockerfile"), "missing: the task has no environment.docker_image, so environment/Dockerfile must exist to build its container (a task with neither, like hello-computer-use's desktop, expects its environment from a provider other than Docker, which hoh does not have)")
			}
		}
		// A task for another OS is refused above: its scripts are not .sh.
		osName := strings.ToLower(l.File.Environment.OS)
		shScripts := osName == "" || osName == "linux"
		// Multi-step tasks keep tests and solutions per step.
		for _, s := range l.File.Steps {
			if !shScripts {
				break
			}
			if stepVerifier(dir, s.Name) == "" {
				add(conformance.Error, filepath.Join(stepDir(dir, s.Name), "tests", "test.sh"), "missing, and no tests/test.sh: step "+s.Name+"'s verifier cannot run")
			}
			if _, err := os.Stat(filepath.Join(stepDir(dir, s.Name), "solution", "solve.sh")); err != nil {
				add(conformance.Warning, filepath.Join(stepDir(dir, s.Name), "solution", "solve.sh"), "missing: the oracle agent cannot check step "+s.Name)
			}
		}
		if !l.MultiStep() && shScripts {
			if _, err := os.Stat(filepath.Join(dir, "tests", "test.sh")); err != nil {
				add(conformance.Error, filepath.Join(dir, "tests", "test.sh"), "missing: the verifier cannot run without tests/test.sh")
			}
			if _, err := os.Stat(filepath.Join(dir, "solution", "solve.sh")); err != nil {
				add(conformance.Warning, filepath.Join(dir, "solution", "solve.sh"), "missing: the oracle agent cannot check this task's pipeline")
			}
		}
		for _, u := range l.Unapplied() {
			add(conformance.Warning, file, u)
		}
		for _, w := range l.Warnings {
			add(conformance.Warning, file, w)
		}
		r.HostProblems(t, file)
	}
}

// listTasks is the Harbor Kind's List: every task that loads (tasks check
// names the broken ones); an error only when none does.
func listTasks(path string) ([]benchmark.Task, error) {
	ls, _, err := loadDir("harbor", harborRoot(path), "")
	if err != nil {
		return nil, err
	}
	out := make([]benchmark.Task, len(ls))
	for i, l := range ls {
		out[i] = l.Task
	}
	return out, nil
}
