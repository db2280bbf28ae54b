package check

// This file builds minimal valid values from JSON Schemas: the arguments of a tool from its
// inputSchema, and the answer to an input request from its requestedSchema. Minimal means the
// required properties only, each the schema's default when it has one, else its first enum or
// const value, else the smallest value its constraints allow.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// Bounds on the work of building one value (issue 20, class 9). A schema comes from the
// server and is hostile input: $ref cycles through anyOf/oneOf/allOf, long $ref chains, deep
// nesting and huge minItems or minLength must cost the checker little and end in a clear
// "cannot build", never a loop, a combinatorial explosion or an allocation without bound.
const (
	// maxDepth bounds recursion through nested and self-referencing schemas.
	maxDepth = 8
	// maxSteps bounds the schema nodes (and $ref path segments, allOf parts, pattern bytes)
	// one value may cost: a real inputSchema needs a few dozen; 200 alternatives that each
	// refer back to themselves would need 200^depth.
	maxSteps = 10000
	// maxItems bounds minItems: an argument list a tool really needs is short.
	maxItems = 64
	// maxOutput bounds the bytes of strings and the count of values one built value holds.
	maxOutput = 64 << 10
	// checkEvery is how many steps pass between two looks at the time budget.
	checkEvery = 256
)

// errTooMuchWork ends a build whose schema costs more than the bounds above.
var errTooMuchWork = errors.New("its schema is too costly to satisfy")

// builder builds one value within the work bounds and the time budget of ctx.
type builder struct {
	ctx   context.Context
	root  map[string]any
	steps int
	size  int
}

// charge counts n steps of work, and looks at the time budget now and then.
func (b *builder) charge(n int) error {
	before := b.steps
	b.steps += n
	if b.steps > maxSteps {
		return fmt.Errorf("%w (more than %d steps: a $ref cycle, or too many alternatives)", errTooMuchWork, maxSteps)
	}
	if b.ctx != nil && b.steps/checkEvery != before/checkEvery && b.ctx.Err() != nil {
		return errBudget
	}
	return nil
}

// grow counts n units (bytes of a string, or one value) into the built value.
func (b *builder) grow(n int) error {
	b.size += n
	if b.size > maxOutput {
		return fmt.Errorf("%w (the value would exceed %d KiB)", errTooMuchWork, maxOutput>>10)
	}
	return nil
}

// tooDeep is a build that went past maxDepth at the property path it names.
type tooDeep string

func (e tooDeep) Error() string { return where(string(e)) + ": the schema nests too deeply" }

// fatal says whether err ends the whole build, rather than one alternative of an anyOf.
func fatal(err error) bool { return errors.Is(err, errTooMuchWork) || errors.Is(err, errBudget) }

// buildArgs returns minimal valid arguments for a tool's inputSchema, or why it cannot. The
// work is bounded (maxSteps, maxItems, maxOutput), and ctx's end (the time budget) ends it
// with errBudget.
func buildArgs(ctx context.Context, schema json.RawMessage) (map[string]any, error) {
	if len(schema) == 0 || string(schema) == "null" {
		return map[string]any{}, nil
	}
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("its inputSchema is not a JSON object")
	}
	b := &builder{ctx: ctx, root: root}
	v, err := b.build(root, "", 0)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("its inputSchema does not describe an object")
	}
	return m, nil
}

// build returns a minimal value valid against s; at is the property path, for messages.
func (b *builder) build(s map[string]any, at string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, tooDeep(at) // met often in a cycle: formatted only if shown
	}
	if err := b.charge(1); err != nil {
		return nil, err
	}
	if err := b.grow(1); err != nil {
		return nil, err
	}
	if ref, ok := s["$ref"].(string); ok {
		if err := b.charge(strings.Count(ref, "/")); err != nil {
			return nil, err
		}
		t, err := resolve(b.root, ref)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where(at), err)
		}
		return b.build(t, at, depth+1)
	}
	if v, ok := s["default"]; ok {
		return v, nil
	}
	if v, ok := s["const"]; ok {
		return v, nil
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0], nil
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		merged, err := b.mergeAllOf(s, all)
		if err != nil {
			return nil, err
		}
		return b.build(merged, at, depth+1)
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			if v, done, err := b.buildAlternative(alts, at, depth); done {
				return v, err
			}
		}
	}
	return b.buildTyped(s, at, depth)
}

