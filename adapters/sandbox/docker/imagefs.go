package docker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	rc, err := c.readFromImage(ctx, img, src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
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
