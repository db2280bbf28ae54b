package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mcptask/mcptask/internal/rpc"
)

// stdioSession is the id of the legacy session of a stdio client. There is one client per
// process, so a fixed id lets a restarted stdio server on the same store find the tasks of
// its previous run.
const stdioSession = "stdio"

// maxLine caps one stdin line.
const maxLine = 4 << 20

// ServeStdio serves one client over newline-delimited JSON-RPC (C25-TRANS §stdio, C26-STDIO).
// Requests are handled concurrently, so a blocking tasks/result does not hold up tasks/get.
// It returns nil when r reaches EOF (after in-flight requests finish) and ctx.Err() when ctx
// ends; in that case a blocked read of r is abandoned.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	c := &stdioConn{s: s, w: w, inflight: map[string]context.CancelFunc{}}
	defer c.bg.Wait() // after cancel below: the status notifier ends with ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.ctx = ctx
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := readLine(br)
			if len(line) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			// Let in-flight requests finish (they may still write), then stop.
			cancelWhenDone := make(chan struct{})
			go func() { wg.Wait(); close(cancelWhenDone) }()
			select {
			case <-cancelWhenDone:
			case <-ctx.Done():
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("demo: read stdin: %w", err)
		case line := <-lines:
			c.dispatch(ctx, line, &wg)
		}
	}
}

// readLine reads one line without its newline, refusing lines over maxLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		part, isPrefix, err := br.ReadLine()
		buf = append(buf, part...)
		if len(buf) > maxLine {
			return nil, errors.New("line too long")
		}
		if err != nil || !isPrefix {
			return buf, err
		}
	}
}

type stdioConn struct {
	s  *Server
	w  io.Writer
	wm sync.Mutex

	mu       sync.Mutex
	legacy   *session // set by initialize
	inflight map[string]context.CancelFunc

	ctx context.Context // the connection's
	bg  sync.WaitGroup  // the status notifier
}

// write sends one message as one line (C25-TRANS §stdio: messages MUST NOT contain embedded
// newlines, which json.Marshal guarantees).
func (c *stdioConn) write(m *rpc.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wm.Lock()
	defer c.wm.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}

func (c *stdioConn) dispatch(ctx context.Context, line []byte, wg *sync.WaitGroup) {
	m, err := rpc.DecodeMessage(line)
	if err != nil {
		_ = c.write(errorMessage(nil, &rpc.Error{Code: rpc.CodeParseError, Message: "invalid JSON-RPC message"}))
		return
	}
	switch {
	case m.IsResponse():
		c.s.deliver(m)
		return
	case m.IsNotification():
		if m.Method == "notifications/cancelled" {
			// C26-STDIO: an in-flight request is cancelled with notifications/cancelled.
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(m.Params, &p)
			key := (&rpc.Message{ID: p.RequestID}).IDKey()
			c.mu.Lock()
			if cancel := c.inflight[key]; cancel != nil {
				cancel()
			}
			c.mu.Unlock()
		}
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	key := m.IDKey()
	c.mu.Lock()
	c.inflight[key] = cancel
	c.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			c.mu.Lock()
			delete(c.inflight, key)
			c.mu.Unlock()
			cancel()
		}()
		res, e := c.handle(rctx, m)
		if res == nil && e == nil {
			return // a cancelled listen stream: no response (C26-CANCEL)
		}
		if e != nil {
			e.HTTPStatus = 0
		}
		_ = c.write(responseMessage(m.ID, res, e))
	}()
}

func (c *stdioConn) handle(ctx context.Context, m *rpc.Message) (any, *rpc.Error) {
	if isModern(m) {
		return c.s.modernFromTransport(ctx, m, nil, c.write, nil)
	}
	if m.Method == "initialize" {
		res, e := c.s.initialize(m, stdioSession)
		if e == nil {
			c.s.mu.Lock()
			se := c.s.sessions[stdioSession]
			c.s.mu.Unlock()
			c.mu.Lock()
			first := c.legacy == nil
			c.legacy = se
			c.mu.Unlock()
			if first {
				c.bg.Go(func() { c.s.notifyStatus(c.ctx, se, c.write) })
			}
		}
		return res, e
	}
	c.mu.Lock()
	sess := c.legacy
	c.mu.Unlock()
	if sess == nil {
		return nil, invalidParams("missing params._meta %q (2026-07-28) or initialize first (2025-11-25)", rpc.MetaProtocolVersion)
	}
	return c.s.handleLegacy(ctx, &legacyReq{msg: m, sess: sess, out: c.write})
}

// taskProgressLocked is the notifications/progress of a sleep task that moved a step, with the
// token of the tools/call that created it (MCP 2025-11-25, Progress: the token stays in use
// for the task's whole life, and progress for it stops once the task is terminal); nil for
// any other task, or one whose call sent no token.
func (s *Server) taskProgressLocked(t *task) json.RawMessage {
	if t.Tool != "sleep" || t.ProgressToken == nil || t.Status.Terminal() {
		return nil
	}
	a, _ := parseArgs(t.Tool, t.Args)
	_, n, _ := s.sleepPlan(a)
	b, _ := json.Marshal(map[string]any{"progressToken": t.ProgressToken, "progress": t.Step, "total": n, "message": t.Message})
	return b
}

// notifyStatus sends notifications/tasks/status for every task of the 2025-11-25 session sess
// whose status or message changes, until ctx ends or the server closes. C25-TASKS §Task Status
// Notification: servers MAY send them; clients must not rely on them, so this is a bonus that
// lets mcptask's push path be tested in that era. A sleep task whose call sent a progressToken
// also gets a notifications/progress (its step of the total) with each change. Over stdio there is one stream to send them
// on; over HTTP they would need the GET stream, which the demo does not offer.
func (s *Server) notifyStatus(ctx context.Context, sess *session, send func(*rpc.Message) error) {
	last := map[string]string{}
	first := true
	for {
		changed := s.waitChange()
		s.mu.Lock()
		var updates, progress []json.RawMessage
		for _, t := range s.tasks {
			if t.Era != rpc.EraLegacy || t.Session != sess.ID {
				continue
			}
			key := string(t.Status) + "\x00" + t.Message
			if last[t.ID] == key {
				continue
			}
			last[t.ID] = key
			if first {
				continue // what the client will ask for anyway; changes from here on
			}
			// C25-TASKS §Associating Task-Related Messages: no related-task meta here.
			b, _ := json.Marshal(s.legacyTaskLocked(t))
			updates = append(updates, b)
			if p := s.taskProgressLocked(t); p != nil {
				progress = append(progress, p)
			}
		}
		s.mu.Unlock()
		first = false
		for _, b := range updates {
			if err := send(&rpc.Message{JSONRPC: "2.0", Method: "notifications/tasks/status", Params: b}); err != nil {
				return
			}
		}
		for _, b := range progress {
			if err := send(&rpc.Message{JSONRPC: "2.0", Method: "notifications/progress", Params: b}); err != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		case <-changed:
		}
	}
}
