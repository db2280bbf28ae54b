package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
)

// The bridge (--bridge-tasks, issue 22) gives Tasks to hosts that do not speak them. Most MCP
// hosts in use make one plain tools/call and wait; a server that runs a tool as a task answers
// such a host with an error (taskSupport "required") or makes it wait on one long request that
// dies with the host's timeout. With the bridge on, the proxy makes the call as a task itself,
// writes the task to the ledger before anything else, follows it with a TaskFollower (the
// follow engine, given by internal/bridge: push when the server offers it, else at its poll
// interval; bridge_follow.go) and answers the host's request with the
// task's result or error: to the host it is one ordinary call. While the task runs the host
// hears of it through notifications/progress (when it sent a progressToken), so hosts whose
// request timeout resets on progress keep waiting.
//
// Which hosts: a 2025-11-25 tools/call without params.task to a tool the server lists as
// supporting tasks, and a 2026-07-28 tools/call whose request does not declare the
// io.modelcontextprotocol/tasks extension. A host that speaks Tasks is forwarded unchanged.

// BridgeOptions turn the bridge on (Options.Bridge).
type BridgeOptions struct {
	// Follow follows the bridged tasks (internal/bridge.New). It answers a task's question when
	// the host did not declare the capability the question needs (--on-input exec: or
	// decline); when it has no answer, the host's call fails with a message naming `mcptask
	// update` and the task id, and the task stays in the ledger.
	Follow TaskFollower
	// ProgressEvery is how often a host that sent a progressToken hears of its task
	// (DefaultProgressEvery).
	ProgressEvery time.Duration
	// TTL is the 2025-11-25 params.task.ttl the proxy asks for; 0 leaves it to the server.
	TTL time.Duration
}

// DefaultProgressEvery is how often a bridged call sends notifications/progress: well under
// the TypeScript SDK's default request timeout of 60 s, and under the 10 s some hosts set, so a
// host whose timeout resets on progress never gives up on a task that still runs.
const DefaultProgressEvery = 2 * time.Second

// bridgeIDPrefix starts the ids of the requests the proxy sends on its own (to the server on
// a shared stdio stream, to the host for a question), so that their answers are told apart
// from the host's and the server's own.
const bridgeIDPrefix = "mcptask-bridge-"

// cancelGrace is how long a bridged call whose host went away waits for the host's
// notifications/cancelled before the task is left to run on its own.
const cancelGrace = 2 * time.Second

// cancelWait bounds how long a host's cancellation waits for the task's cancellation.
const cancelWait = 5 * time.Second

// bridge is the state of --bridge-tasks, shared by every host.
type bridge struct {
	p     *Proxy
	o     BridgeOptions
	seq   atomic.Int64
	token string
	// secret signs the requestState of the proxy's input_required rounds (bridge_mrtr.go).
	secret [32]byte

	mu sync.Mutex
	// support maps a tool to its 2025-11-25 execution.taskSupport, as the server listed it.
	support map[string]string
	listed  bool
	// hostWaits are the questions sent to hosts, by the id the proxy gave them.
	hostWaits map[string]chan *rpc.Message
	// calls are the bridged calls in flight, by host key and the host's request id.
	calls map[string]*bridgedCall
	// stdio holds the ways to the server and to the host of each stdio host.
	stdio map[*host]*stdioLink
}

func newBridge(p *Proxy, o BridgeOptions) *bridge {
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = DefaultProgressEvery
	}
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	b := &bridge{p: p, o: o, token: hex.EncodeToString(tok[:]), support: map[string]string{}, hostWaits: map[string]chan *rpc.Message{},
		calls: map[string]*bridgedCall{}, stdio: map[*host]*stdioLink{}}
	_, _ = rand.Read(b.secret[:])
	return b
}

// samples reports whether --on-input answers sampling/createMessage.
func (b *bridge) samples() bool { return b.o.Follow != nil && b.o.Follow.Samples() }

// nextID returns a new id for a request of the proxy's own. It carries a random token of this
// proxy, so that no host or server can make up an id that steals the answer to one (a host
// answering another host's question, a host's own request taken for the proxy's).
func (b *bridge) nextID() string {
	return bridgeIDPrefix + b.token + "-" + strconv.FormatInt(b.seq.Add(1), 10)
}