// buildTyped builds a value of the schema's type.
func (b *builder) buildTyped(s map[string]any, at string, depth int) (any, error) {
	switch typeOf(s) {
	case "object":
		return b.buildObject(s, at, depth)
	case "array":
		return b.buildArray(s, at, depth)
	case "string":
		return b.buildString(s, at)
	case "integer":
		return buildNumber(s, at, true)
	case "number":
		return buildNumber(s, at, false)
	case "boolean":
		return false, nil
	case "null":
		return nil, nil
	}
	return "check", nil // no type: any value will do
}

// mergeAllOf merges the parts of an allOf, and the schema's own keys beside it, into one
// schema: required lists and properties add up, any other key of a later part wins.
func (b *builder) mergeAllOf(s map[string]any, all []any) (map[string]any, error) {
	merged := map[string]any{}
	for _, part := range all {
		pm, ok := part.(map[string]any)
		if !ok {
			continue
		}
		if err := b.charge(1 + len(pm)); err != nil {
			return nil, err
		}
		for k, v := range pm {
			switch k {
			case "required":
				req, _ := merged["required"].([]any)
				more, _ := v.([]any)
				merged["required"] = append(req, more...)
			case "properties":
				props, _ := merged["properties"].(map[string]any)
				if props == nil {
					props = map[string]any{}
				}
				more, _ := v.(map[string]any)
				if err := b.charge(len(more)); err != nil {
					return nil, err
				}
				for pk, pv := range more {
					props[pk] = pv
				}
				merged["properties"] = props
			default:
				merged[k] = v
			}
		}
	}
	for k, v := range s {
		if k != "allOf" {
			if _, ok := merged[k]; !ok {
				merged[k] = v
			}
		}
	}
	return merged, nil
}

