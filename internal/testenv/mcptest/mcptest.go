// Package mcptest gives tests Harbor's hello-mcp and hello-skills examples
// as they can run on this machine: each task's own task.toml and
// instruction.md (from ../shared), its environment rebuilt on a local
// busybox-based image, hello-mcp's FastMCP sidecar replaced by the static
// MCP server of ./server (the same get_secret tool over streamable HTTP),
// and each test.sh replaced by a shell check of what upstream's pytest
// checks (uv and pytest cannot be fetched). Imported only by tests.
package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv"
)

// Secret is what hello-mcp's get_secret returns.
const Secret = "harbor-mcp-secret-12345"

// Greeting is what hello-skills' generate-greeting skill says to write.
const Greeting = "Hello from Harbor Skills!"

var (
	buildOnce sync.Once
	built     string
	buildErr  error
	buildOut  []byte
)

// Server builds the test MCP server as a static binary, once per test
// process, and returns its path.
func Server(t testing.TB) string {
	t.Helper()
	root := testenv.RepoRoot(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hoh-mcptest-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "mcp-server")
		cmd := exec.Command("go", "build", "-o", built, "./internal/testenv/mcptest/server")
		cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building the test MCP server: %v\n%s", buildErr, buildOut)
	}
	return built
}

// HelloMCP writes hello-mcp under dir with base (a local image with
// /bin/sh) as the agent's image and as the MCP sidecar's base, and returns
// the task folder. The sidecar appends each tool call to /calls/get_secret
// in its own file system.
func HelloMCP(t testing.TB, dir, base string) string {
	t.Helper()
	task := testenv.HarborTask(t, dir, "harbor-examples/tasks/hello-mcp", `#!/bin/sh
mkdir -p /logs/verifier
if [ "$(cat /app/secret.txt 2>/dev/null)" = "`+Secret+`" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
`)
	write(t, task, map[string]string{
		"environment/Dockerfile": "FROM " + base + "\nWORKDIR /app\n",
		"environment/docker-compose.yaml": `services:
  main:
    depends_on:
      mcp-server:
        condition: service_healthy
  mcp-server:
    build:
      context: ./mcp-server
    expose:
      - "8000"
    healthcheck:
      test: ["CMD", "/mcp-server", "-probe", "127.0.0.1:8000"]
      interval: 1s
      timeout: 5s
      retries: 60
`,
		"environment/mcp-server/Dockerfile": "FROM " + base + "\nCOPY mcp-server /mcp-server\nRUN mkdir -p /calls\n" +
			`CMD ["/mcp-server", "-http", ":8000", "-calls", "/calls/get_secret"]` + "\n",
	})
	bin, err := os.ReadFile(Server(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(task, "environment", "mcp-server", "mcp-server"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return task
}

// HelloSkills writes hello-skills under dir on base, with upstream's
// skills/ folder copied into its environment, and returns the task folder.
func HelloSkills(t testing.TB, dir, base string) string {
	t.Helper()
	task := testenv.HarborTask(t, dir, "harbor-examples/tasks/hello-skills", `#!/bin/sh
mkdir -p /logs/verifier
if [ "$(cat /app/greeting.txt 2>/dev/null)" = "`+Greeting+`" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
`)
	src := testenv.SharedPath(t, "benchmarks", "harbor-tasks", "harbor-examples", "tasks", "hello-skills", "environment", "skills")
	if err := os.CopyFS(filepath.Join(task, "environment", "skills"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	write(t, task, map[string]string{
		// Upstream's Dockerfile on the local base: COPY skills/ /skills/.
		"environment/Dockerfile": "FROM " + base + "\nCOPY skills/ /skills/\nWORKDIR /app\n",
	})
	return task
}

func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
