package docker

import (
	"errors"
	"fmt"
)

// FailureKind is who is to blame for a failed run.
type FailureKind string

const (
	// Infrastructure: the daemon, the image build, container start, a
	// container that died under the agent.
	Infrastructure FailureKind = "infrastructure"
	// Agent: the agent's own processes misbehaved (e.g. exceeded memory).
	Agent FailureKind = "agent"
)

// InfraError is a failure of the container machinery, with the stage it
// happened in and whether the kernel OOM killer was involved.
type InfraError struct {
	Stage string
	Err   error
	OOM   bool
}

func (e *InfraError) Error() string { return fmt.Sprintf("docker %s: %v", e.Stage, e.Err) }
func (e *InfraError) Unwrap() error { return e.Err }

// Failure is a classified failure with its evidence text.
type Failure struct {
	Kind     FailureKind `json:"kind"`
	OOM      bool        `json:"oom,omitempty"`
	Evidence string      `json:"evidence"`
}

// Classify turns an Executor result into a Failure, or nil when the run
// was not a failure of the sandbox or of resource use. An OOM kill (of a
// process or of the whole container) is the agent's failure: it used more
// memory than the task allows. Everything else the machinery reports is an
// infrastructure failure.
func Classify(code int, oom bool, detail string, err error) *Failure {
	var ie *InfraError
	switch {
	case oom || (errors.As(err, &ie) && ie.OOM):
		ev := detail
		if ev == "" && err != nil {
			ev = err.Error()
		}
		return &Failure{Kind: Agent, OOM: true, Evidence: "out of memory: " + ev}
	case err != nil:
		return &Failure{Kind: Infrastructure, Evidence: err.Error()}
	}
	return nil
}
