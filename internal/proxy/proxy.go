// Package proxy is `mcptask proxy`: it stands between any MCP host (an editor, a desktop app,
// an agent framework) and any MCP server, forwards their traffic unchanged, and on the way
// writes every task the host creates into the mcptask ledger, records the traffic, and lints
// both sides.
//
// It is a package of its own because it is a new idea beside the client: internal/rpc speaks
// MCP as one side of a conversation, while the proxy reads a conversation between two others
// without taking part in it. It reuses rpc's message decoding, task decoding and redaction,
// internal/check's linter, internal/state's ledger and internal/follow's rule for what a
// task's state writes into its record; what it adds is the relaying (http.go, stdio.go), the
// bookkeeping of hosts and tasks (this file) and the record (record.go).
//
// The rule that shapes it is the ledger's: a CreateTaskResult is held until its task is on
// disk, and only then forwarded to the host. Everything else is forwarded as it arrives:
// SSE events one by one, without buffering a stream.
package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/taskstatus"
	"github.com/mcptask/mcptask/internal/wirelog"
)

// DefaultMaxInspect is how much of one message the proxy reads to look at it. A larger message
// is forwarded unchanged without being inspected, and that is reported.
const DefaultMaxInspect = 32 << 20

// DefaultMaxHeld caps the bytes of messages held at once: eight messages at the inspection cap,
// or thousands of ordinary ones.
const DefaultMaxHeld = 8 * DefaultMaxInspect

// maxTasks is how many tasks the proxy remembers before it forgets those that ended (and,
// past it, the oldest: the ledger keeps them all).
const maxTasks = 10000

// maxHosts is how many host conversations the proxy tells apart. A flood of new session ids
// or client names must not grow it without bound: past it, the host seen least recently is
// forgotten (its traffic still flows; only the proxy's notes on it go).
const maxHosts = 1024

// maxPending is how many requests in flight, or server requests unanswered, one host may have
// before the oldest are forgotten.
const maxPending = 4096

var (
	errTooLarge   = errors.New("the message is larger than the limit")
	errOverBudget = errors.New("the proxy's memory limit for held messages is reached")
)

// memBudget counts the bytes of messages the proxy holds.
type memBudget struct {
	used atomic.Int64
	max  int64
}

func (b *memBudget) take(n int64) bool {
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *memBudget) give(n int64) {
	if n > 0 {
		b.used.Add(-n)
	}
}

// heldChunk is the unit in which reading a message reserves memory.
const heldChunk = 32 << 10

// readHeld reads r to its end, reserving what it holds from the proxy's budget: errTooLarge
// past limit bytes, errOverBudget when the budget is spent. held is what it reserved, also on
// an error: the caller gives it back once done with data.
func (p *Proxy) readHeld(r io.Reader, limit int) (data []byte, held int64, err error) {
	var buf bytes.Buffer
	for {
		if !p.mem.take(heldChunk) {
			return buf.Bytes(), held, errOverBudget
		}
		held += heldChunk
		_, err := io.CopyN(&buf, r, heldChunk)
		if buf.Len() > limit {
			return buf.Bytes(), held, errTooLarge
		}
		if errors.Is(err, io.EOF) {
			return buf.Bytes(), held, nil
		}
		if err != nil {
			return buf.Bytes(), held, err
		}
	}
}

// Via marks a ledger record created by a host through the proxy.
const Via = "proxy"

// Options configure a Proxy.
type Options struct {
	// Server says how mcptask reaches the real server again; each ledger record keeps it. It
	// never holds a secret: only header and variable names.
	Server state.Server
	// Ledger receives every task a host creates; nil turns the ledger off (--no-ledger). A
	// CreateTaskResult waits for its Put (durable); status changes are batched, and the end of
	// a task is written (PatchNow) before the host learns of it. Close closes it. Failures of
	// batched writes become notices unless the writer reports them elsewhere.
	Ledger *ledger.Writer
	// Record receives the --record NDJSON stream; nil turns recording off.
	Record io.Writer
	// Trace receives the human-readable --trace form of the same stream (secrets redacted).
	Trace io.Writer
	// Secret names headers redacted in the record besides Authorization and cookies.
	Secret []string
	// Redact, when set, is the run's redactor (it knows the user's secret values, so that a
	// server that echoes one is caught); else one is made from Secret.
	Redact *redact.Redactor
	// OnEvent receives what the live view and the plain lines show. It is called on the
	// proxy's goroutines and must not block.
	OnEvent func(Event)
	// MaxInspect caps the bytes of one message the proxy reads to inspect (DefaultMaxInspect).
	MaxInspect int
	// MaxHeld caps the bytes of all the messages the proxy holds at once, over every host and
	// stream (DefaultMaxHeld): past it, requests are refused with 503 and answers pass
	// uninspected, instead of the proxy growing without bound.
	MaxHeld int64
	// Now is the clock (tests).
	Now func() time.Time
	// Bridge, when set, turns --bridge-tasks on (bridge.go).
	Bridge *BridgeOptions
}

