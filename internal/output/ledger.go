package output

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcptask/mcptask/internal/config"
	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// The tables and documents of the commands that show the ledger (list, adopt) and the named
// servers (servers, servers trust).

// Listing is what list shows: the ledger's records chosen (Records, of the whole Ledger) and,
// WithRemote, a server's own tasks/list (Remote, Server's), marking the tasks the ledger knows;
// Warnings say which records a refresh could not bring up to date.
type Listing struct {
	Records, Ledger []state.Record
	WithRemote      bool
	Remote          []*rpc.Task
	Server          string
	Warnings        []string
	// Style is how the text table writes each status (plain unless on a terminal).
	Style StatusStyle
}

// Doc is the list document: the records, each saying when its status was seen ("seenAt",
// also for a record written before the ledger kept it), and a server's list as the server
// sent it.
func (l Listing) Doc() Envelope {
	recs := make([]state.Record, len(l.Records))
	for i, r := range l.Records {
		r.SeenAt = r.Seen()
		recs[i] = r
	}
	env := Envelope{Type: "list", Records: recs, Warnings: l.Warnings}
	if l.WithRemote {
		raws := make([]json.RawMessage, 0, len(l.Remote))
		for _, t := range l.Remote {
			raws = append(raws, t.Raw)
		}
		env.Remote, _ = json.Marshal(raws)
		// "server" is the server whose tasks/list is shown; the ledger alone spans every
		// server, so it names none (each record carries its own).
		env.Server = l.Server
	}
	return env
}

// Text writes the table of list: the ledger's records, then (WithRemote) the server's list.
func (l Listing) Text(w io.Writer, now time.Time) error {
	if err := l.LedgerText(w, now); err != nil {
		return err
	}
	if !l.WithRemote {
		return nil
	}
	return l.RemoteTable(w, now).Page(l.Remote)
}

// LedgerText writes the table of the ledger's records (nothing when there are none).
func (l Listing) LedgerText(w io.Writer, now time.Time) error {
	recs := l.Records
	if len(recs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	// A VIA column appears when a host created some of the tasks through `mcptask proxy`.
	via := slices.ContainsFunc(recs, func(r state.Record) bool { return r.Via != "" })
	viaHead, viaCell := "", func(state.Record) string { return "" }
	if via {
		viaHead = "\tVIA"
		viaCell = func(r state.Record) string {
			if r.Via == "" {
				return "\tmcptask"
			}
			return "\t" + termsafe.Line(r.Via)
		}
	}
	fmt.Fprintln(tw, "ID\tSERVER\tTOOL\tERA"+viaHead+"\t"+l.Style.Head("STATUS")+"\tAGE\tMESSAGE")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%s\t%s\t%s\n",
			termsafe.Line(r.TaskID), termsafe.Line(Truncate(r.Server.Display(), 40)), termsafe.Line(termsafe.Cut(r.Tool)), r.Era, viaCell(r),
			l.Style.Cell(termsafe.Line(recordStatus(r, now)))+seenAgo(r, now), human.Duration(now.Sub(r.CreatedAt)), termsafe.Line(Truncate(recordMessage(r), 50)))
	}
	return tw.Flush()
}

// RemoteTable writes a server's tasks/list (the section "ON THE SERVER" of Listing.Text) a
// page at a time, as the pages arrive: a list of thousands of pages is never held, and a
// person sees its first rows while the rest is still coming. Columns line up within a page.
type RemoteTable struct {
	w       io.Writer
	now     time.Time
	style   StatusStyle
	server  string
	records bool
	known   map[string]bool
	started bool
}

// RemoteTable is the writer of l's server section to w; it writes nothing until its first Page.
func (l Listing) RemoteTable(w io.Writer, now time.Time) *RemoteTable {
	known := map[string]bool{}
	for _, r := range l.Ledger {
		known[r.TaskID] = true
	}
	return &RemoteTable{w: w, now: now, style: l.Style, server: l.Server, records: len(l.Records) > 0, known: known}
}

// Page writes the rows of one page of tasks (the first page after the section's heading,
// even when it has none), marking the tasks the ledger knows.
func (t *RemoteTable) Page(ts []*rpc.Task) error {
	tw := tabwriter.NewWriter(t.w, 2, 4, 2, ' ', 0)
	if !t.started {
		t.started = true
		if t.records {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "ON THE SERVER (%s)\n", termsafe.Line(t.server))
		fmt.Fprintln(tw, "ID\t"+t.style.Head("STATUS")+"\tAGE\tIN LEDGER\tMESSAGE")
	}
	for _, task := range ts {
		in := "no"
		if t.known[task.TaskID] {
			in = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termsafe.Line(task.TaskID), t.style.Cell(termsafe.Line(string(task.Status))), human.Duration(t.now.Sub(task.CreatedAt)), in, termsafe.Line(Truncate(task.StatusMessage, 50)))
	}
	return tw.Flush()
}

