package harbor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const harborTasks = "../../../../shared/benchmarks/harbor-tasks"

func writeTaskDir(t *testing.T, root, id, toml string) string {
	t.Helper()
	dir := filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "task.toml"), []byte(toml), 0o644)
	os.WriteFile(filepath.Join(dir, "instruction.md"), []byte("do it\n"), 0o644)
	return dir
}

// Terminal-Bench 2.0 as published: all 89 tasks load, with the legacy
// memory/storage strings migrated and no key reported unknown.
func TestTerminalBench2LoadsEveryTask(t *testing.T) {
	ls, broken, err := loadDir("terminal-bench", filepath.Join(harborTasks, "terminal-bench-2"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 89 || len(broken) != 0 {
		t.Fatalf("loaded %d tasks, %d broken (%v); want 89, 0", len(ls), len(broken), broken)
	}
	byID := map[string]Loaded{}
	for _, l := range ls {
		byID[l.Task.ID] = l
		for _, w := range l.Warnings {
			if strings.Contains(w, "unknown key") {
				t.Errorf("%s: %s", l.Task.ID, w)
			}
		}
	}
	// mcmc-sampling-stan declares memory = "8G", storage = "10G".
	if lim := byID["mcmc-sampling-stan"].Task.Limits; lim.MemoryMB != 8192 || lim.StorageMB != 10240 {
		t.Errorf("mcmc-sampling-stan limits: %+v (want 8192 MB memory, 10240 MB storage from the legacy strings)", lim)
	}
}

// Every task of Harbor's examples loads, or is refused with a named reason.
func TestHarborExamplesLoadOrAreRefusedByName(t *testing.T) {
	root := filepath.Join(harborTasks, "harbor-examples")
	refusals := map[string]string{}
	loaded := 0
	for _, sub := range []string{"tasks", "template-task", "network-policy-matrix-dynamic", "network-policy-matrix-static", "verifier-mode-matrix"} {
		ls, broken, err := loadDir("harbor", filepath.Join(root, sub), "")
		for _, b := range broken {
			if !strings.Contains(b.Error(), "task.toml") && !strings.Contains(b.Error(), "instruction.md") {
				t.Errorf("%s: broken task without a named file: %v", sub, b)
			}
		}
		if err != nil && len(broken) == 0 {
			t.Fatalf("%s: %v", sub, err)
		}
		loaded += len(ls)
		for _, l := range ls {
			for _, w := range l.Warnings {
				if strings.Contains(w, "unknown key") {
					t.Errorf("%s/%s: a Harbor key is reported unknown: %s", sub, l.Task.ID, w)
				}
			}
			var parts []string
			for _, r := range l.Unsupported() {
				parts = append(parts, r.Feature)
			}
			refusals[l.Task.ID] = strings.Join(parts, "; ")
		}
	}
	if loaded < 40 {
		t.Errorf("only %d example tasks loaded", loaded)
	}
	want := map[string]string{
		"hello-multi-step-simple": "",
		"hello-multi-step-bat":    "environment.os = windows",
		"hello-mcp":               "",
		"hello-world-bat":         "environment.os = windows",
		"separate-implicit":       "",
		"separate-explicit":       "",
		"separate-reuse-env":      "",
		"e-allowlist":             "",
		"e-a-diff":                "",
		"shared-allowlist":        "",
		"v-ve-diff":               "",
		"e-v-diff":                "",
		"hello-world":             "",
		"hello-healthcheck":       "",
		"shared-default":          "",
		"e-default":               "",
	}
	for id, feature := range want {
		got, ok := refusals[id]
		if !ok {
			t.Errorf("%s did not load", id)
			continue
		}
		if (feature == "" && got != "") || !strings.Contains(got, feature) {
			t.Errorf("%s: refused features %q, want %q", id, got, feature)
		}
	}
}

// Harbor's model: every schema version, no version, numeric coercion,
// legacy sizes, table-form artifacts and MCP servers, steps; unknown keys
// warn and name the key.
func TestHarborTaskFormatAsHarborReadsIt(t *testing.T) {
	root := t.TempDir()
	for _, head := range []string{`version = "1.0"`, `version = "1.1"`, `schema_version = "1.0"`, `schema_version = "1.1"`,
		`schema_version = "1.2"`, `schema_version = "1.3"`, ``} {
		dir := writeTaskDir(t, root, "v", head+"\n[environment]\nmemory_mb = 2048.0\nstorage_mb = 512\ncpus = 2\n")
		l, err := LoadTask("d", dir, "")
		if err != nil {
			t.Fatalf("%q: %v", head, err)
		}
		if len(l.Warnings) != 0 || l.Task.Limits.MemoryMB != 2048 || l.Task.Limits.StorageMB != 512 || l.Task.Limits.CPUs != 2 {
			t.Errorf("%q: %+v warnings %v", head, l.Task.Limits, l.Warnings)
		}
	}
	dir := writeTaskDir(t, root, "legacy", `version = "1.0"
[environment]
memory = "512M"
storage = "1.5G"
`)
	l, err := LoadTask("d", dir, "")
	if err != nil || l.Task.Limits.MemoryMB != 512 || l.Task.Limits.StorageMB != 1536 {
		t.Fatalf("legacy sizes: %+v %v", l.Task.Limits, err)
	}
	dir = writeTaskDir(t, root, "full", `schema_version = "1.3"
source = "https://example.org/task"
multi_step_reward_strategy = "mean"

[[artifacts]]
source = "/app/out.txt"
destination = "out.txt"

[agent]
user = "agent"
[verifier]
user = "root"
environment_mode = "shared"
[verifier.env]
TOKEN = "${TOKEN:-none}"
[environment]
network_mode = "no-network"
workdir = "/app"
skills_dir = "/skills"
tpu = { type = "v5e", count = 1 }
[environment.healthcheck]
command = "true"
interval_sec = 1
[[environment.mcp_servers]]
name = "m"
transport = "stdio"
command = "srv"
[[steps]]
name = "one"
min_reward = 1
[steps.agent]
timeout_sec = 10.0
[[steps]]
name = "two"
mystery = 3
min_reward = { safety = 0.5, reward = 1 }
`)
	for _, step := range []string{"one", "two"} {
		os.MkdirAll(filepath.Join(dir, "steps", step), 0o755)
		os.WriteFile(filepath.Join(dir, "steps", step, "instruction.md"), []byte("do "+step+"\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "environment"), 0o755)
	os.WriteFile(filepath.Join(dir, "environment", "docker-compose.yaml"), []byte("services:\n  db:\n    image: x\n    volumes: [\"/data\"]\n"), 0o644)
	l, err = LoadTask("d", dir, "")
	if err != nil {
		t.Fatal(err)
	}
	f := l.File
	if f.Source == "" || f.MultiStepRewardStrategy != "mean" || len(f.Artifacts) != 1 || f.Agent.User != "agent" || f.Verifier.User != "root" ||
		f.Environment.Workdir != "/app" || f.Environment.SkillsDir != "/skills" || f.Environment.Healthcheck == nil ||
		len(f.Environment.MCPServers) != 1 || len(f.Steps) != 2 || f.Steps[0].MinReward["reward"] != 1 || l.Task.Limits.AllowInternet ||
		len(f.Steps[1].MinReward) != 2 || f.Steps[1].MinReward["safety"] != 0.5 {
		t.Errorf("fields not parsed: %+v", f)
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "steps.mystery") {
		t.Errorf("warnings %v, want one naming steps.mystery", l.Warnings)
	}
	var features []string
	for _, r := range l.Unsupported() {
		features = append(features, r.Feature)
	}
	got := strings.Join(features, "; ")
	if strings.Contains(got, "steps") {
		t.Errorf("steps refused: %q", got)
	}
	for _, want := range []string{"Compose attribute services.db.volumes", "environment.tpu"} {
		if !strings.Contains(got, want) {
			t.Errorf("refusals %q lack %q", got, want)
		}
	}
}

// One broken task does not stop the dataset.
func TestLoadDirIsPerTask(t *testing.T) {
	root := t.TempDir()
	writeTaskDir(t, root, "good", `schema_version = "1.3"`)
	writeTaskDir(t, root, "broken", "version = \"1.0\"\n[agent]\ntimeout_sec = = 1\n")
	ls, broken, err := loadDir("d", root, "")
	if err != nil || len(ls) != 1 || ls[0].Task.ID != "good" || len(broken) != 1 || !strings.Contains(broken[0].Error(), filepath.Join(root, "broken", "task.toml")) {
		t.Fatalf("loaded %d, broken %v, err %v", len(ls), broken, err)
	}
}

func TestResolveEnvTemplate(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for in, want := range map[string]string{
		"${TOKEN}": "s3cret", "Bearer ${TOKEN}!": "Bearer s3cret!", "${UNSET:-dflt}": "dflt",
		"${EMPTY:-dflt}": "dflt", "${EMPTY}": "", "plain $TOKEN": "plain $TOKEN", "${TOKEN:-x}": "s3cret",
	} {
		if got, err := resolveEnvTemplate(in, lookup); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	_, err := resolveEnvTemplate("${TOKEN}${NOPE}", lookup)
	if err == nil || !strings.Contains(err.Error(), "NOPE") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("unset: %v", err)
	}
}

// Harbor's llm-judge-example passes ${ANTHROPIC_API_KEY} to its verifier:
// with the variable unset the task is refused at plan time, naming the
// file, table, key and variable (never a value); set, it is planned.
func TestUnresolvableEnvTemplateRefusedAtPlanTime(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(harborTasks, "harbor-examples", "tasks", "llm-judge-example")
	dst := filepath.Join(root, "llm-judge-example")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	b := &Benchmark{Dataset: "examples", Root: root}
	t.Setenv("ANTHROPIC_API_KEY", "")
	os.Unsetenv("ANTHROPIC_API_KEY")
	if _, err := b.Tasks(context.Background()); err == nil {
		t.Fatal("planned a task whose verifier.env cannot resolve")
	}
	notes := strings.Join(b.LoadNotes(), "\n")
	if !strings.Contains(notes, "refused task llm-judge-example") || !strings.Contains(notes, "[verifier.env] ANTHROPIC_API_KEY") || !strings.Contains(notes, filepath.Join(dst, "task.toml")) {
		t.Fatalf("notes:\n%s", notes)
	}
	t.Setenv("ANTHROPIC_API_KEY", "sk-test-not-a-key")
	ts, err := b.Tasks(context.Background())
	if err != nil || len(ts) != 1 {
		t.Fatalf("%v %v", ts, err)
	}
	if strings.Contains(strings.Join(b.LoadNotes(), "\n"), "sk-test-not-a-key") {
		t.Fatal("a resolved value reached the notes")
	}
}
