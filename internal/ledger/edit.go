package ledger

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/taskstatus"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// What the commands that pick records by task id (forget, adopt, and every command that
// reaches a task's server again) do with them. key is the ledger key of the server the
// command line names, "" when it names none: a record is meant when its task id matches and,
// with a key, its server too.

// Forget removes the records of the tasks ids from st; an id may be a unique prefix of a task
// id (Match). forgotten lists the whole ids of the tasks removed, missing the ids given that
// named no record (a repeated id is missing the second time), in the order of ids. An
// ambiguous prefix removes nothing and is a usage error.
func Forget(st *state.Store, ids []string, key string) (forgotten, missing []string, err error) {
	forgotten = []string{}
	err = st.Update(func(file *state.File) error {
		for _, id := range ids {
			recs, err := Match(file.Tasks, id, key)
			if err != nil {
				return err
			}
			whole := id
			if len(recs) > 0 {
				whole = recs[0].TaskID
			}
			n := len(file.Tasks)
			file.Tasks = slices.DeleteFunc(file.Tasks, func(r state.Record) bool {
				return r.TaskID == whole && (key == "" || r.Server.Key() == key)
			})
			if len(file.Tasks) == n {
				missing = append(missing, id)
			} else {
				forgotten = append(forgotten, whole)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return forgotten, missing, nil
}

// Adoption is what adopting one record did.
type Adoption struct {
	Record state.Record
	// Adopted is false when the record's signature already checked.
	Adopted bool
}

// Adopt signs with k the records of the tasks ids whose signature does not check: the records
// a ledger restored from elsewhere holds, which may start a command or send a secret once
// adopted (state/sign.go). An id may be a unique prefix of a task id (Match); missing lists
// the ids with no record.
func Adopt(st *state.Store, k *state.Keyring, ids []string, key string) (done []Adoption, missing []string, err error) {
	file, err := st.Load()
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		recs, err := Match(file.Tasks, id, key)
		if err != nil {
			return nil, nil, err
		}
		n := 0
		for _, r := range recs {
			if key != "" && r.Server.Key() != key {
				continue
			}
			n++
			a, err := adopt(st, k, r)
			if err != nil {
				return nil, nil, fmt.Errorf("adopt task %s: %w", id, err)
			}
			done = append(done, a)
		}
		if n == 0 {
			missing = append(missing, id)
		}
	}
	return done, missing, nil
}

// adopt signs r with k when its signature does not check.
func adopt(st *state.Store, k *state.Keyring, r state.Record) (Adoption, error) {
	if k.Check(r) == nil {
		return Adoption{Record: r}, nil
	}
	signed := r
	if err := k.Sign(&signed); err != nil {
		return Adoption{Record: r}, err
	}
	// Only the record shown is signed: one changed since is left alone.
	err := st.Patch(r.Server.Key(), r.TaskID, func(cur *state.Record) {
		if reflect.DeepEqual(cur.Server, signed.Server) {
			cur.MAC = signed.MAC
		}
	})
	return Adoption{Record: r, Adopted: err == nil}, err
}

// AmbiguousError is a task id the ledger holds for several servers, when the command line
// named none.
type AmbiguousError struct {
	TaskID  string
	Servers []string
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "task id %s is in the ledger for %d servers; choose one with --server or --stdio:", e.TaskID, len(e.Servers))
	for _, s := range e.Servers {
		fmt.Fprintf(&b, "\n  %s", s)
	}
	return b.String()
}

// Pick is the record of task id that a command means, of recs (the ledger's records of id):
// the one on the server key names, else the only one. nil means none; several with no key is
// an AmbiguousError.
func Pick(id string, recs []state.Record, key string) (*state.Record, error) {
	if key != "" {
		i := slices.IndexFunc(recs, func(r state.Record) bool { return r.Server.Key() == key })
		if i < 0 {
			return nil, nil
		}
		return &recs[i], nil
	}
	switch len(recs) {
	case 0:
		return nil, nil
	case 1:
		return &recs[0], nil
	}
	e := &AmbiguousError{TaskID: id}
	for _, r := range recs {
		e.Servers = append(e.Servers, r.Server.Display())
	}
	return nil, e
}

// Completions are the shell's candidates for a task id that starts with prefix: "id\tdescription",
// the description the record's real state at now ("expired", not the "working" last seen),
// when it was seen, its tool and server, without parentheses (shells put the description in
// their own). The shell inserts what it is offered into the command line, so an id that is not
// plain visible ASCII (a ledger from elsewhere, an older mcptask) is not offered, and the
// description is cleaned and cut.
func Completions(recs []state.Record, prefix string, now time.Time) []string {
	var out []string
	for _, r := range recs {
		if rpc.CheckTaskID(r.TaskID) != nil || !strings.HasPrefix(r.TaskID, prefix) {
			continue
		}
		status := r.StatusAt(now)
		if seen := r.Seen(); status != taskstatus.Expired && !seen.IsZero() {
			status += ", seen " + human.Duration(now.Sub(seen)) + " ago"
		}
		desc := termsafe.Line(termsafe.CutN(status+" · "+r.Tool+" on "+r.Server.Display(), 200))
		out = append(out, r.TaskID+"\t"+desc)
	}
	return out
}

// Find reads the records of task id from st and picks the one a command means (Pick), on the
// server key names (key is asked once the ledger is read; "" names none). id may be a unique
// prefix of a task id (Match): the record returned carries the whole id, which the command
// must use from then on. It returns nil (no error) when st has no usable record and the
// command has a server to ask instead (haveServer, or a key): the id is then sent as given.
// Several records and no key, an ambiguous prefix, or no record and no server, are usage
// errors: the command line must say more.
func Find(st *state.Store, id string, key func() (string, error), haveServer bool) (*state.Record, error) {
	recs, err := st.Find(id) // the exact id, without reading every record
	if err != nil {
		return nil, err
	}
	k, err := key()
	if err != nil {
		return nil, err
	}
	var all []state.Record
	if len(recs) == 0 {
		file, err := st.Load()
		if err != nil {
			return nil, err
		}
		all = file.Tasks
		if recs, err = Match(all, id, k); err != nil {
			return nil, err
		}
	}
	whole := id
	if len(recs) > 0 {
		whole = recs[0].TaskID
	}
	rec, err := Pick(whole, recs, k)
	if err != nil { // several servers, none named
		return nil, &exitcode.UsageError{Err: err}
	}
	if rec == nil && k == "" && !haveServer {
		hint := ""
		if len(id) < MinPrefix && slices.ContainsFunc(all, func(r state.Record) bool { return strings.HasPrefix(r.TaskID, id) }) {
			hint = fmt.Sprintf(" (a prefix of a task id needs at least %d characters)", MinPrefix)
		}
		return nil, &exitcode.UsageError{Err: fmt.Errorf("task %s is not in the ledger (%s)%s and no server was given: add --server URL or --stdio 'command args'", termsafe.Line(termsafe.CutN(id, 200)), st.Path(), hint)}
	}
	return rec, nil
}

// MinPrefix is the fewest characters of a task id that name it by prefix, as git takes a
// short commit hash.
const MinPrefix = 4

// Match is the records of recs that id names: those with task id id exactly, whatever their
// server; else, when id has at least MinPrefix characters, those whose task id starts with id
// (on the server key names, when it names one), provided they are all one task id. A prefix
// that several task ids start with is a usage error, a *PrefixError listing them. None is no
// error: the command goes on as for an id the ledger does not have.
func Match(recs []state.Record, id, key string) ([]state.Record, error) {
	var out []state.Record
	for _, r := range recs {
		if r.TaskID == id {
			out = append(out, r)
		}
	}
	if len(out) > 0 || len(id) < MinPrefix {
		return out, nil
	}
	ids := map[string]bool{}
	for _, r := range recs {
		if strings.HasPrefix(r.TaskID, id) && (key == "" || r.Server.Key() == key) {
			out = append(out, r)
			ids[r.TaskID] = true
		}
	}
	if len(ids) > 1 {
		return nil, &exitcode.UsageError{Err: &PrefixError{Prefix: id, Matches: out}}
	}
	return out, nil
}

// PrefixError is a prefix that several task ids of the ledger start with.
type PrefixError struct {
	Prefix  string
	Matches []state.Record
}

// maxListed is how many matches a PrefixError lists.
const maxListed = 10

func (e *PrefixError) Error() string {
	var b strings.Builder
	ids := map[string]bool{}
	for _, r := range e.Matches {
		ids[r.TaskID] = true
	}
	fmt.Fprintf(&b, "task id prefix %s matches %d tasks in the ledger; type more characters of the id:\n", termsafe.Line(termsafe.CutN(e.Prefix, 200)), len(ids))
	recs := slices.Clone(e.Matches)
	slices.SortStableFunc(recs, func(a, b state.Record) int { return strings.Compare(a.TaskID, b.TaskID) })
	now := time.Now()
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	for i, r := range recs {
		if i == maxListed {
			fmt.Fprintf(tw, "  … and %d more\n", len(recs)-maxListed)
			break
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", termsafe.Line(termsafe.CutN(r.TaskID, 200)), termsafe.Line(termsafe.CutN(r.Server.Display(), 60)),
			termsafe.Line(termsafe.CutN(r.Tool, 60)), termsafe.Line(r.StatusAt(now)))
	}
	tw.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}
