package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hoh-research/hoh/analysis/viewer"
)

func init() {
	register("view", "write the HTML report of a run, trial or project: view DIR [--serve ADDR]", viewCmd)
}

func viewCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("view", stderr)
	serve := fs.String("serve", "", "serve the report on ADDR (\":8080\" binds 127.0.0.1:8080), rebuilding pages while the run is going")
	tableConfigs := fs.String("tables", "", "directory of the table configs of hoh report (NAME.yaml); default: those embedded in the binary")
	noFigures := fs.Bool("no-figures", false, "leave the figures out (faster on very large runs)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: hoh view RUN_DIR|TRIAL_DIR|PROJECT_DIR [--serve ADDR]\n\nWrites RUN_DIR/report/index.html (one page per trial under report/trials/);\nfor a project, report/index.html in its state directory (PROJECT_DIR/.git/hoh;\none page per loop).")
		fs.PrintDefaults()
	}
	dir, err := parseNamed(fs, args)
	if err != nil {
		return err
	}
	if dir == "" {
		fs.Usage()
		return fmt.Errorf("%w: which run directory?", errUsage)
	}
	opts := viewer.Options{TableConfigDir: *tableConfigs, NoFigures: *noFigures}
	if *serve == "" {
		start := time.Now()
		res, err := viewer.Build(dir, opts)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%d trial page(s), %d rebuilt, index %d bytes, %s)\n", res.Index, res.Trials, res.Rebuilt,
			res.IndexBytes, time.Since(start).Round(time.Millisecond))
		return nil
	}
	srv, err := viewer.NewServer(dir, opts, 3*time.Second)
	if err != nil {
		return err
	}
	srv.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	ln, err := net.Listen("tcp", viewer.ListenAddr(*serve))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\nserving http://%s/%s/index.html (Ctrl-C stops)\n", srv.Index(), ln.Addr(), viewer.ReportDir)
	return http.Serve(ln, srv)
}