// EventKind says what an Event reports.
type EventKind string

const (
	// EventCreated: a host created a task (and, with the ledger on, it is in the ledger).
	EventCreated EventKind = "created"
	// EventStatus: a task's status or status message changed.
	EventStatus EventKind = "status"
	// EventPoll: a host polled a task (tasks/get).
	EventPoll EventKind = "poll"
	// EventViolation: a host or the server broke a rule; Violation says which.
	EventViolation EventKind = "violation"
	// EventNotice: something the user should know that is not a rule (a ledger write failed,
	// the server could not be reached, a message too large to inspect).
	EventNotice EventKind = "notice"
)

// Event is one thing the proxy saw, for the live view and the plain lines. Every string in it
// may come from a host or a server: strip terminal escapes before showing it.
type Event struct {
	Kind EventKind
	Time time.Time
	// Host names the host concerned ("" when none is).
	Host string
	Task TaskInfo
	// Via says how a status came: "create", "poll", "push" or "cancel".
	Via       string
	Violation check.Violation
	Text      string
}

// TaskInfo is what the proxy knows of a task.
type TaskInfo struct {
	ID, Tool, Status, Message string
	// Era and Version are the protocol generation and negotiated version the task was made in.
	Era, Version string
	PollInterval time.Duration
	CreatedAt    time.Time
	// OnHost marks a task the server created on the host (2025-11-25 task-augmented sampling or
	// elicitation): it lives on the host and is not written to the ledger.
	OnHost bool
	// InLedger says the task was written to the ledger.
	InLedger bool
}

// Proxy is the bookkeeping shared by the HTTP and stdio relays: which hosts are talking,
// which tasks they made, the linter and the record.
type Proxy struct {
	opts Options
	rec  *recorder
	lint *check.Linter

	mem memBudget

	bridge *bridge

	mu      sync.Mutex
	hosts   map[string]*host
	tasks   map[string]*taskState
	evicted int // hosts forgotten because of maxHosts

	// ledgerIDs are the ids the ledger held for this server when a task the proxy had not
	// seen was first reported (read once, lazily): a status of a task in neither p.tasks nor
	// there is answered from memory, without a ledger read under its lock per notification.
	ledgerOnce sync.Once
	ledgerIDs  map[string]bool // nil: the ledger could not be read, so every id may be there
}

// host is one host conversation, kept apart from the others: a 2025-11-25 HTTP session, a
// 2026-07-28 host (stateless: told apart by its clientInfo and address), or the stdio host.
type host struct {
	key string
	// name is the host's label in events and the record; it learns the clientInfo, so it
	// changes, and it is read without the proxy's lock.
	name       atomic.Pointer[string]
	era        rpc.Era
	version    string
	session    string
	clientCaps json.RawMessage
	serverCaps json.RawMessage
	// pending maps the ids of the host's requests in flight to their exchanges (stdio, where
	// responses come back on one shared stream).
	pending map[string]*exchange
	// serverReqs maps the ids of the server's requests to the host to what they asked.
	serverReqs map[string]serverReq
	stdio      bool
	// seen is when the host last sent a request (under the proxy's lock), for maxHosts.
	seen time.Time
}

func (h *host) label() string { return *h.name.Load() }

// prunePending forgets requests that never got an answer (their host gave up on them) once
// there are many; the caller holds the proxy's lock.
func (h *host) prunePending(now time.Time) {
	for k, x := range h.pending {
		if now.Sub(x.start) > 10*time.Minute {
			delete(h.pending, k)
		}
	}
}

