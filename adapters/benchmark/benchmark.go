// Package benchmark defines what hoh needs from a benchmark: tasks with their
// public specification, an initial workspace A_0, public runtime checks that
// roles may see, and an evaluation of a frozen artifact that only the records
// see. Adapters live in subpackages (builtin, gamecraft, programbench, harbor);
// each declares its kind (package kind) and adapters/benchmark/registry
// lists them.
package benchmark

import (
	"context"
	"fmt"
	"time"

	"github.com/hoh-research/hoh/runrecord"
)

// Task is one benchmark task. Spec is the public specification S and the only
// task text a role prompt may contain.
type Task struct {
	Benchmark string `json:"benchmark"`
	ID        string `json:"id"`
	Name      string `json:"name,omitempty"`
	Family    string `json:"family,omitempty"`
	Group     string `json:"group,omitempty"`
	Category  string `json:"category,omitempty"`
	Spec      string `json:"-"`
	// Dir is the task's folder on the host. It may hold evaluator-only files
	// (tests, rubrics, solutions) and is never shown to an agent.
	Dir    string `json:"dir,omitempty"`
	Limits Limits `json:"limits"`
}

// Limits are the task's resource and time limits (zero means unset).
type Limits struct {
	CPUs            float64       `json:"cpus,omitempty"`
	MemoryMB        int64         `json:"memory_mb,omitempty"`
	StorageMB       int64         `json:"storage_mb,omitempty"`
	GPUs            int           `json:"gpus,omitempty"`
	AllowInternet   bool          `json:"allow_internet"`
	AgentTimeout    time.Duration `json:"agent_timeout_ns,omitempty"`
	VerifierTimeout time.Duration `json:"verifier_timeout_ns,omitempty"`
	Image           string        `json:"image,omitempty"` // prebuilt image; empty: build environment/
}

// LoadNotes is implemented by benchmarks whose loader skipped folders or
// excluded malformed tasks instead of failing: each note names one folder and
// why, and `hoh run` prints them with the plan.
type LoadNotes interface {
	LoadNotes() []string
}

// Preparer is implemented by benchmarks that must make the selected tasks
// ready before any trial starts (GameCraft in Docker builds each task's
// image and checks its verifier can run there). An error refuses the run at
// plan time, before anything is spent.
type Preparer interface {
	Prepare(ctx context.Context, tasks []Task) error
}

// Benchmark is a set of tasks and how to start, check and score them.
type Benchmark interface {
	Name() string
	Tasks(ctx context.Context) ([]Task, error)
	// InitialWorkspace writes A_0 for the task into dir, which exists and is empty.
	InitialWorkspace(ctx context.Context, t Task, dir string) error
	// Check runs the public runtime checks on the artifact in dir.
	Check(ctx context.Context, t Task, dir string) ([]runrecord.CheckResult, error)
	// Evaluate scores the frozen artifact in dir (a fresh copy the caller owns).
	Evaluate(ctx context.Context, t Task, dir string) (runrecord.Evaluation, error)
}

// FileError is a problem with one file of a benchmark checkout, with the
// line when the decoder gives one. Loaders return it so conformance reports
// and error messages name the file.
type FileError struct {
	Path string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }
