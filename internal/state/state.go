// Package state is mcptask's crash-safe ledger of task records: one small JSON file that
// remembers every task a server handed back, how to reach that server again, and what was
// last seen of the task.
//
// It exists because MCP 2026-07-28 has no tasks/list (PROTOCOL.md §2.7, client rule 26): a
// client that loses a task id has orphaned the work for good. So the ledger is written before
// anything is printed about a task, every change is atomic (temp file, fsync, rename, fsync
// of the directory) and every new task is one line written in place and fsynced (append.go),
// every write happens under an OS file lock so that parallel mcptask processes never lose
// each other's updates, and a file that cannot be parsed is moved aside rather than
// overwritten. A record never holds a secret: only the names of the headers and environment
// variables that carried one, and a server URL whose credential parameters are redacted
// (internal/redact); every record is redacted as it is written.
package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/taskstatus"
)

// Version is the file format this mcptask writes. A file with a higher version was written
// by a newer mcptask and is left alone.
//
// Version 2 added the records' "mac" (sign.go). Version 1 files are read as they are, their
// records unsigned; an older mcptask refuses version 2 rather than rewrite the records without
// their MACs.
const Version = 2

// Server says how to reach a server again. It holds no secret: only the names of the
// headers (--header) and of the environment variable (--bearer-env) whose values were used.
type Server struct {
	URL         string   `json:"url,omitempty"`
	Command     []string `json:"command,omitempty"`
	Dir         string   `json:"dir,omitempty"`
	EnvNames    []string `json:"envNames,omitempty"`
	HeaderNames []string `json:"headerNames,omitempty"`
	BearerEnv   string   `json:"bearerEnv,omitempty"`
	// OAuth is set when the server was reached with an OAuth login: the issuer and profile
	// that find the credential again in the credential store. Never a token.
	OAuth *OAuth `json:"oauth,omitempty"`
}

// OAuth names a stored OAuth credential without holding any of it.
type OAuth struct {
	Issuer  string `json:"issuer"`
	Profile string `json:"profile,omitempty"`
}

// Key is the server's identity in the ledger: the same task id on two servers is two tasks.
// A URL counts with its credential parameters redacted, as the ledger stores it.
func (s Server) Key() string {
	if s.URL != "" {
		return redact.URL(s.URL)
	}
	return "stdio:" + s.Dir + ":" + strings.Join(s.Command, "\x1f")
}

// Display is the short form shown to users.
func (s Server) Display() string {
	if s.URL != "" {
		return redact.URL(s.URL)
	}
	return "stdio: " + redact.Text(strings.Join(s.Command, " "))
}

// Millis is a duration in whole milliseconds, as the wire and the file carry it.
type Millis int64

// Duration converts m.
func (m Millis) Duration() time.Duration { return time.Duration(m) * time.Millisecond }

