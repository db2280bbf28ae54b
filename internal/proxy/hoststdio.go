package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/mcptask/mcptask/internal/iostreams"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
)

// --host-stdio (issue 22 §2): the host starts mcptask as its stdio server and mcptask speaks
// Streamable HTTP to the real server, which is what mcp-remote does. The stdio relay of
// stdio.go runs unchanged on the host's side; on the server's side a connector stands in for
// the server process: it reads the frames the relay writes to "the server's stdin", sends each
// as the HTTP request it is (with the session, the protocol version header, the 2026-07-28
// routing headers, and OAuth through the transport's client), and writes what comes back (the
// answer, and the server's requests and notifications met on its event stream) as frames on
// "the server's stdout". So the ledger, the record, the linter, the event lines and the bridge
// work the same as for a stdio server.

// HostStdioOptions configure RunHostStdio.
type HostStdioOptions struct {
	// Upstream is the server's MCP endpoint; HTTP its transport options (headers, the OAuth
	// client, TLS).
	Upstream string
	HTTP     rpc.HTTPOptions
	// In is what the host writes (the proxy's stdin), Out what the host reads (its stdout).
	In  io.Reader
	Out io.Writer
}

// RunHostStdio relays a stdio host to a Streamable HTTP server until the host closes its end or
// ctx ends. The 2025-11-25 session is left open when the host goes (no DELETE): the tasks it
// made may be tied to it, and the ledger keeps it for `mcptask resume`.
func (p *Proxy) RunHostStdio(ctx context.Context, o HostStdioOptions) error {
	t, err := rpc.NewHTTPTransport(o.Upstream, o.HTTP)
	if err != nil {
		return err
	}
	t.KeepSession(true)
	defer t.Close()
	h := p.hostFor("stdio", "stdio host")
	p.mu.Lock()
	h.stdio = true
	p.mu.Unlock()

	srvInR, srvInW := io.Pipe()
	srvOutR, srvOutW := io.Pipe()
	toServer, toHost := iostreams.NewLocked(srvInW), iostreams.NewLocked(o.Out)
	if p.bridge != nil {
		p.bridge.attachStdio(ctx, h, toServer, toHost)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn := &connector{p: p, h: h, t: t, out: iostreams.NewLocked(srvOutW), waits: map[string]chan *rpc.Message{}}
	t.SetHandler(conn.fromServer)

	serverDone := make(chan error, 1)
	go func() { serverDone <- p.relay(srvOutR, toHost, h, false) }()
	connDone := make(chan struct{})
	go func() {
		conn.run(cctx, srvInR)
		close(connDone)
	}()
	hostDone := make(chan error, 1)
	go func() {
		err := p.relay(o.In, toServer, h, true)
		if p.bridge != nil {
			p.bridge.hostGone(h)
		}
		_ = srvInW.Close()
		hostDone <- err
	}()
	select {
	case err = <-hostDone:
	case <-ctx.Done():
	}
	cancel()
	_ = srvInR.Close()
	<-connDone
	conn.wg.Wait()
	_ = srvOutW.Close()
	<-serverDone
	if err != nil {
		p.notice(h, "reading from the host failed: %v", err)
	}
	return nil
}

// connector turns frames into Streamable HTTP requests and their answers back into frames.
type connector struct {
	p   *Proxy
	h   *host
	t   *rpc.HTTPTransport
	out *iostreams.Locked
	wg  sync.WaitGroup

	mu      sync.Mutex
	version string
	// waits are the server's requests sent on to the host, by id, waiting for its answer.
	waits map[string]chan *rpc.Message
}

// run reads the host's frames, one a line. A line is bounded as a request to the HTTP proxy
// is (Options.MaxInspect): a longer one is dropped unread, with a notice, and the next line is
// read as usual.
func (c *connector) run(ctx context.Context, in io.Reader) {
	br := bufio.NewReaderSize(in, 64<<10)
	max := c.p.opts.MaxInspect
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping {
			if len(line)+len(chunk) > max {
				c.p.notice(c.h, "a frame of the host larger than %d bytes was dropped", max)
				line, skipping = line[:0], true
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !skipping && len(line) > 0 {
			c.frame(ctx, line)
		}
		line, skipping = nil, false // frame may keep what it was given
		if err != nil {
			return
		}
	}
}

func (c *connector) frame(ctx context.Context, line []byte) {
	m, err := rpc.DecodeMessage(line)
	if err != nil {
		return // reported by the relay; there is nothing to send
	}
	hdr := c.headers(m)
	switch {
	case m.IsRequest():
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.request(ctx, m, hdr)
		}()
	case m.IsResponse():
		c.mu.Lock()
		ch := c.waits[m.IDKey()]
		delete(c.waits, m.IDKey())
		c.mu.Unlock()
		if ch != nil {
			ch <- m
			return
		}
		_ = c.t.Send(ctx, m, hdr)
	default:
		if err := c.t.Send(ctx, m, hdr); err != nil && ctx.Err() == nil {
			c.p.notice(c.h, "a notification to the server failed: %v", redact.URL(err.Error()))
		}
		if m.Method == "notifications/initialized" && hdr.Get("Mcp-Protocol-Version") < rpc.VersionModern {
			// C25-TRANS §Listening for Messages from the Server: what the server sends
			// outside any request comes on the session's GET stream, which a host over
			// HTTP would hold; the proxy holds it for the stdio host.
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				_ = c.t.OpenStandaloneStream(ctx)
			}()
		}
	}
}

