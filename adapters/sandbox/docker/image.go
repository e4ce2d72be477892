package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/build"
)

// BuildImage builds an image from the build context in dir (its Dockerfile,
// or dockerfile relative to dir) with the classic builder, labels it and
// registers it for removal. It returns the image id.
func (c *Client) BuildImage(ctx context.Context, dir, dockerfile, tag string) (string, error) {
	var buf bytes.Buffer
	if err := tarDir(&buf, dir, ""); err != nil {
		return "", fmt.Errorf("build context %s: %w", dir, err)
	}
	return c.buildFromTar(ctx, &buf, dockerfile, tag)
}

func (c *Client) buildFromTar(ctx context.Context, r io.Reader, dockerfile, tag string) (string, error) {
	return c.buildLabelled(ctx, r, dockerfile, tag, nil)
}

// buildLabelled builds like buildFromTar, with labels besides the run's.
func (c *Client) buildLabelled(ctx context.Context, r io.Reader, dockerfile, tag string, labels map[string]string) (string, error) {
	if dockerfile == "" {
		dockerfile = "Dockerfile"
	}
	opts := build.ImageBuildOptions{
		Dockerfile:  dockerfile,
		Remove:      true,
		ForceRemove: true,
		Labels:      c.Labels(labels),
		// Builds never need the network: every image comes from local files.
		NetworkMode: "none",
		// Cleanup removes a build's image with its parent layers; a cached
		// layer shared with another run's concurrent build would vanish under
		// it, so no build reuses another's layers.
		NoCache: true,
	}
	if tag == "" && c.Engine(ctx).Podman {
		tag = c.keepTag()
	}
	if tag != "" {
		opts.Tags = []string{tag}
	}
	resp, err := c.API.ImageBuild(ctx, r, opts)
	if err != nil {
		return "", fmt.Errorf("image build: %w", err)
	}
	defer resp.Body.Close()
	var id string
	var log strings.Builder
	dec := json.NewDecoder(resp.Body)
	for {
		var m struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
			Aux    struct {
				ID string `json:"ID"`
			} `json:"aux"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return "", fmt.Errorf("image build: reading progress: %w", err)
		}
		log.WriteString(m.Stream)
		if m.Error != "" {
			return "", fmt.Errorf("image build failed: %s\n%s", m.Error, tail(log.String(), 2000))
		}
		if m.Aux.ID != "" {
			id = m.Aux.ID
		}
	}
	if id == "" && tag != "" {
		ins, err := c.API.ImageInspect(ctx, tag)
		if err != nil {
			return "", fmt.Errorf("image build: no image id reported: %w", err)
		}
		id = ins.ID
	}
	if id == "" {
		return "", fmt.Errorf("image build: no image id reported\n%s", tail(log.String(), 2000))
	}
	c.trackImage(id, true)
	return id, nil
}

// tarDir writes the tree under dir into w, with names prefixed by prefix.
func tarDir(w io.Writer, dir, prefix string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." && prefix == "" {
			return nil
		}
		name := filepath.ToSlash(filepath.Join(prefix, rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = name
		if info.IsDir() {
			hdr.Name += "/"
		}
		// Ownership of host files means nothing inside the container.
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// BusyboxContext writes a build context for a FROM-scratch image holding a
// static busybox with all its applets linked in /bin, plus /tmp, /workspace
// and /logs. busybox is the path of a static busybox binary (busybox-static).
// extraDockerfile lines are appended to the Dockerfile.
func BusyboxContext(dir, busybox string, extraDockerfile ...string) error {
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return fmt.Errorf("busybox --list (%s): %w", busybox, err)
	}
	root := filepath.Join(dir, "rootfs")
	for _, d := range []string{"bin", "tmp", "workspace", "logs/agent", "logs/verifier", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o777); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(busybox)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), data, 0o755); err != nil {
		return err
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" || strings.Contains(applet, "/") {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(root, "bin", applet)); err != nil && !os.IsExist(err) {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644); err != nil {
		return err
	}
	df := "FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\nWORKDIR /workspace\n"
	df += strings.Join(extraDockerfile, "\n") + "\n"
	return os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644)
}

// FindBusybox returns the path of a static busybox binary, or an error saying
// how to install one.
func FindBusybox() (string, error) {
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("busybox"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no busybox binary: apt-get install -y busybox-static")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
