package harbor

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv"
)

// Each phase's network as Harbor's own network-policy examples declare it:
// a phase's network_mode overrides the environment's, a separate
// verifier's environment is the verifier's baseline.
func TestNetworkForRealPolicyMatrix(t *testing.T) {
	root := testenv.SharedPath(t, "benchmarks", "harbor-tasks", "harbor-examples")
	open, closed := NetworkPolicy{Open: true}, NetworkPolicy{}
	allow := func(h ...string) NetworkPolicy { return NetworkPolicy{Allowlist: true, Hosts: h} }
	for _, c := range []struct {
		dir             string
		agent, verifier NetworkPolicy
	}{
		{"network-policy-matrix-dynamic/e-a-diff", open, closed},
		{"network-policy-matrix-dynamic/e-v-diff", open, closed},
		{"network-policy-matrix-dynamic/v-ve-diff", closed, allow("www.iana.org")},
		{"network-policy-matrix-dynamic/shared-allowlist", allow("example.com"), allow("*.iana.org")},
		{"network-policy-matrix-static/e-allowlist", allow("example.com"), allow("example.com")},
		{"verifier-mode-matrix/separate-explicit", closed, closed},
		{"tasks/hello-world", open, open},
	} {
		l, err := LoadTask("d", filepath.Join(root, c.dir), "")
		if err != nil {
			t.Fatal(err)
		}
		if a, v := l.File.NetworkFor(AgentPhase), l.File.NetworkFor(VerifierPhase); fmt.Sprint(a) != fmt.Sprint(c.agent) || fmt.Sprint(v) != fmt.Sprint(c.verifier) {
			t.Errorf("%s: agent %+v verifier %+v, want %+v and %+v", c.dir, a, v, c.agent, c.verifier)
		}
	}
}

// Harbor's shared-allowlist example (environment no-network, the agent
// allowlisted to example.com, the shared verifier to *.iana.org), run for
// real: each phase reaches its own hosts through the egress proxy and not
// the other phase's. The proxy's dialer sends every name to a loopback test
// server.
func TestPerPhaseAllowlists(t *testing.T) {
	b := newBench(t, nil)
	fetch := allowlistRig(t, b)
	root := t.TempDir()
	dir := realTask(t, root, "shared-allowlist", "network-policy-matrix-dynamic", "shared-allowlist")
	writeFile(t, filepath.Join(dir, "environment", "Dockerfile"), "FROM hoh-harbor-test-base:latest\nWORKDIR /app\n")
	writeFile(t, filepath.Join(dir, "tests", "test.sh"), "#!/bin/sh\n"+fetch+`
mkdir -p /logs/verifier
agent=1; verifier=1
grep -q "page of example.com" /app/example.txt || agent=0
grep -q " 403 " /app/iana.txt || agent=0
fetch www.iana.org | grep -q "page of www.iana.org" || verifier=0
fetch example.com | grep -q " 403 " || verifier=0
echo "{\"reward\": $((agent * verifier)), \"agent_ok\": $agent, \"verifier_ok\": $verifier}" > /logs/verifier/reward.json
`)
	b.Root = root
	tk := task(t, b, "shared-allowlist")
	tr, err := b.RunTrial(context.Background(), tk, Command{Script: fetch + "; fetch example.com > example.txt; fetch www.iana.org > iana.txt"}, t.TempDir())
	if err != nil || tr.Failure != nil || tr.Evaluation == nil {
		t.Fatalf("%v %+v", err, tr)
	}
	if m := tr.Evaluation.Metrics; m["reward"] != 1 {
		t.Fatalf("metrics %v: %v", m, tr.Evaluation.Details["verifier_output"])
	}
}

// Harbor's e-a-diff example: the environment has no network but the agent
// phase is public, and the verifier inherits no-network: the agent's
// container has a route out, the verifier's none.
func TestAgentPhaseOverride(t *testing.T) {
	b := newBench(t, nil)
	root := t.TempDir()
	dir := realTask(t, root, "e-a-diff", "network-policy-matrix-dynamic", "e-a-diff")
	writeFile(t, filepath.Join(dir, "environment", "Dockerfile"), "FROM hoh-harbor-test-base:latest\nWORKDIR /app\n")
	writeFile(t, filepath.Join(dir, "tests", "test.sh"), `#!/bin/sh
mkdir -p /logs/verifier
agent=0; [ -s /app/agent-routes.txt ] && agent=1
verifier=1; [ -n "$(sed 1d /proc/net/route)" ] && verifier=0
echo "{\"reward\": $((agent * verifier)), \"agent_routed\": $agent, \"verifier_closed\": $verifier}" > /logs/verifier/reward.json
`)
	b.Root = root
	tk := task(t, b, "e-a-diff")
	tr, err := b.RunTrial(context.Background(), tk, Command{Script: "sed 1d /proc/net/route > agent-routes.txt"}, t.TempDir())
	if err != nil || tr.Failure != nil || tr.Evaluation == nil {
		t.Fatalf("%v %+v", err, tr)
	}
	if m := tr.Evaluation.Metrics; m["reward"] != 1 {
		t.Fatalf("metrics %v: %v", m, tr.Evaluation.Details["verifier_output"])
	}
}
