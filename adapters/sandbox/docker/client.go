// Package docker runs tasks in Docker containers through the Docker Engine API
// (github.com/docker/docker/client, never the docker CLI). An Environment is
// one task container with the task's limits and a host workspace bind-mounted
// in; its Executor runs commands with wall and idle timeouts. Every object
// this package creates carries the labels hoh.managed, hoh.run and hoh.pid, so
// Cleanup can remove what a run left behind even after an interrupt.
package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// Label keys put on every container and image this package creates.
const (
	LabelManaged = "hoh.managed"
	LabelRun     = "hoh.run"
	LabelPID     = "hoh.pid"
)

// ErrNoDaemon wraps failures to reach the Docker Engine.
var ErrNoDaemon = errors.New("docker engine not reachable (start it with scripts/start-dockerd.sh)")

// Options configure a Client.
type Options struct {
	// Host is the engine address, e.g. unix:///var/run/docker.sock; empty
	// uses DOCKER_HOST or the default socket.
	Host string
	// RunID labels everything created through this client; empty derives
	// one from the process id and start time.
	RunID string
	// KeepImages keeps images built by this client on Close/Cleanup.
	KeepImages bool
}

// Client is a connection to the Docker Engine plus the registry of objects
// created through it.
type Client struct {
	API        *client.Client
	runID      string
	keepImages bool

	mu         sync.Mutex
	containers map[string]bool
	images     map[string]bool
	engineCache
}

// New connects to the engine and checks that it answers.
func New(ctx context.Context, opts Options) (*Client, error) {
	copts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if opts.Host != "" {
		copts = append(copts, client.WithHost(opts.Host))
	}
	api, err := client.NewClientWithOpts(copts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDaemon, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := api.Ping(pctx); err != nil {
		api.Close()
		return nil, fmt.Errorf("%w: %v", ErrNoDaemon, err)
	}
	runID := opts.RunID
	if runID == "" {
		runID = fmt.Sprintf("hoh-%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	return &Client{
		API: api, runID: runID, keepImages: opts.KeepImages,
		containers: map[string]bool{}, images: map[string]bool{},
	}, nil
}

// RunID is the value of the hoh.run label on objects made by this client.
func (c *Client) RunID() string { return c.runID }

// Labels returns the labels put on every object, merged with extra.
func (c *Client) Labels(extra map[string]string) map[string]string {
	l := map[string]string{
		LabelManaged: "1",
		LabelRun:     c.runID,
		LabelPID:     strconv.Itoa(os.Getpid()),
	}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

func (c *Client) trackContainer(id string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if on {
		c.containers[id] = true
	} else {
		delete(c.containers, id)
	}
}

func (c *Client) trackImage(id string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if on {
		c.images[id] = true
	} else {
		delete(c.images, id)
	}
}

// Cleanup removes every container (and, unless KeepImages, every image)
// labelled with this client's run id, whether or not it is still in the
// in-memory registry. It returns the first error but tries everything.
func (c *Client) Cleanup(ctx context.Context) error {
	return CleanupRun(ctx, c.API, c.runID, !c.keepImages)
}

// CleanupRun removes containers, networks and optionally images labelled
// hoh.run=runID.
func CleanupRun(ctx context.Context, api *client.Client, runID string, images bool) error {
	f := filters.NewArgs(filters.Arg("label", LabelRun+"="+runID))
	var first error
	note := func(err error) {
		if err != nil && first == nil && !client.IsErrNotFound(err) {
			first = err
		}
	}
	cs, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	note(err)
	for _, ct := range cs {
		note(api.ContainerRemove(ctx, ct.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}))
	}
	note(removeRunNetworks(ctx, api, runID))
	if images {
		// Committed checkpoints first and alone: pruning their parents would
		// remove the task image they were committed on, which may belong to
		// another run (an untagged image has no other reference).
		committed, err := ImagesLabelled(ctx, api, LabelRun+"="+runID, LabelCommitted+"=1")
		note(err)
		// A commit on top of another goes first: repeat while that helps.
		for len(committed) > 0 {
			var left []image.Summary
			var last error
			for _, im := range committed {
				if _, err := api.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: true}); err != nil && !client.IsErrNotFound(err) {
					left, last = append(left, im), err
				}
			}
			if len(left) == len(committed) {
				note(last)
				break
			}
			committed = left
		}
		// Children before parents: retry what failed while others go.
		for pass := 0; pass < 5; pass++ {
			ims, err := api.ImageList(ctx, image.ListOptions{All: true, Filters: f})
			if err != nil || len(ims) == 0 || pass == 4 {
				note(err)
				for _, im := range ims {
					_, err := api.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: true, PruneChildren: true})
					note(err)
				}
				break
			}
			for _, im := range ims {
				_, _ = api.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: true, PruneChildren: true})
			}
		}
	}
	return first
}

// Close removes everything this client created and closes the connection.
func (c *Client) Close(ctx context.Context) error {
	err := c.Cleanup(ctx)
	c.API.Close()
	return err
}

// CleanupOnSignal is the safety net for SIGINT/SIGTERM: the caller
// normally unwinds on its own (its context ends and it removes the run's
// objects); only when that has not happened within grace are the objects
// removed here and the process ends with status 130. The returned function
// uninstalls the hook.
func (c *Client) CleanupOnSignal(grace time.Duration) (stop func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
			select {
			case <-done:
			case <-time.After(grace):
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_ = c.Cleanup(ctx)
				cancel()
				os.Exit(130)
			}
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// ImagesLabelled lists every image (intermediate ones too) that carries all
// the labels given as key=value. Podman's Docker-compatible API matches an
// image carrying any one of several label filters, Docker one carrying all:
// the engine's answer is narrowed here, so both give the same list.
func ImagesLabelled(ctx context.Context, api client.ImageAPIClient, labels ...string) ([]image.Summary, error) {
	f := filters.NewArgs()
	for _, l := range labels {
		f.Add("label", l)
	}
	ims, err := api.ImageList(ctx, image.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	out := ims[:0]
	for _, im := range ims {
		if hasLabels(im.Labels, labels) {
			out = append(out, im)
		}
	}
	return out, nil
}

func hasLabels(have map[string]string, want []string) bool {
	for _, l := range want {
		k, v, _ := strings.Cut(l, "=")
		if got, ok := have[k]; !ok || (strings.Contains(l, "=") && got != v) {
			return false
		}
	}
	return true
}
