package follow

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// The tests below run the engine inside a synctest bubble over an in-memory transport: its
// timers use a fake clock, so a minute of polling passes at once and every gap is exact.

// TestPollCadence: 100 polls at a 100 ms interval, then the server slows to 300 ms; no poll
// comes earlier than the latest response asked, and the mean gap is within 10% of it. With
// --interval 250ms the fast phase slows down to it.
func TestPollCadence(t *testing.T) {
	for _, user := range []time.Duration{0, 250 * time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			m := newMemServer()
			var script []step
			for i := range 150 {
				iv := 100 * time.Millisecond
				if i >= 100 {
					iv = 300 * time.Millisecond
				}
				script = append(script, step{status: rpc.StatusWorking, interval: iv})
			}
			m.script["t"] = append(script, step{status: rpc.StatusCompleted})
			e := New(Options{MinInterval: user, NoPush: true})
			e.Server("mem", "mem").Follow(memClient(m), Target{ID: "t"})
			outs := e.Run(t.Context())
			if outs[0].End != EndResult || text(outs[0]) != "done t" {
				t.Fatalf("outcome %+v", outs[0])
			}
			at := m.pollTimes("t")
			if len(at) != 151 {
				t.Fatalf("%d polls, want 151", len(at))
			}
			var total [2]time.Duration
			for i := 1; i < len(at); i++ {
				asked := max(script[i-1].interval, user)
				gap := at[i].Sub(at[i-1])
				if gap < asked {
					t.Errorf("poll %d came %s after the previous one; the server asked for %s", i, gap, asked)
				}
				total[min((i-1)/100, 1)] += gap
			}
			for phase, n := range []int{100, 50} {
				asked := max(script[phase*100].interval, user)
				if mean := total[phase] / time.Duration(n); mean > asked*11/10 {
					t.Errorf("phase %d: mean gap %s, want within 10%% of %s", phase, mean, asked)
				}
			}
		})
	}
}

// TestBackoffFlow: failing polls back off exponentially, for the task and its server, and
// never end the follow; the first good answer ends it.
func TestBackoffFlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemServer()
		down := errors.New("connection refused")
		m.script["t"] = []step{{fail: down}, {fail: down}, {fail: down}, {status: rpc.StatusCompleted}}
		rec := &recorder{}
		e := New(Options{NoPush: true}, rec)
		e.Server("mem", "mem").Follow(memClient(m), Target{ID: "t", Task: &rpc.Task{TaskID: "t", Status: rpc.StatusWorking, PollInterval: 100 * time.Millisecond}})
		outs := e.Run(t.Context())
		if outs[0].End != EndResult {
			t.Fatalf("outcome %+v", outs[0])
		}
		at := m.pollTimes("t")
		if len(at) != 4 {
			t.Fatalf("%d polls, want 4", len(at))
		}
		const tick = 5 * time.Millisecond // alignPoll's tick for a 100 ms interval
		for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			if gap := at[i+1].Sub(at[i]); gap < want*4/5 || gap > want+tick {
				t.Errorf("after failure %d the next poll came %s later, want about %s", i+1, gap, want)
			}
		}
		if n := rec.count(KindError); n != 3 {
			t.Errorf("%d error events, want one per failed poll", n)
		}
	})
}

// TestExactPollsAndEnds: with several tasks the run ends only when the last one does,
// whichever way each ends, and each task is polled exactly as often as its script needed.
func TestExactPollsAndEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemServer()
		w := step{status: rpc.StatusWorking, interval: time.Second}
		m.script["a"] = []step{w, {status: rpc.StatusCompleted}}
		m.script["b"] = []step{w, w, w, w, {unknown: true}}
		m.script["c"] = []step{w, w, {status: rpc.StatusFailed}}
		rec := &recorder{}
		e := New(Options{NoPush: true}, rec)
		e.Server("mem", "mem").Follow(memClient(m), Target{ID: "a"}, Target{ID: "b"}, Target{ID: "c"})
		outs := e.Run(t.Context())
		want := map[string]struct {
			end   End
			polls int
		}{"a": {EndResult, 2}, "b": {EndExpired, 5}, "c": {EndResult, 3}}
		for _, o := range outs {
			if o.End != want[o.TaskID].end {
				t.Errorf("%s ended %d, want %d", o.TaskID, o.End, want[o.TaskID].end)
			}
			if n := len(m.pollTimes(o.TaskID)); n != want[o.TaskID].polls {
				t.Errorf("%s polled %d times, want exactly its script's %d", o.TaskID, n, want[o.TaskID].polls)
			}
			if k := rec.kinds(o.TaskID); k[len(k)-1] != KindResult {
				t.Errorf("%s: the last event is %d, not its result", o.TaskID, k[len(k)-1])
			}
		}
		if outs[2].RPCError == nil || outs[2].RPCError.Message != "it broke" {
			t.Errorf("a failed task's JSON-RPC error is its outcome: %+v", outs[2])
		}
		synctest.Wait()
		for _, id := range []string{"a", "b", "c"} {
			if n := len(m.pollTimes(id)); n != want[id].polls {
				t.Errorf("%s was polled after its end (%d polls)", id, n)
			}
		}
	})
}

