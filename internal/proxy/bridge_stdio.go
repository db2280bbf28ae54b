package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcptask/mcptask/internal/iostreams"
	"github.com/mcptask/mcptask/internal/rpc"
)

// On stdio the proxy shares the one stream to the server with its host: its own requests (the
// task call, tasks/get, tasks/result, tasks/cancel) carry ids of its own (bridgeIDPrefix), and
// their answers, and the server's requests and notifications about a bridged task, are taken
// off the stream before they reach the host. Writes to either side go through a lock, so that
// a line of the proxy's never lands in the middle of a line of the relay's.

// stdioLink is a stdio host's side of the bridge.
type stdioLink struct {
	h      *host
	toHost *iostreams.Locked
	up     *stdioUpstream
	ctx    context.Context
	cancel context.CancelFunc
}

func (l *stdioLink) send(msg []byte) error {
	if l.ctx.Err() != nil {
		return errHostGone
	}
	return l.toHost.WriteLine(msg)
}

// stdioUpstream is the proxy's way to a stdio server, shared by its bridged calls.
type stdioUpstream struct {
	b  *bridge
	h  *host
	w  *iostreams.Locked
	mu sync.Mutex
	// waits are the proxy's requests in flight, by the id they went out with.
	waits map[string]chan *rpc.Message
	// routes are the bridged tasks, by task id.
	routes map[string]*stdioCallTransport
}

func (u *stdioUpstream) route(id string, t *stdioCallTransport) {
	u.mu.Lock()
	u.routes[id] = t
	u.mu.Unlock()
}

func (u *stdioUpstream) unroute(id string) {
	u.mu.Lock()
	delete(u.routes, id)
	u.mu.Unlock()
}

// stdioCallTransport is one bridged call's rpc.Transport over the shared stream.
type stdioCallTransport struct {
	up      *stdioUpstream
	mu      sync.Mutex
	handler rpc.Handler
}

// RoundTrip implements rpc.Transport: the request goes out under an id of the proxy's, and
// comes back with the id it was given.
func (t *stdioCallTransport) RoundTrip(ctx context.Context, req *rpc.Message, _ http.Header) (*rpc.Message, error) {
	u := t.up
	id := json.RawMessage(strconv.Quote(u.b.nextID()))
	out := &rpc.Message{JSONRPC: "2.0", ID: id, Method: req.Method, Params: req.Params}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	ch := make(chan *rpc.Message, 1)
	key := idKey(id)
	u.mu.Lock()
	u.waits[key] = ch
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(u.waits, key)
		u.mu.Unlock()
	}()
	u.b.p.bridgeRecord(true, u.h, data)
	if err := u.w.WriteLine(data); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		m.ID = req.ID
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Send implements rpc.Transport.
func (t *stdioCallTransport) Send(_ context.Context, msg *rpc.Message, _ http.Header) error {
	data, err := msg.Encode()
	if err != nil {
		return err
	}
	t.up.b.p.bridgeRecord(true, t.up.h, data)
	return t.up.w.WriteLine(data)
}

// SetHandler implements rpc.Transport.
func (t *stdioCallTransport) SetHandler(h rpc.Handler) { t.mu.Lock(); t.handler = h; t.mu.Unlock() }

// Close implements rpc.Transport; the stream is the host's and stays open.
func (t *stdioCallTransport) Close() error { return nil }

// attachStdio gives the bridge the two streams of a stdio host.
func (b *bridge) attachStdio(ctx context.Context, h *host, toServer, toHost *iostreams.Locked) *stdioLink {
	lctx, cancel := context.WithCancel(ctx)
	l := &stdioLink{h: h, toHost: toHost, ctx: lctx, cancel: cancel,
		up: &stdioUpstream{b: b, h: h, w: toServer, waits: map[string]chan *rpc.Message{}, routes: map[string]*stdioCallTransport{}}}
	b.mu.Lock()
	b.stdio[h] = l
	b.mu.Unlock()
	return l
}

// hostGone is told that a stdio host closed its end: its bridged calls stop following their
// tasks, which keep running and stay in the ledger.
func (b *bridge) hostGone(h *host) {
	b.mu.Lock()
	l := b.stdio[h]
	b.mu.Unlock()
	if l != nil {
		l.cancel()
	}
}

// stdioFrame looks at one frame on a bridged stdio stream. It returns the frame to pass on (the
// same, or a tools/list answer rewritten), or nil when the frame was the bridge's own and goes
// no further. Frames the bridge does not take are inspected as the relay always does.
func (b *bridge) stdioFrame(h *host, msg []byte, toServer bool) []byte {
	b.mu.Lock()
	l := b.stdio[h]
	b.mu.Unlock()
	m, params, err := decodeHostMessage(msg)
	switch {
	case l == nil || err != nil:
		if toServer {
			b.p.fromHost(h, msg)
		} else {
			b.p.fromServer(h, nil, msg)
		}
		return msg
	case toServer:
		return b.hostFrame(l, m, params, msg)
	}
	return b.serverFrame(l, m, msg)
}

