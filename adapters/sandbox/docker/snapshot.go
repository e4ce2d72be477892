package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
)

// Sidecar snapshots: when the task container is committed (a checkpoint),
// each sidecar is committed too, with the contents of its volumes (a
// database's data directory is usually one) added to the image at their
// paths, so that a container started from that image gets them as its
// volumes' initial contents. An environment started from the committed task
// image starts each sidecar from its snapshot (startServices): the QA
// Tester's and the Planner's role containers and the verifier see the
// sidecars as the Developer left them at that checkpoint, each in copies of
// its own, which it may change without reaching anyone else's.

// LabelServicesOf marks a sidecar snapshot (and the commit it is built on)
// with the id of the task container image it was taken with; the usable
// snapshot also has LabelSnapshot set to the service's name (not
// LabelService: a commit inherits the sidecar container's labels).
const (
	LabelServicesOf = "hoh.services.of"
	LabelSnapshot   = "hoh.snapshot"
)

// commitServices snapshots every sidecar of env for the task image mainID.
func (env *Environment) commitServices(ctx context.Context, mainID string) error {
	for i, id := range env.services {
		if err := env.snapshotService(ctx, id, env.serviceNames[i], mainID); err != nil {
			return &InfraError{Stage: "commit service " + env.serviceNames[i], Err: err}
		}
	}
	return nil
}

// snapshotService commits one sidecar, paused so that its file system and
// its volumes are copied at one moment. The image keeps the configuration of
// the sidecar's own image (the service's environment values, which may come
// from the host, are set again when it starts, never written into it).
func (env *Environment) snapshotService(ctx context.Context, id, name, mainID string) error {
	c := env.c
	ins, err := c.API.ContainerInspect(ctx, id)
	if err != nil {
		return err
	}
	if ins.State != nil && ins.State.Running && !ins.State.Paused {
		thaw, err := c.freeze(ctx, id)
		if err != nil {
			return err
		}
		defer thaw()
	}
	var vols []string
	for _, m := range ins.Mounts {
		if m.Type == mount.TypeVolume {
			vols = append(vols, m.Destination)
		}
	}
	// Set, not left out: a sidecar started from an earlier snapshot
	// carries that one's labels, which a commit would inherit.
	labels := map[string]string{LabelServicesOf: mainID, LabelSnapshot: ""}
	if len(vols) == 0 {
		labels[LabelSnapshot] = name
	}
	cfg, err := env.serviceCommitConfig(ctx, name, ins.Config)
	if err != nil {
		return err
	}
	cfg.Labels = c.Labels(withCommitted(labels))
	img, err := c.commit(ctx, id, cfg, false)
	if err != nil {
		return err
	}
	if len(vols) == 0 {
		return nil
	}
	return env.addVolumes(ctx, id, img, vols, map[string]string{LabelServicesOf: mainID, LabelSnapshot: name, LabelCommitted: "1"})
}

// serviceCommitConfig is the configuration of the sidecar's own image with
// the service's environment keys present but empty.
func (env *Environment) serviceCommitConfig(ctx context.Context, name string, running *container.Config) (*container.Config, error) {
	var svc Service
	for _, s := range env.spec.Services.List {
		if s.Name == name {
			svc = s
		}
	}
	orig, err := env.c.ImageConfig(ctx, svc.Image)
	if err != nil {
		return nil, err
	}
	cfg := &container.Config{Env: append([]string(nil), orig.Env...), Entrypoint: orig.Entrypoint, Cmd: orig.Cmd,
		WorkingDir: orig.WorkingDir, User: orig.User, Healthcheck: orig.Healthcheck}
	keys := append([]string(nil), svc.Env...)
	if running != nil {
		keys = append(keys, running.Env...) // the engine would add what the config lacks
	}
	for _, kv := range keys {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := EnvValue(cfg.Env, k); !ok {
			cfg.Env = append(cfg.Env, k+"=")
		}
	}
	return cfg, nil
}

// addVolumes builds, on the commit base, an image holding the contents of
// the sidecar's volumes vols at their paths (copied out of the paused
// container through the Engine API), labelled labels.
func (env *Environment) addVolumes(ctx context.Context, id, base string, vols []string, labels map[string]string) error {
	dir, err := os.MkdirTemp("", "hoh-snapshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	df := "FROM " + strings.TrimPrefix(base, "sha256:") + "\n"
	for i, v := range vols {
		name := fmt.Sprintf("volume-%d.tar", i)
		if err := env.copyVolume(ctx, id, v, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("volume %s: %w", v, err)
		}
		// ADD unpacks a local tar; the archive's top entry is the volume's
		// own folder, so it goes into the parent.
		df += fmt.Sprintf("ADD %s %s\n", name, strings.TrimSuffix(path.Dir(path.Clean(v)), "/")+"/")
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(tarDir(pw, dir, "")) }()
	_, err = env.c.buildLabelled(ctx, pr, "", "", labels)
	pr.CloseWithError(err)
	return err
}

func (env *Environment) copyVolume(ctx context.Context, id, src, dst string) error {
	rc, _, err := env.c.API.CopyFromContainer(ctx, id, src)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// serviceSnapshots are the usable sidecar snapshots taken with the image
// img, by service name (none for an image that is no checkpoint): of the
// images carrying the service's name (a build's steps each leave one), the
// last, no other's parent.
func (c *Client) serviceSnapshots(ctx context.Context, img string) (map[string]string, error) {
	ins, err := c.API.ImageInspect(ctx, img)
	if err != nil {
		return nil, err
	}
	if ins.Config == nil || ins.Config.Labels[LabelCommitted] != "1" {
		return nil, nil
	}
	ims, err := c.snapshotImages(ctx, ins.ID)
	if err != nil {
		return nil, err
	}
	parents := map[string]bool{}
	for _, im := range ims {
		parents[im.ParentID] = true
	}
	out := map[string]string{}
	for _, im := range ims {
		if name := im.Labels[LabelSnapshot]; name != "" && !parents[im.ID] {
			out[name] = im.ID
		}
	}
	return out, nil
}

func (c *Client) snapshotImages(ctx context.Context, mainID string) ([]image.Summary, error) {
	return c.API.ImageList(ctx, image.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelServicesOf+"="+mainID))})
}

// removeSnapshots removes every image of the sidecar snapshots taken with
// image id, children before parents (never pruning: a commit's parent is
// the sidecar's own image, which the run may start again).
func (c *Client) removeSnapshots(ctx context.Context, id string) error {
	for {
		ims, err := c.snapshotImages(ctx, id)
		if err != nil || len(ims) == 0 {
			return err
		}
		var last error
		removed := 0
		for _, im := range ims {
			if _, err := c.API.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: true}); err != nil && !isNotFound(err) {
				last = err
				continue
			}
			removed++
			c.trackImage(im.ID, false)
		}
		if removed == 0 {
			return fmt.Errorf("removing the sidecar snapshots of %s: %w", id, last)
		}
	}
}