// isBridgeID reports whether id (raw JSON) is one this proxy made.
func (b *bridge) isBridgeID(id json.RawMessage) bool {
	return strings.HasPrefix(string(id), `"`+bridgeIDPrefix+b.token+"-")
}

// hostSpeaksTasks reports whether a 2025-11-25 host declared capabilities.tasks at initialize.
func (b *bridge) hostSpeaksTasks(h *host) bool {
	b.p.mu.Lock()
	caps := h.clientCaps
	b.p.mu.Unlock()
	var c map[string]json.RawMessage
	_ = json.Unmarshal(caps, &c)
	_, ok := c["tasks"]
	return ok
}

// hostDeclared reports whether the host declared capability what (elicitation, sampling) at
// its 2025-11-25 initialize.
func (b *bridge) hostDeclared(h *host, what string) bool {
	b.p.mu.Lock()
	caps := h.clientCaps
	b.p.mu.Unlock()
	var c map[string]json.RawMessage
	_ = json.Unmarshal(caps, &c)
	_, ok := c[what]
	return ok
}

// learnTools reads the taskSupport of each tool in a tools/list result.
func (b *bridge) learnTools(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.listed = true
	for _, t := range r.Tools {
		s := ""
		if t.Execution != nil {
			s = t.Execution.TaskSupport
		}
		if len(b.support) < 100000 {
			b.support[t.Name] = s
		}
	}
}

// rewriteTools shows a host that does not speak Tasks every tool as callable: a tool that
// requires a task is listed as optional (C25-TASKS §Tool-Level Negotiation: a host may call an
// optional tool without a task), its description saying that mcptask runs it as a task. It
// returns nil when nothing changed.
func rewriteTools(result json.RawMessage) json.RawMessage {
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	var tools []map[string]json.RawMessage
	if json.Unmarshal(r["tools"], &tools) != nil {
		return nil
	}
	changed := false
	for _, t := range tools {
		var ex map[string]json.RawMessage
		if json.Unmarshal(t["execution"], &ex) != nil || string(ex["taskSupport"]) != `"required"` {
			continue
		}
		ex["taskSupport"] = json.RawMessage(`"optional"`)
		t["execution"], _ = json.Marshal(ex)
		var desc string
		_ = json.Unmarshal(t["description"], &desc)
		if desc != "" {
			desc += " "
		}
		t["description"], _ = json.Marshal(desc + "(mcptask runs it as a task and answers when it ends.)")
		changed = true
	}
	if !changed {
		return nil
	}
	r["tools"], _ = json.Marshal(tools)
	out, err := json.Marshal(r)
	if err != nil {
		return nil
	}
	return out
}

// rewriteListAnswer rewrites a server's answer to a host's tools/list (one JSON-RPC message)
// for a host that does not speak Tasks; nil when it stays as it is.
func (b *bridge) rewriteListAnswer(h *host, m *rpc.Message) []byte {
	if m.Result == nil {
		return nil
	}
	b.learnTools(m.Result)
	if b.hostSpeaksTasks(h) {
		return nil
	}
	res := rewriteTools(m.Result)
	if res == nil {
		return nil
	}
	out, err := json.Marshal(&rpc.Message{JSONRPC: "2.0", ID: m.ID, Result: res})
	if err != nil {
		return nil
	}
	return out
}

// modernTasksDeclared reports whether a 2026-07-28 request declares the Tasks extension in its
// _meta client capabilities.
func modernTasksDeclared(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	_, ok := p.Meta.Caps.Extensions[rpc.TasksExtension]
	return ok
}

// wants says whether the bridge takes the host's request m: a tools/call of a host that does
// not use Tasks, to a tool that may run as one. support looks the tool up (it may ask the
// server).
func (b *bridge) wants(h *host, m *rpc.Message, params reqParams, support func(name string) string) bool {
	if m.Method != "tools/call" || !m.IsRequest() {
		return false
	}
	if params.Meta.Version != "" {
		// 2026-07-28: every call of a host that does not declare the extension; the server
		// decides whether it becomes a task.
		return params.Meta.Version >= rpc.VersionModern && !modernTasksDeclared(m.Params)
	}
	if params.hasTask() {
		return false
	}
	s := support(params.Name)
	return s == "optional" || s == "required"
}

