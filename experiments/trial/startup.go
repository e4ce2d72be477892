package trial

import (
	"context"
	"fmt"
	"time"

	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/runrecord"
)

// Start-up is not silence (docs/no-model-turn.md): until a CLI's first
// model request, hoh waits for it up to the first-request deadline; the
// idle timeout, which judges silence during a turn, counts only from then.

// firstRequestDeadline cancels the invocation (cancel) when the relay has
// seen no model request of it within the first-request deadline: a CLI
// still starting then is stuck (a DNS wait, a prompt for input), not a
// model thinking. The returned function stops the watch and reports
// whether the deadline ended the invocation.
func (r *runner) firstRequestDeadline(ctx context.Context, relay *served.Relay, cancel context.CancelFunc) func() bool {
	asked := relay.Asked()
	expired := make(chan bool, 1)
	stop := make(chan struct{})
	go func() {
		t := time.NewTimer(r.firstRequest())
		defer t.Stop()
		select {
		case <-asked:
		case <-ctx.Done():
		case <-stop:
		case <-t.C:
			select {
			case <-asked: // it came at the last moment
			default:
				expired <- true
				cancel()
				return
			}
		}
		expired <- false
	}()
	return func() bool {
		close(stop)
		return <-expired
	}
}

// notStarted classifies an invocation the first-request deadline ended:
// an infrastructure failure of the attempt (replaced; the breaker stops
// the configuration only when it repeats), never "no model request".
func (r *runner) notStarted(a *attempt) {
	cli := string(a.res.Outcome)
	if a.res.Evidence != "" {
		cli += ": " + a.res.Evidence
	}
	a.res.Outcome, a.cause = runrecord.OutcomeInfraFailure, CauseStartup
	a.res.Evidence = fmt.Sprintf("hoh's relay saw no model request within the first-request deadline %s: hoh ended the CLI while it was still starting (the CLI's own account: %s)",
		r.firstRequest(), cli)
}

// firstRequest is the first-request deadline (Timeouts.FirstRequest, else
// DefaultFirstRequest).
func (r *runner) firstRequest() time.Duration {
	if r.env.Timeouts.FirstRequest > 0 {
		return r.env.Timeouts.FirstRequest
	}
	return DefaultFirstRequest
}
