package rpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// sseEvent is one dispatched Server-Sent Event.
type sseEvent struct {
	ID    string
	Event string
	Data  []byte
	// Retry is the reconnection delay the server asked for; HasRetry tells whether it did.
	Retry    time.Duration
	HasRetry bool
}

// sseReader parses a text/event-stream body following the WHATWG HTML "Server-sent events"
// parsing rules (§9.2.6 Interpreting an event stream): lines end in CRLF, LF or CR; a line
// starting with ':' is a comment (C26-HTTP: keep-alive comments MUST be ignored); "data" lines
// of one event are joined with '\n'; an empty line dispatches; an event without data is not
// dispatched but its id still counts; an event cut off by the end of the stream is dropped.
//
// Unlike a browser it caps every line at maxLine bytes and every event's data at maxEvent bytes,
// so a hostile server cannot make mcptask buffer without bound (ErrTooLarge).
type sseReader struct {
	r        *bufio.Reader
	maxLine  int
	maxEvent int
	started  bool
	// lastID is the last event id seen, to be sent as Last-Event-ID on reconnection.
	lastID string
	sawID  bool
	// retry is the last reconnection delay the server set, on any event.
	retry    time.Duration
	hasRetry bool
	// pendingCR is set when the previous line ended in a lone CR, so that a following LF
	// belongs to the same line break.
	pendingCR bool
	line      []byte
}

func newSSEReader(r io.Reader, maxLine, maxEvent int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32*1024), maxLine: maxLine, maxEvent: maxEvent}
}

// readLine returns the next line without its terminator. At the end of the stream it returns
// the unterminated remainder (if any) with io.EOF. It copies what is buffered up to the next
// line break at once, not byte by byte: a hostile line of many megabytes costs a few copies.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		if _, err := s.r.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				return s.line, io.EOF
			}
			return nil, err
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.pendingCR {
			s.pendingCR = false
			if buf[0] == '\n' { // the LF of a CRLF whose CR ended the previous line
				_, _ = s.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		n := i
		if i < 0 {
			n = len(buf)
		}
		if len(s.line)+n > s.maxLine {
			return nil, fmt.Errorf("%w: SSE line longer than %d bytes", ErrTooLarge, s.maxLine)
		}
		s.line = append(s.line, buf[:n]...)
		if i < 0 {
			_, _ = s.r.Discard(n)
			continue
		}
		s.pendingCR = buf[i] == '\r'
		_, _ = s.r.Discard(n + 1)
		return s.line, nil
	}
}

// Next returns the next event that carries data. It returns io.EOF when the stream ends
// (dropping an unterminated event, as the standard says).
func (s *sseReader) Next() (sseEvent, error) {
	var ev sseEvent
	var data []byte
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if !s.started {
			s.started = true
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		if len(line) == 0 {
			if !hasData {
				ev = sseEvent{}
				continue
			}
			ev.Data = bytes.TrimSuffix(data, []byte("\n"))
			ev.ID = s.lastID
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "data":
			if len(data)+len(value)+1 > s.maxEvent {
				return sseEvent{}, fmt.Errorf("%w: SSE event larger than %d bytes", ErrTooLarge, s.maxEvent)
			}
			data = append(data, value...)
			data = append(data, '\n')
			hasData = true
		case "event":
			ev.Event = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
				s.sawID = true
			}
		case "retry":
			if n, err := strconv.ParseUint(string(value), 10, 31); err == nil && isDigits(value) {
				ev.Retry = time.Duration(n) * time.Millisecond
				ev.HasRetry = true
				s.retry, s.hasRetry = ev.Retry, true
			}
		}
	}
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
