// Package harbor loads and runs tasks in the Harbor task format (task.toml,
// instruction.md, environment/, tests/, solution/), used by FrontierSWE and
// GameCraft-Bench. Agents run in the task container; the verifier runs in a
// fresh container from the same image with the frozen workspace, and only
// then gets tests/ at /tests.
package harbor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hoh-research/hoh/adapters/benchmark"
)

// Harbor's documented defaults.
const (
	DefaultAgentTimeout    = 600 * time.Second
	DefaultVerifierTimeout = 600 * time.Second
	DefaultBuildTimeout    = 600 * time.Second
	DefaultCPUs            = 1
	DefaultMemoryMB        = 2048
	DefaultStorageMB       = 10240
)

// TaskFile is task.toml. Unknown keys are rejected.
type TaskFile struct {
	Version       string `toml:"version"`
	SchemaVersion string `toml:"schema_version"`
	Artifacts     []any  `toml:"artifacts"`
	Task          struct {
		Name        string   `toml:"name"`
		Description string   `toml:"description"`
		Keywords    []string `toml:"keywords"`
		Authors     []struct {
			Name  string `toml:"name"`
			Email string `toml:"email"`
		} `toml:"authors"`
	} `toml:"task"`
	Metadata map[string]any `toml:"metadata"`
	Verifier struct {
		TimeoutSec *float64          `toml:"timeout_sec"`
		Env        map[string]string `toml:"env"`
	} `toml:"verifier"`
	Agent struct {
		TimeoutSec *float64 `toml:"timeout_sec"`
	} `toml:"agent"`
	Environment struct {
		DockerImage     string            `toml:"docker_image"`
		BuildTimeoutSec *float64          `toml:"build_timeout_sec"`
		CPUs            *float64          `toml:"cpus"`
		MemoryMB        *int64            `toml:"memory_mb"`
		StorageMB       *int64            `toml:"storage_mb"`
		GPUs            *int              `toml:"gpus"`
		GPUTypes        []string          `toml:"gpu_types"`
		AllowInternet   *bool             `toml:"allow_internet"`
		OS              string            `toml:"os"`
		MCPServers      []any             `toml:"mcp_servers"`
		Env             map[string]string `toml:"env"`
	} `toml:"environment"`
	Solution struct {
		Env map[string]string `toml:"env"`
	} `toml:"solution"`
}

// UnknownFieldsError names task.toml keys the format does not have.
type UnknownFieldsError struct{ Keys []string }

func (e *UnknownFieldsError) Error() string { return "unknown fields: " + strings.Join(e.Keys, ", ") }

// DecodeTaskFile reads a task.toml strictly: keys outside the free-form
// [metadata] that the format lacks are an *UnknownFieldsError, and syntax
// errors stay a toml.ParseError (for the line). Errors do not name path.
func DecodeTaskFile(path string) (TaskFile, error) {
	var f TaskFile
	data, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return f, err
	}
	var keys []string
	for _, k := range md.Undecoded() {
		// [metadata] is free-form; its sub-keys are expected.
		if len(k) > 0 && k[0] == "metadata" {
			continue
		}
		keys = append(keys, k.String())
	}
	if len(keys) > 0 {
		return f, &UnknownFieldsError{Keys: keys}
	}
	return f, nil
}

// Loaded is a task with its parsed task.toml.
type Loaded struct {
	Task benchmark.Task
	File TaskFile
}

