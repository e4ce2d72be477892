package docker

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/hoh-research/hoh/adapters/sandbox"
)

// A missing image is pulled through the Engine API with progress: the test
// serves an in-memory registry on loopback (the engine trusts 127.0.0.0/8
// without TLS), pushes a locally built image there, deletes it from the
// engine, and EnsureImage brings it back.
func TestEnsureImagePullsAMissingImage(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	ref := host + "/hoh-pull-test:" + strings.ToLower(strings.ReplaceAll(c.RunID(), "/", "-"))

	dir := t.TempDir()
	bb, err := FindBusybox()
	if err != nil {
		t.Fatal(err)
	}
	if err := BusyboxContext(dir, bb, "RUN echo pulled > /marker"); err != nil {
		t.Fatal(err)
	}
	id, err := c.BuildImage(ctx, dir, "", ref)
	if err != nil {
		t.Fatal(err)
	}
	push, err := c.API.ImagePush(ctx, ref, image.PushOptions{RegistryAuth: base64.URLEncoding.EncodeToString([]byte("{}"))})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(push)
	push.Close()
	if bytes.Contains(out, []byte(`"error"`)) {
		t.Fatalf("push: %s", out)
	}
	if _, err := c.API.ImageRemove(ctx, id, image.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.API.ImageInspect(ctx, ref); err == nil {
		t.Fatal("the image is still present; the pull would prove nothing")
	}
	// The pulled image carries the build's labels; it is the user's, so the
	// test removes it itself.
	defer c.API.ImageRemove(ctx, ref, image.RemoveOptions{Force: true})

	var progress bytes.Buffer
	if err := c.EnsureImage(ctx, ref, &progress); err != nil {
		t.Fatal(err)
	}
	env, err := c.Start(ctx, Spec{Image: ref})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	ex, stdout, _ := run(t, env.Executor(), sandbox.Command{Args: []string{"cat", "/marker"}})
	if ex.Code != 0 || strings.TrimSpace(stdout) != "pulled" {
		t.Fatalf("pulled image: exit %d, /marker %q", ex.Code, stdout)
	}
	if !strings.Contains(progress.String(), "pull "+ref+": ") {
		t.Fatalf("no pull progress: %q", progress.String())
	}
	// Present now: nothing is pulled again.
	progress.Reset()
	if err := c.EnsureImage(ctx, ref, &progress); err != nil || progress.Len() != 0 {
		t.Fatalf("present image: %v, progress %q", err, progress.String())
	}
}

// An image that can be neither found nor pulled fails with the registry's
// reason (loopback port with nothing listening).
func TestEnsureImageSaysWhyAPullFailed(t *testing.T) {
	c := newClient(t)
	err := c.EnsureImage(context.Background(), "127.0.0.1:1/hoh-never-served:1", io.Discard)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("err = %v, want the registry's refusal", err)
	}
}
