package docker

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"github.com/hoh-research/hoh/adapters/sandbox"
)

// A committed checkpoint holds what was written outside the workspace,
// carries the run's labels, and goes with the run's cleanup (what a resumed
// run does with a killed run's objects).
func TestCommitIsLabelledAndGoesWithTheRunsCleanup(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	env, err := c.Start(ctx, Spec{Image: testImage, Env: []string{"SECRET_KEY=value-not-for-images"}})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	if ex, _, errs := run(t, env.Executor(), sandbox.Command{Args: []string{"sh", "-c", "echo kept > /etc/installed"}}); ex.Code != 0 {
		t.Fatal(errs)
	}
	img, err := env.Commit(ctx, map[string]string{"hoh.checkpoint": "1"})
	if err != nil {
		t.Fatal(err)
	}
	ins, err := c.API.ImageInspect(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	if ins.Config.Labels[LabelRun] != c.RunID() || ins.Config.Labels["hoh.checkpoint"] != "1" {
		t.Fatalf("labels %v", ins.Config.Labels)
	}
	if v, _ := EnvValue(ins.Config.Env, "SECRET_KEY"); v != "" || strings.Join(ins.Config.Cmd, " ") == "/bin/sh -c "+keepAlive {
		t.Fatalf("committed config keeps the container's env value or keep-alive command: env %v cmd %v", ins.Config.Env, ins.Config.Cmd)
	}
	cp, err := c.Start(ctx, Spec{Image: img})
	if err != nil {
		t.Fatal(err)
	}
	if _, out, _ := run(t, cp.Executor(), sandbox.Command{Args: []string{"cat", "/etc/installed"}}); out != "kept\n" {
		t.Fatalf("checkpoint lost /etc/installed: %q", out)
	}
	cp.Close(ctx)
	if err := CleanupRun(ctx, c.API, c.RunID(), true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.API.ImageInspect(ctx, img); err == nil {
		t.Fatal("the run's cleanup left the checkpoint image")
	}
}

// BenchmarkCheckpointCommit1GB measures an Engine API commit of a container
// whose environment holds 1 GB beyond its image (what an agent that
// installed a toolchain leaves), and the disk the checkpoint image takes.
// HoH@3 commits three times per trial; each commit holds every change since
// the container started.
//
//	go test -run '^$' -bench CheckpointCommit1GB -benchtime 3x ./adapters/sandbox/docker
func BenchmarkCheckpointCommit1GB(b *testing.B) {
	if setupError != nil {
		b.Fatalf("docker setup failed (run scripts/start-dockerd.sh; needs busybox-static): %v", setupError)
	}
	ctx := context.Background()
	c, err := New(ctx, Options{RunID: fmt.Sprintf("hoh-bench-commit-%d", time.Now().UnixNano())})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	env, err := c.Start(ctx, Spec{Image: testImage, Pids: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close(ctx)
	ex, err := env.Executor().Run(ctx, sandbox.Command{Args: []string{"sh", "-c",
		"mkdir -p /opt/env && for i in 1 2 3 4; do head -c 268435456 /dev/urandom > /opt/env/part$i; done"}, WallTimeout: 10 * time.Minute})
	if err != nil || ex.Code != 0 {
		b.Fatalf("writing 1 GB: %v %+v", err, ex)
	}
	base, err := c.API.ImageInspect(ctx, testImage)
	if err != nil {
		b.Fatal(err)
	}
	var mb float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		img, err := env.Commit(ctx, map[string]string{"hoh.checkpoint": fmt.Sprint(i)})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		ins, err := c.API.ImageInspect(ctx, img)
		if err != nil {
			b.Fatal(err)
		}
		mb = float64(ins.Size-base.Size) / (1 << 20)
		if err := c.RemoveImage(ctx, img); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(mb, "MB/checkpoint")
	f := filters.NewArgs(filters.Arg("label", LabelRun+"="+c.RunID()), filters.Arg("label", "hoh.checkpoint"))
	if ims, err := c.API.ImageList(ctx, image.ListOptions{Filters: f}); err != nil || len(ims) != 0 {
		b.Fatalf("checkpoint images left: %d %v", len(ims), err)
	}
}
