package harbor

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Refusal is one feature of a task that hoh does not run, with the file that
// declares it and why.
type Refusal struct {
	Path    string
	Feature string
	Reason  string
}

func (r Refusal) String() string { return fmt.Sprintf("%s: %s: %s", r.Path, r.Feature, r.Reason) }

// MultiStep reports whether the task is a Harbor multi-step task.
func (l Loaded) MultiStep() bool { return len(l.File.Steps) > 0 }

// separateVerifier reports whether the verifier runs in its own environment:
// environment_mode = "separate", or a [verifier.environment] table without an
// explicit mode (Harbor infers separate from it).
func separateVerifier(v VerifierConfig) bool {
	return v.EnvironmentMode == "separate" || (v.EnvironmentMode == "" && v.Environment != nil)
}

// Unsupported lists the features of the task that hoh does not run, so a
// plan can refuse the task by name before any agent starts. GPUs are a host
// question (conformance.HostProblems), not listed here.
func (l Loaded) Unsupported() []Refusal {
	f := l.File
	toml := filepath.Join(l.Task.Dir, "task.toml")
	var out []Refusal
	add := func(path, feature, reason string) { out = append(out, Refusal{path, feature, reason}) }
	out = append(out, l.composeRefusals()...)
	out = append(out, l.mcpRefusals()...)
	if f.Environment.TPU != nil {
		add(toml, "environment.tpu", "hoh runs Docker containers on this host, which has no TPUs")
	}
	if os := strings.ToLower(f.Environment.OS); os != "" && os != "linux" {
		add(toml, "environment.os = "+f.Environment.OS, "hoh runs Linux containers only")
	}
	return out
}

// Unapplied lists declared settings that hoh parses but does not apply;
// the task runs without them (warnings, not refusals).
func (l Loaded) Unapplied() []string {
	f := l.File
	var out []string
	out = append(out, l.mcpWarnings()...)
	if len(f.Environment.GPUTypes) > 0 {
		out = append(out, "environment.gpu_types ("+strings.Join(f.Environment.GPUTypes, ", ")+") is not checked against the host's GPUs")
	}
	return out
}
