// Package harbor loads and runs tasks in the Harbor task format (task.toml,
// instruction.md, environment/, tests/, solution/), used by FrontierSWE and
// GameCraft-Bench. Agents run in the task container, committed to an image
// at each checkpoint; the verifier runs in a container started from that
// image with the checkpoint's workspace, and only then gets tests/ at /tests.
package harbor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hoh-research/hoh/adapters/benchmark"
)

// Harbor's documented defaults.
const (
	DefaultAgentTimeout    = 600 * time.Second
	defaultVerifierTimeout = 600 * time.Second
	DefaultBuildTimeout    = 600 * time.Second
	DefaultCPUs            = 1
	DefaultMemoryMB        = 2048
	DefaultStorageMB       = 10240
)

// Num is a task.toml number: Harbor's pydantic model coerces integers and
// floats alike (memory_mb = 2048.0 and cpus = 1 are both valid).
type Num float64

// UnmarshalTOML implements toml.Unmarshaler.
func (n *Num) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		*n = Num(x)
	case float64:
		*n = Num(x)
	default:
		return fmt.Errorf("want a number, got %T %v", v, v)
	}
	return nil
}

// Ptr returns the value as *float64 (nil when unset).
func (n *Num) Ptr() *float64 {
	if n == nil {
		return nil
	}
	f := float64(*n)
	return &f
}

// Healthcheck is [environment.healthcheck] (Docker HEALTHCHECK semantics).
type Healthcheck struct {
	Command          string `toml:"command"`
	IntervalSec      *Num   `toml:"interval_sec"`
	TimeoutSec       *Num   `toml:"timeout_sec"`
	StartPeriodSec   *Num   `toml:"start_period_sec"`
	StartIntervalSec *Num   `toml:"start_interval_sec"`
	Retries          *Num   `toml:"retries"`
}

// AgentConfig is [agent] (and [steps.agent]).
type AgentConfig struct {
	TimeoutSec   *Num     `toml:"timeout_sec"`
	User         string   `toml:"user"`
	NetworkMode  string   `toml:"network_mode"`
	AllowedHosts []string `toml:"allowed_hosts"`
}

// VerifierConfig is [verifier] (and [steps.verifier]). EnvironmentMode is
// "shared" (Harbor's default: the agent's environment) or "separate" (built
// from tests/Dockerfile, configured by [verifier.environment]).
type VerifierConfig struct {
	TimeoutSec      *Num               `toml:"timeout_sec"`
	Env             map[string]string  `toml:"env"`
	User            string             `toml:"user"`
	EnvironmentMode string             `toml:"environment_mode"`
	NetworkMode     string             `toml:"network_mode"`
	AllowedHosts    []string           `toml:"allowed_hosts"`
	Environment     *EnvironmentConfig `toml:"environment"`
}

// EnvironmentConfig is [environment] (and a separate verifier's environment).
type EnvironmentConfig struct {
	DockerImage     string `toml:"docker_image"`
	BuildTimeoutSec *Num   `toml:"build_timeout_sec"`
	CPUs            *Num   `toml:"cpus"`
	MemoryMB        *Num   `toml:"memory_mb"`
	StorageMB       *Num   `toml:"storage_mb"`
	// Memory and Storage are the legacy size strings ("2G", "512M"),
	// migrated to MemoryMB/StorageMB when those are unset.
	Memory        string            `toml:"memory"`
	Storage       string            `toml:"storage"`
	GPUs          *Num              `toml:"gpus"`
	GPUTypes      []string          `toml:"gpu_types"`
	TPU           any               `toml:"tpu"`
	AllowInternet *bool             `toml:"allow_internet"`
	NetworkMode   string            `toml:"network_mode"`
	AllowedHosts  []string          `toml:"allowed_hosts"`
	OS            string            `toml:"os"`
	Workdir       string            `toml:"workdir"`
	SkillsDir     string            `toml:"skills_dir"`
	MCPServers    []map[string]any  `toml:"mcp_servers"`
	Env           map[string]string `toml:"env"`
	Healthcheck   *Healthcheck      `toml:"healthcheck"`
}

// Step is one [[steps]] entry of a multi-step task.
type Step struct {
	Name        string         `toml:"name"`
	MinReward   MinReward      `toml:"min_reward"`
	Artifacts   []any          `toml:"artifacts"`
	Agent       AgentConfig    `toml:"agent"`
	Verifier    VerifierConfig `toml:"verifier"`
	Healthcheck *Healthcheck   `toml:"healthcheck"`
}

// TaskFile is task.toml as Harbor reads it. Keys it does not know are kept
// in Unknown (Harbor ignores them; hoh warns).
type TaskFile struct {
	Version                 string `toml:"version"`
	SchemaVersion           string `toml:"schema_version"`
	Source                  string `toml:"source"`
	Artifacts               []any  `toml:"artifacts"`
	MultiStepRewardStrategy string `toml:"multi_step_reward_strategy"`
	Steps                   []Step `toml:"steps"`
	Task                    struct {
		Name        string   `toml:"name"`
		Description string   `toml:"description"`
		Keywords    []string `toml:"keywords"`
		Authors     []struct {
			Name  string `toml:"name"`
			Email string `toml:"email"`
		} `toml:"authors"`
	} `toml:"task"`
	Metadata    map[string]any    `toml:"metadata"`
	Verifier    VerifierConfig    `toml:"verifier"`
	Agent       AgentConfig       `toml:"agent"`
	Environment EnvironmentConfig `toml:"environment"`
	Solution    struct {
		Env map[string]string `toml:"env"`
	} `toml:"solution"`

	// Unknown lists keys outside the format (not decoded), dotted.
	Unknown []string `toml:"-"`
	// step names the step this is the view of (ForStep), "" for the task.
	step string
}

// Versions Harbor has written; others load with a warning, since Harbor
// itself never validates the string.
var knownVersions = map[string]bool{"1.0": true, "1.1": true, "1.2": true, "1.3": true}

// UnknownFieldsError names task.toml keys the format does not have (used by
// loaders stricter than Harbor, such as GameCraft's).
type UnknownFieldsError struct{ Keys []string }

func (e *UnknownFieldsError) Error() string { return "unknown fields: " + strings.Join(e.Keys, ", ") }

// freeForm are tables whose sub-keys are arbitrary (metadata, env maps,
// artifact and MCP server entries).
func freeForm(k toml.Key) bool {
	if len(k) == 0 {
		return false
	}
	switch k[0] {
	case "metadata", "artifacts":
		return true
	}
	for i, part := range k {
		if part == "env" || part == "mcp_servers" || part == "tpu" || (part == "artifacts" && i > 0) {
			return true
		}
	}
	return false
}

// DecodeTaskFile reads a task.toml. Syntax and type errors stay a
// toml.ParseError (for the line); keys the format lacks go to Unknown.
// Errors do not name path.
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
	for _, k := range md.Undecoded() {
		if !freeForm(k) {
			f.Unknown = append(f.Unknown, k.String())
		}
	}
	return f, nil
}

// parseSize reads a legacy Harbor size ("2G", "512M", "1024", "1.5GB") as MB.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "T"):
		mult, t = 1024*1024, strings.TrimSuffix(t, "T")
	case strings.HasSuffix(t, "G"):
		mult, t = 1024, strings.TrimSuffix(t, "G")
	case strings.HasSuffix(t, "M"):
		t = strings.TrimSuffix(t, "M")
	case strings.HasSuffix(t, "K"):
		mult, t = 1.0/1024, strings.TrimSuffix(t, "K")
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a size such as \"2G\" or \"512M\"", s)
	}
	return int64(v * mult), nil
}

