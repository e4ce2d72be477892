package sandbox

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestWatchLimits(t *testing.T) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())

	done := make(chan int, 1)
	done <- 7
	var ex Exit
	if v, fired := Watch(context.Background(), done, time.Hour, time.Hour, &last, &ex); fired || v != 7 || ex != (Exit{}) {
		t.Fatalf("done first: v=%d fired=%v ex=%+v", v, fired, ex)
	}

	// Output keeps coming: only the wall timeout ends the wait.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				last.Store(time.Now().UnixNano())
			}
		}
	}()
	ex = Exit{}
	if _, fired := Watch(context.Background(), make(chan int), 300*time.Millisecond, 100*time.Millisecond, &last, &ex); !fired || !ex.TimedOut || ex.Idle || !strings.Contains(ex.Detail, "wall timeout 300ms") {
		t.Fatalf("wall: fired=%v ex=%+v", fired, ex)
	}

	var silent atomic.Int64
	silent.Store(time.Now().UnixNano())
	ex = Exit{}
	if _, fired := Watch(context.Background(), make(chan int), 0, 50*time.Millisecond, &silent, &ex); !fired || !ex.Idle || ex.TimedOut || !strings.Contains(ex.Detail, "without output (idle timeout 50ms)") {
		t.Fatalf("idle: fired=%v ex=%+v", fired, ex)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ex = Exit{}
	if _, fired := Watch(ctx, make(chan int), 0, 0, &silent, &ex); !fired || ex.TimedOut || ex.Idle || !strings.HasPrefix(ex.Detail, "cancelled: ") {
		t.Fatalf("cancel: fired=%v ex=%+v", fired, ex)
	}
}