// recordStatus is a record's status as a user should read it: expired wins.
func recordStatus(r state.Record, now time.Time) string { return r.StatusAt(now) }

// seenAgo says when the status of r was seen: " · 2m04s ago". An expired task says nothing
// more: its status is what the TTL or the server said, not a sighting to date.
func seenAgo(r state.Record, now time.Time) string {
	seen := r.Seen()
	switch {
	case seen.IsZero() || r.ExpiredAt(now) && !r.Terminal():
		return ""
	case now.Sub(seen) < time.Second:
		return " · just now"
	}
	return " · " + human.Duration(now.Sub(seen)) + " ago"
}

// recordMessage is the last message of a record, or what went wrong last time.
func recordMessage(r state.Record) string {
	if r.LastError != "" {
		return "! " + r.LastError
	}
	return r.StatusMessage
}

// Truncate cuts s to n runes, the last one an ellipsis (a table's column).
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// NewPrune is the prune document of the records removed.
func NewPrune(removed []state.Record) Prune {
	doc := Prune{Type: "prune", Removed: make([]string, 0, len(removed))}
	for _, r := range removed {
		doc.Removed = append(doc.Removed, r.TaskID)
	}
	return doc
}

// NewAdopt is the adopt document of what adopting each record did.
func NewAdopt(done []ledger.Adoption) Adopt {
	doc := Adopt{Type: "adopt"}
	for _, a := range done {
		e := AdoptTask{TaskID: a.Record.TaskID, Server: a.Record.Server.Display(), Grants: a.Record.Server.Grants(), Adopted: a.Adopted}
		if e.Grants == nil {
			e.Grants = []string{}
		}
		doc.Tasks = append(doc.Tasks, e)
	}
	return doc
}

// Text tells a person what adopt did with each record, and what resuming it will do.
func (doc Adopt) Text(w io.Writer) error {
	for _, e := range doc.Tasks {
		what := "already yours"
		if e.Adopted {
			what = "adopted"
		}
		fmt.Fprintf(w, "task %s on %s: %s", termsafe.Line(e.TaskID), termsafe.Line(e.Server), what)
		if len(e.Grants) > 0 {
			fmt.Fprintf(w, "; resuming it will %s", termsafe.Line(strings.Join(e.Grants, ", ")))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// NewServers is the servers document of the named servers servers.
func NewServers(servers []config.Server) Servers {
	doc := Servers{Type: "servers", Servers: make([]Server, 0, len(servers))}
	for _, s := range servers {
		e := Server{Name: s.Name, Source: s.Source, Scope: s.Scope.String(), Trust: s.TrustLabel(), URL: s.URL, ShadowedBy: s.ShadowedBy}
		if s.URL == "" {
			e.Command = append([]string{s.Command}, s.Args...)
		}
		doc.Servers = append(doc.Servers, e)
	}
	return doc
}

// ServersTable writes the table of servers.
func ServersTable(w io.Writer, servers []config.Server) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSERVER\tTRUST\tSOURCE")
	for _, s := range servers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termsafe.Line(s.Name), termsafe.Line(Truncate(s.Target(), 60)), s.TrustLabel(), termsafe.Line(s.Source))
	}
	return tw.Flush()
}

// TrustChanged tells a person that s is now trusted (and what it runs or reaches, with the
// names, never the values, of the headers and environment variables it is given) or no
// longer trusted.
func TrustChanged(w io.Writer, s config.Server, trust bool) {
	if !trust {
		fmt.Fprintf(w, "untrusted server %q of %s\n", termsafe.Line(s.Name), termsafe.Line(s.Source))
		return
	}
	fmt.Fprintf(w, "trusted server %q of %s: %s", termsafe.Line(s.Name), termsafe.Line(s.Source), termsafe.Line(s.Target()))
	// Each header and variable with the ${VAR}s its value takes from the environment: the
	// names alone do not say which secret goes where.
	withRefs := func(m map[string]string) string {
		var parts []string
		for _, k := range SortedKeys(m) {
			if refs := config.VarRefs(m[k]); len(refs) > 0 {
				k += " (from " + strings.Join(refs, ", ") + ")"
			}
			parts = append(parts, k)
		}
		return termsafe.Line(strings.Join(parts, ", "))
	}
	if len(s.Headers) > 0 {
		fmt.Fprintf(w, "; headers %s", withRefs(s.Headers))
	}
	if len(s.Env) > 0 {
		fmt.Fprintf(w, "; env %s", withRefs(s.Env))
	}
	if s.ShadowedBy != "" {
		fmt.Fprintf(w, " (but %s defines the name too, and wins)", s.ShadowedBy)
	}
	fmt.Fprintln(w)
}
