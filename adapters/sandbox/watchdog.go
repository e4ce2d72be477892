package sandbox

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Watch is the one watchdog of every executor: it waits for done and
// returns its value, unless ctx ends, the wall timeout passes or the command
// stays silent for the idle timeout first (lastOutput holds the UnixNano of
// its last output). Then it records why in ex (TimedOut or Idle, and the
// evidence in Detail) and returns fired; the caller kills the command. A zero
// timeout is no limit.
func Watch[T any](ctx context.Context, done <-chan T, wall, idle time.Duration, lastOutput *atomic.Int64, ex *Exit) (v T, fired bool) {
	var wallC <-chan time.Time
	if wall > 0 {
		t := time.NewTimer(wall)
		defer t.Stop()
		wallC = t.C
	}
	// The idle check sleeps until the earliest moment the command could have
	// been silent for idle, instead of polling.
	var idleC <-chan time.Time
	idleCheck := time.NewTimer(idle)
	defer idleCheck.Stop()
	if idle > 0 {
		idleC = idleCheck.C
	} else {
		idleCheck.Stop()
	}
	for {
		select {
		case v = <-done:
			return v, false
		case <-ctx.Done():
			ex.Detail = "cancelled: " + ctx.Err().Error()
			return v, true
		case <-wallC:
			ex.TimedOut = true
			ex.Detail = fmt.Sprintf("killed after wall timeout %s", wall)
			return v, true
		case <-idleC:
			quiet := time.Since(time.Unix(0, lastOutput.Load()))
			if quiet >= idle {
				ex.Idle = true
				ex.Detail = fmt.Sprintf("killed after %s without output (idle timeout %s)", quiet.Round(time.Millisecond), idle)
				return v, true
			}
			idleCheck.Reset(idle - quiet)
		}
	}
}
