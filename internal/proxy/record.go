package proxy

import (
	"io"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/wirelog"
)

// Directions of a proxied message, as --record writes them.
const (
	ToServer = "host-to-server"
	ToHost   = "server-to-host"
)

// recorder writes the --record NDJSON stream and the --trace text of the proxy: wirelog lines,
// those of the client's recorder (internal/rpc: http-request, http-response, frame,
// sse-event, http-exchange, violation) and the proxy's notices, where "dir" reads as in a
// recording of the host itself (send: towards the server, recv: from it); every line also
// says its direction and which peer sent it, and names the host. wirelog.Log redacts every
// line before either stream sees it.
type recorder struct {
	log *wirelog.Log
}

func newRecorder(w, trace io.Writer, red *redact.Redactor, secret []string, now func() time.Time) *recorder {
	if w == nil && trace == nil {
		return nil
	}
	if red == nil {
		red = redact.New(secret)
	}
	return &recorder{log: &wirelog.Log{Record: w, Trace: trace, Redact: red, Now: now}}
}

// line writes one record line. toServer says which way the message went.
func (r *recorder) line(toServer bool, host string, l *wirelog.Line) {
	if r == nil {
		return
	}
	l.Dir, l.Direction = wirelog.DirRecv, ToHost
	peer := "server"
	if toServer {
		l.Dir, l.Direction, peer = wirelog.DirSend, ToServer, "host"
	}
	if l.Peer == "" {
		l.Peer = peer // a violation names the peer that broke the rule instead
	}
	l.Host = host
	r.log.Write(l)
}

// frameLine is the record's line of one JSON-RPC message, with the task it names ("" when
// none).
func frameLine(msg []byte) *wirelog.Line {
	return &wirelog.Line{Kind: wirelog.KindFrame, Body: wirelog.Body(msg), TaskID: new(wirelog.TaskIDOf(msg))}
}
