package check

// This file validates what a server sends against the official JSON Schemas of its era. The
// schemas are embedded byte for byte (schemas/SOURCES.md says where each comes from), because
// `mcptask check` is run by server authors on their own machines and in CI, where nothing else
// would provide them; internal/spectest uses the same files from shared/spec in the tests.

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

//go:embed schemas/*.schema.json
var schemaFiles embed.FS

const (
	schemaLegacy = "mcp-2025-11-25.schema.json"
	schemaModern = "mcp-2026-07-28.schema.json"
	schemaExt    = "tasks-ext-2026-07-28.schema.json"
)

// The validator is github.com/google/jsonschema-go, the one the official Go MCP SDK uses. It
// does its work when a schema is resolved, not when the package is initialised: the validator
// used before (santhosh-tekuri/jsonschema/v6) compiled the metaschemas of five drafts in its
// package init, 2.9 ms and 1.7 MB at the start of every mcptask command, although only
// `mcptask check` validates anything (bench/README.md, `call --detach` against curl).

// schemas parses the files on first use and resolves each definition once; one set serves
// every run.
type schemas struct {
	once  sync.Once
	err   error
	files map[string]*jsonschema.Schema // by the URI a $ref names it with

	mu    sync.Mutex
	cache map[string]*jsonschema.Resolved
}

var official schemas

const schemaBase = "mcptask:///schemas/"

func (s *schemas) load() error {
	s.once.Do(func() {
		s.files = map[string]*jsonschema.Schema{}
		s.cache = map[string]*jsonschema.Resolved{}
		for _, f := range []string{schemaLegacy, schemaModern, schemaExt} {
			b, err := schemaFiles.ReadFile("schemas/" + f)
			if err != nil {
				s.err = err
				return
			}
			var doc jsonschema.Schema
			if err := json.Unmarshal(b, &doc); err != nil {
				s.err = fmt.Errorf("schema %s: %w", f, err)
				return
			}
			// The definitions are reached as schemaBase+f; the files' own $id would pull
			// references towards the network, where nothing is fetched.
			doc.ID = ""
			s.files[schemaBase+f] = &doc
		}
	})
	return s.err
}

// resolved is definition def of file f, ready to validate with.
func (s *schemas) resolved(f, def string) (*jsonschema.Resolved, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := f + "#" + def
	if rs, ok := s.cache[key]; ok {
		return rs, nil
	}
	ref := &jsonschema.Schema{Ref: schemaBase + f + "#/$defs/" + def}
	rs, err := ref.Resolve(&jsonschema.ResolveOptions{
		BaseURI: schemaBase + "ref.json",
		Loader: func(u *url.URL) (*jsonschema.Schema, error) {
			if doc, ok := s.files[u.String()]; ok {
				return doc, nil
			}
			return nil, fmt.Errorf("no embedded schema %s", u)
		},
	})
	if err != nil {
		return nil, err
	}
	s.cache[key] = rs
	return rs, nil
}

// validate checks instance against definition def of schema file f. It returns "" when the
// instance is valid, else a short description of the problem.
func (s *schemas) validate(f, def string, instance []byte) string {
	if err := s.load(); err != nil {
		return "" // cannot happen with embedded files; never blame the server for it
	}
	rs, err := s.resolved(f, def)
	if err != nil {
		return "" // the same: the embedded files resolve, TestSchemaValidation shows it
	}
	var inst any
	if err := json.Unmarshal(instance, &inst); err != nil {
		return "not JSON: " + err.Error()
	}
	if err := rs.Validate(inst); err != nil {
		return def + ": " + summarize(err.Error())
	}
	return ""
}

// summarize turns the validator's chain ("validating root: validating /$defs/A: validating
// /$defs/A/properties/b: …: enum: x does not equal any of …") into where and what: the deepest
// schema location that names a property, an item or a branch (else the deepest), as the nearest thing to the place in the
// instance, and the validator's own words for the problem.
func summarize(msg string) string {
	const step = "validating "
	where := ""
	for strings.HasPrefix(msg, step) {
		loc, rest, ok := strings.Cut(msg[len(step):], ": ")
		if !ok {
			break
		}
		if named(loc) || !named(where) {
			where = loc
		}
		msg = rest
	}
	msg = plainer(msg)
	if where == "" || where == "root" {
		return "at /: " + msg
	}
	return "at " + where + ": " + msg
}

// plainer says the commonest problem, a missing member, in words a server author reads at a
// glance: `required: missing properties: ["ttl"]` becomes `missing property 'ttl'`.
func plainer(msg string) string {
	list, ok := strings.CutPrefix(msg, "required: missing properties: ")
	if !ok {
		return msg
	}
	var names []string
	if err := json.Unmarshal([]byte(strings.Join(strings.Fields(list), ",")), &names); err != nil || len(names) == 0 {
		return msg
	}
	if len(names) == 1 {
		return "missing property '" + names[0] + "'"
	}
	return "missing properties '" + strings.Join(names, "', '") + "'"
}

// named reports whether a schema location goes down to a property, an item or a branch.
func named(loc string) bool {
	return strings.Contains(loc, "/properties/") || strings.Contains(loc, "/items") || strings.Contains(loc, "Of/")
}
