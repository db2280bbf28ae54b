package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/mcptask/mcptask/internal/wirelog"
)

// sseRelay sits between a server's text/event-stream body and the host. The host gets the
// server's bytes unchanged and without delay, except that an event carrying data is held from
// its first data line until the blank line that ends it, so that the proxy can look at the
// message first (and write a task it creates to the ledger before the host learns of it).
// Comments (keep-alives), ids and retry lines outside such an event pass at once.
//
// internal/rpc has an SSE reader, but it returns parsed events and drops the bytes, which a
// proxy must forward exactly; this one splits the stream into lines and keeps them. Line ends
// are LF or CRLF, as every MCP SDK writes them (a stream using lone CRs is still forwarded
// unchanged, but its events are held until an LF arrives).
type sseRelay struct {
	src  io.ReadCloser
	br   *bufio.Reader
	p    *Proxy
	h    *host
	x    *exchange
	max  int
	line []byte

	out     []byte // ready for the host
	held    []byte // the current event, from its first data line
	data    []byte // its data lines joined with \n
	hasData bool
	event   string
	lastID  string
	// skipping is set while an event larger than max passes uninspected.
	skipping bool
	err      error
	// reserved is what held borrows from the proxy's memory budget.
	reserved int64
}

// release gives back what held borrowed; the caller has just emptied held.
func (s *sseRelay) release() {
	s.p.mem.give(s.reserved)
	s.reserved = 0
}

func newSSERelay(src io.ReadCloser, p *Proxy, h *host, x *exchange) *sseRelay {
	return &sseRelay{src: src, br: bufio.NewReaderSize(src, 32<<10), p: p, h: h, x: x, max: p.opts.MaxInspect}
}

// Read implements io.Reader for the reverse proxy, which writes and flushes what it gets.
func (s *sseRelay) Read(b []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.step()
	}
	n := copy(b, s.out)
	s.out = s.out[n:]
	if len(s.out) == 0 {
		s.out = s.out[:0:0]
	}
	return n, nil
}

// Close implements io.Closer; an event cut off by the host's going away gives back what it
// held of the proxy's memory budget.
func (s *sseRelay) Close() error {
	s.release()
	return s.src.Close()
}

// step reads one line and decides where it goes.
func (s *sseRelay) step() {
	line, err := s.readLine()
	if len(line) > 0 {
		s.take(line)
	}
	if err != nil {
		// The stream ended (or broke). An event cut off by the end is passed on as it is: the
		// host drops it just as it would have without the proxy.
		s.out = append(s.out, s.held...)
		s.held = s.held[:0]
		s.release()
		s.err = err
	}
}

// readLine returns the next line with its terminator, or what is left at the end.
func (s *sseRelay) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.br.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(s.line) > s.max && !s.skipping {
				// A line beyond the inspection cap: let the event through uninspected.
				s.skipping = true
				s.p.notice(s.h, "an SSE event larger than %d bytes was forwarded without being inspected", s.max)
			}
			if s.skipping {
				s.out = append(s.out, s.held...)
				s.out = append(s.out, s.line...)
				s.held, s.line = s.held[:0], s.line[:0]
				s.release()
				return nil, nil
			}
			continue
		}
		return s.line, err
	}
}

func (s *sseRelay) take(line []byte) {
	content := bytes.TrimRight(line, "\r\n")
	if s.skipping {
		s.out = append(s.out, line...)
		if len(content) == 0 {
			s.skipping, s.hasData, s.event = false, false, ""
			s.data = s.data[:0]
		}
		return
	}
	if len(content) == 0 {
		if s.hasData {
			s.dispatch()
			s.out = append(s.out, s.held...)
			s.held = s.held[:0]
			s.release()
		}
		s.out = append(s.out, line...)
		s.hasData, s.event = false, ""
		s.data = s.data[:0]
		return
	}
	field, value := content, []byte(nil)
	if content[0] != ':' {
		if i := bytes.IndexByte(content, ':'); i >= 0 {
			field, value = content[:i], bytes.TrimPrefix(content[i+1:], []byte(" "))
		}
		switch string(field) {
		case "data":
			s.hasData = true
			s.data = append(append(s.data, value...), '\n')
		case "event":
			s.event = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
			}
		}
	}
	if s.hasData {
		s.held = append(s.held, line...)
		fits := s.p.mem.take(int64(len(line)))
		if fits {
			s.reserved += int64(len(line))
		}
		if len(s.held) > s.max || !fits {
			if fits {
				s.p.notice(s.h, "an SSE event larger than %d bytes was forwarded without being inspected", s.max)
			} else {
				s.p.notice(s.h, "an SSE event was forwarded without being inspected: the proxy holds %d bytes of messages already, its limit", s.p.mem.max)
			}
			s.out = append(s.out, s.held...)
			s.held = s.held[:0]
			s.release()
			s.skipping = true
		}
		return
	}
	s.out = append(s.out, line...)
}

// dispatch looks at a complete event (WHATWG: its data lines joined, the last newline dropped).
func (s *sseRelay) dispatch() {
	data := bytes.TrimSuffix(s.data, []byte("\n"))
	if s.event != "" && s.event != "message" {
		return // not an MCP message
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return // a priming event
	}
	if s.p.rec != nil {
		l := frameLine(data)
		l.Kind, l.SSE = wirelog.KindSSEEvent, "id="+s.lastID
		s.p.rec.line(false, s.h.label(), l)
	}
	s.p.fromServer(s.h, s.x, data)
}
