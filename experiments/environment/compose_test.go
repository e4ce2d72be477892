package environment

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/internal/testenv/dockerenv"
)

// The trial environment of a Harbor task with a docker-compose.yaml: Open
// starts the sidecar before the agent's container (through the benchmark's
// DecorateSpec), the agent's commands reach it by service name on a network
// without internet, and Close removes sidecar and network.
func TestOpenStartsComposeSidecars(t *testing.T) {
	c := dockerClient(t)
	base := dockerenv.BusyboxImage(t, c, "")
	root := t.TempDir()
	files := map[string]string{
		"task.toml":              "schema_version = \"1.3\"\n[task]\nname = \"synthetic/sidecar\"\n[environment]\nallow_internet = false\n",
		"instruction.md":         "Ask the sidecar.\n",
		"environment/Dockerfile": "FROM " + base + "\nWORKDIR /app\n",
		"environment/docker-compose.yaml": "services:\n  main:\n    depends_on: [api]\n  api:\n    image: " + base + "\n" +
			"    entrypoint: [\"/bin/sh\", \"-c\"]\n    command: [\"mkdir -p /www && echo api-ok > /www/index.html && exec httpd -f -p 80 -h /www\"]\n",
		"tests/test.sh": "#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n",
	}
	for rel, body := range files {
		p := filepath.Join(root, "sidecar", rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b := &harbor.Benchmark{Dataset: "synthetic", Root: root, Docker: c}
	ctx := context.Background()
	ts, err := b.Tasks(ctx)
	if err != nil || len(ts) != 1 {
		t.Fatalf("%v %v %v", ts, err, b.LoadNotes())
	}
	env, err := Open(ctx, b, ts[0], t.TempDir(), Options{Provider: harness.Provider{}, Docker: c, RelayBinary: relayBin})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	var out strings.Builder
	ex, err := env.Exec.Run(ctx, sandbox.Command{Dir: "/", Args: []string{"sh", "-c", "for i in 1 2 3 4 5; do wget -q -O - http://api/ && exit 0; sleep 1; done; exit 1"}, Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
	if err != nil || ex.Code != 0 || strings.TrimSpace(out.String()) != "api-ok" {
		t.Fatalf("sidecar from the agent's container: %v %+v %q", err, ex, out.String())
	}
	if err := env.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// dockerenv's client fails the test if the sidecar or network remains.
}
