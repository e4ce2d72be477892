package environment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/dockerenv"
)

// Harbor's hello-user (its real task.toml and instruction, agent.user =
// "agent") on a local busybox image with a PATH and ENV of its own: the
// trial's commands run as agent in the trial workspace (given to agent;
// hoh's private directory is not), and see the image's PATH with hoh's
// CLI directories after it, and the image's ENV.
func TestOpenKeepsTheImagesPathAndRunsAsAgentUser(t *testing.T) {
	c := dockerClient(t)
	tag := fmt.Sprintf("hoh-test-hello-user:%d", time.Now().UnixNano())
	dockerenv.BusyboxImage(t, c, tag,
		`RUN echo 'agent:x:1000:1000::/home/agent:/bin/sh' >> /etc/passwd && echo 'agent:x:1000:' >> /etc/group && mkdir -p /app /home/agent /opt/tool/bin /opt/other && chown 1000:1000 /app /home/agent && chown 4242:4242 /opt/other`,
		`ENV PATH=/opt/tool/bin:/usr/local/bin:/usr/bin:/bin IMAGE_VAR=from-image`,
		`WORKDIR /app`)
	root := t.TempDir()
	testenv.HarborTask(t, root, "harbor-examples/tasks/hello-user", "#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n",
		"[environment]\n", "[environment]\ndocker_image = \""+tag+"\"\n")
	b := &harbor.Benchmark{Dataset: "examples", Root: root, Docker: c}
	ctx := context.Background()
	ts, err := b.Tasks(ctx)
	if err != nil || len(ts) != 1 {
		t.Fatalf("%v %v %v", ts, err, b.LoadNotes())
	}
	trialDir := t.TempDir()
	os.MkdirAll(filepath.Join(trialDir, "workspace"), 0o755)
	os.MkdirAll(filepath.Join(trialDir, ".hoh-private"), 0o700)
	env, err := Open(ctx, b, ts[0], trialDir, Options{Provider: harness.Provider{}, Docker: c, RelayBinary: relayBin})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	ws := workspaceInView(t, env)
	var out strings.Builder
	ex, err := env.Exec.Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c",
		`whoami > whoami.txt && echo "$(cat whoami.txt) $IMAGE_VAR" && echo "$PATH" && if ls "$1" >/dev/null 2>&1; then echo private-readable; fi`, "x", filepath.Join(env.TrialDir, ".hoh-private")},
		Dir: "/app", Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
	if err != nil || ex.Code != 0 {
		t.Fatalf("%v %+v %s", err, ex, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || lines[0] != "agent from-image" {
		t.Fatalf("output %q", out.String())
	}
	if !strings.HasPrefix(lines[1], "/opt/tool/bin:/usr/local/bin:/usr/bin:/bin:") || !strings.HasSuffix(lines[1], "/node_modules/.bin") {
		t.Fatalf("PATH %q: want the image's PATH, then hoh's CLI directories", lines[1])
	}
	if b, err := os.ReadFile(filepath.Join(ws, "whoami.txt")); err != nil || string(b) != "agent\n" {
		t.Fatalf("workspace/whoami.txt: %q %v", b, err)
	}
	// A link the agent leaves in its scratch: hoh's chowns around each
	// invocation change the link, never what it points to.
	out.Reset()
	for _, c := range []string{"ln -s /opt/other link-out", "stat -c %u /opt/other"} {
		out.Reset()
		if ex, err = env.Exec.Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c", c}, Dir: "/app", Stdout: &out, Stderr: &out, WallTimeout: time.Minute}); err != nil || ex.Code != 0 {
			t.Fatalf("%s: %v %+v %s", c, err, ex, out.String())
		}
	}
	if got := strings.TrimSpace(out.String()); got != "4242" {
		t.Fatalf("/opt/other is owned by %s after a link to it sat in the scratch, want 4242 (untouched)", got)
	}
	// The agent holds no capability and cannot gain one (no-new-privileges).
	out.Reset()
	ex, err = env.Exec.Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c", `grep -E '^(CapEff|CapPrm|NoNewPrivs):' /proc/self/status`},
		Dir: "/app", Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
	if err != nil || ex.Code != 0 {
		t.Fatalf("%v %+v %s", err, ex, out.String())
	}
	if got := strings.Join(strings.Fields(out.String()), " "); got != "CapPrm: 0000000000000000 CapEff: 0000000000000000 NoNewPrivs: 1" {
		t.Fatalf("agent.user's /proc/self/status: %q, want no capabilities and NoNewPrivs 1", got)
	}
}
