package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// The file layout is JSON with one task per line:
//
//	{"version":2,"tasks":[
//	{"taskId":"…","server":{…},…},
//	{"taskId":"…",…}
//	]}
//
// It is valid JSON that people and jq can read, and it lets a one-record change (the common
// case: a status update while thousands of tasks wait) find its line by the taskId prefix and
// copy every other line untouched, without decoding the whole ledger. A file in any other
// JSON layout (edited by hand, say) is read with the general decoder and rewritten in this one.
//
// A new record is added without rewriting the file (append.go): its line, led by a comma, is
// written over the closing "]}" with the "]}" after it, and the file is fsynced:
//
//	{"taskId":"…",…}
//	,{"taskId":"…",…}
//	]}
//
// which is still valid JSON. Such a line may repeat a task already in the file (Put replaces),
// so readers keep the last line of each task and server, at the place of its first, and the
// next rewrite keeps only that one. A writer killed while adding a line leaves a file whose
// last line is cut short and whose "]}" is gone: readers ignore that line, and the next
// writer keeps it aside (tasks.json.torn-<time>) before it rewrites the ledger.

// rawLedger is the ledger as undecoded record lines, in file order.
type rawLedger struct {
	lines [][]byte
	// added indexes the lines led by a comma: the ones added since the last rewrite, the only
	// ones that can repeat an earlier record.
	added []int
	// unterminated is set when the file lacks its closing "]}": a writer died adding a line.
	// torn is then what follows the last complete line (nil when that line was complete).
	unterminated bool
	torn         []byte
}

const headerPrefix = `{"version":`

// parseLedger splits data into record lines and returns the format version.
func parseLedger(data []byte) (*rawLedger, int, error) {
	if l, v, ok := parseLines(data); ok {
		return l, v, nil
	}
	// General layout.
	var f struct {
		Version int               `json:"version"`
		Tasks   []json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, 0, err
	}
	if f.Version == 0 {
		return nil, 0, errors.New("no version field")
	}
	l := &rawLedger{}
	if f.Version > Version {
		return l, f.Version, nil
	}
	for _, t := range f.Tasks {
		var r Record
		if err := json.Unmarshal(t, &r); err != nil {
			return nil, 0, fmt.Errorf("task record: %w", err)
		}
		b, err := encodeRecord(r)
		if err != nil {
			return nil, 0, err
		}
		l.lines = append(l.lines, b)
	}
	return l, f.Version, nil
}

// parseLines is the fast path for the layout mcptask writes. It reports ok=false for
// anything else, so that the general decoder decides.
func parseLines(data []byte) (*rawLedger, int, bool) {
	// NULs at the end are a file system's doing: a file extended by a write whose data never
	// landed (append.go).
	data = bytes.TrimRight(data, " \t\r\n\x00")
	first, rest, found := bytes.Cut(data, []byte("\n"))
	if !found || !bytes.HasPrefix(first, []byte(headerPrefix)) || !bytes.HasSuffix(first, []byte(`,"tasks":[`)) {
		return nil, 0, false
	}
	v, err := strconv.Atoi(string(first[len(headerPrefix) : len(first)-len(`,"tasks":[`)]))
	if err != nil || v <= 0 {
		return nil, 0, false
	}
	l := &rawLedger{}
	// The closing "]}" stands on a line of its own: a record line cannot end in a newline
	// and "]}" (a newline in a JSON string is escaped), so a line cut short is never taken
	// for the end of the file.
	closed := bytes.Equal(rest, []byte("]}")) || bytes.HasSuffix(rest, []byte("\n]}"))
	body := rest
	if closed {
		body = rest[:len(rest)-2]
	} else {
		// No closing "]}": a writer was killed while adding its line (append.go). Only the
		// last line can be damaged; every line before it was complete before that write.
		l.unterminated = true
		i := bytes.LastIndexByte(rest, '\n')
		last := rest[i+1:]
		body = rest[:i+1]
		switch {
		case bytes.Equal(bytes.TrimSpace(last), []byte("]")):
			// The record line was written whole; only the "}" after it is missing.
		case completeLine(last):
			body = rest
		default:
			l.torn = last
		}
	}
	for len(body) > 0 {
		var line []byte
		line, body, _ = bytes.Cut(body, []byte("\n"))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		added := line[0] == ','
		line = bytes.TrimPrefix(bytes.TrimSuffix(line, []byte(",")), []byte(","))
		if len(line) == 0 || line[0] != '{' || line[len(line)-1] != '}' {
			return nil, 0, false
		}
		if added {
			l.added = append(l.added, len(l.lines))
		}
		l.lines = append(l.lines, line)
	}
	return l, v, true
}

