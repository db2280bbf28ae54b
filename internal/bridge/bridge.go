// Package bridge follows the tasks `mcptask proxy --bridge-tasks` makes for hosts that do not
// speak Tasks, with the follow engine (internal/follow).
//
// It is its own package so that the proxy, which relays and inspects what hosts and servers
// send, does not depend on the engine that follows tasks (issue 21): the proxy states what its
// bridge needs as proxy.TaskFollower, and this package answers it with a follow.Engine per
// bridged call, the host's answers and --on-input's answerer chained the way the host's era
// and capabilities decide. Everything about hosts (their streams, capabilities, the ledger,
// the record) stays in the proxy; nothing here knows a host.
package bridge

import (
	"context"
	"encoding/json"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/proxy"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Follower is the proxy's TaskFollower over the follow engine.
type Follower struct {
	// onInput is --on-input's answerer (decline, exec:); nil when the host's call fails
	// instead.
	onInput follow.Answerer
}

// New returns the TaskFollower of the proxy's bridge; onInput answers what the host cannot
// (nil: nothing).
func New(onInput follow.Answerer) *Follower { return &Follower{onInput: onInput} }

var _ proxy.TaskFollower = (*Follower)(nil)

// Answers implements proxy.TaskFollower.
func (f *Follower) Answers() bool { return f.onInput != nil }

// Samples implements proxy.TaskFollower.
func (f *Follower) Samples() bool { return f.onInput != nil && follow.Samples(f.onInput) }

// Follow implements proxy.TaskFollower: one engine follows the one task.
func (f *Follower) Follow(t proxy.FollowedTask) proxy.FollowRun {
	eng := follow.New(follow.Options{Answerer: f.answerer(t)}, sink(t))
	srv := eng.Server(t.ServerName, t.ServerKey)
	cl := rpc.NewClient(t.Transport, srv.ClientOptions(t.Client))
	cl.Assume(t.Era, t.Session)
	cl.KeepSession(true)
	srv.Follow(cl, follow.Target{ID: t.ID, Tool: t.Tool, Task: t.Task, Created: t.Created})
	return &run{eng: eng, id: t.ID}
}

// answerer chains who answers the task's questions: a host that takes questions as requests
// (2025-11-25) first, then --on-input; or, for a host that answers in input_required rounds
// (2026-07-28), its answers to what it can answer, and --on-input the rest.
func (f *Follower) answerer(t proxy.FollowedTask) follow.Answerer {
	if t.HostCan == nil {
		var host follow.Answerer
		if t.AskHost != nil {
			host = askHost(t.AskHost)
		}
		return follow.Chain{host, f.onInput}
	}
	chain := follow.Chain{}
	if t.HostAnswers != nil {
		chain = append(chain, hostAnswers{can: t.HostCan, resp: t.HostAnswers})
	}
	if f.onInput != nil {
		chain = append(chain, notForHost{a: f.onInput, can: t.HostCan})
	}
	return chain
}

// sink tells the proxy what the engine sees: statuses, and errors it retries after.
func sink(t proxy.FollowedTask) follow.SinkFunc {
	return func(ev follow.Event) {
		switch ev.Kind {
		case follow.KindStatus:
			if ev.Task == nil || t.OnStatus == nil {
				return
			}
			via := "poll"
			if ev.Via == follow.ViaPush {
				via = "push"
			}
			t.OnStatus(ev.Task, via)
		case follow.KindError:
			if ev.Err != nil && ev.Transient && t.OnRetry != nil {
				t.OnRetry(ev.Err)
			}
		}
	}
}

// run is the follow of one task by its engine.
type run struct {
	eng *follow.Engine
	id  string
}

// Run implements proxy.FollowRun.
func (r *run) Run(ctx context.Context) proxy.TaskEnd {
	outs := r.eng.Run(ctx)
	if len(outs) == 0 {
		return proxy.TaskEnd{Kind: proxy.TaskLost}
	}
	return end(outs[0])
}

// Cancel implements proxy.FollowRun.
func (r *run) Cancel() { r.eng.Cancel(r.id) }

// Stop implements proxy.FollowRun.
func (r *run) Stop() { r.eng.Stop() }

// end says how the follow ended, in the proxy's words.
func end(out follow.Outcome) proxy.TaskEnd {
	switch out.End {
	case follow.EndResult:
		e := proxy.TaskEnd{Kind: proxy.TaskResult, Error: out.RPCError}
		if out.Result != nil {
			e.Result = out.Result.Raw
		}
		return e
	case follow.EndCancelled:
		return proxy.TaskEnd{Kind: proxy.TaskCancelled}
	case follow.EndInputRequired:
		qs := make([]proxy.Question, 0, len(out.Requests))
		for _, r := range out.Requests {
			qs = append(qs, question(r))
		}
		return proxy.TaskEnd{Kind: proxy.TaskInputRequired, Questions: qs}
	case follow.EndExpired:
		return proxy.TaskEnd{Kind: proxy.TaskExpired}
	}
	return proxy.TaskEnd{Kind: proxy.TaskStopped, Err: out.Err}
}

func question(r follow.Request) proxy.Question {
	return proxy.Question{Key: r.Key, Method: r.Method, Params: r.Params}
}

// askHost forwards a question to the host (proxy.FollowedTask.AskHost).
type askHost func(ctx context.Context, q proxy.Question) (json.RawMessage, bool, error)

// Answer implements follow.Answerer.
func (a askHost) Answer(ctx context.Context, req follow.Request) (json.RawMessage, bool, error) {
	return a(ctx, question(req))
}

// hostAnswers answers, from the inputResponses of the host's retried tools/call, the
// questions the host can answer (only those: a key meant for --on-input is not the host's).
type hostAnswers struct {
	can  func(proxy.Question) bool
	resp map[string]json.RawMessage
}

// Answer implements follow.Answerer.
func (a hostAnswers) Answer(_ context.Context, req follow.Request) (json.RawMessage, bool, error) {
	if r, ok := a.resp[req.Key]; ok && a.can(question(req)) {
		return r, true, nil
	}
	return nil, false, nil
}

// notForHost is --on-input for the questions the host does not answer itself: a question the
// host can answer goes to the host (an input_required round), not to --on-input.
type notForHost struct {
	a   follow.Answerer
	can func(proxy.Question) bool
}

// Answer implements follow.Answerer.
func (n notForHost) Answer(ctx context.Context, req follow.Request) (json.RawMessage, bool, error) {
	if n.can(question(req)) {
		return nil, false, nil
	}
	return n.a.Answer(ctx, req)
}

// Resolve implements follow.Resolver: answers given by field names are matched against the
// questions left to --on-input only.
func (n notForHost) Resolve(open []follow.Request) (follow.Answerer, error) {
	var mine []follow.Request
	for _, r := range open {
		if !n.can(question(r)) {
			mine = append(mine, r)
		}
	}
	a, err := follow.Resolve(n.a, mine)
	if err != nil {
		return nil, err
	}
	return notForHost{a: a, can: n.can}, nil
}

// Samples implements follow.Sampler.
func (n notForHost) Samples() bool { return follow.Samples(n.a) }
