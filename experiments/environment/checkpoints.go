package environment

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/docker/docker/api/types/image"

	"github.com/hoh-research/hoh/adapters/sandbox/docker"
)

// Labels of a committed checkpoint image (besides the run's own labels, by
// which Cleanup and a resumed run's cleanup remove it).
const (
	labelCheckpointTrial = "hoh.checkpoint.trial" // the trial's directory in the run
	labelCheckpoint      = "hoh.checkpoint"       // its checkpoint number
)

// CheckpointLabels label an image as trial's checkpoint t (a multi-step
// task's step start is its checkpoint 0).
func CheckpointLabels(trial string, t int) map[string]string {
	return map[string]string{labelCheckpointTrial: trial, labelCheckpoint: strconv.Itoa(t)}
}

// containerCheckpoints implements trial.Checkpoints for a trial in a task
// container: each checkpoint commits the agent container (Engine API
// commit) to an image labelled with the run and the trial.
type containerCheckpoints struct {
	client *docker.Client
	env    *Env
	trial  string
	// handOn keeps the last checkpoint's image when Forget removes the
	// others: a step of a multi-step task hands it on to the next step.
	handOn bool
}

func (c *containerCheckpoints) Save(ctx context.Context, t int) error {
	if c.env.Container == nil {
		return errors.New("the agent container is gone")
	}
	// An earlier attempt's commit of the same checkpoint is replaced.
	if err := c.remove(ctx, t); err != nil {
		return err
	}
	_, err := c.env.Container.Commit(ctx, CheckpointLabels(c.trial, t))
	return err
}

func (c *containerCheckpoints) Release(ctx context.Context) { _ = c.env.Close(ctx) }

func (c *containerCheckpoints) Image(ctx context.Context, t int) (string, error) {
	ims, err := c.list(ctx, t)
	if err != nil || len(ims) == 0 {
		return "", err
	}
	return ims[0].ID, nil
}

func (c *containerCheckpoints) Forget(ctx context.Context) error {
	if !c.handOn {
		return c.remove(ctx, -1)
	}
	ims, err := c.list(ctx, -1)
	if err != nil {
		return err
	}
	last := -1
	for _, im := range ims {
		if n, err := strconv.Atoi(im.Labels[labelCheckpoint]); err == nil && n > last {
			last = n
		}
	}
	for _, im := range ims {
		if im.Labels[labelCheckpoint] != strconv.Itoa(last) {
			if err := c.client.RemoveImage(ctx, im.ID); err != nil {
				return fmt.Errorf("removing checkpoint image %s: %w", im.ID, err)
			}
		}
	}
	return nil
}

// list is the trial's checkpoint images (of checkpoint t; every one when
// t < 0), newest first.
func (c *containerCheckpoints) list(ctx context.Context, t int) ([]image.Summary, error) {
	return CheckpointImages(ctx, c.client, c.trial, t)
}

func (c *containerCheckpoints) remove(ctx context.Context, t int) error {
	ims, err := c.list(ctx, t)
	if err != nil {
		return err
	}
	for _, im := range ims {
		if err := c.client.RemoveImage(ctx, im.ID); err != nil {
			return fmt.Errorf("removing checkpoint image %s: %w", im.ID, err)
		}
	}
	return nil
}

// CheckpointImages are the images of a trial's checkpoint t (every one
// when t < 0) committed in the client's run, newest first.
func CheckpointImages(ctx context.Context, client *docker.Client, trial string, t int) ([]image.Summary, error) {
	labels := []string{docker.LabelRun + "=" + client.RunID(), labelCheckpointTrial + "=" + trial}
	if t >= 0 {
		labels = append(labels, labelCheckpoint+"="+strconv.Itoa(t))
	}
	// All (ImagesLabelled lists them): an untagged checkpoint another was
	// committed on top of (a replaced attempt's) counts as intermediate.
	ims, err := docker.ImagesLabelled(ctx, client.API, labels...)
	if err != nil {
		return nil, err
	}
	sort.Slice(ims, func(i, j int) bool { return ims[i].Created > ims[j].Created })
	return ims, nil
}

// LatestCheckpointImage is the trial's most recent checkpoint image in the
// client's run (an earlier attempt's), or "": a retried attempt continues
// from the whole environment, not only the workspace.
func LatestCheckpointImage(ctx context.Context, client *docker.Client, trial string) (string, error) {
	ims, err := CheckpointImages(ctx, client, trial, -1)
	if err != nil {
		return "", err
	}
	best, bestT := "", -1
	for _, im := range ims {
		if n, err := strconv.Atoi(im.Labels[labelCheckpoint]); err == nil && n > bestT {
			best, bestT = im.ID, n
		}
	}
	return best, nil
}
