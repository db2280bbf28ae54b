package check

// This file validates what a server sends against the official JSON Schemas of its era. The
// schemas are embedded byte for byte (schemas/SOURCES.md says where each comes from), because
// `mcptask check` is run by server authors on their own machines and in CI, where nothing else
// would provide them; internal/spectest uses the same files from shared/spec in the tests.

import (
	"bytes"
	"embed"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:embed schemas/*.schema.json
var schemaFiles embed.FS

const (
	schemaLegacy = "mcp-2025-11-25.schema.json"
	schemaModern = "mcp-2026-07-28.schema.json"
	schemaExt    = "tasks-ext-2026-07-28.schema.json"
)

// schemas compiles definitions on first use and caches them; one set serves every run.
type schemas struct {
	once   sync.Once
	err    error
	c      *jsonschema.Compiler
	urlFor map[string]string

	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
}

var official schemas

func (s *schemas) load() error {
	s.once.Do(func() {
		s.c = jsonschema.NewCompiler()
		s.urlFor = map[string]string{}
		s.cache = map[string]*jsonschema.Schema{}
		for _, f := range []string{schemaLegacy, schemaModern, schemaExt} {
			b, err := schemaFiles.ReadFile("schemas/" + f)
			if err != nil {
				s.err = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				s.err = fmt.Errorf("schema %s: %w", f, err)
				return
			}
			url := "mcptask:///schemas/" + f
			if m, ok := doc.(map[string]any); ok {
				if id, ok := m["$id"].(string); ok {
					url = id
				}
			}
			if err := s.c.AddResource(url, doc); err != nil {
				s.err = fmt.Errorf("schema %s: %w", f, err)
				return
			}
			s.urlFor[f] = url
		}
	})
	return s.err
}

// validate checks instance against definition def of schema file f. It returns "" when the
// instance is valid, else a short description of the first problems.
func (s *schemas) validate(f, def string, instance []byte) string {
	if err := s.load(); err != nil {
		return "" // cannot happen with embedded files; never blame the server for it
	}
	s.mu.Lock()
	key := f + "#" + def
	sch, ok := s.cache[key]
	if !ok {
		var err error
		sch, err = s.c.Compile(s.urlFor[f] + "#/$defs/" + def)
		if err != nil {
			s.mu.Unlock()
			return ""
		}
		s.cache[key] = sch
	}
	s.mu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return "not JSON: " + err.Error()
	}
	err = sch.Validate(inst)
	if err == nil {
		return ""
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	return def + ": " + summarize(ve)
}

var english = message.NewPrinter(language.English)

// summarize names the most specific problems of a validation error: the leaves deepest in the
// instance, at most three, so that an anyOf over five task variants does not bury the point.
func summarize(ve *jsonschema.ValidationError) string {
	type leaf struct {
		at, msg string
		depth   int
	}
	var leaves []leaf
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := e.ErrorKind.LocalizedString(english)
			leaves = append(leaves, leaf{"/" + strings.Join(e.InstanceLocation, "/"), msg, len(e.InstanceLocation)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(leaves, func(i, j int) bool { return leaves[i].depth > leaves[j].depth })
	seen := map[string]bool{}
	var parts []string
	for _, l := range leaves {
		p := "at " + l.at + ": " + l.msg
		if seen[p] {
			continue
		}
		seen[p] = true
		parts = append(parts, p)
		if len(parts) == 3 {
			break
		}
	}
	return strings.Join(parts, "; ")
}
