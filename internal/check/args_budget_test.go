package check

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/hostile"
)

// buildWithin runs buildArgs on schema in the background and fails the test if it has not
// returned by d: a builder that loops or explodes must be caught, not waited for.
func buildWithin(t *testing.T, ctx context.Context, d time.Duration, schema string) (map[string]any, error) {
	t.Helper()
	type out struct {
		args map[string]any
		err  error
	}
	done := make(chan out, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- out{err: errors.New("panic: " + strings.TrimSpace(strings.SplitN(toString(p), "\n", 2)[0]))}
			}
		}()
		a, err := buildArgs(ctx, json.RawMessage(schema))
		done <- out{a, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case o := <-done:
		return o.args, o.err
	case <-timer.C:
		t.Fatalf("buildArgs did not return within %s on %.120s…", d, schema)
		return nil, nil
	}
}

func toString(p any) string {
	if e, ok := p.(error); ok {
		return e.Error()
	}
	if s, ok := p.(string); ok {
		return s
	}
	return "?"
}

// TestBuildArgsBoundsHostileSchemas plays the server of issue 20, class 9: inputSchemas
// whose $ref cycles run through anyOf/oneOf/allOf, long $ref chains, deep nesting, a huge
// enum and an array of 10^15 items. Each must end quickly in a "cannot build" that says why,
// never loop, explode, panic or allocate without bound.
func TestBuildArgsBoundsHostileSchemas(t *testing.T) {
	schemas := hostile.CyclicSchemas()
	schemas["huge_string"] = `{"type":"object","required":["s"],"properties":{"s":{"type":"string","minLength":100000000}}}`
	schemas["many_required"] = `{"type":"object","required":[` + strings.Repeat(`"a",`, 100000) + `"b"]}`
	schemas["long_strings"] = `{"type":"object","required":["a","b","c","d"],"properties":{"a":{"$ref":"#/$defs/s"},"b":{"$ref":"#/$defs/s"},"c":{"$ref":"#/$defs/s"},"d":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string","minLength":60000}}}`
	for name, schema := range schemas {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			args, err := buildWithin(t, t.Context(), 5*time.Second, schema)
			if err == nil {
				b, _ := json.Marshal(args)
				t.Fatalf("built %.200s", b)
			}
			if strings.HasPrefix(err.Error(), "panic") {
				t.Fatal(err)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("took %s to give up", took)
			}
			t.Logf("%s: %v", name, err)
		})
	}
}

// TestBuildArgsHonoursTheBudget: a build whose time budget (ctx) has run out ends with
// errBudget, which the checker reports as a cut (a skip), never as a failure.
func TestBuildArgsHonoursTheBudget(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// Enough work to reach the first look at the budget, well within the step bound.
	schema := `{"type":"object","required":["x"],"properties":{"x":{"$ref":"#/$defs/loop"}},"$defs":{"loop":{"anyOf":[` +
		strings.TrimSuffix(strings.Repeat(`{"type":"string","pattern":"^a$","maxLength":0},`, 300), ",") + `]}}}`
	_, err := buildWithin(t, ctx, 5*time.Second, schema)
	if !errors.Is(err, errBudget) {
		t.Fatalf("err %v, want the budget cut", err)
	}
	// The same schema with time left is simply unbuildable.
	_, err = buildWithin(t, t.Context(), 5*time.Second, schema)
	if err == nil || errors.Is(err, errBudget) {
		t.Fatalf("err %v, want cannot build", err)
	}
}