// request sends the host's request m to the server and writes its answer to the host; an
// initialize's answer tells the version and the session the host's tasks are recorded with.
func (c *connector) request(ctx context.Context, m *rpc.Message, hdr http.Header) {
	resp, err := c.t.RoundTrip(ctx, m, hdr)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		c.write(&rpc.Message{JSONRPC: "2.0", ID: m.ID, Error: &rpc.Error{Code: rpc.CodeInternalError,
			Message: "mcptask proxy: " + redact.URL(err.Error()) + hint(err)}})
		return
	}
	if m.Method == "initialize" && resp.Result != nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(resp.Result, &r)
		c.mu.Lock()
		c.version = r.ProtocolVersion
		c.mu.Unlock()
		// The host's tasks are recorded with the session they live in.
		c.p.mu.Lock()
		c.h.session = c.t.SessionID()
		c.p.mu.Unlock()
	}
	resp.JSONRPC, resp.ID = "2.0", m.ID
	c.write(resp)
}

// hint is the next step for a failure to reach the server.
func hint(err error) string {
	var he *rpc.HTTPError
	if errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) {
		return "; log in with: mcptask auth login --server URL, then restart the host's server"
	}
	return ""
}

// headers are what a Streamable HTTP client adds to a message: C25-TRANS §Protocol Version
// Header after initialize; C26-HTTP §Standard Request Headers on a 2026-07-28 request.
func (c *connector) headers(m *rpc.Message) http.Header {
	hdr := http.Header{}
	var p struct {
		Name   string `json:"name"`
		URI    string `json:"uri"`
		TaskID string `json:"taskId"`
		Meta   struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.Meta.Version != "" {
		hdr.Set("Mcp-Protocol-Version", p.Meta.Version)
		if m.Method != "" {
			hdr.Set("Mcp-Method", m.Method)
		}
		// C26-HTTP §Standard Request Headers: Mcp-Name carries params.name, uri or taskId.
		for _, n := range []string{p.Name, p.URI, p.TaskID} {
			if n != "" {
				hdr.Set("Mcp-Name", rpc.EncodeHeaderValue(n))
				break
			}
		}
		return hdr
	}
	c.mu.Lock()
	v := c.version
	c.mu.Unlock()
	if v != "" && m.Method != "initialize" {
		hdr.Set("Mcp-Protocol-Version", v)
	}
	return hdr
}

// fromServer takes a request or notification the server sent on an event stream: on to the
// host, and for a request, the host's answer back.
func (c *connector) fromServer(ctx context.Context, m *rpc.Message) *rpc.Message {
	if !m.IsRequest() {
		c.write(m)
		return nil
	}
	ch := make(chan *rpc.Message, 1)
	c.mu.Lock()
	c.waits[m.IDKey()] = ch
	c.mu.Unlock()
	c.write(m)
	select {
	case r := <-ch:
		return &rpc.Message{Result: r.Result, Error: r.Error}
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.waits, m.IDKey())
		c.mu.Unlock()
		return nil
	}
}

func (c *connector) write(m *rpc.Message) {
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	if err := c.out.WriteLine(data); err != nil {
		c.p.notice(c.h, "%s", fmt.Sprintf("a message of the server could not be passed on: %v", err))
	}
}
