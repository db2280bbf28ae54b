package rpc

// This file holds the 2025-11-25 standalone GET SSE stream (C25-TRANS §Listening for Messages
// from the Server): the stream a server uses for requests and notifications that belong to no
// request of the client. Servers built on the official TypeScript SDK send the elicitation of
// a task there (and, without a GET stream, drop it: the task then waits forever), so mcptask
// holds it open while it waits for a tool call or a task (C25-TASKS §Input Required Status:
// clients SHOULD expect these messages on any SSE stream, GET included).

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// getStream is the state of one transport's standalone stream.
type getStream struct {
	mu     sync.Mutex
	open   bool // a loop is running (connecting, reading or waiting to reconnect)
	none   bool // the server answered 405: it offers no such stream; never ask again
	cancel context.CancelFunc
	done   chan struct{}
}

// standaloneReadyWait bounds how long OpenStandaloneStream waits for the server to answer the
// GET before letting the caller go on; the stream keeps connecting in the background.
var standaloneReadyWait = 3 * time.Second

// StandaloneStreamer is implemented by transports that can hold the standalone stream open.
type StandaloneStreamer interface {
	OpenStandaloneStream(ctx context.Context) error
}

// OpenStandaloneStream opens the GET stream of the current session unless it is already open
// or the server said it has none (405). It returns once the server answered the GET (or after
// a short bound), so that what the server sends there from then on reaches mcptask: requests
// go to the Handler and their answers are POSTed back, notifications go to the Handler. When
// the stream ends it is reopened after the server's retry delay, with Last-Event-ID when the
// server gave event ids (C25-TRANS §Resumability and Redelivery). Close stops it.
func (t *HTTPTransport) OpenStandaloneStream(ctx context.Context) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	if t.gs == nil {
		t.gs = &getStream{}
	}
	gs := t.gs
	t.mu.Unlock()

	gs.mu.Lock()
	if gs.open || gs.none {
		gs.mu.Unlock()
		return nil
	}
	lctx, cancel := context.WithCancel(context.Background())
	gs.open, gs.cancel, gs.done = true, cancel, make(chan struct{})
	gs.mu.Unlock()

	ready := make(chan struct{})
	go t.runStandalone(lctx, gs, ready)
	timer := time.NewTimer(standaloneReadyWait)
	defer timer.Stop()
	select {
	case <-ready:
	case <-timer.C:
		t.trace.printf("# GET stream: no answer within %s; going on while it connects\n", standaloneReadyWait)
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// stopStandalone ends the stream loop and waits for it.
func (t *HTTPTransport) stopStandalone() {
	t.mu.Lock()
	gs := t.gs
	t.mu.Unlock()
	if gs == nil {
		return
	}
	gs.mu.Lock()
	cancel, done, open := gs.cancel, gs.done, gs.open
	gs.mu.Unlock()
	if open {
		cancel()
		<-done
	}
}

// runStandalone connects, reads and reconnects until ctx ends or the server makes clear it
// will not keep a stream (405, or repeated failures). ready is closed after the first answer
// to the GET.
func (t *HTTPTransport) runStandalone(ctx context.Context, gs *getStream, ready chan struct{}) {
	const maxFailures = 5
	defer func() {
		gs.mu.Lock()
		gs.open = false
		close(gs.done)
		gs.mu.Unlock()
	}()
	readyOnce := sync.OnceFunc(func() { close(ready) })
	defer readyOnce()
	lastID, retry, failures := "", time.Second, 0
	for {
		resp, err := t.getStandalone(ctx, lastID)
		readyOnce()
		if ctx.Err() != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return
		}
		got := false
		switch {
		case err != nil:
			t.trace.printf("# GET stream: %s\n", termsafe.Line(err.Error()))
		case resp.StatusCode == http.StatusMethodNotAllowed:
			// C25-TRANS §Listening for Messages: 405 means the server offers no such stream.
			drain(resp.Body)
			t.trace.printf("# GET stream: the server offers none (405)\n")
			gs.mu.Lock()
			gs.none = true
			gs.mu.Unlock()
			return
		case resp.StatusCode != http.StatusOK || mediaType(resp.Header.Get("Content-Type")) != "text/event-stream":
			drain(resp.Body)
			t.trace.printf("# GET stream: the server answered HTTP %d (%s)\n", resp.StatusCode, termsafe.Line(resp.Header.Get("Content-Type")))
		default:
			var sr *sseReader
			got, sr = t.readStandalone(ctx, resp.Body, lastID)
			resp.Body.Close()
			if sr.sawID {
				lastID = sr.lastID
			}
			if sr.hasRetry {
				retry = sr.retry
			}
		}
		if ctx.Err() != nil {
			return
		}
		if got {
			failures = 0
		} else if failures++; failures >= maxFailures {
			t.trace.printf("# GET stream: giving up after %d attempts without a message\n", failures)
			return
		}
		// The server closed the stream: reconnect after its retry delay (C25-TRANS §Sending
		// Messages to the Server: the client MUST respect retry), backing off on failures.
		wait := min(retry<<min(failures, 4), 30*time.Second)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// getStandalone sends the GET (with Last-Event-ID when resuming) and returns the response with
// its body open.
func (t *HTTPTransport) getStandalone(ctx context.Context, lastID string) (*http.Response, error) {
	t.mu.Lock()
	version := t.version
	t.mu.Unlock()
	return t.getSSE(ctx, lastID, version)
}

// readStandalone reads one connection of the stream and routes what arrives on it, until it
// ends. It reports whether any message arrived.
func (t *HTTPTransport) readStandalone(ctx context.Context, body io.Reader, lastID string) (bool, *sseReader) {
	sr := newSSEReader(body, t.maxL, int(min(t.maxB, int64(^uint(0)>>1))))
	sr.lastID, sr.sawID = lastID, lastID != ""
	got := false
	for {
		ev, err := sr.Next()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isConnReset(err) {
				t.trace.printf("# GET stream: %s\n", termsafe.Line(err.Error()))
			}
			return got, sr
		}
		if ev.Event != "" && ev.Event != "message" {
			t.trace.frame("<", "GET event "+ev.Event, ev.Data)
			continue
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // a priming event
		}
		t.trace.frame("<", "GET sse id="+ev.ID, ev.Data)
		m, err := DecodeMessage(ev.Data)
		if err != nil {
			t.trace.printf("! GET stream: ignoring an event that is not JSON-RPC: %s\n", termsafe.Line(err.Error()))
			continue
		}
		got = true
		switch {
		case m.IsRequest():
			t.mu.Lock()
			version := t.version
			t.mu.Unlock()
			t.answer(ctx, m, http.Header{"Mcp-Protocol-Version": {version}})
		case m.IsNotification():
			if h := t.getHandler(); h != nil {
				h(ctx, m)
			}
		default:
			// A response belongs on the stream of its request (or that stream's resumption).
			t.trace.printf("! GET stream: ignoring a response (id %s) that arrived outside its request's stream\n", termsafe.Line(string(m.ID)))
		}
	}
}
