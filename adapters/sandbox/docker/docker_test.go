package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"

	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox"
)

// Shared across tests: a busybox image and the relay binary, built once.
var (
	testImage  string
	relayBin   string
	setupError error
	imgClient  *Client
)

func TestMain(m *testing.M) {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "hoh-docker-test-")
	code := func() int {
		imgClient, setupError = New(ctx, Options{RunID: fmt.Sprintf("hoh-test-images-%d", os.Getpid())})
		if setupError == nil {
			testImage, setupError = buildBusybox(ctx, imgClient, filepath.Join(tmp, "ctx"))
		}
		if p := os.Getenv(RelayEnv); setupError == nil && p != "" {
			// A user without a Go toolchain runs the compiled tests.
			relayBin = p
		} else if setupError == nil {
			relayBin = filepath.Join(tmp, "hoh-relay")
			var root string
			if root, setupError = cliinstall.RepoRoot(); setupError == nil {
				setupError = BuildRelayBinary(ctx, root, relayBin)
			}
		}
		return m.Run()
	}()
	if imgClient != nil {
		if err := imgClient.Close(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "cleanup:", err)
			code = 1
		}
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

func buildBusybox(ctx context.Context, c *Client, dir string) (string, error) {
	bb, err := FindBusybox()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := BusyboxContext(dir, bb); err != nil {
		return "", err
	}
	return c.BuildImage(ctx, dir, "", "")
}

// newClient gives each test its own run label and checks afterwards that
// nothing labelled with it remains.
func newClient(t *testing.T) *Client {
	t.Helper()
	if setupError != nil {
		t.Fatalf("docker setup failed (run scripts/start-dockerd.sh; needs busybox-static): %v", setupError)
	}
	ctx := context.Background()
	c, err := New(ctx, Options{RunID: fmt.Sprintf("hoh-test-%s-%d", t.Name(), time.Now().UnixNano())})
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if err := c.Cleanup(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		assertNothingLabelled(t, c)
		c.API.Close()
	})
	return c
}

func assertNothingLabelled(t *testing.T, c *Client) {
	t.Helper()
	ctx := context.Background()
	f := filters.NewArgs(filters.Arg("label", LabelRun+"="+c.RunID()))
	cs, err := c.API.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil || len(cs) != 0 {
		t.Errorf("containers left with label %s: %d (%v)", c.RunID(), len(cs), err)
	}
	ims, err := c.API.ImageList(ctx, image.ListOptions{All: true, Filters: f})
	if err != nil || len(ims) != 0 {
		t.Errorf("images left with label %s: %d (%v)", c.RunID(), len(ims), err)
	}
	nets, err := c.API.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil || len(nets) != 0 {
		t.Errorf("networks left with label %s: %d (%v)", c.RunID(), len(nets), err)
	}
}

func run(t *testing.T, x sandbox.Executor, cmd sandbox.Command) (sandbox.Exit, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ex, err := x.Run(context.Background(), cmd)
	if err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return ex, out.String(), errb.String()
}

