package state

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// A ledger can come from someone else: a CI cache or artifact restored into the workspace, a
// file a pull request planted where --state points. Reaching a record's server again may start
// a command (stdio), export environment variables to it, or send a secret read from the
// environment (--bearer-env, --header, a stored OAuth login). A record may do any of that only
// if this user's mcptask wrote it: each record it creates carries an HMAC-SHA256 over its
// connection fields, with a key that lives in the user's state directory (never beside the
// ledger, which may be the planted thing) or, for a ledger carried between CI jobs, in
// $MCPTASK_LEDGER_KEY. A record that only names an HTTP URL gives nothing away and needs no
// MAC.

// KeyEnv is the environment variable that holds an explicit ledger key: the one secret CI jobs
// share to carry a ledger between them.
const KeyEnv = "MCPTASK_LEDGER_KEY"

// KeyFile is the name of the key file in the state directory.
const KeyFile = "ledger.key"

// minEnvKey is the shortest $MCPTASK_LEDGER_KEY accepted: 16 bytes, 128 bits if random, the
// least an HMAC key should carry (NIST SP 800-107 §5.2 asks for at least the security
// strength wanted).
const minEnvKey = 16

// macPrefix names the algorithm in the record's "mac" field, so a later one can be told apart.
const macPrefix = "hmac-sha256:"

// macDomain separates ledger MACs from any other use of the same key.
const macDomain = "mcptask ledger record v1\x00"

// Dir is the user's mcptask state directory: $XDG_STATE_HOME/mcptask, else
// ~/.local/state/mcptask. The default ledger, the ledger key and the trust list live there.
func Dir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "mcptask"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil || home == "" {
			return "", errors.New("no home directory to keep mcptask's state in (set XDG_STATE_HOME)")
		}
	}
	if !filepath.IsAbs(home) {
		// A relative directory would be the working directory's: the project's, not the user's.
		return "", fmt.Errorf("the home directory %q is not an absolute path (set XDG_STATE_HOME)", home)
	}
	return filepath.Join(home, ".local", "state", "mcptask"), nil
}

// Grants lists what reaching s again gives the server or runs on this machine, in words for
// the user: an empty list means a record naming s can be resumed whoever wrote it.
func (s Server) Grants() []string {
	var out []string
	if len(s.Command) > 0 {
		g := "start the command " + quoteArgv(s.Command)
		if s.Dir != "" {
			g += " in " + s.Dir
		}
		out = append(out, g)
	}
	if len(s.EnvNames) > 0 {
		out = append(out, "give it the environment variables "+strings.Join(s.EnvNames, ", "))
	}
	if s.BearerEnv != "" {
		out = append(out, "send it a bearer token from $"+s.BearerEnv)
	}
	if len(s.HeaderNames) > 0 {
		out = append(out, "send it the --header values "+strings.Join(s.HeaderNames, ", "))
	}
	if s.OAuth != nil {
		out = append(out, "send it the OAuth login of "+s.OAuth.Issuer)
	}
	return out
}

// quoteArgv shows a command line with the words that need it quoted.
func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}

// Keyring holds the keys that tell this user's records from anyone else's. It reads and
// creates the key file lazily: a command that never writes or checks a record touches nothing.
type Keyring struct {
	dir    string
	envKey string

	mu     sync.Mutex
	loaded bool
	local  []byte // the key file's key, nil when there is none yet
}

// NewKeyring returns the keyring of the state directory dir. envKey, when not empty, is an
// explicit key ($MCPTASK_LEDGER_KEY): new records are signed with it, and records signed with
// it or with the key file are accepted.
func NewKeyring(dir, envKey string) (*Keyring, error) {
	if envKey != "" && len(envKey) < minEnvKey {
		return nil, fmt.Errorf("$%s is shorter than %d bytes; use a random value, e.g. from: openssl rand -hex 32", KeyEnv, minEnvKey)
	}
	return &Keyring{dir: dir, envKey: envKey}, nil
}

// Path is the key file.
func (k *Keyring) Path() string { return filepath.Join(k.dir, KeyFile) }

// load reads the key file once; with create, a missing one is made (0600, in a 0700
// directory). Creation is atomic and never replaces a key another process made first: the
// new key is written to a temp file and hard-linked into place.
func (k *Keyring) load(create bool) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.local != nil || (k.loaded && !create) {
		return k.local, nil
	}
	path := k.Path()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && create {
		data, err = createKey(k.dir, path)
	}
	k.loaded = true
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the ledger key: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		// Whoever can read the key can sign records this user's mcptask will run.
		return nil, fmt.Errorf("the ledger key %s can be read or changed by other users (mode %v); make it private: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("the ledger key %s is damaged; remove it (the records it signed will then need 'mcptask adopt')", path)
	}
	k.local = key
	return key, nil
}

func createKey(dir, path string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	data := []byte(hex.EncodeToString(key) + "\n")
	tmp, err := os.CreateTemp(dir, KeyFile+".tmp-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return os.ReadFile(path) // another mcptask made it first: use that one
		}
		return nil, err
	}
	_ = syncDir(dir)
	return data, nil
}

// mac computes the record's MAC with key over its task id and server: what resuming it would
// run and send. Status fields are left out, so status updates keep the MAC valid and never
// need the key.
func mac(key []byte, r Record) string {
	b, _ := json.Marshal(struct {
		TaskID string `json:"taskId"`
		Server Server `json:"server"`
	}{r.TaskID, r.Server})
	m := hmac.New(sha256.New, key)
	m.Write([]byte(macDomain))
	m.Write(b)
	return macPrefix + hex.EncodeToString(m.Sum(nil))
}

// Sign sets r's MAC: with $MCPTASK_LEDGER_KEY when given, else with the key file (created on
// first use).
func (k *Keyring) Sign(r *Record) error {
	if k.envKey != "" {
		r.MAC = mac([]byte(k.envKey), *r)
		return nil
	}
	key, err := k.load(true)
	if err != nil {
		return err
	}
	r.MAC = mac(key, *r)
	return nil
}

// ErrNotSigned means a record carries no MAC: written before mcptask signed records, by hand,
// or by someone else.
var ErrNotSigned = errors.New("it carries no signature")

// ErrForeignKey means a record's MAC was made with a key this user does not hold.
var ErrForeignKey = errors.New("its signature was made with another key")

// Check reports whether r was written by this user's mcptask: its MAC matches the key file or
// $MCPTASK_LEDGER_KEY. The error (ErrNotSigned, ErrForeignKey, or a key file problem) says why
// not.
func (k *Keyring) Check(r Record) error {
	if r.MAC == "" {
		return ErrNotSigned
	}
	if k.envKey != "" && hmac.Equal([]byte(r.MAC), []byte(mac([]byte(k.envKey), r))) {
		return nil
	}
	key, err := k.load(false)
	if err != nil {
		return err
	}
	if key != nil && hmac.Equal([]byte(r.MAC), []byte(mac(key, r))) {
		return nil
	}
	return ErrForeignKey
}