// Loaded is a task with its parsed task.toml and the warnings loading it
// produced (each names the file and key).
type Loaded struct {
	Task     benchmark.Task
	File     TaskFile
	Warnings []string
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
	warn := func(format string, args ...any) {
		l.Warnings = append(l.Warnings, fmt.Sprintf(format, args...))
	}
	for _, k := range f.Unknown {
		warn("unknown key %s ignored (as Harbor does)", k)
	}
	if f.SchemaVersion != "" && !knownVersions[f.SchemaVersion] {
		warn("schema_version %q is not one hoh knows (1.0-1.3); read as the current format", f.SchemaVersion)
	}
	if f.Version != "" && !knownVersions[f.Version] {
		warn("version %q is not one hoh knows (1.0-1.3); read as the current format", f.Version)
	}
	e := &f.Environment
	for _, m := range []struct {
		legacy, key string
		dst         **Num
	}{{e.Memory, "memory", &e.MemoryMB}, {e.Storage, "storage", &e.StorageMB}} {
		if m.legacy == "" {
			continue
		}
		mb, err := parseSize(m.legacy)
		if err != nil {
			return l, fmt.Errorf("%s: environment.%s: %w", tomlPath, m.key, err)
		}
		if *m.dst == nil {
			n := Num(mb)
			*m.dst = &n
		}
	}
	instrPath := filepath.Join(dir, "instruction.md")
	spec, err := os.ReadFile(instrPath)
	if err != nil && len(f.Steps) > 0 {
		// Multi-step tasks keep one instruction per step.
		spec, err = []byte(stepsSpec(dir, f.Steps)), nil
	}
	if err != nil {
		return l, fmt.Errorf("%s: %w", instrPath, err)
	}
	if strings.TrimSpace(string(spec)) == "" {
		return l, fmt.Errorf("%s: empty instruction", instrPath)
	}
	if err := validateSteps(dir, *f); err != nil {
		return l, fmt.Errorf("%s: %w", tomlPath, err)
	}
	lim := taskLimits(f)
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

// taskLimits are the task's limits: task.toml's environment, agent and
// verifier settings over hoh's defaults (legacy sizes already converted).
func taskLimits(f *TaskFile) benchmark.Limits {
	e := &f.Environment
	lim := benchmark.Limits{
		CPUs: DefaultCPUs, MemoryMB: DefaultMemoryMB, StorageMB: DefaultStorageMB,
		AllowInternet: true, AgentTimeout: DefaultAgentTimeout, VerifierTimeout: defaultVerifierTimeout,
		Image: e.DockerImage,
	}
	if e.CPUs != nil {
		lim.CPUs = float64(*e.CPUs)
	}
	if e.MemoryMB != nil {
		lim.MemoryMB = int64(*e.MemoryMB)
	}
	if e.StorageMB != nil {
		lim.StorageMB = int64(*e.StorageMB)
	}
	if e.GPUs != nil {
		lim.GPUs = int(*e.GPUs)
	}
	if e.AllowInternet != nil {
		lim.AllowInternet = *e.AllowInternet
	}
	if e.NetworkMode == "no-network" || e.NetworkMode == "allowlist" || (e.NetworkMode == "" && len(e.AllowedHosts) > 0) {
		lim.AllowInternet = false // an allowlist reaches its hosts through hoh's egress proxy only
	}
	if f.Agent.TimeoutSec != nil {
		lim.AgentTimeout = seconds(float64(*f.Agent.TimeoutSec))
	}
	if f.Verifier.TimeoutSec != nil {
		lim.VerifierTimeout = seconds(float64(*f.Verifier.TimeoutSec))
	}
	return lim
}

// stepsSpec joins the steps' instructions (steps/NAME/instruction.md): the
// task's text for display and its digest; each step runs with its own
// (Benchmark.Steps).
func stepsSpec(dir string, steps []Step) string {
	var b strings.Builder
	for _, s := range steps {
		data, err := os.ReadFile(filepath.Join(dir, "steps", s.Name, "instruction.md"))
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "## Step %s\n\n%s\n", s.Name, data)
	}
	return b.String()
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
	if l.MultiStep() {
		for _, s := range l.File.Steps {
			if stepVerifier(dir, s.Name) == "" {
				return fmt.Errorf("%s: step %s has no verifier: neither %s nor %s exists", filepath.Join(dir, "task.toml"), s.Name, filepath.Join(stepDir(dir, s.Name), "tests", "test.sh"), filepath.Join(dir, "tests", "test.sh"))
			}
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "tests", "test.sh")); err != nil {
		return fmt.Errorf("%s: verifier missing: %w", filepath.Join(dir, "tests", "test.sh"), err)
	}
	return nil
}

// loadDir loads every task folder (a folder holding task.toml) under root.
// Loading is per task: a broken task is one error in broken (naming its
// file) and the rest load; err is set only when root is unreadable or no
// task loads.
func loadDir(dataset, root, categoryKey string) (tasks []Loaded, broken []error, err error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, err
	}
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
			broken = append(broken, err)
			continue
		}
		tasks = append(tasks, l)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Task.ID < tasks[j].Task.ID })
	if len(tasks) == 0 {
		if len(broken) > 0 {
			return nil, broken, errors.Join(broken...)
		}
		return nil, nil, fmt.Errorf("%s: no Harbor tasks (folders with task.toml)", root)
	}
	return tasks, broken, nil
}

var envTemplate = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// resolveEnvTemplate expands Harbor's ${VAR} and ${VAR:-default} from
// lookup (the host's environment). An unset VAR without a default is an
// error naming VAR; values never appear in errors.
func resolveEnvTemplate(v string, lookup func(string) (string, bool)) (string, error) {
	var missing []string
	out := envTemplate.ReplaceAllStringFunc(v, func(m string) string {
		sub := envTemplate.FindStringSubmatch(m)
		if val, ok := lookup(sub[1]); ok && (val != "" || sub[2] == "") {
			return val
		}
		if sub[2] != "" {
			return sub[3]
		}
		missing = append(missing, sub[1])
		return ""
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("host environment variable(s) %s not set and no ${VAR:-default} given", strings.Join(missing, ", "))
	}
	return out, nil
}