// buildAlternative builds the first alternative of a oneOf or anyOf that can be built (null
// last); done is false when no alternative is a schema, so the rest of s decides.
func (b *builder) buildAlternative(alts []any, at string, depth int) (any, bool, error) {
	var firstErr error
	for _, a := range alts {
		am, ok := a.(map[string]any)
		if !ok {
			continue
		}
		if t, _ := am["type"].(string); t == "null" && len(alts) > 1 {
			continue
		}
		v, err := b.build(am, at, depth+1)
		if err == nil {
			return v, true, nil
		}
		if fatal(err) {
			return nil, true, err
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr != nil, firstErr
}

// buildObject builds an object with its required properties, in name order.
func (b *builder) buildObject(s map[string]any, at string, depth int) (any, error) {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	names := make([]string, 0, len(req))
	for _, n := range req {
		if name, ok := n.(string); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		ps, ok := props[name].(map[string]any)
		if !ok {
			if ap, ok := s["additionalProperties"].(map[string]any); ok {
				ps = ap
			} else {
				ps = map[string]any{}
			}
		}
		v, err := b.build(ps, join(at, name), depth+1)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// buildArray builds an array of the fewest items the schema allows.
func (b *builder) buildArray(s map[string]any, at string, depth int) (any, error) {
	min := num(s, "minItems", 0)
	if min > maxItems {
		return nil, fmt.Errorf("%s: needs at least %.0f items; mcptask check builds at most %d", where(at), min, maxItems)
	}
	n := int(min)
	out := make([]any, 0, n)
	items, _ := s["items"].(map[string]any)
	if items == nil {
		items = map[string]any{}
	}
	for i := 0; i < n; i++ {
		v, err := b.build(items, fmt.Sprintf("%s[%d]", at, i), depth+1)
		if err != nil {
			return nil, err
		}
		if s["uniqueItems"] == true && i > 0 {
			return nil, fmt.Errorf("%s: needs %d distinct items, which cannot be built", where(at), n)
		}
		out = append(out, v)
	}
	return out, nil
}

func where(at string) string {
	if at == "" {
		return "the arguments"
	}
	return "argument " + at
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if n, ok := x.(string); ok && n != "null" {
				return n
			}
		}
		return "null"
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	if _, ok := s["items"]; ok {
		return "array"
	}
	return ""
}

func min64(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}

func num(s map[string]any, key string, def float64) float64 {
	if f, ok := s[key].(float64); ok {
		return f
	}
	return def
}

func resolve(root map[string]any, ref string) (map[string]any, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("refers outside its schema (%s)", ref)
	}
	var cur any = root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/") {
		if part == "" {
			continue
		}
		if strings.Contains(part, "~") {
			part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("cannot resolve %s", ref)
		}
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("cannot resolve %s", ref)
	}
	return m, nil
}

// sample strings for formats the schema may ask for.
var formats = map[string]string{
	"uri": "https://example.com/", "uri-reference": "https://example.com/", "url": "https://example.com/",
	"iri": "https://example.com/", "email": "check@example.com", "idn-email": "check@example.com",
	"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "time": "00:00:00Z",
	"uuid": "00000000-0000-4000-8000-000000000000", "hostname": "example.com", "ipv4": "127.0.0.1",
	"ipv6": "::1", "duration": "PT1S",
}

func (b *builder) buildString(s map[string]any, at string) (any, error) {
	minF := num(s, "minLength", 0)
	if minF > maxOutput {
		return nil, fmt.Errorf("%s: needs a string of at least %.0f characters; mcptask check builds at most %d", where(at), minF, maxOutput)
	}
	min := int(minF)
	max := int(min64(num(s, "maxLength", math.MaxInt32), math.MaxInt32))
	if err := b.grow(min); err != nil {
		return nil, err
	}
	cands := []string{}
	if f, ok := s["format"].(string); ok {
		if v, ok := formats[f]; ok {
			cands = append(cands, v)
		}
	}
	word := "check"
	if min > len(word) {
		word += strings.Repeat("x", min-len(word))
	}
	cands = append(cands, word, "a", "1", "check-1", "")
	pat, hasPat := s["pattern"].(string)
	var re *regexp.Regexp
	if hasPat {
		if err := b.charge(len(pat) / 16); err != nil {
			return nil, err
		}
		var err error
		if re, err = regexp.Compile(pat); err != nil {
			return nil, fmt.Errorf("%s: its pattern %q cannot be read", where(at), pat)
		}
	}
	for _, c := range cands {
		if len(c) > max {
			c = c[:max]
		}
		if len(c) < min {
			continue
		}
		if re != nil && !re.MatchString(c) {
			continue
		}
		return c, nil
	}
	if hasPat {
		return nil, fmt.Errorf("%s: no value built matches its pattern %q", where(at), pat)
	}
	return nil, fmt.Errorf("%s: no string fits minLength %d and maxLength %d", where(at), min, max)
}

func buildNumber(s map[string]any, at string, integer bool) (any, error) {
	lo, hi := math.Inf(-1), math.Inf(1)
	loEx, hiEx := false, false
	if v, ok := s["minimum"].(float64); ok {
		lo = v
	}
	if v, ok := s["maximum"].(float64); ok {
		hi = v
	}
	if v, ok := s["exclusiveMinimum"].(float64); ok && v >= lo {
		lo, loEx = v, true
	}
	if v, ok := s["exclusiveMaximum"].(float64); ok && v <= hi {
		hi, hiEx = v, true
	}
	fits := func(x float64) bool {
		return (x > lo || (!loEx && x == lo)) && (x < hi || (!hiEx && x == hi)) && !math.IsInf(x, 0)
	}
	// Small and positive if allowed (a count or a duration rather than a surprising zero),
	// else the bound nearest to it, else a whole step inside it, else the middle.
	cands := []float64{1, lo, hi, lo + 1, hi - 1, math.Floor(lo) + 1, math.Ceil(hi) - 1, (lo + hi) / 2}
	for _, x := range cands {
		if integer {
			x = math.Ceil(x)
		}
		if m, ok := s["multipleOf"].(float64); ok && m > 0 {
			x = math.Ceil(x/m) * m
		}
		if fits(x) {
			if integer {
				return int64(x), nil
			}
			return x, nil
		}
	}
	return nil, fmt.Errorf("%s: no number fits its bounds", where(at))
}

// answerRequest returns a minimal answer to an input request: an ElicitResult for
// elicitation/create (accepting a form with values built from its requestedSchema; declining
// a URL, which the checker cannot open), a CreateMessageResult for sampling/createMessage, a
// ListRootsResult for roots/list.
func answerRequest(method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "elicitation/create":
		var p struct {
			Mode            string          `json:"mode"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}
		_ = json.Unmarshal(params, &p)
		if p.Mode == "url" {
			return json.RawMessage(`{"action":"decline"}`), nil
		}
		// The work bounds of the builder apply; an answer costs no more than that, so it
		// needs no budget of its own.
		content, err := buildArgs(context.Background(), p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("cannot fill its form: %v", err)
		}
		return json.Marshal(map[string]any{"action": "accept", "content": content})
	case "sampling/createMessage":
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"check"},"model":"mcptask-check"}`), nil
	case "roots/list":
		return json.RawMessage(`{"roots":[]}`), nil
	}
	return nil, errors.New("not an input request mcptask check knows")
}

// answerEntry answers one 2026-07-28 inputRequests entry, {method, params}.
func answerEntry(entry json.RawMessage) (json.RawMessage, error) {
	var rq struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(entry, &rq)
	return answerRequest(rq.Method, rq.Params)
}
