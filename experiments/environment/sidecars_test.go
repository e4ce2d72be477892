package environment

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/internal/testenv/dockerenv"
	"github.com/hoh-research/hoh/runrecord"
)

// dbCGI is a busybox stand-in for a database sidecar: POST appends a row to
// /data/rows (a VOLUME, as a real database's data directory is), GET lists
// the rows.
const dbCGI = `#!/bin/sh
printf 'Content-Type: text/plain\r\n\r\n'
if [ "$REQUEST_METHOD" = POST ]; then
	head -c "$CONTENT_LENGTH" >> /data/rows
	echo >> /data/rows
fi
cat /data/rows 2>/dev/null
`

// A Compose "database" carries the Developer's state to the QA Tester and
// the verifier: the Developer writes a row into the db sidecar; committing
// the checkpoint snapshots the sidecar with its volume; the QA Tester's role
// container, started from the checkpoint, gets a db started from that
// snapshot and reads the row; what QA writes there stays in its copy; the
// checkpoint's verifier reads the row too; and every snapshot goes with the
// checkpoint image.
func TestSidecarStateCarriesToQAAndTheVerifier(t *testing.T) {
	c := dockerClient(t)
	ctx := context.Background()
	root := dbTask(t, dockerenv.BusyboxImage(t, c, ""))
	b := &harbor.Benchmark{Dataset: "synthetic", Root: root, Docker: c}
	task := toolTask(t, root, b)
	opts := Options{Provider: harness.Provider{}, Docker: c, RelayBinary: relayBin}
	env, err := Open(ctx, b, task, filepath.Join(t.TempDir(), "trial"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.WithoutCancel(ctx))
	sh := func(ex sandbox.Executor, script string) string {
		t.Helper()
		var out strings.Builder
		r, err := ex.Run(ctx, sandbox.Command{Dir: "/", Args: []string{"sh", "-c", script}, Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
		if err != nil || r.Code != 0 {
			t.Fatalf("%s: %+v %v: %s", script, r, err, out.String())
		}
		return out.String()
	}
	if got := sh(env.Exec, "wget -q -O - --post-data 'order 42' http://db/cgi-bin/db"); strings.TrimSpace(got) != "order 42" {
		t.Fatalf("the Developer's write: %q", got)
	}
	img, err := env.Container.Commit(ctx, map[string]string{"hoh.test.checkpoint": "1"})
	if err != nil {
		t.Fatal(err)
	}
	qa, release, err := RoleContainers(b, task, env.TrialDir, opts, func(context.Context, int) (string, error) { return img, nil })(ctx, runrecord.RoleQA, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(qa, "wget -q -O - http://db/cgi-bin/db"); strings.TrimSpace(got) != "order 42" {
		t.Errorf("QA reads %q from its db, want the Developer's row", got)
	}
	sh(qa, "wget -q -O - --post-data 'qa was here' http://db/cgi-bin/db")
	release()
	if got := sh(env.Exec, "wget -q -O - http://db/cgi-bin/db"); strings.TrimSpace(got) != "order 42" {
		t.Errorf("the Developer's db after QA: %q (QA's write must stay in QA's copy)", got)
	}
	ev, err := b.Evaluate(benchmark.WithEnvironmentImage(ctx, img), task, t.TempDir())
	if err != nil || ev.Metrics["reward"] != 1 {
		t.Errorf("the checkpoint's verifier: %+v %v", ev, err)
	}
	if err := c.RemoveImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	if err := env.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// dockerenv's client fails the test if a snapshot, sidecar or network remains.
}

// dbTask writes a Harbor task whose environment has the db sidecar, on
// base, and returns the dataset folder.
func dbTask(t *testing.T, base string) string {
	root := t.TempDir()
	files := map[string]string{
		"task.toml":              "schema_version = \"1.3\"\n[task]\nname = \"synthetic/db\"\n[environment]\nallow_internet = false\n",
		"instruction.md":         "Record order 42 in the database.\n",
		"environment/Dockerfile": "FROM " + base + "\nWORKDIR /app\n",
		"environment/docker-compose.yaml": `services:
  main:
    depends_on:
      db: {condition: service_healthy}
  db:
    build: {context: ./db}
    healthcheck:
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1/cgi-bin/db"]
      interval: 1s
      retries: 60
`,
		"environment/db/Dockerfile": "FROM " + base + "\nRUN mkdir -p /data /www/cgi-bin\nVOLUME /data\nCOPY db.cgi /www/cgi-bin/db\n" +
			`CMD ["httpd", "-f", "-p", "80", "-h", "/www"]` + "\n",
		"environment/db/db.cgi": dbCGI,
		"tests/test.sh":         "#!/bin/sh\nif wget -q -O - http://db/cgi-bin/db | grep -qx 'order 42'; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}
	for rel, body := range files {
		p := filepath.Join(root, "db", rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
