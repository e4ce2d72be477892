package docker

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/docker/docker/api/types/container"
)

// CopyFromImage copies the file or directory src of image img into the host
// directory dstDir under src's base name. A missing src is an error
// wrapping os.ErrNotExist.
func (c *Client) CopyFromImage(ctx context.Context, img, src, dstDir string) error {
	rc, err := c.readFromImage(ctx, img, src)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := os.MkdirAll(dstDir, 0o755); err != nil {
		return err
	}
	return untar(rc, dstDir)
}

// readFromImage returns src of image img as a tar archive (src's base name
// at its top), read through a created, never started container that goes
// when the archive is closed. A missing src is an error wrapping
// os.ErrNotExist.
func (c *Client) readFromImage(ctx context.Context, img, src string) (io.ReadCloser, error) {
	resp, err := c.API.ContainerCreate(ctx, &container.Config{Image: img, Labels: c.Labels(nil), Cmd: []string{"true"}},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		return nil, &InfraError{Stage: "create", Err: err}
	}
	c.trackContainer(resp.ID, true)
	remove := func() {
		_ = c.API.ContainerRemove(context.WithoutCancel(ctx), resp.ID, container.RemoveOptions{Force: true})
		c.trackContainer(resp.ID, false)
	}
	rc, _, err := c.API.CopyFromContainer(ctx, resp.ID, src)
	if err != nil {
		remove()
		if isNotFound(err) {
			return nil, fmt.Errorf("%s: %w", src, os.ErrNotExist)
		}
		return nil, &InfraError{Stage: "copy", Err: fmt.Errorf("%s from image: %w", src, err)}
	}
	return removingReader{rc, remove}, nil
}

type removingReader struct {
	io.ReadCloser
	remove func()
}

func (r removingReader) Close() error {
	err := r.ReadCloser.Close()
	r.remove()
	return err
}
