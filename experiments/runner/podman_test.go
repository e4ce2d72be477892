package runner

// Rootless Podman as the container engine: the shipped harbor-smoke
// example run by bin/hoh as an unprivileged user against that user's
// Podman socket, whose rewards must equal the same config's on Docker
// Engine; the ProgramBench example likewise; the container red-team
// (experiments/environment), the Harbor adapter's egress-proxy, sidecar and
// FrontierSWE-gate tests and the sandbox's commit, label, service and
// health-check tests run once against it as that user. The user has no Go
// toolchain and may not reach the checkout: the test builds everything once
// as root (bin/hoh, the relay, compiled test binaries), into a directory of
// the user's, with the data those tests read.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/internal/fstree"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

func TestHarborSmokeAndRedTeamUnderRootlessPodman(t *testing.T) {
	pm := testenv.RootlessPodman(t)
	dockerPrereqs(t) // the Docker base image and HOH_RELAY
	root := repoRoot(t)
	ctx := context.Background()

	// The rewards on Docker Engine, in-process.
	e, err := config.Load(filepath.Join(root, "configs", "examples", "harbor-smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e.Output = filepath.Join(t.TempDir(), "run")
	var log strings.Builder
	if _, err := Run(ctx, e, Options{Out: &log}); err != nil {
		t.Fatalf("on Docker Engine: %v\n%s", err, log.String())
	}
	want := smokeRewards(t, e.Output)

	// The user's tree: the example's files, bin/hoh with its relay, the
	// red-team's test binary and the CLIs.
	dir, err := os.MkdirTemp("", "hoh-podman-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	repo := filepath.Join(dir, "repo")
	copies := map[string]string{} // source: destination
	for _, d := range []string{"go.mod", filepath.Join("configs", "examples"), filepath.Join("experiments", "runner", "testdata"),
		filepath.Join("adapters", "benchmark", "programbench", "testdata"), filepath.Join("adapters", "benchmark", "harbor", "testdata")} {
		copies[filepath.Join(root, d)] = filepath.Join(repo, d)
	}
	// The harbor tests read Harbor's examples from ../shared beside the repository.
	copies[testenv.SharedPath(t, "benchmarks", "harbor-tasks", "harbor-examples")] = filepath.Join(dir, "shared", "benchmarks", "harbor-tasks", "harbor-examples")
	for src, dst := range copies {
		st, err := os.Stat(src)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(dst), 0o755)
		}
		if err == nil && st.IsDir() {
			err = fstree.Copy(src, dst, fstree.Options{})
		} else if err == nil {
			err = fstree.CopyFile(src, dst, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	goBuild(t, root, "build", "-o", filepath.Join(repo, "bin", "hoh"), "./cmd/hoh")
	if err := fstree.CopyFile(os.Getenv(docker.RelayEnv), filepath.Join(repo, "bin", "hoh-relay"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, pkg := range map[string]string{"environment": "./experiments/environment", "harbor": "./adapters/benchmark/harbor", "docker": "./adapters/sandbox/docker"} {
		goBuild(t, root, "test", "-c", "-o", filepath.Join(dir, name+".test"), pkg)
		// Each runs in its package's directory, as go test runs it.
		if err := os.MkdirAll(filepath.Join(repo, pkg), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pm.GiveTo(t, dir)
	// After GiveTo: a hard link shares its owner with the installed file.
	tools := toolsFor(t, pm, dir)

	// The base image, in the user's Podman storage (removed at the end).
	pc, err := docker.New(ctx, docker.Options{Host: pm.Host, RunID: fmt.Sprintf("hoh-test-podman-base-%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatalf("the user's Podman socket: %v", err)
	}
	t.Cleanup(func() {
		if err := pc.Close(context.Background()); err != nil {
			t.Errorf("removing the Podman base image: %v", err)
		}
	})
	bbDir := t.TempDir()
	bb, err := docker.FindBusybox()
	if err == nil {
		err = docker.BusyboxContext(bbDir, bb)
	}
	if err == nil {
		_, err = pc.BuildImage(ctx, bbDir, "", smokeBaseTag)
	}
	if err != nil {
		t.Fatalf("base image on Podman: %v", err)
	}

	t.Run("harbor-smoke", func(t *testing.T) {
		out, err := pm.Command(repo, []string{"HOH_TOOLS=" + tools}, "bin/hoh", "run", "configs/examples/harbor-smoke.yaml").CombinedOutput()
		if err != nil {
			t.Fatalf("bin/hoh run as %s against rootless Podman: %v\n%s", pm.User, err, out)
		}
		for _, s := range []string{"Podman", "limits not enforced"} {
			if !strings.Contains(string(out), s) {
				t.Errorf("the run does not say the engine enforces no limits (%q):\n%s", s, out)
			}
		}
		got := smokeRewards(t, filepath.Join(repo, "runs", "harbor-smoke"))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rewards under rootless Podman %v, on Docker Engine %v\n%s", got, want, out)
		}
		m := regexp.MustCompile(`labelled hoh\.run=(\S+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("the run named no label:\n%s", out)
		}
		assertRunRemoved(t, pc, string(m[1]))
	})

	t.Run("programbench-smoke", func(t *testing.T) {
		if _, err := pc.BuildImage(ctx, filepath.Join(repo, "experiments", "runner", "testdata", "programbench", "image"), "", programbenchSmokeImage); err != nil {
			t.Fatalf("%s on Podman: %v", programbenchSmokeImage, err)
		}
		out, err := pm.Command(repo, []string{"HOH_TOOLS=" + tools}, "bin/hoh", "run", "configs/examples/programbench-smoke.yaml").CombinedOutput()
		if err != nil {
			t.Fatalf("bin/hoh run as %s against rootless Podman: %v\n%s", pm.User, err, out)
		}
		if !strings.Contains(string(out), "limits not enforced: Podman") {
			t.Errorf("the run does not say it ran on Podman without limits:\n%s", out)
		}
		run := filepath.Join(repo, "runs", "programbench-smoke")
		got := metricOf(t, run, "pass_rate", func(r runrecord.Row) string { return r.Condition })
		// What DockerEvaluator computes on Docker Engine (TestProgramBenchSmokeRunsInDocker).
		if fmt.Sprint(got) != fmt.Sprint(map[string]float64{"vanilla": 75, "hoh": 100}) {
			t.Errorf("pass_rate under rootless Podman %v, want vanilla 75 and hoh 100\n%s", got, out)
		}
		assertNoHiddenTests(t, run)
		m := regexp.MustCompile(`labelled hoh\.run=(\S+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("the run named no label:\n%s", out)
		}
		assertRunRemoved(t, pc, string(m[1]))
	})

	relay := docker.RelayEnv + "=" + filepath.Join(repo, "bin", "hoh-relay")
	t.Run("red-team", func(t *testing.T) {
		// And a task's agent.user, a subordinate uid on the host here.
		runTestsAs(t, pm, dir, "environment.test", filepath.Join(repo, "experiments", "environment"), []string{"HOH_TOOLS=" + tools, relay}, "TestRedTeamInDocker",
			"TestOpenKeepsTheImagesPathAndRunsAsAgentUser")
	})
	// The egress proxy (allowlists, per phase), compose sidecars and the
	// FrontierSWE gate, through the Harbor adapter.
	t.Run("harbor-egress-sidecars", func(t *testing.T) {
		runTestsAs(t, pm, dir, "harbor.test", filepath.Join(repo, "adapters", "benchmark", "harbor"), []string{relay},
			"TestAllowlistAgentAndVerifier", "TestPerPhaseAllowlists", "TestAgentPhaseOverride",
			"TestComposeSidecarReachableFromAgentAndVerifier", "TestFrontierSWEGateEndToEnd")
	})
	t.Run("sandbox", func(t *testing.T) {
		runTestsAs(t, pm, dir, "docker.test", filepath.Join(repo, "adapters", "sandbox", "docker"), []string{relay},
			"TestServicesReachableThenRemoved", "TestUnhealthyServiceIsInfraError",
			"TestCommitIsLabelledAndGoesWithTheRunsCleanup", "TestCommitSnapshotsSidecarsWithTheirVolumes")
	})
}

// runTestsAs runs the compiled test binary dir/bin as the Podman user in
// cwd, and fails unless each named test passed.
func runTestsAs(t *testing.T, pm testenv.Podman, dir, bin, cwd string, env []string, tests ...string) {
	t.Helper()
	out, err := pm.Command(cwd, env, filepath.Join(dir, bin), "-test.run", "^("+strings.Join(tests, "|")+")$",
		"-test.v", "-test.count=1", "-test.timeout=20m").CombinedOutput()
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s as %s against rootless Podman did not pass", name, pm.User)
		}
	}
	if err != nil || t.Failed() {
		t.Fatalf("%s: %v\n%s", bin, err, tailOf(string(out), 20000))
	}
	t.Logf("%s", tailOf(string(out), 3000))
}

// smokeRewards is scores.csv's reward per condition and checkpoint.
func smokeRewards(t *testing.T, run string) map[string]float64 {
	t.Helper()
	out := metricOf(t, run, "reward", func(r runrecord.Row) string { return fmt.Sprintf("%s/cp-%d", r.Condition, r.Checkpoint) })
	if len(out) != 2 {
		t.Fatalf("%s: want a reward for vanilla and hoh, got %v", run, out)
	}
	return out
}

// metricOf is the run's scores.csv values of metric, by key.
func metricOf(t *testing.T, run, metric string, key func(runrecord.Row) string) map[string]float64 {
	t.Helper()
	rows, err := runrecord.ReadScores(filepath.Join(run, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, r := range rows {
		if r.Metric == metric {
			out[key(r)] = r.Value
		}
	}
	return out
}

func goBuild(t *testing.T, root string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// toolsFor is a directory of the CLIs the user can read: the installed one
// when the user reaches it, else hard links to it (a copy across file
// systems) under dir.
func toolsFor(t *testing.T, pm testenv.Podman, dir string) string {
	t.Helper()
	var src string
	for _, d := range cliinstall.ToolsDirs() {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			src = d
			break
		}
	}
	if src == "" {
		t.Fatalf("no CLIs installed (scripts/install-harnesses.sh): %v", cliinstall.ToolsDirs())
	}
	if pm.Command("/", nil, "test", "-r", src, "-a", "-x", src).Run() == nil {
		return src
	}
	dst := filepath.Join(dir, "tools")
	if out, err := exec.Command("cp", "-al", src, dst).CombinedOutput(); err != nil {
		os.RemoveAll(dst)
		if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
			t.Fatalf("copying the CLIs for %s: %v\n%s", pm.User, err, out)
		}
		t.Logf("hard links failed (%s): copied the CLIs", strings.TrimSpace(string(out)))
	}
	return dst
}

func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