func TestExecExitCodesStdinEnvAndWorkspace(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "in.txt"), []byte("hello"), 0o644)
	env, err := c.Start(ctx, Spec{Image: testImage, Workspace: ws, CPUs: 0.5, MemoryMB: 64, StorageMB: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	x := env.Executor()
	ex, out, _ := run(t, x, sandbox.Command{Args: []string{"sh", "-c", "cat in.txt; echo $FOO; cat; echo out > made.txt; echo err >&2; exit 7"},
		Dir: "/workspace", Env: []string{"FOO=bar"}, Stdin: strings.NewReader("from-stdin")})
	if ex.Code != 7 || out != "hellobar\nfrom-stdin" {
		t.Fatalf("exit %+v out %q", ex, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "made.txt")); string(b) != "out\n" {
		t.Fatalf("workspace bind mount: made.txt = %q", b)
	}
	ins, err := c.API.ContainerInspect(ctx, env.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ins.HostConfig.Memory != 64<<20 || ins.HostConfig.NanoCPUs != 5e8 || ins.HostConfig.NetworkMode != "none" {
		t.Fatalf("limits not applied: mem %d cpus %d net %s", ins.HostConfig.Memory, ins.HostConfig.NanoCPUs, ins.HostConfig.NetworkMode)
	}
	if ins.HostConfig.StorageOpt == nil && len(env.Notes) == 0 {
		t.Fatalf("storage limit neither applied nor noted")
	}
	if len(ins.HostConfig.DeviceRequests) != 0 {
		t.Fatalf("device requests without gpus: %+v", ins.HostConfig.DeviceRequests)
	}
}

func TestWallAndIdleTimeoutKillTree(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	env, err := c.Start(ctx, Spec{Image: testImage})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	x := env.Executor()
	// A child in the background keeps running unless the whole tree dies.
	ex, _, _ := run(t, x, sandbox.Command{Args: []string{"sh", "-c", "(sleep 300; echo x) & while :; do echo tick; sleep 0.2; done"}, WallTimeout: 2 * time.Second})
	if !ex.TimedOut || ex.Code != -1 || !strings.Contains(ex.Detail, "wall timeout") {
		t.Fatalf("wall timeout: %+v", ex)
	}
	ex, _, _ = run(t, x, sandbox.Command{Args: []string{"sh", "-c", "echo start; sleep 300"}, IdleTimeout: time.Second, WallTimeout: time.Minute})
	if !ex.Idle || ex.TimedOut || ex.Duration > 30*time.Second {
		t.Fatalf("idle timeout: %+v", ex)
	}
	// The agent cannot redirect the kill: the pid hoh kills is announced on
	// the stream before the command starts, not kept in a file the agent
	// could rewrite (it used to be /tmp/.hoh-exec/*), and a forged
	// announcement later on stderr is just output.
	forge := `for d in /tmp/.hoh-exec /tmp /; do for f in $d/*; do [ -f "$f" ] && [ -w "$f" ] && echo 1 > "$f"; done; done 2>/dev/null
echo ` + pidMarker + `1 >&2; (sleep 300) & while :; do echo tick; sleep 0.2; done`
	ex, _, errs := run(t, x, sandbox.Command{Args: []string{"sh", "-c", forge}, WallTimeout: 3 * time.Second})
	if !ex.TimedOut || ex.Duration > 30*time.Second || strings.Contains(ex.Detail, "container killed") {
		t.Fatalf("timeout not enforced on the command's own tree: %+v", ex)
	}
	if !strings.Contains(errs, pidMarker+"1") {
		t.Fatalf("the command's own stderr was swallowed: %q", errs)
	}
	_, ps, _ := run(t, x, sandbox.Command{Args: []string{"ps", "-o", "pid,args"}})
	if strings.Contains(ps, "sleep 300") {
		t.Fatalf("process tree survived the timeout:\n%s", ps)
	}
}

func TestCopyInOut(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	env, err := c.Start(ctx, Spec{Image: testImage})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	src := filepath.Join(t.TempDir(), "tests")
	os.MkdirAll(filepath.Join(src, "sub"), 0o755)
	os.WriteFile(filepath.Join(src, "sub", "a.sh"), []byte("echo a"), 0o755)
	if err := env.CopyIn(ctx, src, "/"); err != nil {
		t.Fatal(err)
	}
	ex, out, _ := run(t, env.Executor(), sandbox.Command{Args: []string{"sh", "/tests/sub/a.sh"}})
	if ex.Code != 0 || out != "a\n" {
		t.Fatalf("%+v %q", ex, out)
	}
	dst := t.TempDir()
	if err := env.CopyOut(ctx, "/tests", dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "tests", "sub", "a.sh")); string(b) != "echo a" {
		t.Fatalf("copy out: %q", b)
	}
	if _, err := env.ReadFile(ctx, "/nope"); !os.IsNotExist(unwrapAll(err)) {
		t.Fatalf("missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

func TestOOMIsRecorded(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	env, err := c.Start(ctx, Spec{Image: testImage, MemoryMB: 32})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	var out bytes.Buffer
	ex, err := env.Executor().Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}"}, Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
	f := Classify(ex.Code, ex.OOM, ex.Detail, err)
	if !ex.OOM || f == nil || !f.OOM || f.Kind != Agent {
		t.Fatalf("expected OOM, got exit %+v err %v failure %+v out %q", ex, err, f, out.String())
	}
}

// A container has a process limit by default (a fork bomb reached the host's
// before), and Spec.Pids sets it.
func TestContainerHasAPidsLimit(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	for _, tc := range []struct {
		pids int64
		want string
	}{{0, fmt.Sprint(DefaultPids)}, {64, "64"}} {
		env, err := c.Start(ctx, Spec{Image: testImage, Pids: tc.pids})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		_, err = env.Executor().Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max"}, Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
		env.Close(ctx)
		if err != nil || strings.TrimSpace(out.String()) != tc.want {
			t.Fatalf("Pids %d: pids.max %q (%v), want %s", tc.pids, out.String(), err, tc.want)
		}
	}
}

func TestKilledContainerIsInfraFailure(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	env, err := c.Start(ctx, Spec{Image: testImage})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	go func() { time.Sleep(time.Second); env.Kill(ctx) }()
	ex, err := env.Executor().Run(ctx, sandbox.Command{Args: []string{"sleep", "30"}, WallTimeout: time.Minute})
	f := Classify(ex.Code, ex.OOM, ex.Detail, err)
	if err == nil || f == nil || f.Kind != Infrastructure || !strings.Contains(f.Evidence, "stopped during command") {
		t.Fatalf("expected infrastructure failure, got %+v %v %+v", ex, err, f)
	}
}

func TestStartFailureIsInfraError(t *testing.T) {
	c := newClient(t)
	_, err := c.Start(context.Background(), Spec{Image: "hoh-no-such-image:never"})
	f := Classify(-1, false, "", err)
	if f == nil || f.Kind != Infrastructure || !strings.Contains(f.Evidence, "create") {
		t.Fatalf("got %v %+v", err, f)
	}
}

// The relay reaches the model endpoint; another listener on the host's
// loopback is unreachable from the no-network container.
func TestRelayReachesModelOnly(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	model := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "model-ok "+r.URL.Path)
	})}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go model.Serve(mln)
	defer model.Close()
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := other.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	env, err := c.Start(ctx, Spec{Image: testImage, Relay: &RelaySpec{Target: mln.Addr().String(), Binary: relayBin}})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	x := env.Executor()
	ex, out, errs := run(t, x, sandbox.Command{Args: []string{"wget", "-q", "-O", "-", env.ModelBaseURL() + "/v1/responses"}, WallTimeout: 30 * time.Second})
	if ex.Code != 0 || out != "model-ok /v1/responses" {
		t.Fatalf("relay: %+v %q %q", ex, out, errs)
	}
	_, otherPort, _ := net.SplitHostPort(other.Addr().String())
	for _, addr := range []string{"127.0.0.1:" + otherPort, "172.17.0.1:" + otherPort} {
		ex, out, errs = run(t, x, sandbox.Command{Args: []string{"wget", "-q", "-T", "3", "-O", "-", "http://" + addr + "/"}, WallTimeout: 30 * time.Second})
		if ex.Code == 0 {
			t.Fatalf("container reached host listener at %s: %q", addr, out)
		}
	}
	select {
	case <-accepted:
		t.Fatal("host listener accepted a connection from the container")
	default:
	}
	_ = errs
}

