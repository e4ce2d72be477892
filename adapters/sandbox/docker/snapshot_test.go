package docker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"github.com/hoh-research/hoh/adapters/sandbox"
)

// A sidecar's file system and volume are committed with the task
// container: an environment started from the committed image starts the
// sidecar from that state (its volume holding what was written), a copy
// of its own; removing the checkpoint image removes the snapshots.
func TestCommitSnapshotsSidecarsWithTheirVolumes(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM "+testImage+"\nRUN mkdir -p /data /www\nVOLUME /data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	volImg, err := c.BuildImage(ctx, dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	db := webService("db", "healthy")
	db.Image = volImg
	// The page lists the volume; the root file system keeps a marker too.
	db.Cmd = []string{"ls /data > /www/index.html 2>&1; cat /data/* >> /www/index.html 2>/dev/null; cat /etc/marker >> /www/index.html 2>/dev/null; exec httpd -f -p 8000 -h /www"}
	spec := Spec{Image: testImage, Services: &Services{MainAlias: "main", List: []Service{db}}}
	env, err := c.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.WithoutCancel(ctx))
	// Write into the sidecar's volume and root file system.
	id := env.services[0]
	// Podman wants an exec to attach a stream, though it runs detached.
	ex, err := c.API.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: []string{"sh", "-c", "echo order-42 > /data/rows && echo rootfs-mark > /etc/marker"}, AttachStdout: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.API.ContainerExecStart(ctx, ex.ID, container.ExecStartOptions{Detach: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the exec is short; Start returns at once
	img, err := env.Commit(ctx, map[string]string{"hoh.test": "1"})
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := c.serviceSnapshots(ctx, img)
	if err != nil || snaps["db"] == "" {
		t.Fatalf("snapshots of %s: %v %v", img, snaps, err)
	}
	spec.Image = img
	env2, err := c.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r, err := env2.Executor().Run(ctx, sandbox.Command{Args: []string{"wget", "-q", "-O", "-", "http://db:8000/"}, Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
	if err != nil || r.Code != 0 || !strings.Contains(out.String(), "order-42") || !strings.Contains(out.String(), "rootfs-mark") {
		t.Errorf("the snapshot's sidecar serves %q (%+v %v), want the volume's row and the marker", out.String(), r, err)
	}
	env2.Close(ctx)
	if err := c.RemoveImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	left, err := c.API.ImageList(ctx, image.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelServicesOf))})
	for _, im := range left {
		if im.Labels[LabelRun] == c.RunID() {
			t.Errorf("snapshot %s left after its checkpoint image went (%v)", im.ID, err)
		}
	}
}