// taskParams returns the params of the proxy's own task call: the host's, with what makes it a
// task (2025-11-25 params.task, 2026-07-28 the extension declared) and without the host's
// progressToken, which the proxy answers itself.
func (b *bridge) taskParams(params json.RawMessage, modern bool) (json.RawMessage, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	var meta map[string]json.RawMessage
	if len(p["_meta"]) > 0 {
		if err := json.Unmarshal(p["_meta"], &meta); err != nil {
			return nil, err
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	delete(meta, "progressToken")
	if modern {
		const capsKey = "io.modelcontextprotocol/clientCapabilities"
		var caps map[string]json.RawMessage
		_ = json.Unmarshal(meta[capsKey], &caps)
		if caps == nil {
			caps = map[string]json.RawMessage{}
		}
		var ext map[string]json.RawMessage
		_ = json.Unmarshal(caps["extensions"], &ext)
		if ext == nil {
			ext = map[string]json.RawMessage{}
		}
		ext[rpc.TasksExtension] = json.RawMessage(`{}`)
		caps["extensions"], _ = json.Marshal(ext)
		// C26-MRTR §Server Requirements: a client declares only what it can fulfil. A task's
		// form question is answered by --on-input, or else by the user through
		// `mcptask update` (the call fails saying so, and the task waits in the ledger).
		if _, ok := caps["elicitation"]; !ok {
			caps["elicitation"] = json.RawMessage(`{"form":{},"url":{}}`)
		}
		if _, ok := caps["sampling"]; !ok && b.samples() {
			caps["sampling"] = json.RawMessage(`{}`)
		}
		meta[capsKey], _ = json.Marshal(caps)
	} else {
		task := map[string]any{}
		if b.o.TTL > 0 {
			task["ttl"] = b.o.TTL.Milliseconds()
		}
		p["task"], _ = json.Marshal(task)
	}
	if len(meta) > 0 {
		p["_meta"], _ = json.Marshal(meta)
	} else {
		delete(p, "_meta")
	}
	return json.Marshal(p)
}

// hostLink is how a bridged call reaches its host: a stdio stream, or the event stream of the
// host's HTTP request.
type hostLink interface {
	// send writes one JSON-RPC message to the host.
	send(msg []byte) error
}

// bridgedCall is one host request the proxy runs as a task.
type bridgedCall struct {
	b      *bridge
	h      *host
	key    string
	msg    *rpc.Message
	params reqParams
	header http.Header
	era    rpc.Era
	// version is the protocol version of the host's request.
	version string
	link    hostLink
	// up makes the proxy's own requests to the server for this call.
	up rpc.Transport
	// hdr holds the HTTP headers of the proxy's task call ("" on stdio).
	hdr http.Header

	// input is what a 2026-07-28 host declared it can answer (nil: nothing, or 2025-11-25):
	// questions of those kinds go to it as input_required rounds (bridge_mrtr.go).
	input *inputCaps

	progressToken json.RawMessage
	progress      atomic.Int64
	message       atomic.Pointer[string]

	// cancelledCh is closed when the host cancels its request, done when the call is over.
	cancelledCh chan struct{}
	done        chan struct{}

	mu        sync.Mutex
	following FollowRun
	taskID    string
	cancelled bool
	stopped   bool
}

// callKey identifies a host's request among the calls in flight.
func callKey(h *host, id json.RawMessage) string { return h.key + "\x00" + idKey(id) }

func idKey(id json.RawMessage) string { return (&rpc.Message{ID: id}).IDKey() }

// start registers a bridged call for the host's request m.
func (b *bridge) start(h *host, m *rpc.Message, params reqParams, hdr http.Header, link hostLink, up rpc.Transport, upHdr http.Header) *bridgedCall {
	c := &bridgedCall{b: b, h: h, key: callKey(h, m.ID), msg: m, params: params, header: hdr, link: link, up: up, hdr: upHdr,
		cancelledCh: make(chan struct{}), done: make(chan struct{})}
	c.era, c.version = rpc.EraLegacy, rpc.VersionLegacy
	if params.Meta.Version != "" {
		c.era, c.version = rpc.EraModern, params.Meta.Version
		c.input = hostInputCaps(m.Params)
	} else {
		b.p.mu.Lock()
		if h.version != "" {
			c.version = h.version
		}
		b.p.mu.Unlock()
	}
	var meta struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &meta)
	if len(meta.Meta.ProgressToken) > 0 && string(meta.Meta.ProgressToken) != "null" {
		c.progressToken = meta.Meta.ProgressToken
	}
	b.mu.Lock()
	b.calls[c.key] = c
	b.mu.Unlock()
	return c
}

// hostCancelled handles a host's notifications/cancelled: when it names a bridged call, the
// task is cancelled (tasks/cancel) and true is returned (the server never saw that request id,
// so the notification goes no further).
func (b *bridge) hostCancelled(h *host, m *rpc.Message) bool {
	if m.Method != "notifications/cancelled" {
		return false
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil || len(p.RequestID) == 0 {
		return false
	}
	b.mu.Lock()
	c := b.calls[callKey(h, p.RequestID)]
	b.mu.Unlock()
	if c == nil {
		return false
	}
	c.mu.Lock()
	if !c.cancelled {
		close(c.cancelledCh)
	}
	c.cancelled = true
	run, id := c.following, c.taskID
	c.mu.Unlock()
	if run != nil {
		b.p.notice(h, "the host cancelled its call; cancelling task %s", id)
		run.Cancel()
		// Hold the host's stream until the server took the cancellation: a stdio host that
		// cancels and quits at once must not take the server down before tasks/cancel
		// reached it.
		t := time.NewTimer(cancelWait)
		defer t.Stop()
		select {
		case <-c.done:
		case <-t.C:
		}
	}
	return true
}

// hostAnswer takes a host's response to a question the proxy sent that host; true when it was
// one. An answer is taken only from the host that was asked.
func (b *bridge) hostAnswer(h *host, m *rpc.Message) bool {
	if !m.IsResponse() || !b.isBridgeID(m.ID) {
		return false
	}
	b.mu.Lock()
	ch := b.hostWaits[h.key+"\x00"+m.IDKey()]
	delete(b.hostWaits, h.key+"\x00"+m.IDKey())
	b.mu.Unlock()
	if ch != nil {
		ch <- m
	}
	return true
}

// detach stops following the call's task: its host went away. The task keeps running and
// stays in the ledger, for `mcptask result` or `resume`.
func (c *bridgedCall) detach() {
	c.mu.Lock()
	c.stopped = true
	run, id := c.following, c.taskID
	c.mu.Unlock()
	if run != nil {
		c.b.p.notice(c.h, "the host went away; task %s keeps running and stays in the ledger (mcptask result %s)", id, id)
		run.Stop()
	}
}

func (c *bridgedCall) reply(result json.RawMessage, rerr *rpc.Error) {
	c.b.mu.Lock()
	delete(c.b.calls, c.key)
	c.b.mu.Unlock()
	m := &rpc.Message{JSONRPC: "2.0", ID: c.msg.ID, Result: result, Error: rerr}
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	c.b.p.bridgeRecord(false, c.h, data)
	_ = c.link.send(data)
}

func (c *bridgedCall) fail(code int64, format string, args ...any) {
	c.reply(nil, &rpc.Error{Code: code, Message: fmt.Sprintf(format, args...)})
}

// run makes the task call and follows the task to its end; ctx ends when the host went away.
func (c *bridgedCall) run(ctx context.Context) {
	defer close(c.done)
	defer func() {
		c.b.mu.Lock()
		delete(c.b.calls, c.key)
		c.b.mu.Unlock()
	}()
	params, err := c.b.taskParams(c.msg.Params, c.era == rpc.EraModern)
	if err != nil {
		c.fail(rpc.CodeInvalidParams, "mcptask proxy: the call's params are not a JSON object: %v", err)
		return
	}
	if c.era == rpc.EraModern && c.retried(ctx) {
		return
	}
	// The transports record the proxy's own requests (stdio: RoundTrip and the relay; HTTP:
	// rpc's tracer into the record).
	req := &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(strconv.Quote(c.b.nextID())), Method: "tools/call", Params: params}
	resp, err := c.up.RoundTrip(ctx, req, c.hdr.Clone())
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		c.fail(rpc.CodeInternalError, "mcptask proxy: the server could not be reached: %v", redact.URL(err.Error()))
		return
	}
	if resp.Error != nil || resp.Result == nil {
		c.reply(resp.Result, resp.Error)
		return
	}
	x := &exchange{h: c.h, msg: c.msg, params: c.params, era: c.era, version: c.version, header: c.header, start: c.b.p.opts.Now()}
	// The task goes to the ledger here, before anything else happens to it.
	c.b.p.toolResult(x, resp.Result)
	x.mu.Lock()
	id, created := x.taskID, x.created
	x.mu.Unlock()
	if !created {
		c.reply(resp.Result, nil) // an ordinary result: the server did not make a task
		return
	}
	var t *rpc.Task
	if c.era == rpc.EraModern {
		t, _ = rpc.DecodeTask(resp.Result)
	} else {
		var r struct {
			Task json.RawMessage `json:"task"`
		}
		_ = json.Unmarshal(resp.Result, &r)
		t, _ = rpc.DecodeTask(r.Task)
	}
	c.follow(ctx, id, t, true, nil)
}