// LoadTask reads the task folder dir. The spec is instruction.md only; tests/
// and solution/ are never read here.
func LoadTask(dataset, dir, categoryKey string) (Loaded, error) {
	var l Loaded
	tomlPath := filepath.Join(dir, "task.toml")
	file, err := DecodeTaskFile(tomlPath)
	if err != nil {
		return l, fmt.Errorf("%s: %w", tomlPath, err)
	}
	l.File = file
	f := &l.File
	switch {
	case f.Version == "1.0" && f.SchemaVersion == "":
	case f.Version == "" && (f.SchemaVersion == "1.1" || f.SchemaVersion == "1.2"):
	default:
		return l, fmt.Errorf("%s: unsupported format: version=%q schema_version=%q (want version=\"1.0\" or schema_version=\"1.1\"|\"1.2\")", tomlPath, f.Version, f.SchemaVersion)
	}
	instrPath := filepath.Join(dir, "instruction.md")
	spec, err := os.ReadFile(instrPath)
	if err != nil {
		return l, fmt.Errorf("%s: %w", instrPath, err)
	}
	if strings.TrimSpace(string(spec)) == "" {
		return l, fmt.Errorf("%s: empty instruction", instrPath)
	}
	lim := benchmark.Limits{
		CPUs: DefaultCPUs, MemoryMB: DefaultMemoryMB, StorageMB: DefaultStorageMB,
		AllowInternet: true, AgentTimeout: DefaultAgentTimeout, VerifierTimeout: DefaultVerifierTimeout,
		Image: f.Environment.DockerImage,
	}
	e := f.Environment
	if e.CPUs != nil {
		lim.CPUs = *e.CPUs
	}
	if e.MemoryMB != nil {
		lim.MemoryMB = *e.MemoryMB
	}
	if e.StorageMB != nil {
		lim.StorageMB = *e.StorageMB
	}
	if e.GPUs != nil {
		lim.GPUs = *e.GPUs
	}
	if e.AllowInternet != nil {
		lim.AllowInternet = *e.AllowInternet
	}
	if f.Agent.TimeoutSec != nil {
		lim.AgentTimeout = seconds(*f.Agent.TimeoutSec)
	}
	if f.Verifier.TimeoutSec != nil {
		lim.VerifierTimeout = seconds(*f.Verifier.TimeoutSec)
	}
	for name, v := range map[string]float64{"environment.cpus": lim.CPUs, "environment.memory_mb": float64(lim.MemoryMB),
		"agent.timeout_sec": lim.AgentTimeout.Seconds(), "verifier.timeout_sec": lim.VerifierTimeout.Seconds()} {
		if v <= 0 {
			return l, fmt.Errorf("%s: %s must be positive", tomlPath, name)
		}
	}
	id := filepath.Base(dir)
	cat := ""
	if categoryKey != "" {
		if v, ok := f.Metadata[categoryKey]; ok {
			s, ok := v.(string)
			if !ok {
				return l, fmt.Errorf("%s: metadata.%s must be a string", tomlPath, categoryKey)
			}
			cat = s
		}
	}
	l.Task = benchmark.Task{
		Benchmark: dataset, ID: id, Name: f.Task.Name, Category: cat,
		Spec: string(spec), Dir: dir, Limits: lim,
	}
	return l, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Runnable reports why a loaded task cannot be run here: no image and no
// environment/Dockerfile, or no tests/test.sh.
func (l Loaded) Runnable() error {
	dir := l.Task.Dir
	if l.Task.Limits.Image == "" {
		if _, err := os.Stat(filepath.Join(dir, "environment", "Dockerfile")); err != nil {
			return fmt.Errorf("%s: no environment.docker_image and no environment/Dockerfile", filepath.Join(dir, "task.toml"))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tests", "test.sh")); err != nil {
		return fmt.Errorf("%s: verifier missing: %w", filepath.Join(dir, "tests", "test.sh"), err)
	}
	return nil
}

// LoadDir loads every task folder (a folder holding task.toml) under root.
func LoadDir(dataset, root, categoryKey string) ([]Loaded, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []Loaded
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "task.toml")); errors.Is(err, os.ErrNotExist) {
			continue
		}
		l, err := LoadTask(dataset, dir, categoryKey)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Task.ID < out[j].Task.ID })
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no Harbor tasks (folders with task.toml)", root)
	}
	return out, nil
}