// settle forgets x once its HTTP request is over, unless its answer may still come on a
// resumed stream (2025-11-25 only).
func (p *Proxy) settle(x *exchange) {
	if x.msg == nil {
		return
	}
	x.mu.Lock()
	keep := !x.answered && x.era == rpc.EraLegacy
	x.mu.Unlock()
	if keep {
		return
	}
	p.mu.Lock()
	if x.h.pending[x.msg.IDKey()] == x {
		delete(x.h.pending, x.msg.IDKey())
	}
	p.mu.Unlock()
}
func (h *host) setLabel(name string) { h.name.Store(&name) }

type serverReq struct {
	method string
	task   bool // a 2025-11-25 task-augmented request: the host may answer with a task
}

type taskState struct {
	info TaskInfo
	host string
}

// exchange is one request of a host and what came of it.
type exchange struct {
	h      *host
	msg    *rpc.Message // nil when the body was not a JSON-RPC request
	params reqParams
	era    rpc.Era
	// version is the protocol version the request was made in, "" when unknown.
	version string
	header  http.Header
	start   time.Time
	// httpMethod is the HTTP method of the request ("" on stdio).
	httpMethod string
	// Filled as the answer arrives, for the record's summary line. The answer may come on
	// another request's stream (a 2025-11-25 GET resuming a broken one), hence the lock.
	mu       sync.Mutex
	status   int
	rpcErr   *rpc.Error
	err      string
	taskID   string
	created  bool
	answered bool
	// held is what the proxy's memory budget lends the answer's body until ServeHTTP ends.
	held int64
}

func (x *exchange) method() string {
	if x == nil || x.msg == nil {
		return ""
	}
	return x.msg.Method
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func (i *implementation) String() string {
	if i == nil || i.Name == "" {
		return ""
	}
	if i.Version == "" {
		return i.Name
	}
	return i.Name + "/" + i.Version
}

// reqParams is what the proxy reads of a request's params, in either era.
type reqParams struct {
	TaskID string          `json:"taskId"`
	Name   string          `json:"name"`
	Task   json.RawMessage `json:"task"`
	Meta   struct {
		Version        string          `json:"io.modelcontextprotocol/protocolVersion"`
		Caps           json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		Info           *implementation `json:"io.modelcontextprotocol/clientInfo"`
		SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
	} `json:"_meta"`
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      *implementation `json:"clientInfo"`
}

func (p reqParams) hasTask() bool { return len(p.Task) > 0 && string(p.Task) != "null" }

// New returns a Proxy.
func New(opts Options) *Proxy {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxInspect <= 0 {
		opts.MaxInspect = DefaultMaxInspect
	}
	if opts.MaxHeld <= 0 {
		opts.MaxHeld = DefaultMaxHeld
	}
	p := &Proxy{opts: opts, hosts: map[string]*host{}, tasks: map[string]*taskState{}}
	p.mem.max = opts.MaxHeld
	p.rec = newRecorder(opts.Record, opts.Trace, opts.Redact, opts.Secret, opts.Now)
	if opts.Bridge != nil {
		p.bridge = newBridge(p, *opts.Bridge)
	}
	p.lint = check.NewLinter(p.violation)
	p.lint.Now = opts.Now
	opts.Ledger.ReportTo(func(err error) { p.notice(nil, "could not update the ledger: %v", err) })
	return p
}

// Close writes what the ledger still holds.
func (p *Proxy) Close() {
	p.opts.Ledger.Close()
}

func (p *Proxy) emit(ev Event) {
	if p.opts.OnEvent == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = p.opts.Now()
	}
	p.opts.OnEvent(ev)
}

// violation is the linter's report: to the record, and to the view or the plain lines.
func (p *Proxy) violation(v check.Violation) {
	if v.Peer == "" {
		v.Peer = check.PeerServer
	}
	l := &wirelog.Line{Kind: wirelog.KindViolation, Rule: v.Rule, Section: v.Section, Seen: v.Seen, Peer: v.Peer}
	if v.TaskID != "" {
		l.TaskID = new(v.TaskID)
	}
	p.rec.line(v.Peer == check.PeerHost, v.Host, l)
	p.emit(Event{Kind: EventViolation, Host: v.Host, Violation: v, Task: TaskInfo{ID: v.TaskID}})
}

