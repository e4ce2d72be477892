package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docker/docker/api/types/container"
)

// ImageWorkdir is the image's WORKDIR, or def when it sets none.
func (c *Client) ImageWorkdir(ctx context.Context, img, def string) (string, error) {
	ins, err := c.API.ImageInspect(ctx, img)
	if err != nil {
		return "", &InfraError{Stage: "image inspect", Err: err}
	}
	if ins.Config != nil && ins.Config.WorkingDir != "" {
		return ins.Config.WorkingDir, nil
	}
	return def, nil
}

// CopyDirFromImage copies the contents of directory src in image img into
// the host directory dstDir, through a created (never started) container.
// A missing src copies nothing.
func (c *Client) CopyDirFromImage(ctx context.Context, img, src, dstDir string) error {
	resp, err := c.API.ContainerCreate(ctx, &container.Config{Image: img, Labels: c.Labels(nil), Cmd: []string{"true"}},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		return &InfraError{Stage: "create", Err: err}
	}
	c.trackContainer(resp.ID, true)
	defer func() {
		_ = c.API.ContainerRemove(context.WithoutCancel(ctx), resp.ID, container.RemoveOptions{Force: true})
		c.trackContainer(resp.ID, false)
	}()
	rc, _, err := c.API.CopyFromContainer(ctx, resp.ID, src)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return &InfraError{Stage: "copy", Err: fmt.Errorf("%s from image: %w", src, err)}
	}
	defer rc.Close()
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dstDir)), ".hoh-copy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := untar(rc, tmp); err != nil {
		return err
	}
	// The archive holds src's base name as its top directory.
	top := filepath.Join(tmp, filepath.Base(filepath.Clean(src)))
	ents, err := os.ReadDir(top)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.Rename(filepath.Join(top, e.Name()), filepath.Join(dstDir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
