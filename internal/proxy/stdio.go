package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcptask/mcptask/internal/iostreams"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// StdioOptions configure the stdio relay: the proxy is itself a stdio server to its host, and
// starts the real server as its child.
type StdioOptions struct {
	// Argv is the server command and its arguments; Dir its working directory ("" = ours).
	Argv []string
	Dir  string
	// Env holds extra KEY=VALUE pairs for the server (a named server's config env); the
	// server inherits the proxy's own environment too, as it would the host's.
	Env []string
	// In is what the host writes (the proxy's stdin), Out what the host reads (its stdout).
	In  io.Reader
	Out io.Writer
	// Stderr receives the server's stderr, line by line and cleaned by termsafe (the proxy's
	// stderr, which the host keeps as the server's log).
	Stderr io.Writer
	// ShutdownWait is how long the server gets after its stdin closes, and after SIGTERM,
	// before the next step of C25-LIFE §Shutdown (2 s each).
	ShutdownWait time.Duration
}

// RunStdio starts the server and relays newline-delimited JSON-RPC frames both ways, unchanged,
// until the server exits or the host closes its end (then the server is shut down: its stdin
// closed, SIGTERM, SIGKILL), or ctx ends (the same). It returns the server's exit code.
func (p *Proxy) RunStdio(ctx context.Context, o StdioOptions) (int, error) {
	if len(o.Argv) == 0 || o.Argv[0] == "" {
		return 0, errors.New("empty server command")
	}
	if o.ShutdownWait <= 0 {
		o.ShutdownWait = 2 * time.Second
	}
	c, err := startChild(o)
	if err != nil {
		return 0, err
	}
	h := p.hostFor("stdio", "stdio host")
	p.mu.Lock()
	h.stdio = true
	p.mu.Unlock()
	// Whole frames only, one at a time: the bridge writes to both streams too.
	toServer, toHost := iostreams.NewLocked(c.stdin), iostreams.NewLocked(o.Out)
	if p.bridge != nil {
		p.bridge.attachStdio(ctx, h, toServer, toHost)
	}

	var logs sync.WaitGroup
	logs.Add(1)
	go func() {
		defer logs.Done()
		copyLines(c.stderr, o.Stderr)
	}()
	hostDone := make(chan error, 1)
	go func() {
		err := p.relay(o.In, toServer, h, true)
		if p.bridge != nil {
			p.bridge.hostGone(h) // its bridged tasks stay in the ledger
		}
		c.stdin.Close() // the host is gone: the server sees its stdin end, as it would have
		hostDone <- err
	}()
	serverDone := make(chan error, 1)
	go func() { serverDone <- p.relay(c.stdout, toHost, h, false) }()
	p.awaitChild(ctx, h, c, hostDone, serverDone, o.ShutdownWait)
	logs.Wait()
	return exitCode(c.cmd.Wait())
}

// stdioChild is the server process of the stdio relay and its three pipes.
type stdioChild struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr io.ReadCloser
}

// startChild starts the server command of o in its own process group.
func startChild(o StdioOptions) (*stdioChild, error) {
	cmd := exec.Command(o.Argv[0], o.Argv[1:]...)
	cmd.Dir = o.Dir
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	setProcessGroup(cmd)
	c := &stdioChild{cmd: cmd}
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if c.stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if c.stderr, err = cmd.StderrPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Argv[0], err)
	}
	return c, nil
}

// awaitChild waits until the server's stdout ends (serverDone). Once the host closed its end
// (hostDone) or ctx ended, the server is shut down the C25-LIFE §Shutdown way, a step each
// wait: its stdin closed, then SIGTERM, then SIGKILL.
func (p *Proxy) awaitChild(ctx context.Context, h *host, c *stdioChild, hostDone, serverDone <-chan error, wait time.Duration) {
	stopping := false
	var timer <-chan time.Time
	signals := []os.Signal{syscall.SIGTERM, os.Kill}
	step := func() {
		if !stopping {
			stopping = true
			c.stdin.Close()
		} else if len(signals) > 0 {
			_ = c.cmd.Process.Signal(signals[0])
			signals = signals[1:]
		}
		timer = time.After(wait)
	}
	ctxDone := ctx.Done()
	for {
		select {
		case <-serverDone:
			return
		case err := <-hostDone:
			hostDone = nil
			if err != nil && !stopping {
				p.notice(h, "reading from the host failed: %v", err)
			}
			step()
		case <-ctxDone:
			ctxDone = nil
			step()
		case <-timer:
			step()
		}
	}
}

// exitCode is the server's exit code from its Wait; 0 when the shutdown sequence stopped it.
func exitCode(werr error) (int, error) {
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if code := ee.ExitCode(); code >= 0 {
			return code, nil
		}
		return 0, nil // stopped by the shutdown sequence
	}
	return 0, werr
}

// relay copies lines from src to dst, looking at each one first. A frame from the server that
// creates a task is written to the ledger before it is passed on.
func (p *Proxy) relay(src io.Reader, dst io.Writer, h *host, toServer bool) error {
	br := bufio.NewReaderSize(src, 64<<10)
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			line = append(line, chunk...)
			if len(line) > p.opts.MaxInspect {
				if !skipping {
					p.notice(h, "a frame larger than %d bytes was forwarded without being inspected", p.opts.MaxInspect)
				}
				skipping = true
				if _, werr := dst.Write(line); werr != nil {
					return werr
				}
				line = line[:0]
			}
			continue
		}
		line = append(line, chunk...)
		if len(line) > 0 {
			out := line
			if !skipping {
				out = p.frame(h, line, toServer)
			}
			if out != nil {
				if _, werr := dst.Write(out); werr != nil {
					return werr
				}
			}
		}
		skipping = false
		line = line[:0]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// frame looks at one stdio line and returns what to pass on: the line, or with the bridge on
// (bridge_stdio.go) a line it rewrote, or nil for a frame of its own.
func (p *Proxy) frame(h *host, line []byte, toServer bool) []byte {
	msg := bytes.TrimSpace(line)
	if len(msg) == 0 {
		return line
	}
	if p.rec != nil {
		p.rec.line(toServer, h.label(), frameLine(msg))
	}
	if p.bridge != nil {
		out := p.bridge.stdioFrame(h, msg, toServer)
		if out == nil {
			return nil
		}
		if len(out) != len(msg) || &out[0] != &msg[0] {
			return append(out, '\n')
		}
		return line
	}
	if toServer {
		p.fromHost(h, msg)
		return line
	}
	p.fromServer(h, nil, msg)
	return line
}

// copyLines copies r to w a line at a time, so that the server's log lines and the proxy's
// own lines never interleave mid-line.
func copyLines(r io.Reader, w io.Writer) {
	br := bufio.NewReaderSize(r, 16<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && w != nil {
			// The server's stderr is its text, and the proxy's stderr is often a terminal:
			// no escape sequence or control of the server's reaches it (SECURITY.md §2).
			_, _ = io.WriteString(w, termsafe.String(string(line)))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