// retried handles a host's tools/call that retries an input_required round of the proxy's
// own (its requestState is the proxy's): the host's inputResponses answer the task with
// tasks/update, and the task is followed on, this request answered when it ends. It returns
// false for any other call (a requestState of the server's own goes to the server as it is).
func (c *bridgedCall) retried(ctx context.Context) bool {
	var p struct {
		Name           string                     `json:"name"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage            `json:"requestState"`
	}
	_ = json.Unmarshal(c.msg.Params, &p)
	id, tool, ours, err := c.b.parseMRTRState(p.RequestState)
	if !ours {
		return false
	}
	if err == nil && tool != p.Name {
		err = errors.New("the requestState belongs to a call of another tool")
	}
	if err != nil {
		c.b.p.notice(c.h, "refused a retried tools/call: %v", err)
		c.fail(rpc.CodeInvalidParams, "mcptask proxy: %v; call the tool again without it", err)
		return true
	}
	c.follow(ctx, id, nil, false, p.InputResponses)
	return true
}

// follow follows task id (t as last seen, nil to ask the server first; created when this call
// made it) with the TaskFollower and answers the host with how it ended. answers are the
// host's answers from a retried input_required round.
func (c *bridgedCall) follow(ctx context.Context, id string, t *rpc.Task, created bool, answers map[string]json.RawMessage) {
	msg := ""
	if t != nil {
		msg = t.StatusMessage
	}
	c.message.Store(&msg)
	if c.b.o.Follow == nil {
		c.answer(ctx, id, TaskEnd{Kind: TaskLost})
		return
	}
	run := c.b.o.Follow.Follow(c.followed(id, t, created, answers))
	c.mu.Lock()
	c.following, c.taskID = run, id
	cancelled, stopped := c.cancelled, c.stopped
	c.mu.Unlock()
	if cancelled {
		run.Cancel()
	}
	if stopped {
		run.Stop()
	}
	c.b.registerTask(c, id)
	defer c.b.unregisterTask(c, id)

	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	go c.watchHost(ctx, runCtx)
	if c.progressToken != nil {
		go c.keepHostWaiting(runCtx)
	}
	end := run.Run(runCtx)
	stop()
	c.answer(ctx, id, end)
}

// followed describes task id to the TaskFollower: how to reach the server the way the host
// does, where its questions go, and what to tell the ledger and the host as it runs.
func (c *bridgedCall) followed(id string, t *rpc.Task, created bool, answers map[string]json.RawMessage) FollowedTask {
	p := c.b.p
	p.mu.Lock()
	session := c.h.session
	p.mu.Unlock()
	if c.era != rpc.EraLegacy {
		session = ""
	}
	ft := FollowedTask{ID: id, Tool: c.params.Name, Task: t, Created: created,
		ServerName: p.opts.Server.Display(), ServerKey: p.opts.Server.Key(),
		Transport: c.up, Era: c.era, Session: session,
		Client:   rpc.ClientOptions{Protocol: c.version, Info: rpc.Implementation{Name: "mcptask-proxy", Version: "bridge"}},
		AskHost:  c.askHost,
		OnStatus: c.status,
		OnRetry:  func(err error) { p.notice(c.h, "task %s: %v (retrying)", id, err) },
	}
	if c.input != nil {
		// A 2026-07-28 host that can answer questions: its questions go to it (answers, or
		// else an input_required round), the others to --on-input.
		ft.AskHost, ft.HostCan, ft.HostAnswers = nil, c.input.can, answers
	}
	return ft
}

// watchHost leaves the task to run on its own when the host goes away (ctx ends) without
// cancelling its call; it returns when the follow ends (runCtx).
func (c *bridgedCall) watchHost(ctx, runCtx context.Context) {
	select {
	case <-ctx.Done():
	case <-runCtx.Done():
		return
	}
	// A host that cancels may close its stream before its notifications/cancelled arrives
	// (the TypeScript SDK over HTTP does): wait a moment for it before leaving the task to
	// run on its own.
	grace := time.NewTimer(cancelGrace)
	defer grace.Stop()
	select {
	case <-grace.C:
		c.detach()
	case <-c.cancelledCh:
	case <-runCtx.Done():
	}
}

// answer gives the host the task's end.
func (c *bridgedCall) answer(ctx context.Context, id string, end TaskEnd) {
	switch end.Kind {
	case TaskLost:
		c.fail(rpc.CodeInternalError, "mcptask proxy: task %s could not be followed; get its result with: mcptask result %s", id, id)
	case TaskResult:
		if end.Error != nil {
			c.reply(nil, end.Error)
			return
		}
		if end.Result != nil {
			c.reply(end.Result, nil)
			return
		}
		c.fail(rpc.CodeInternalError, "mcptask proxy: task %s ended without a result", id)
	case TaskCancelled:
		c.mu.Lock()
		cancelled := c.cancelled
		c.mu.Unlock()
		if cancelled {
			// C25-BASE §Cancellation: the receiver of a cancelled request SHOULD NOT answer it.
			c.b.mu.Lock()
			delete(c.b.calls, c.key)
			c.b.mu.Unlock()
			return
		}
		c.fail(rpc.CodeInternalError, "task %s was cancelled", id)
	case TaskInputRequired:
		c.askedInput(id, end.Questions)
	case TaskExpired:
		c.fail(rpc.CodeInternalError, "task %s expired on the server before it ended", id)
	default:
		if ctx.Err() != nil {
			return // the host went away: nobody to answer
		}
		why := "following it stopped"
		if end.Err != nil {
			why = end.Err.Error()
		}
		c.fail(rpc.CodeInternalError, "mcptask proxy: task %s: %s; it is in the ledger: get its result with: mcptask result %s", id, redact.URL(why), id)
	}
}

// askedInput answers the host for task id, which waits for answers nobody here could give: an
// input_required round when the host can answer them all, else an error naming `mcptask
// update`.
func (c *bridgedCall) askedInput(id string, qs []Question) {
	if c.hostCanAnswer(qs) {
		res, err := c.b.inputRequired(id, c.params.Name, qs)
		if err == nil {
			c.b.p.notice(c.h, "task %s asks the host (%s); it waits in the ledger for the host's retried call, or: mcptask update %s", id, questions(qs), id)
			c.reply(res, nil)
			return
		}
	}
	key := "KEY"
	if len(qs) == 1 && qs[0].Key != "" {
		key = qs[0].Key
	}
	c.fail(rpc.CodeInternalError, "task %s needs input this host cannot give (%s); answer it with: mcptask update %s --answer %s=JSON, then get its result with: mcptask result %s",
		id, questions(qs), id, key, id)
}

// hostCanAnswer reports whether every open question can go to the host as an input_required
// round (a 2026-07-28 host that declared what they need).
func (c *bridgedCall) hostCanAnswer(qs []Question) bool {
	if c.era != rpc.EraModern || c.input == nil || len(qs) == 0 {
		return false
	}
	for _, q := range qs {
		if q.Key == "" || !c.input.can(q) {
			return false
		}
	}
	return true
}

// questions names the keys of the questions left open, for an error message.
func questions(qs []Question) string {
	if len(qs) == 0 {
		return "a question"
	}
	var keys []string
	for _, q := range qs {
		k := q.Key
		if q.Method != "" {
			k += " (" + q.Method + ")"
		}
		keys = append(keys, k)
	}
	return "questions " + strings.Join(keys, ", ")
}

// status takes a status the follower saw: it goes to the ledger and the view the way a host's
// own polls would, and to the host through progress.
func (c *bridgedCall) status(t *rpc.Task, via string) {
	c.b.p.taskSeen(c.h, t, via)
	msg := t.StatusMessage
	if msg == "" {
		msg = string(t.Status)
	}
	c.message.Store(&msg)
	c.sendProgress()
}

// keepHostWaiting sends the host notifications/progress every ProgressEvery while the task
// runs, so that a request timeout that resets on progress does not run out.
func (c *bridgedCall) keepHostWaiting(ctx context.Context) {
	t := time.NewTicker(c.b.o.ProgressEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.sendProgress()
		}
	}
}

// sendProgress tells the host the task still runs. C25-BASE §Progress: "The progress value
// MUST increase with each notification"; the message is the task's status message.
func (c *bridgedCall) sendProgress() {
	if c.progressToken == nil {
		return
	}
	n := c.progress.Add(1)
	params := map[string]any{"progressToken": c.progressToken, "progress": n}
	if m := c.message.Load(); m != nil && *m != "" {
		params["message"] = *m
	}
	raw, _ := json.Marshal(params)
	data, err := json.Marshal(&rpc.Message{JSONRPC: "2.0", Method: "notifications/progress", Params: raw})
	if err != nil {
		return
	}
	_ = c.link.send(data)
}

// askHost forwards a task's question to the host as the request the era defines
// (elicitation/create, sampling/createMessage), when the host declared that capability; false
// when it did not.
func (c *bridgedCall) askHost(ctx context.Context, req Question) (json.RawMessage, bool, error) {
	need := map[string]string{"elicitation/create": "elicitation", "sampling/createMessage": "sampling"}[req.Method]
	if need == "" || c.era != rpc.EraLegacy || !c.b.hostDeclared(c.h, need) {
		return nil, false, nil
	}
	id := c.b.nextID()
	wait := c.h.key + "\x00" + idKey(json.RawMessage(strconv.Quote(id)))
	ch := make(chan *rpc.Message, 1)
	c.b.mu.Lock()
	c.b.hostWaits[wait] = ch
	c.b.mu.Unlock()
	defer func() {
		c.b.mu.Lock()
		delete(c.b.hostWaits, wait)
		c.b.mu.Unlock()
	}()
	data, err := json.Marshal(&rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(strconv.Quote(id)), Method: req.Method, Params: req.Params})
	if err != nil {
		return nil, false, err
	}
	c.b.p.bridgeRecord(false, c.h, data)
	if err := c.link.send(data); err != nil {
		return nil, false, nil
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, false, fmt.Errorf("the host refused the question %s: %w", req.Key, m.Error)
		}
		return m.Result, true, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// registerTask and unregisterTask route the server's requests and notifications about a
// bridged task (on a shared stdio stream) to the call that follows it.
func (b *bridge) registerTask(c *bridgedCall, id string) {
	if t, ok := c.up.(*stdioCallTransport); ok {
		t.up.route(id, t)
	}
}

func (b *bridge) unregisterTask(c *bridgedCall, id string) {
	if t, ok := c.up.(*stdioCallTransport); ok {
		t.up.unroute(id)
	}
}

// bridgeRecord writes a message of the proxy's own to the record, peer "proxy".
func (p *Proxy) bridgeRecord(toServer bool, h *host, data []byte) {
	if p.rec == nil {
		return
	}
	l := frameLine(data)
	l.Peer = "proxy"
	p.rec.line(toServer, h.label(), l)
}

// errHostGone is what writing to a host that went away returns.
var errHostGone = errors.New("the host went away")

// declareAnswerable adds to a 2025-11-25 host's initialize the capabilities --on-input can
// answer for (elicitation; sampling for a program), so that the server may ask a bridged
// task's questions at all (C25-LIFE §Operation: it may only ask what the client declared). The
// questions of bridged tasks come to the proxy, which answers them; any other question of the
// server then reaches a host that has no handler for it and refuses it. It returns nil when
// the message stays as it is.
func (b *bridge) declareAnswerable(m *rpc.Message) []byte {
	if b.o.Follow == nil || !b.o.Follow.Answers() || m.Method != "initialize" || !m.IsRequest() {
		return nil
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(m.Params, &p) != nil {
		return nil
	}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(p["capabilities"], &caps)
	if caps == nil {
		caps = map[string]json.RawMessage{}
	}
	changed := false
	if _, ok := caps["elicitation"]; !ok {
		caps["elicitation"], changed = json.RawMessage(`{}`), true
	}
	if _, ok := caps["sampling"]; !ok && b.samples() {
		caps["sampling"], changed = json.RawMessage(`{}`), true
	}
	if !changed {
		return nil
	}
	p["capabilities"], _ = json.Marshal(caps)
	params, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	out, err := json.Marshal(&rpc.Message{JSONRPC: "2.0", ID: m.ID, Method: m.Method, Params: params})
	if err != nil {
		return nil
	}
	return out
}
