// Package output is mcptask's one printer and its JSON contract. A command builds what it has to
// say, and the Printer, chosen once from --json and --jsonl, decides how it is shown: text for a
// person, one JSON document (--json) or one event per line (--jsonl). The typed envelope, event
// and document structs in this package are the JSON contract that the README and docs/guide
// describe (a test checks the prose against them); fields are only ever added. It exists so
// that no command writes its own JSON shape or decides by itself which form to print.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcptask/mcptask/internal/mdterm"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Mode is how results are printed.
type Mode int

const (
	// Text is for a person: results as text, progress lines on stderr.
	Text Mode = iota
	// JSON writes one JSON document on stdout (--json).
	JSON
	// JSONL streams one JSON event per line on stdout (--jsonl); the end is as with JSON.
	JSONL
)

// Printer writes a command's results on Out in the form its Mode asks for.
type Printer struct {
	Out  io.Writer
	Mode Mode
	// Doc, when set, says Out is a person's terminal: a text result that reads as Markdown is
	// shown as a document there (ResultText). Piped, results are printed as they came.
	Doc *mdterm.Options
}

// ResultText is the text form of a described outcome (env and text, as Describe or Called
// give them) for Out: on a terminal (Doc) a Markdown text result drawn as a document, else
// text as it is.
func (p *Printer) ResultText(env *Envelope, text []byte) []byte {
	if p.Doc == nil || p.JSON() || env == nil || env.Type != "result" || len(env.Result) == 0 {
		return text
	}
	tr, err := rpc.DecodeToolResult(env.Result)
	if err != nil {
		return text
	}
	var b bytes.Buffer
	toolResult(&b, tr, p.Doc)
	return b.Bytes()
}

// New returns the printer for the --json and --jsonl flags (--jsonl wins).
func New(out io.Writer, json, jsonl bool) *Printer {
	p := &Printer{Out: out}
	switch {
	case jsonl:
		p.Mode = JSONL
	case json:
		p.Mode = JSON
	}
	return p
}

// JSON reports whether results are written as JSON (--json or --jsonl).
func (p *Printer) JSON() bool { return p.Mode != Text }

// Stream reports whether events are streamed as they come (--jsonl).
func (p *Printer) Stream() bool { return p.Mode == JSONL }

// Print writes doc as one JSON document, or, for a person, calls text. A nil doc or text
// means that form has nothing to show.
func (p *Printer) Print(doc any, text func(io.Writer) error) error {
	if p.JSON() {
		if doc == nil {
			return nil
		}
		return WriteJSON(p.Out, doc)
	}
	if text == nil {
		return nil
	}
	return text(p.Out)
}

// WriteJSON writes v as one line of JSON.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode JSON output: %w", err)
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