// completeLine reports whether line, the last of a file without its "]}", is a whole record
// line: a line cut short is never a JSON object that starts like a record.
func completeLine(line []byte) bool {
	line = bytes.TrimPrefix(bytes.TrimSuffix(bytes.TrimSpace(line), []byte(",")), []byte(","))
	_, ok := linePrefix(line)
	return ok && json.Valid(line)
}

// dedupe keeps one line per task and server: the last one written, at the place of the first.
// Only added lines (led by a comma) can repeat a record, so a ledger without them costs
// nothing here.
func (l *rawLedger) dedupe() error {
	if len(l.added) == 0 {
		return nil
	}
	added := make(map[string]bool, len(l.added))
	for _, i := range l.added {
		if p, ok := linePrefix(l.lines[i]); ok {
			added[string(p)] = true
		}
	}
	groups := map[string][]int{}
	for i, line := range l.lines {
		if p, ok := linePrefix(line); ok && added[string(p)] {
			groups[string(p)] = append(groups[string(p)], i)
		}
	}
	drop := false
	for _, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		first := map[string]int{} // server key -> index of its first line
		for _, i := range idx {
			var r struct {
				Server Server `json:"server"`
			}
			if err := json.Unmarshal(l.lines[i], &r); err != nil {
				return fmt.Errorf("task record %d: %w", i+1, err)
			}
			k := r.Server.Key()
			if j, ok := first[k]; ok {
				l.lines[j] = l.lines[i]
				l.lines[i] = nil
				drop = true
			} else {
				first[k] = i
			}
		}
	}
	if drop {
		l.lines = slices.DeleteFunc(l.lines, func(line []byte) bool { return line == nil })
	}
	return nil
}

// bytes renders the ledger in the line layout.
func (l *rawLedger) bytes() []byte {
	n := 64
	for _, line := range l.lines {
		n += len(line) + 2
	}
	out := make([]byte, 0, n)
	out = append(out, headerPrefix...)
	out = strconv.AppendInt(out, Version, 10)
	out = append(out, `,"tasks":[`...)
	out = append(out, '\n')
	for i, line := range l.lines {
		out = append(out, line...)
		if i < len(l.lines)-1 {
			out = append(out, ',')
		}
		out = append(out, '\n')
	}
	return append(out, "]}\n"...)
}

// idPrefix is how a record line of task id starts (taskId is Record's first field).
func idPrefix(id string) []byte {
	q, _ := json.Marshal(id)
	return append(append([]byte(`{"taskId":`), q...), ',')
}

// linePrefix returns the {"taskId":"…", start of a record line, as idPrefix writes it.
func linePrefix(line []byte) ([]byte, bool) {
	const head = `{"taskId":"`
	if !bytes.HasPrefix(line, []byte(head)) {
		return nil, false
	}
	for i := len(head); i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '"':
			if i+1 < len(line) && line[i+1] == ',' {
				return line[:i+2], true
			}
			return nil, false
		}
	}
	return nil, false
}

// find returns the index and decoded record of (id, key), or -1.
func (l *rawLedger) find(id, key string) (int, *Record, error) {
	p := idPrefix(id)
	for i, line := range l.lines {
		if !bytes.HasPrefix(line, p) {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return -1, nil, fmt.Errorf("task record: %w", err)
		}
		if r.Server.Key() == key {
			return i, &r, nil
		}
	}
	return -1, nil, nil
}

// decodeAll decodes every line, spread over the CPUs: records are independent.
func (l *rawLedger) decodeAll() ([]Record, error) {
	out := make([]Record, len(l.lines))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(l.lines)/256))
	var wg sync.WaitGroup
	errs := make([]error, workers)
	chunk := (len(l.lines) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(l.lines))
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				if err := json.Unmarshal(l.lines[i], &out[i]); err != nil {
					errs[w] = fmt.Errorf("task record %d: %w", i+1, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// encodeRecord renders one record as one line. The free texts a server or a host chose (the
// status message, the last error, the tool name, who created the task) are cut to
// termsafe.Limit first, so one hostile task cannot grow the ledger, which every mcptask
// process reads whole, without bound (SECURITY.md, class 8). The task id is bounded where it
// enters (rpc.CheckTaskID).
func encodeRecord(r Record) ([]byte, error) {
	r.StatusMessage = termsafe.Cut(r.StatusMessage)
	r.LastError = termsafe.Cut(r.LastError)
	r.Tool = termsafe.Cut(r.Tool)
	r.Via = termsafe.Cut(r.Via)
	r.Protocol = termsafe.Cut(r.Protocol)
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode task record: %w", err)
	}
	return b, nil
}