// TestWakeUpsNeverDoublePoll floods a task with wake-ups (the same state pushed, the push
// stream's state changing) while each poll is in flight. There is still only one poll at a
// time, exactly one per scripted answer, and never one earlier than the interval.
func TestWakeUpsNeverDoublePoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 500 * time.Millisecond
		m := newMemServer()
		w := step{status: rpc.StatusWorking, interval: interval}
		m.script["t"] = []step{w, w, w, w, {status: rpc.StatusCompleted}}
		e := New(Options{NoPush: true})
		s := e.Server("mem", "mem")
		pushed := &rpc.Task{TaskID: "t", Status: rpc.StatusWorking, PollInterval: interval}
		m.onGet = func(id string, n int) {
			for range 4 {
				s.wakeAll()
				s.deliver(pushed, ViaPush)
			}
		}
		s.Follow(memClient(m), Target{ID: "t"})
		if outs := e.Run(t.Context()); outs[0].End != EndResult {
			t.Fatalf("outcome %+v", outs[0])
		}
		synctest.Wait()
		at := m.pollTimes("t")
		if len(at) != 5 || m.maxInFl["t"] != 1 {
			t.Errorf("%d polls, at most %d at once; want 5 and 1", len(at), m.maxInFl["t"])
		}
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap < interval {
				t.Errorf("poll %d came %s after the one before, under the %s interval", i, gap, interval)
			}
		}
	})
}

// TestTimeoutAndStopEndWhatRuns: Options.Timeout ends unfinished tasks as EndTimeout, Stop as
// EndDetached, the run's context as EndInterrupted; none of them sends anything more.
func TestTimeoutAndStopEndWhatRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  End
	}{{"timeout", EndTimeout}, {"stop", EndDetached}, {"interrupt", EndInterrupted}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newMemServer()
				m.script["t"] = []step{{status: rpc.StatusWorking, interval: time.Second}}
				opts := Options{NoPush: true}
				if tc.end == EndTimeout {
					opts.Timeout = 5 * time.Second
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var e *Engine
				polled := 0
				e = New(opts, SinkFunc(func(ev Event) {
					if ev.Kind != KindPolled {
						return
					}
					if polled++; polled == 3 {
						switch tc.end {
						case EndDetached:
							e.Stop()
						case EndInterrupted:
							cancel()
						}
					}
				}))
				e.Server("mem", "mem").Follow(memClient(m), Target{ID: "t"})
				start := time.Now()
				o := e.Run(ctx)[0]
				if o.End != tc.end || o.Task == nil || o.Task.Status != rpc.StatusWorking {
					t.Fatalf("outcome %+v, want end %d", o, tc.end)
				}
				if tc.end == EndTimeout && time.Since(start) != 5*time.Second {
					t.Errorf("the timeout ended the run after %s", time.Since(start))
				}
			})
		})
	}
}

// TestOnceLooksOnce: --timeout 0 looks once, and not at all when the task is at hand.
func TestOnceLooksOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemServer()
		m.script["a"] = []step{{status: rpc.StatusWorking}}
		m.script["b"] = []step{{status: rpc.StatusWorking}}
		e := New(Options{Once: true})
		e.Server("mem", "mem").Follow(memClient(m), Target{ID: "a"}, Target{ID: "b", Task: &rpc.Task{TaskID: "b", Status: rpc.StatusWorking}})
		outs := e.Run(t.Context())
		for _, o := range outs {
			if o.End != EndStillRunning {
				t.Errorf("%s: end %d, want still running", o.TaskID, o.End)
			}
		}
		if a, b := len(m.pollTimes("a")), len(m.pollTimes("b")); a != 1 || b != 0 {
			t.Errorf("polls a=%d b=%d, want one look for a and none for b", a, b)
		}
	})
}