// malformed reports a message that is not valid JSON-RPC; it is forwarded unchanged all the
// same (a proxy reports, it never repairs).
func (p *Proxy) malformed(toServer bool, h *host, data []byte, err error) {
	peer, label := check.PeerServer, ""
	if toServer {
		peer = check.PeerHost
	}
	if h != nil {
		label = h.label()
	}
	msg := err.Error()
	if len(data) == 0 {
		msg = "an empty message"
	}
	p.violation(check.Violation{Rule: "malformed", Section: "JSON-RPC 2.0; C25-TRANS / C26-HTTP / C26-STDIO", Peer: peer, Host: label,
		Seen: fmt.Sprintf("the %s sent a message that is not JSON-RPC (%s); it was forwarded unchanged", peer, msg)})
}

// notice reports something that is not a rule.
func (p *Proxy) notice(h *host, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	label := ""
	if h != nil {
		label = h.label()
	}
	if p.rec != nil {
		p.rec.line(false, label, &wirelog.Line{Kind: wirelog.KindProxyNotice, Peer: "proxy", Message: text})
	}
	p.emit(Event{Kind: EventNotice, Host: label, Text: text})
}

// hostFor returns the host with key, creating it with label. Past maxHosts it forgets the host
// seen least recently, and says so (once, then every thousandth time: a flood must not flood
// the user's screen too).
func (p *Proxy) hostFor(key, label string) *host {
	now := p.opts.Now()
	p.mu.Lock()
	h := p.hosts[key]
	evicted := 0
	if h == nil {
		if len(p.hosts) >= maxHosts {
			var oldest *host
			for _, o := range p.hosts {
				if !o.stdio && (oldest == nil || o.seen.Before(oldest.seen)) {
					oldest = o
				}
			}
			if oldest != nil {
				delete(p.hosts, oldest.key)
				p.evicted++
				if p.evicted == 1 || p.evicted%1000 == 0 {
					evicted = p.evicted
				}
			}
		}
		h = &host{key: key, pending: map[string]*exchange{}, serverReqs: map[string]serverReq{}}
		h.setLabel(label)
		p.hosts[key] = h
	}
	h.seen = now
	p.mu.Unlock()
	if evicted > 0 {
		p.notice(nil, "more than %d hosts or sessions at once: the proxy forgot the one seen least recently (%d so far); their traffic still passes, and a flood of new session ids cannot grow the proxy", maxHosts, evicted)
	}
	return h
}

// trimOldest deletes the oldest entries of m until it has at most n; the caller holds the
// proxy's lock. It runs only past a cap, so its cost does not matter for honest hosts.
func trimOldest[V any](m map[string]V, n int, start func(V) time.Time) {
	for len(m) > n {
		var oldK string
		var oldT time.Time
		first := true
		for k, v := range m {
			if t := start(v); first || t.Before(oldT) {
				oldK, oldT, first = k, t, false
			}
		}
		delete(m, oldK)
	}
}

// dropHost forgets a host whose session ended.
func (p *Proxy) dropHost(h *host) {
	p.mu.Lock()
	if p.hosts[h.key] == h {
		delete(p.hosts, h.key)
	}
	p.mu.Unlock()
}

// decodeHostMessage decodes a message a host sent, and the params of a request.
func decodeHostMessage(data []byte) (*rpc.Message, reqParams, error) {
	var params reqParams
	m, err := rpc.DecodeMessage(data)
	if err != nil {
		return nil, params, err
	}
	if m.IsRequest() && len(m.Params) > 0 {
		_ = json.Unmarshal(m.Params, &params)
	}
	return m, params, nil
}

// fromHost inspects a message the host sent, before it is forwarded. It returns the exchange
// a request opens, or nil for anything else.
func (p *Proxy) fromHost(h *host, data []byte) *exchange {
	m, params, err := decodeHostMessage(data)
	if err != nil {
		p.malformed(true, h, data, err)
		return nil
	}
	return p.hostMessage(h, m, params, nil)
}

// hostMessage looks at a decoded message of the host; hdr holds its HTTP headers (nil on
// stdio).
func (p *Proxy) hostMessage(h *host, m *rpc.Message, params reqParams, hdr http.Header) *exchange {
	switch {
	case m.IsRequest():
		return p.hostRequest(h, m, params, hdr)
	case m.IsResponse():
		p.hostResponse(h, m)
	}
	return nil
}