// hostFrame takes a host's frame m (msg as it came): its answer to a question of the proxy's,
// its cancellation of a bridged call, a tools/call the bridge takes; anything else goes on.
func (b *bridge) hostFrame(l *stdioLink, m *rpc.Message, params reqParams, msg []byte) []byte {
	h := l.h
	switch {
	case b.hostAnswer(h, m):
		return nil
	case b.hostCancelled(h, m):
		return nil
	case m.Method == "tools/call" && m.IsRequest():
		// Decided here when the tool's taskSupport is known, so that a call passed on keeps
		// its place among the host's frames; only a call that needs the tools listed first
		// waits for that on a goroutine of its own.
		known := func(name string) string {
			b.mu.Lock()
			defer b.mu.Unlock()
			if s, ok := b.support[name]; ok || b.listed {
				return s
			}
			return "unknown"
		}
		switch {
		case b.wants(h, m, params, known):
			c := b.start(h, m, params, nil, l, &stdioCallTransport{up: l.up}, nil)
			go c.run(l.ctx)
			return nil
		case params.Meta.Version == "" && !params.hasTask() && known(params.Name) == "unknown":
			go b.stdioCall(l, m, params, msg)
			return nil
		}
	}
	b.p.fromHost(h, msg)
	if out := b.declareAnswerable(m); out != nil {
		return out
	}
	return msg
}

// serverFrame takes a server's frame m (msg as it came): the answer to a request of the
// proxy's, a request or status about a bridged task, an answer to a host's tools/list (which
// a host that does not speak Tasks gets rewritten); anything else goes on.
func (b *bridge) serverFrame(l *stdioLink, m *rpc.Message, msg []byte) []byte {
	h, u := l.h, l.up
	switch {
	case m.IsResponse() && b.isBridgeID(m.ID):
		u.mu.Lock()
		ch := u.waits[m.IDKey()]
		u.mu.Unlock()
		if ch != nil {
			select {
			case ch <- m:
			default: // a second answer to the same request: the first one counts
			}
			return nil
		}
	case m.IsRequest() || m.Method == "notifications/tasks/status":
		if t := u.routed(m); t != nil {
			t.mu.Lock()
			handle := t.handler
			t.mu.Unlock()
			if handle != nil {
				go u.handle(l.ctx, handle, m)
			}
			return nil
		}
	case m.IsResponse():
		b.p.mu.Lock()
		x := h.pending[m.IDKey()]
		b.p.mu.Unlock()
		if x != nil && x.method() == "tools/list" {
			out := b.rewriteListAnswer(h, m)
			b.p.fromServer(h, nil, msg)
			if out != nil {
				return out
			}
			return msg
		}
	}
	b.p.fromServer(h, nil, msg)
	return msg
}

// handle gives the server's request or notification m about a bridged task to the handler of
// the call that follows it, and sends the server its answer.
func (u *stdioUpstream) handle(ctx context.Context, handle rpc.Handler, m *rpc.Message) {
	resp := handle(ctx, m)
	if resp == nil || !m.IsRequest() {
		return
	}
	resp.JSONRPC, resp.ID = "2.0", m.ID
	if data, err := json.Marshal(resp); err == nil {
		u.b.p.bridgeRecord(true, u.h, data)
		_ = u.w.WriteLine(data)
	}
}

// routed returns the call whose task a server message is about: the related-task of a request
// (C25-TASKS §Input Required Status), the taskId of a status notification.
func (u *stdioUpstream) routed(m *rpc.Message) *stdioCallTransport {
	var p struct {
		TaskID string                     `json:"taskId"`
		Meta   map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	id := p.TaskID
	if rel := p.Meta[rpc.MetaRelatedTask]; len(rel) > 0 {
		var r struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(rel, &r)
		id = r.TaskID
	}
	if id == "" {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.routes[id]
}

// stdioCall takes a host's tools/call on stdio: bridged when the bridge wants it, else passed
// on to the server unchanged (frame is the host's line).
func (b *bridge) stdioCall(l *stdioLink, m *rpc.Message, params reqParams, frame []byte) {
	t := &stdioCallTransport{up: l.up}
	support := func(name string) string {
		b.mu.Lock()
		s, listed := b.support[name]
		done := b.listed
		b.mu.Unlock()
		if listed || done {
			return s
		}
		b.listTools(l.ctx, t, nil)
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.support[name]
	}
	if !b.wants(l.h, m, params, support) {
		b.p.fromHost(l.h, frame)
		_ = l.up.w.WriteLine(frame)
		return
	}
	c := b.start(l.h, m, params, nil, l, t, nil)
	c.run(l.ctx)
}

// listTools asks the server for its tools (every page) to learn their taskSupport, when the
// host called a tool without listing them through the proxy first.
func (b *bridge) listTools(ctx context.Context, t rpc.Transport, hdr http.Header) {
	cursor := ""
	for range 50 {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		resp, err := t.RoundTrip(ctx, &rpc.Message{JSONRPC: "2.0", ID: json.RawMessage(strconv.Quote(b.nextID())), Method: "tools/list", Params: params}, hdr.Clone())
		if err != nil || resp.Result == nil {
			return
		}
		b.learnTools(resp.Result)
		var r struct {
			NextCursor string `json:"nextCursor"`
		}
		_ = json.Unmarshal(resp.Result, &r)
		if r.NextCursor == "" {
			return
		}
		cursor = r.NextCursor
	}
}