func TestNodeRunsFromHostMounts(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not on PATH (needed to run harness CLIs in containers): %v", err)
	}
	ms, err := NodeMounts(node)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	ctx := context.Background()
	env, err := c.Start(ctx, Spec{Image: testImage, Mounts: ms})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	real, _ := filepath.EvalSymlinks(node)
	ex, out, errs := run(t, env.Executor(), sandbox.Command{Args: []string{real, "-e", "console.log(6*7)"}, WallTimeout: time.Minute})
	if ex.Code != 0 || out != "42\n" {
		t.Fatalf("node in container: %+v %q %q", ex, out, errs)
	}
}

// Objects left behind (no Close, as after a crash) are found by label.
func TestCleanupRemovesEverythingLabelled(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	dir := t.TempDir()
	bb, _ := FindBusybox()
	if err := BusyboxContext(dir, bb, "RUN echo built > /built.txt"); err != nil {
		t.Fatal(err)
	}
	env, err := c.Start(ctx, Spec{BuildDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.ReadFile(ctx, "/built.txt"); err != nil {
		t.Fatalf("built image: %v", err)
	}
	// A second client with the same run id stands in for a restarted hoh.
	other, err := New(ctx, Options{RunID: c.RunID()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.API.Close()
	if err := other.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	assertNothingLabelled(t, c)
}

// TestAgentCapabilitiesAndNoNewPrivileges reads the agent's own
// /proc/self/status: as root it holds exactly AgentCapabilities, as a task's
// agent.user none, and no-new-privileges is set for both.
func TestAgentCapabilitiesAndNoNewPrivileges(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	env, err := c.Start(ctx, Spec{Image: testImage})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	status := func(user string) map[string]string {
		t.Helper()
		var out bytes.Buffer
		ex, err := env.ExecutorAs(user).Run(ctx, sandbox.Command{Args: []string{"cat", "/proc/self/status"}, Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
		if err != nil || ex.Code != 0 {
			t.Fatalf("as %q: %v %d %s", user, err, ex.Code, out.String())
		}
		f := map[string]string{}
		for _, line := range strings.Split(out.String(), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				f[k] = strings.TrimSpace(v)
			}
		}
		return f
	}
	// Bit numbers from linux/capability.h.
	bits := map[string]uint{"CHOWN": 0, "DAC_OVERRIDE": 1, "FOWNER": 3, "FSETID": 4, "KILL": 5, "SETGID": 6, "SETUID": 7, "NET_BIND_SERVICE": 10}
	var want uint64
	for _, c := range AgentCapabilities {
		b, ok := bits[c]
		if !ok {
			t.Fatalf("no bit known for %s", c)
		}
		want |= 1 << b
	}
	root := status("0")
	if got := root["CapEff"]; got != fmt.Sprintf("%016x", want) {
		t.Errorf("root CapEff %s, want %016x (NET_RAW is bit 13, MKNOD 27)", got, want)
	}
	if got := root["CapBnd"]; got != fmt.Sprintf("%016x", want) {
		t.Errorf("root CapBnd %s, want %016x", got, want)
	}
	if root["NoNewPrivs"] != "1" {
		t.Errorf("root NoNewPrivs %q, want 1", root["NoNewPrivs"])
	}
	user := status("1000:1000")
	if user["CapEff"] != "0000000000000000" || user["NoNewPrivs"] != "1" {
		t.Errorf("agent.user: CapEff %s NoNewPrivs %s, want none and 1", user["CapEff"], user["NoNewPrivs"])
	}
}