func (p *Proxy) hostRequest(h *host, m *rpc.Message, params reqParams, hdr http.Header) *exchange {
	x := &exchange{h: h, msg: m, params: params, header: hdr, start: p.opts.Now()}
	p.mu.Lock()
	switch {
	case x.params.Meta.Version != "":
		x.era, x.version = rpc.EraModern, x.params.Meta.Version
	case m.Method == "initialize":
		x.era, x.version = rpc.EraLegacy, x.params.ProtocolVersion
	case h.era != "":
		x.era, x.version = h.era, h.version
	default:
		x.era = rpc.EraLegacy
		if v := hdr.Get("Mcp-Protocol-Version"); v != "" {
			x.version = v
			if v >= rpc.VersionModern {
				x.era = rpc.EraModern
			}
		}
	}
	serverCaps := h.serverCaps
	// The answer comes back on the stdio stream, or over HTTP on this request's answer, or
	// (2025-11-25) on a GET that resumes its broken stream: look it up by id either way.
	h.pending[m.IDKey()] = x
	if len(h.pending) > maxPending {
		h.prunePending(x.start)
		trimOldest(h.pending, maxPending*3/4, func(x *exchange) time.Time { return x.start })
	}
	if h.stdio {
		if info := x.params.Meta.Info.String() + x.params.ClientInfo.String(); info != "" && h.label() == "stdio host" {
			h.setLabel(info + " (stdio)")
		}
	}
	p.mu.Unlock()
	p.lint.ObserveHost(x.hostRequest(serverCaps))
	if m.Method == "tasks/get" && x.params.TaskID != "" {
		p.emit(Event{Kind: EventPoll, Host: h.label(), Task: TaskInfo{ID: x.params.TaskID}})
	}
	return x
}

func (x *exchange) hostRequest(serverCaps json.RawMessage) check.HostRequest {
	return check.HostRequest{Host: x.h.label(), Era: x.era, Method: x.msg.Method, TaskID: x.params.TaskID,
		HTTP: x.header != nil, Header: x.header, ClientCaps: x.params.Meta.Caps, ServerCaps: serverCaps, TaskParam: x.params.hasTask()}
}

// hostResponse sees a host's answer to a server's request. A 2025-11-25 server may ask the
// host to run sampling or elicitation as a task; the host's CreateTaskResult then creates a
// task that lives on the host.
func (p *Proxy) hostResponse(h *host, m *rpc.Message) {
	p.mu.Lock()
	req, ok := h.serverReqs[m.IDKey()]
	delete(h.serverReqs, m.IDKey())
	p.mu.Unlock()
	if !ok || !req.task || m.Result == nil {
		return
	}
	var r struct {
		Task json.RawMessage `json:"task"`
	}
	if json.Unmarshal(m.Result, &r) != nil || len(r.Task) == 0 {
		return
	}
	t, err := rpc.DecodeTask(r.Task)
	if err != nil {
		return
	}
	info := TaskInfo{ID: t.TaskID, Tool: req.method, Status: string(t.Status), Message: t.StatusMessage, Era: string(rpc.EraLegacy),
		Version: h.version, PollInterval: t.PollInterval, CreatedAt: t.CreatedAt, OnHost: true}
	p.mu.Lock()
	p.tasks[t.TaskID] = &taskState{info: info, host: h.label()}
	p.capTasks()
	p.mu.Unlock()
	p.emit(Event{Kind: EventCreated, Host: h.label(), Task: info, Via: "create"})
}

// fromServer inspects a message the server sent, before it is forwarded to the host. x is the
// request it answers or whose stream carried it (nil when unknown: stdio looks it up by id, a
// GET stream has none). A CreateTaskResult is written to the ledger before fromServer returns.
func (p *Proxy) fromServer(h *host, x *exchange, data []byte) {
	m, err := rpc.DecodeMessage(data)
	if err != nil {
		p.malformed(false, h, data, err)
		return
	}
	switch {
	case m.IsResponse():
		p.mu.Lock()
		if x == nil || x.msg == nil || !sameID(x.msg, m) {
			x = h.pending[m.IDKey()]
		}
		if x != nil && h.pending[m.IDKey()] == x {
			delete(h.pending, m.IDKey())
		}
		p.mu.Unlock()
		if x != nil {
			p.response(x, m)
		}
	case m.IsRequest():
		p.serverRequest(h, x, m)
	default:
		p.serverNotification(h, x, m)
	}
}

func sameID(req, resp *rpc.Message) bool { return req.IDKey() == resp.IDKey() }