// Record is what the ledger knows about one task.
type Record struct {
	TaskID string `json:"taskId"`
	Server Server `json:"server"`
	// Era is "2025-11-25" or "2026-07-28"; Protocol the negotiated version.
	Era      string `json:"era"`
	Protocol string `json:"protocolVersion,omitempty"`
	// SessionID is the 2025-11-25 MCP-Session-Id the task was created in. Several servers
	// bind tasks to their session, so resuming must send it again. It names a session; it is
	// not a credential (C25-TRANS §Session Management).
	SessionID     string    `json:"sessionId,omitempty"`
	Tool          string    `json:"tool"`
	CreatedAt     time.Time `json:"createdAt"`
	TTL           *Millis   `json:"ttlMs"`
	PollInterval  Millis    `json:"pollIntervalMs,omitempty"`
	Status        string    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	LastUpdatedAt time.Time `json:"lastUpdatedAt,omitzero"`
	// SeenAt is when a server last told mcptask the status (and message) above: what
	// `mcptask list` shows as "working · 2m ago". Absent in records written before it was
	// kept: Seen falls back to SavedAt.
	SeenAt time.Time `json:"seenAt,omitzero"`
	// AnsweredKeys are the input request keys already answered, never answered twice.
	AnsweredKeys []string `json:"answeredKeys,omitempty"`
	// Expired is set when the server said it no longer knows the task.
	Expired bool `json:"expired,omitempty"`
	// ResultShown is set when the outcome was shown (records kept with --keep).
	ResultShown bool `json:"resultShown,omitempty"`
	// LastError is what went wrong the last time the task was followed (a garbage answer, a
	// refused request); cleared by the next good update.
	LastError string `json:"lastError,omitempty"`
	// Via says who created the task when it was not an mcptask command: "proxy" for a task a
	// host created through `mcptask proxy`.
	Via string `json:"via,omitempty"`
	// Local marks a record that is no server task: the plain result a server answered to
	// 'call --detach', kept under an id mcptask made up (LocalPrefix), with Result, so that
	// 'mcptask result ID' gives it back. It is the only kind of record that holds a result.
	Local   bool            `json:"local,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	SavedAt time.Time       `json:"savedAt"`
	// MAC proves that this user's mcptask wrote the record's task id and server (sign.go):
	// without it, resuming the record may not start its command or send its credentials.
	MAC string `json:"mac,omitempty"`
}

// LocalPrefix starts the id of a Local record, so that a person and a script see that it
// names no server task.
const LocalPrefix = "local-"

// Terminal reports whether the task reached completed, failed or cancelled
// (taskstatus.Terminal). An expired task is not terminal: see ExpiredAt.
func (r Record) Terminal() bool { return taskstatus.Terminal(r.Status) }

// ExpiredAt reports whether the task is gone by now: the server said so, or its TTL, counted
// from createdAt, has run out (C25-TASKS §TTL, EXT §Task Polling).
func (r Record) ExpiredAt(now time.Time) bool {
	if r.Expired {
		return true
	}
	return r.TTL != nil && !r.CreatedAt.IsZero() && now.After(r.CreatedAt.Add(r.TTL.Duration()))
}

// Unfinished reports whether the task may still be running: the ones resume follows.
func (r Record) Unfinished(now time.Time) bool { return !r.Terminal() && !r.ExpiredAt(now) }

// StatusAt is the record's status as a user should read it at now: expired wins over a
// status that is not terminal.
func (r Record) StatusAt(now time.Time) string {
	if r.ExpiredAt(now) && !r.Terminal() {
		return taskstatus.Expired
	}
	return r.Status
}

// Seen is when the record's status was last seen: SeenAt, or for a record written before
// SeenAt was kept, when it was last saved.
func (r Record) Seen() time.Time {
	if r.SeenAt.IsZero() {
		return r.SavedAt
	}
	return r.SeenAt
}

// File is the whole ledger.
type File struct {
	Version int      `json:"version"`
	Tasks   []Record `json:"tasks"`
}

// ResolvePath picks the ledger file: the --state flag, then $MCPTASK_STATE, then
// $XDG_STATE_HOME/mcptask/tasks.json, then ~/.local/state/mcptask/tasks.json.
func ResolvePath(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if p := getenv("MCPTASK_STATE"); p != "" {
		return p, nil
	}
	dir, err := Dir(getenv)
	if err != nil {
		return "", errors.New("no home directory to keep the task ledger in")
	}
	return filepath.Join(dir, "tasks.json"), nil
}

// CorruptError means the ledger could not be parsed. The file was renamed to Aside and
// nothing was written in its place, so no task id in it is lost.
type CorruptError struct {
	Path, Aside string
	Err         error
	// Torn is set when only the last line was damaged: a writer was killed while adding it
	// (append.go). That line alone went to Aside; every complete record stayed in the ledger.
	Torn bool
}

func (e *CorruptError) Error() string {
	if e.Torn {
		return fmt.Sprintf("task ledger %s ended in a line cut short (an mcptask was killed while adding a task); that line was kept aside as %s and every complete record was kept: look there if a task id is missing",
			e.Path, e.Aside)
	}
	return fmt.Sprintf("task ledger %s is corrupt (%v); it was kept aside as %s, untouched, and a new ledger will be started: recover ids from the old file by hand if you need them",
		e.Path, e.Err, e.Aside)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Store is the ledger at one path. It keeps no state in memory between calls: every call
// reads the file, so several processes see one another's writes.
type Store struct {
	path string
	red  *redact.Redactor
}

// Open returns the store at path. It does no I/O; the directory (0700) and the file (0600)
// are created by the first write.
func Open(path string) *Store { return &Store{path: path} }

// Redacting makes s redact every record it writes with r as well as with the shared rules,
// so that a secret value of this run a server echoed into a status message or an error is
// not written down. It returns s.
func (s *Store) Redacting(r *redact.Redactor) *Store {
	s.red = r
	return s
}

// encode is the one way a record becomes bytes of the file: redacted, then marshalled. The
// server URL loses its credential parameters (a resume asks for them again), and the server
// strings kept (status message, last error, tool) lose what looks like a credential.
func (s *Store) encode(r Record) ([]byte, error) {
	r.Server.URL = s.red.URL(r.Server.URL)
	r.StatusMessage = s.red.Text(r.StatusMessage)
	r.LastError = s.red.Text(r.LastError)
	r.Tool = s.red.Text(r.Tool)
	if len(r.Result) > 0 {
		r.Result = s.red.JSON(r.Result)
	}
	return encodeRecord(r)
}

// Path returns the ledger file path.
func (s *Store) Path() string { return s.path }

// Load reads the ledger under a shared lock. A missing file is an empty ledger.
func (s *Store) Load() (*File, error) {
	if _, err := os.Stat(s.path); errors.Is(err, os.ErrNotExist) {
		return &File{Version: Version, Tasks: []Record{}}, nil
	}
	var f *File
	err := s.locked(false, func() error {
		l, err := s.readRaw()
		if err != nil {
			return err
		}
		tasks, err := l.decodeAll()
		if err != nil {
			return s.corrupt(err)
		}
		f = &File{Version: Version, Tasks: tasks}
		return nil
	})
	return f, err
}

// Update runs fn on the whole ledger under an exclusive lock and writes the result
// atomically. When fn returns an error nothing is written.
//
// If the file turns out to be corrupt it is moved aside, fn runs on an empty ledger and the
// result is written, and the *CorruptError is still returned: the task being recorded right
// now must not be lost as well, but the caller must say what happened.
func (s *Store) Update(fn func(f *File) error) error {
	return s.updateRaw(func(l *rawLedger) error {
		tasks, err := l.decodeAll()
		if err != nil {
			return s.corrupt(err)
		}
		f := &File{Version: Version, Tasks: tasks}
		if err := fn(f); err != nil {
			return err
		}
		lines := make([][]byte, 0, len(f.Tasks))
		for _, r := range f.Tasks {
			b, err := s.encode(r)
			if err != nil {
				return err
			}
			lines = append(lines, b)
		}
		l.lines = lines
		return nil
	})
}

// updateRaw is the read-modify-write cycle on the undecoded lines: the fast path for the
// one-record changes (Put, Patch, Delete) that a ledger of thousands of tasks makes often.
func (s *Store) updateRaw(fn func(l *rawLedger) error) error {
	var corrupt *CorruptError
	err := s.locked(true, func() error {
		l, err := s.readRaw()
		if err != nil {
			if !errors.As(err, &corrupt) {
				return err
			}
			l = &rawLedger{}
		}
		if err := fn(l); err != nil {
			if errors.As(err, &corrupt) {
				// A record line that does not decode: the file is aside now; start afresh.
				l = &rawLedger{}
				if err := fn(l); err != nil {
					return err
				}
			} else {
				return err
			}
		}
		if len(l.torn) > 0 {
			// Kept before the rewrite drops it: a crash in between leaves it in both.
			if corrupt, err = s.keepTorn(l.torn); err != nil {
				return err
			}
		}
		return s.writeRaw(l)
	})
	if err == nil && corrupt != nil {
		return corrupt
	}
	return err
}

// Put inserts r, or replaces the record of the same task on the same server. It adds one line
// to the file and fsyncs it (append.go), so its cost does not grow with the ledger; a file
// that cannot take a line as it stands is rewritten instead.
func (s *Store) Put(r Record) error { return s.PutMany([]Record{r}) }

// PutMany is Put for several records at once, in one write and one fsync: the tasks a host
// starts together through the proxy (internal/ledger) cost one write, not one each. A later
// record of the same task on the same server wins.
func (s *Store) PutMany(recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	now := time.Now().UTC()
	lines := make([][]byte, len(recs))
	for i, r := range recs {
		r.SavedAt = now
		line, err := s.encode(r)
		if err != nil {
			return err
		}
		lines[i] = line
	}
	appended := false
	err := s.locked(true, func() error {
		var err error
		appended, err = s.appendLines(lines)
		return err
	})
	if err != nil || appended {
		return err
	}
	return s.updateRaw(func(l *rawLedger) error {
		for j, r := range recs {
			i, _, err := l.find(r.TaskID, r.Server.Key())
			if err != nil {
				return s.corrupt(err)
			}
			if i >= 0 {
				l.lines[i] = lines[j]
			} else {
				l.lines = append(l.lines, lines[j])
			}
		}
		return nil
	})
}

// Find returns every record with task id id (more than one means several servers).
func (s *Store) Find(id string) ([]Record, error) {
	if _, err := os.Stat(s.path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var out []Record
	err := s.locked(false, func() error {
		l, err := s.readRaw()
		if err != nil {
			return err
		}
		p := idPrefix(id)
		for _, line := range l.lines {
			if !bytes.HasPrefix(line, p) {
				continue
			}
			var r Record
			if err := json.Unmarshal(line, &r); err != nil {
				return s.corrupt(err)
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// Patch changes the record (key, id) in place; a record that is gone is left gone.
func (s *Store) Patch(key, id string, fn func(r *Record)) error {
	return s.updateRaw(func(l *rawLedger) error {
		i, r, err := l.find(id, key)
		if err != nil {
			return s.corrupt(err)
		}
		if i < 0 {
			return nil
		}
		fn(r)
		r.SavedAt = time.Now().UTC()
		line, err := s.encode(*r)
		if err != nil {
			return err
		}
		l.lines[i] = line
		return nil
	})
}

// Change is one record change for PatchMany: Fn applied to the record, or with Delete the
// record removed.
type Change struct {
	Key, ID string
	Fn      func(r *Record)
	Delete  bool
}

// PatchMany applies changes in one read-modify-write of the ledger, in order: the status
// updates of a thousand followed tasks cost one rewrite instead of a thousand. A record that
// is gone is left gone, and one that a change leaves as it was is not rewritten.
func (s *Store) PatchMany(changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	now := time.Now().UTC()
	changed := false
	err := s.updateRaw(func(l *rawLedger) error {
		byPrefix := make(map[string][]int, len(l.lines))
		for i, line := range l.lines {
			if p, ok := linePrefix(line); ok {
				byPrefix[string(p)] = append(byPrefix[string(p)], i)
			}
		}
		for _, c := range changes {
			for _, i := range byPrefix[string(idPrefix(c.ID))] {
				if l.lines[i] == nil {
					continue // deleted by an earlier change: gone stays gone
				}
				var r Record
				if err := json.Unmarshal(l.lines[i], &r); err != nil {
					return s.corrupt(fmt.Errorf("task record: %w", err))
				}
				if r.Server.Key() != c.Key {
					continue
				}
				if c.Delete {
					l.lines[i] = nil // removed below, once no index into lines is needed
					changed = true
					break
				}
				c.Fn(&r)
				line, err := s.encode(r)
				if err != nil {
					return err
				}
				if bytes.Equal(line, l.lines[i]) {
					break
				}
				r.SavedAt = now
				if line, err = s.encode(r); err != nil {
					return err
				}
				l.lines[i] = line
				changed = true
				break
			}
		}
		if !changed {
			return errUnchanged
		}
		l.lines = slices.DeleteFunc(l.lines, func(line []byte) bool { return line == nil })
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// errUnchanged tells updateRaw there is nothing to write.
var errUnchanged = errors.New("ledger unchanged")

// Delete removes the record (key, id) and reports whether it was there.
func (s *Store) Delete(key, id string) (bool, error) {
	found := false
	err := s.updateRaw(func(l *rawLedger) error {
		i, _, err := l.find(id, key)
		if err != nil {
			return s.corrupt(err)
		}
		if i >= 0 {
			found = true
			l.lines = slices.Delete(l.lines, i, i+1)
		}
		return nil
	})
	return found, err
}

// Prune drops terminal and expired records and returns them.
func (s *Store) Prune(now time.Time) ([]Record, error) {
	var removed []Record
	err := s.Update(func(f *File) error {
		removed = removed[:0]
		f.Tasks = slices.DeleteFunc(f.Tasks, func(r Record) bool {
			if r.Terminal() || r.ExpiredAt(now) {
				removed = append(removed, r)
				return true
			}
			return false
		})
		return nil
	})
	return removed, err
}

// corrupt moves the ledger aside because of err and returns the *CorruptError saying so.
func (s *Store) corrupt(err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return err
	}
	aside := s.path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if rerr := os.Rename(s.path, aside); rerr != nil {
		return fmt.Errorf("task ledger %s is corrupt (%v) and could not be moved aside: %w; move it away by hand", s.path, err, rerr)
	}
	_ = syncDir(filepath.Dir(s.path))
	return &CorruptError{Path: s.path, Aside: aside, Err: err}
}

// readRaw reads the file into record lines; the caller holds the lock. A file that does not
// parse is renamed aside (never overwritten) and reported as *CorruptError.
func (s *Store) readRaw() (*rawLedger, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return &rawLedger{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the task ledger: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		// mcptask never writes an empty file (writes are atomic), so one is damage: keep it
		// aside like any other, and say so.
		return nil, s.corrupt(errors.New("the file is empty"))
	}
	l, version, err := parseLedger(data)
	if err != nil {
		return nil, s.corrupt(err)
	}
	if version > Version {
		return nil, fmt.Errorf("task ledger %s has format version %d, newer than this mcptask understands (%d): upgrade mcptask or point --state elsewhere", s.path, version, Version)
	}
	if err := l.dedupe(); err != nil {
		return nil, s.corrupt(err)
	}
	return l, nil
}

// keepTorn saves the line a killed writer cut short to tasks.json.torn-<time> before the
// ledger is rewritten without it: it may name a task id that was never printed. The caller
// holds the exclusive lock.
func (s *Store) keepTorn(torn []byte) (*CorruptError, error) {
	aside := s.path + ".torn-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	f, err := os.OpenFile(aside, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("keep aside the cut-short last line of the task ledger %s: %w", s.path, err)
	}
	_, err = f.Write(torn)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("keep aside the cut-short last line of the task ledger %s: %w", s.path, err)
	}
	_ = syncDir(filepath.Dir(s.path))
	return &CorruptError{Path: s.path, Aside: aside, Torn: true, Err: errors.New("its last line was cut short by a writer that was killed")}, nil
}

// writeRaw replaces the file atomically: temp file in the same directory, fsync, rename, fsync
// of the directory. A crash at any point leaves either the old file or the new one.
func (s *Store) writeRaw(l *rawLedger) error {
	if err := writeFileAtomic(s.path, l.bytes()); err != nil {
		return fmt.Errorf("write the task ledger: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync the ledger directory: %w", err)
	}
	return nil
}

// locked runs fn holding the ledger's lock file (tasks.json.lock), exclusive or shared.
func (s *Store) locked(exclusive bool, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("create the ledger directory: %w", err)
	}
	lf, err := os.OpenFile(s.path+".lock", os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		if isLink(s.path + ".lock") {
			return fmt.Errorf("open the ledger lock: %s is a symbolic link, which mcptask does not write through; remove it", s.path+".lock")
		}
		return fmt.Errorf("open the ledger lock: %w", err)
	}
	defer lf.Close()
	if err := lockFile(lf, exclusive); err != nil {
		return fmt.Errorf("lock the ledger: %w", err)
	}
	defer unlockFile(lf)
	return fn()
}

// Writable checks, writing nothing a reader would see, that the ledger can take a record now:
// its directory exists or can be made, its lock can be opened and taken exclusively, the file
// (when there is one) opens for writing, and the directory takes the temporary file of an
// atomic rewrite. A command that is about to create a task calls it before it asks a server
// for one, so that a task is never created whose id the ledger could not keep. It costs a few
// system calls on the local disk, no read of the ledger.
func (s *Store) Writable() error {
	return s.locked(true, func() error {
		if f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			f.Close()
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("open the task ledger for writing: %w", err)
		}
		if err := dirWritable(filepath.Dir(s.path)); err != nil {
			return fmt.Errorf("write in the ledger directory: %w", err)
		}
		return nil
	})
}
