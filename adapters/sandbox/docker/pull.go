package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/docker/docker/api/types/image"
)

// EnsureImage makes ref present locally: an image already there is used as
// is; a missing one is pulled through the Engine API, its progress written to
// progress (one line per layer and status change, nil for none). A pulled
// image is the user's, like one from `docker pull`: it is not labelled and
// not removed with the run. The error says why the pull failed; callers name
// where the image was asked for.
func (c *Client) EnsureImage(ctx context.Context, ref string, progress io.Writer) error {
	if _, err := c.API.ImageInspect(ctx, ref); err == nil {
		return nil
	}
	if err := c.pull(ctx, ref, progress); err != nil {
		return err
	}
	if _, err := c.API.ImageInspect(ctx, ref); err != nil {
		return fmt.Errorf("the pull ended but the image is not present: %v", err)
	}
	return nil
}

func (c *Client) pull(ctx context.Context, ref string, progress io.Writer) error {
	rc, err := c.API.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return err
	}
	defer rc.Close()
	last := map[string]string{}
	dec := json.NewDecoder(rc)
	for {
		var m struct {
			ID          string `json:"id"`
			Status      string `json:"status"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading pull progress: %w", err)
		}
		if m.Error != "" {
			return fmt.Errorf("%s", m.Error)
		}
		if m.ErrorDetail.Message != "" {
			return fmt.Errorf("%s", m.ErrorDetail.Message)
		}
		// Byte counts arrive many times a second; a status change per layer
		// is what an operator needs to see that the pull moves.
		if progress != nil && m.Status != "" && last[m.ID] != m.Status {
			last[m.ID] = m.Status
			if m.ID != "" {
				fmt.Fprintf(progress, "pull %s: %s %s\n", ref, m.ID, m.Status)
			} else {
				fmt.Fprintf(progress, "pull %s: %s\n", ref, m.Status)
			}
		}
	}
}