func (p *Proxy) serverRequest(h *host, x *exchange, m *rpc.Message) {
	var params reqParams
	_ = json.Unmarshal(m.Params, &params)
	p.mu.Lock()
	h.serverReqs[m.IDKey()] = serverReq{method: m.Method, task: params.hasTask()}
	if len(h.serverReqs) > maxPending {
		for k := range h.serverReqs { // unanswered for long: forget any, a host never answers them all
			delete(h.serverReqs, k)
			if len(h.serverReqs) <= maxPending*3/4 {
				break
			}
		}
	}
	era, clientCaps := h.era, h.clientCaps
	p.mu.Unlock()
	if x != nil && x.era == rpc.EraModern {
		era = rpc.EraModern
	}
	if era == rpc.EraModern {
		p.violation(check.Violation{Rule: "B35", Section: "C26-HTTP §Receiving Messages; C26-STDIO §Receiving Messages", Host: h.label(),
			Seen: fmt.Sprintf("the server sent a JSON-RPC request (%s) to a 2026-07-28 host", m.Method)})
		return
	}
	// C25-LIFE §Operation, C25-TASKS §Input Required Status: the server may only ask for what
	// the host declared at initialize.
	need := map[string]string{"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}[m.Method]
	if need != "" && clientCaps != nil {
		var caps map[string]json.RawMessage
		_ = json.Unmarshal(clientCaps, &caps)
		if _, ok := caps[need]; !ok {
			p.violation(check.Violation{Rule: "caps", Section: "C25-LIFE §Operation", Host: h.label(),
				Seen: fmt.Sprintf("the server sent %s to a host that did not declare the %s capability", m.Method, need)})
		}
	}
}

func (p *Proxy) serverNotification(h *host, x *exchange, m *rpc.Message) {
	var params reqParams
	_ = json.Unmarshal(m.Params, &params)
	if x.method() == "subscriptions/listen" || len(params.Meta.SubscriptionID) > 0 {
		p.lint.ObserveStream(m.Method)
	}
	switch m.Method {
	case "notifications/tasks/status", "notifications/tasks":
		// C25-TASKS §Task Status Notification (a flat Task); EXT §Task Status Notifications (a
		// DetailedTask on a listen stream).
		if t, err := rpc.DecodeTask(m.Params); err == nil {
			p.taskSeen(h, t, "push")
		}
	}
}

// response handles the server's answer to x.
func (p *Proxy) response(x *exchange, m *rpc.Message) {
	method := x.msg.Method
	var rpcErr error
	x.mu.Lock()
	x.answered = true
	if m.Error != nil {
		x.rpcErr = m.Error
		rpcErr = m.Error
	}
	x.mu.Unlock()
	params := map[string]any{}
	if x.params.TaskID != "" {
		params["taskId"] = x.params.TaskID
	}
	switch method {
	case "initialize":
		p.initialized(x, m)
	case "tools/call":
		if m.Result != nil {
			p.toolResult(x, m.Result)
		}
	case "tasks/result":
		// C25-TASKS §Result Retrieval: tasks/result answers only once the task is terminal;
		// a tool result with isError means failed in this generation (§Task Execution Errors).
		if m.Result != nil && x.params.TaskID != "" {
			var r struct {
				IsError bool `json:"isError"`
			}
			_ = json.Unmarshal(m.Result, &r)
			p.taskEnded(x.h, x.params.TaskID, map[bool]string{false: "completed", true: "failed"}[r.IsError])
		}
	case "tasks/get", "tasks/cancel":
		if m.Result != nil {
			if t, err := rpc.DecodeTask(m.Result); err == nil {
				via := "poll"
				if method == "tasks/cancel" {
					via = "cancel"
				}
				p.taskSeen(x.h, t, via)
			}
		}
	}
	if m.Error != nil && x.params.TaskID != "" {
		p.lint.ObserveHostError(x.hostRequest(nil), m.Error)
		if rpc.IsUnknownTask(m.Error) {
			p.expired(x.params.TaskID)
		}
	}
	if method == "tools/call" && m.Result != nil {
		return // observed in toolResult, before the ledger write
	}
	p.lint.Observe(x.era, method, params, m.Result, rpcErr)
}

// initialized learns what a 2025-11-25 handshake negotiated for the host.
func (p *Proxy) initialized(x *exchange, m *rpc.Message) {
	if m.Result == nil {
		return
	}
	var r struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(m.Result, &r)
	p.mu.Lock()
	h := x.h
	h.era, h.version = rpc.EraLegacy, r.ProtocolVersion
	if r.ProtocolVersion >= rpc.VersionModern {
		h.era = rpc.EraModern
	}
	h.serverCaps, h.clientCaps = r.Capabilities, x.params.Capabilities
	if h.serverCaps == nil {
		h.serverCaps = json.RawMessage("{}")
	}
	if h.clientCaps == nil {
		h.clientCaps = json.RawMessage("{}")
	}
	if info := x.params.ClientInfo.String(); info != "" && !strings.Contains(h.label(), info) {
		h.setLabel(info + " (" + h.label() + ")")
	}
	p.mu.Unlock()
}

// toolResult looks at a tools/call result: a CreateTaskResult in either shape makes a task,
// which is written to the ledger now, before the result is forwarded.
func (p *Proxy) toolResult(x *exchange, res json.RawMessage) {
	p.lint.Observe(x.era, "tools/call", nil, res, nil)
	var probe struct {
		ResultType string          `json:"resultType"`
		Task       json.RawMessage `json:"task"`
	}
	if json.Unmarshal(res, &probe) != nil {
		return
	}
	var raw json.RawMessage
	era := rpc.EraModern
	switch {
	case probe.ResultType == "task":
		raw = res // EXT §Task Creation: flat
	case probe.ResultType == "" && len(probe.Task) > 0 && string(probe.Task) != "null":
		raw, era = probe.Task, rpc.EraLegacy // C25-TASKS §Creating Tasks: nested under task
	default:
		return
	}
	t, err := rpc.DecodeTask(raw)
	if errors.Is(err, rpc.ErrBadTaskID) {
		// The host gets the answer as it came (the proxy is transparent); the ledger and the
		// live view do not get an id that is not plain visible ASCII (SECURITY.md, class 8).
		p.notice(x.h, "the server created a task for the host, but not in the ledger: %v", err)
	}
	if err != nil {
		return // the linter has reported what is missing
	}
	p.created(x, t, era)
}

// created records a task a host created.
func (p *Proxy) created(x *exchange, t *rpc.Task, era rpc.Era) {
	now := p.opts.Now()
	version := x.version
	if version == "" || (era == rpc.EraModern) != (version >= rpc.VersionModern) {
		version = rpc.VersionLegacy
		if era == rpc.EraModern {
			version = rpc.VersionModern
		}
	}
	p.mu.Lock()
	session := ""
	if era == rpc.EraLegacy {
		session = x.h.session
	}
	label := x.h.label()
	p.mu.Unlock()
	info := TaskInfo{ID: t.TaskID, Tool: x.params.Name, Status: string(t.Status), Message: t.StatusMessage, Era: string(era),
		Version: version, PollInterval: t.PollInterval, CreatedAt: t.CreatedAt}
	x.mu.Lock()
	x.taskID, x.created = t.TaskID, true
	x.mu.Unlock()
	if p.opts.Ledger != nil {
		srv := p.opts.Server
		// The host's own credentials are passed through, never stored; the record names the
		// header so that `mcptask resume` asks for it again.
		if x.header != nil && x.header.Get("Authorization") != "" && !slices.ContainsFunc(srv.HeaderNames, func(n string) bool { return strings.EqualFold(n, "Authorization") }) {
			srv.HeaderNames = append(slices.Clone(srv.HeaderNames), "Authorization")
		}
		rec := ledger.NewRecord(ledger.Origin{Server: srv, Era: string(era), Protocol: version, SessionID: session,
			Tool: x.params.Name, Via: Via}, t, now)
		if err := p.opts.Ledger.Put(rec); err != nil {
			p.notice(x.h, "task %s: writing it to the ledger failed: %v", t.TaskID, err)
		} else {
			info.InLedger = true
		}
	}
	p.mu.Lock()
	p.tasks[t.TaskID] = &taskState{info: info, host: label}
	p.capTasks()
	p.mu.Unlock()
	p.emit(Event{Kind: EventCreated, Host: label, Task: info, Via: "create"})
}

// capTasks keeps the tasks the proxy remembers under maxTasks; the caller holds the lock. A
// proxy may run for days: it forgets the tasks that ended first, then the oldest (the ledger
// keeps them all).
func (p *Proxy) capTasks() {
	if len(p.tasks) <= maxTasks {
		return
	}
	for id, ts := range p.tasks {
		if taskstatus.Over(ts.info.Status) {
			delete(p.tasks, id)
		}
	}
	trimOldest(p.tasks, maxTasks*3/4, func(ts *taskState) time.Time { return ts.info.CreatedAt })
}

// taskSeen takes a status the server reported (a poll answer, a notification, a cancel) and
// updates the ledger and the view when something changed.
func (p *Proxy) taskSeen(h *host, t *rpc.Task, via string) {
	p.mu.Lock()
	ts := p.tasks[t.TaskID]
	if ts == nil {
		p.mu.Unlock()
		held := p.inLedger(t.TaskID)
		p.mu.Lock()
		if ts = p.tasks[t.TaskID]; ts == nil {
			// A task created before the proxy started (or by another route): follow it all
			// the same; the ledger is updated only if it holds the task.
			ts = &taskState{info: TaskInfo{ID: t.TaskID, Era: string(h.era), Version: h.version, CreatedAt: t.CreatedAt, InLedger: held}, host: h.label()}
			p.tasks[t.TaskID] = ts
			p.capTasks()
		}
	}
	changed := ts.info.Status != string(t.Status) || ts.info.Message != t.StatusMessage ||
		(t.PollInterval > 0 && ts.info.PollInterval != t.PollInterval)
	ts.info.Status, ts.info.Message = string(t.Status), t.StatusMessage
	if t.PollInterval > 0 {
		ts.info.PollInterval = t.PollInterval
	}
	info, onHost := ts.info, ts.info.OnHost
	p.mu.Unlock()
	if !changed {
		return
	}
	if !onHost && info.InLedger {
		p.ledgerChange(h, t.TaskID, t.Status.Terminal(), func(r *state.Record) { ledger.ApplyTask(r, t) })
	}
	p.emit(Event{Kind: EventStatus, Host: h.label(), Task: info, Via: via})
}

// inLedger reports whether the ledger held task id of this server when it was read (once).
func (p *Proxy) inLedger(id string) bool {
	l := p.opts.Ledger
	if l == nil {
		return false
	}
	p.ledgerOnce.Do(func() {
		f, err := l.Store().Load()
		if err != nil {
			return
		}
		key := p.opts.Server.Key()
		p.ledgerIDs = map[string]bool{}
		for _, r := range f.Tasks {
			if r.Server.Key() == key {
				p.ledgerIDs[r.TaskID] = true
			}
		}
	})
	return p.ledgerIDs == nil || p.ledgerIDs[id]
}

// ledgerChange changes the record of task id: batched while it runs, at once when it ended
// (before the host learns of it).
func (p *Proxy) ledgerChange(h *host, id string, ended bool, fn func(r *state.Record)) {
	l := p.opts.Ledger
	if l == nil {
		return
	}
	if !ended {
		l.Patch(p.opts.Server.Key(), id, fn)
		return
	}
	if err := l.PatchNow(p.opts.Server.Key(), id, fn); err != nil {
		p.notice(h, "task %s: writing its end to the ledger failed: %v", id, err)
	}
}

// taskEnded records the terminal status a 2025-11-25 tasks/result answer implies, unless a
// terminal status is known already.
func (p *Proxy) taskEnded(h *host, id, status string) {
	p.mu.Lock()
	ts := p.tasks[id]
	if ts == nil || ts.info.OnHost || !ts.info.InLedger || taskstatus.Over(ts.info.Status) {
		p.mu.Unlock()
		return
	}
	ts.info.Status = status
	info := ts.info
	p.mu.Unlock()
	p.ledgerChange(h, id, true, func(r *state.Record) {
		if !r.Terminal() {
			r.Status = status
		}
	})
	p.emit(Event{Kind: EventStatus, Host: h.label(), Task: info, Via: "result"})
}

// expired marks a task the server no longer knows.
func (p *Proxy) expired(id string) {
	p.mu.Lock()
	ts := p.tasks[id]
	if ts == nil || ts.info.Status == taskstatus.Expired {
		p.mu.Unlock()
		return
	}
	ts.info.Status = taskstatus.Expired
	info, label := ts.info, ts.host
	p.mu.Unlock()
	if !info.OnHost && info.InLedger {
		p.ledgerChange(nil, id, true, func(r *state.Record) { r.Expired = true })
	}
	p.emit(Event{Kind: EventStatus, Host: label, Task: info, Via: "poll"})
}
