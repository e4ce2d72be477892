package opencode_test

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/adapters/harness/harnesstest"
	"github.com/hoh-research/hoh/adapters/harness/opencode"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

// A scripted Developer turn connects to the provider on loopback and to
// nothing else: OpenCode used to install @opencode-ai/plugin from the npm
// registry at every start, which held an outside connection through the
// run and slowed it on a loaded machine.
func TestOpenCodeConnectsOnlyToLoopback(t *testing.T) {
	for _, v := range opencode.CLI.Pins {
		t.Run(v, func(t *testing.T) {
			r := harnesstest.Start(t, scripted.Script{Entries: []scripted.Entry{{
				Name: "developer", Match: "Implement the greeting",
				Steps: []scripted.Step{{Shell: "echo hi > marker.txt"}, {Say: "Done."}},
			}}})
			bin, log := harnesstest.Traced(t, clienv.CLIAt(t, "opencode", v))
			h, err := catalogue.New(harness.Spec{Kind: "opencode", Binary: bin, Version: v, Provider: r.Provider(harness.APIChat)})
			if err != nil {
				t.Fatal(err)
			}
			inv := r.Inv(t, "dev", runrecord.RoleDeveloper, harness.AccessWrite, "Implement the greeting feature.")
			start := time.Now()
			res := harnesstest.Run(t, h, inv)
			if res.Outcome != runrecord.OutcomeCompleted {
				t.Fatalf("outcome %s (%s)", res.Outcome, res.Evidence)
			}
			t.Logf("the traced turn took %s", time.Since(start).Round(time.Millisecond))
			loopback, outside := harnesstest.Connects(t, log)
			u, _ := url.Parse(r.Srv.URL())
			if !slices.Contains(loopback, "127.0.0.1:"+u.Port()) {
				t.Fatalf("the trace shows no connect to the provider at %s (loopback: %v): strace recorded nothing", u.Host, loopback)
			}
			if len(outside) > 0 {
				t.Errorf("OpenCode %s connected outside loopback: %v", v, outside)
			}
		})
	}
}
