package docker

import (
	"context"
	"fmt"
	"os"

	"github.com/docker/docker/api/types/container"
)

// CopyFromImage copies the file or directory src of image img into the host
// directory dstDir under src's base name, through a created (never started)
// container. A missing src is an error wrapping os.ErrNotExist.
func (c *Client) CopyFromImage(ctx context.Context, img, src, dstDir string) error {
	resp, err := c.API.ContainerCreate(ctx, &container.Config{Image: img, Labels: c.Labels(nil), Entrypoint: []string{"true"}},
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
			return fmt.Errorf("%s: %w", src, os.ErrNotExist)
		}
		return &InfraError{Stage: "copy", Err: fmt.Errorf("%s from image: %w", src, err)}
	}
	defer rc.Close()
	if err := os.MkdirAll(dstDir, 0o755); err != nil {
		return err
	}
	return untar(rc, dstDir)
}