// TestFirstLooksSpread: past the in-flight cap, the first looks of many tasks are spread over
// one interval instead of going out together.
func TestFirstLooksSpread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemServer()
		e := New(Options{Once: true, MaxInFlight: 4})
		var targets []Target
		for i := range 40 {
			id := string(rune('A' + i))
			m.script[id] = []step{{status: rpc.StatusWorking}}
			targets = append(targets, Target{ID: id})
		}
		e.Server("mem", "mem").Follow(memClient(m), targets...)
		start := time.Now()
		e.Run(t.Context())
		var first, last time.Duration = time.Hour, 0
		for _, tg := range targets {
			at := m.pollTimes(tg.ID)[0].Sub(start)
			first, last = min(first, at), max(last, at)
		}
		if last-first < DefaultInterval/2 || last >= DefaultInterval {
			t.Errorf("first looks from %s to %s; want them spread over the %s interval", first, last, DefaultInterval)
		}
	})
}

// TestIntervalChoice: the server's interval is clamped, the default fills in, --interval only
// slows, and failures back off exponentially to at most 30 s, from twice the interval.
func TestIntervalChoice(t *testing.T) {
	tests := []struct {
		name     string
		server   time.Duration
		user     time.Duration
		failures int
		lo, hi   time.Duration
		source   string
	}{
		{"server's", 3 * time.Second, 0, 0, 3 * time.Second, 3 * time.Second, "server's"},
		{"none given", 0, 0, 0, 2 * time.Second, 2 * time.Second, "default"},
		{"too fast", time.Millisecond, 0, 0, 100 * time.Millisecond, 100 * time.Millisecond, "server's"},
		{"too slow", time.Hour, 0, 0, time.Minute, time.Minute, "server's"},
		{"user slows", time.Second, 5 * time.Second, 0, 5 * time.Second, 5 * time.Second, "your --interval"},
		{"user cannot speed up", 10 * time.Second, 5 * time.Second, 0, 10 * time.Second, 10 * time.Second, "server's"},
		{"one failure", 200 * time.Millisecond, 0, 1, 800 * time.Millisecond, time.Second, "backed off after 1 failed poll"},
		{"three failures", 200 * time.Millisecond, 0, 3, 3200 * time.Millisecond, 4 * time.Second, "backed off after 3 failed polls"},
		{"from a long interval", 5 * time.Second, 0, 1, 8 * time.Second, 10 * time.Second, "backed off after 1 failed poll"},
		{"capped", time.Second, 0, 30, 24 * time.Second, 30 * time.Second, "backed off after 30 failed polls"},
		{"never under the interval", time.Minute, 0, 3, time.Minute, time.Minute, "server's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(Options{MinInterval: tt.user})
			s := e.Server("x", "x")
			k := &task{e: e, s: s, id: "t", t: &rpc.Task{TaskID: "t", Status: rpc.StatusWorking, PollInterval: tt.server}}
			now := time.Now()
			for range tt.failures {
				k.failed(errors.New("down"))
			}
			due, d, src := k.plan(now)
			if d < tt.lo || d > tt.hi || src != tt.source {
				t.Errorf("delay %s from %q, want [%s, %s] from %q", d, src, tt.lo, tt.hi, tt.source)
			}
			if late := due.Sub(now) - d; tt.failures > 0 && (late < -time.Second || late > time.Second) {
				t.Errorf("due in %s for a delay of %s", due.Sub(now), d)
			}
		})
	}
}

// TestPushRelaxesPolling: while the listen stream reports a task, its safety-net poll comes at
// five times the interval, at least every 10 s and at most every 60 s.
func TestPushRelaxesPolling(t *testing.T) {
	for _, tc := range []struct{ interval, want time.Duration }{
		{time.Second, 10 * time.Second}, {5 * time.Second, 25 * time.Second}, {30 * time.Second, time.Minute},
	} {
		e := New(Options{})
		s := e.Server("x", "x")
		s.hub = &pushHub{srv: s, up: true, acked: map[string]bool{"t": true}}
		k := &task{e: e, s: s, id: "t", t: &rpc.Task{TaskID: "t", Status: rpc.StatusWorking, PollInterval: tc.interval}}
		now := time.Now()
		due, d, src := k.plan(now)
		// alignPoll moves a due time at most a tenth of a tick earlier, and less than a tick later.
		if d != tc.want || due.Sub(now) < tc.want-pollTickMax/10 || due.Sub(now) > tc.want+pollTickMax || src != "relaxed while updates come by push" {
			t.Errorf("interval %s: next in %s (delay %s, %q), want %s", tc.interval, due.Sub(now), d, src, tc.want)
		}
		s.hub.acked = map[string]bool{}
		if _, d, _ := k.plan(now); d != min(max(tc.interval, MinInterval), MaxInterval) {
			t.Errorf("a task the stream does not report is polled at its interval, not %s", d)
		}
	}
}

// TestAlignPoll: a due time is moved at most a tenth of a tick earlier, at most a twentieth of
// the interval (and 25 ms) later, and due times of one interval that fall in the same tick
// meet, which is what lets a thousand tasks wake the process a few dozen times a second.
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
