package cmd

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAlignPoll: a due time is moved at most a tenth of a tick earlier, at most a twentieth of
// the interval (and 25 ms) later, and due times of one interval that fall in the same tick meet, which is what
// lets a thousand tasks wake the process a few dozen times a second.
func TestAlignPoll(t *testing.T) {
	base := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	for _, interval := range []time.Duration{100 * time.Millisecond, 110 * time.Millisecond, time.Second, 5 * time.Second} {
		ticks := map[time.Time]int{}
		for range 1000 {
			due := base.Add(time.Duration(rand.Int64N(int64(interval))))
			got := alignPoll(due, interval)
			tick := min(pollTickMax, interval/20)
			if early := due.Sub(got); early > tick/10 {
				t.Fatalf("interval %s: %s moved %s earlier", interval, due, early)
			}
			if late := got.Sub(due); late >= tick {
				t.Fatalf("interval %s: %s moved %s later", interval, due, late)
			}
			ticks[got]++
		}
		if want := int(interval / min(pollTickMax, interval/20)); len(ticks) > want+1 {
			t.Errorf("interval %s: 1,000 due times spread over one interval land on %d ticks, want at most %d", interval, len(ticks), want+1)
		}
	}
	if d := base.Add(123456 * time.Nanosecond); !alignPoll(d, 10*time.Millisecond).Equal(d) {
		t.Errorf("an interval too short for a 1 ms tick must not be aligned")
	}
}
