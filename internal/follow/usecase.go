package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/suggest"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/toolargs"
)

// Guard runs one request (what names it) under the bound of one answer, and explains an error
// the wait ended with (mcptask's --connect-timeout, or the command's --timeout). The use cases
// of this package call every request that waits for a server's answer through it. A nil Guard
// runs the request as it is.
type Guard func(ctx context.Context, what string, req func(context.Context) error) error

func (g Guard) run(ctx context.Context, what string, req func(context.Context) error) error {
	if g == nil {
		return req(ctx)
	}
	return g(ctx, what, req)
}

// prepare types call.Pairs from the tool's inputSchema into call.Params.Arguments and checks
// the arguments and the tool's name against the server's tool list, so that a typo is a
// usage error before anything is sent (toolargs.Check says what is refused). The list comes
// from this run or the metadata cache, as the tools/call would need it anyway; a list
// read from the cache is fetched again before anything is refused on its word. A server
// that answers tools/list with an error or a list mcptask cannot read is called unchecked,
// unless --arg pairs need the schema.
func (call *Call) prepare(ctx context.Context, c *rpc.Client) error {
	name := call.Params.Name
	lookup := func(fresh bool) (tool *rpc.Tool, err error) {
		err = call.Guard.run(ctx, "tools/list", func(ctx context.Context) (err error) {
			if fresh {
				if _, _, err = c.ListTools(ctx); err != nil {
					return err
				}
			}
			tool, err = c.Tool(ctx, name)
			return err
		})
		return tool, err
	}
	tool, err := lookup(false)
	var rerr *rpc.Error
	if err != nil && len(call.Pairs) == 0 && (errors.As(err, &rerr) || errors.Is(err, rpc.ErrMalformed)) {
		return nil // no list to check against: the server decides
	}
	if err != nil {
		return err
	}
	if call.Params.Arguments == nil {
		call.Params.Arguments = map[string]any{}
	}
	refused := call.check(c, tool)
	if refused != nil && c.ToolsFromCache() {
		if tool, err = lookup(true); err != nil {
			return err
		}
		refused = call.check(c, tool)
	}
	return refused
}

// check types the pairs and checks the call against tool (nil: the server lists no such
// tool).
func (call *Call) check(c *rpc.Client, tool *rpc.Tool) error {
	name := call.Params.Name
	args := maps.Clone(call.Params.Arguments)
	if tool == nil {
		// A tool the list lacks is refused only when it is plainly a typo of one it has: a
		// server may accept a tool it does not list, and is then left to say so.
		if near := suggest.Closest(name, c.ToolNames()); len(near) > 0 {
			return exitcode.Usagef("the server has no tool %q; did you mean %s? ('mcptask tools' lists them)", name, suggest.Phrase(near))
		}
		if err := toolargs.Type(args, call.Pairs, nil); err != nil {
			return err
		}
		call.Params.Arguments = args
		call.unlisted = len(c.ToolNames()) > 0 || c.ToolsFromCache()
		return nil
	}
	if err := toolargs.Type(args, call.Pairs, tool.InputSchema); err != nil {
		return err
	}
	flagged := map[string]bool{}
	for _, p := range call.Pairs {
		flagged[p.Key] = true
	}
	if err := toolargs.Check(name, args, flagged, tool.InputSchema); err != nil {
		return err
	}
	call.Params.Arguments = args
	return nil
}

// MaxInputRounds bounds the multi-round-trip retries of one tools/call (C26-MRTR).
const MaxInputRounds = 16

// Call is one tools/call with multi-round-trip input (C26-MRTR).
type Call struct {
	Params rpc.CallParams
	// Pairs are arguments given as key=value (call --arg), typed from the tool's inputSchema
	// (one tools/list, through Guard) and set into Params.Arguments before the call; they win
	// over what Arguments held for their key. A value of the wrong type, a missing required
	// argument, an argument the schema rules out and a misspelled tool are each a
	// *exitcode.UsageError, and nothing is called (prepare).
	Pairs []toolargs.Pair
	Guard Guard
	// Answerer gives the answers given on the command line; it goes first.
	Answerer Answerer
	// About is what the questions are about (Tool, Server).
	About Request
	// Ask, when set, asks a person for what Answerer left open (a terminal); nil responses
	// mean the person gave none.
	Ask func(ctx context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error)
	// Retry is told the keys answered before each retry.
	Retry func(keys []string)

	// unlisted is set when the server's tool list lacks the tool: an error the server
	// answers the call with then says so.
	unlisted bool
}

// CallError is a tools/call that failed; Round 0 is the first call, before any input was
// given.
type CallError struct {
	Tool  string
	Round int
	Err   error
}

func (e *CallError) Error() string { return "call " + e.Tool + ": " + e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// ErrNoInput is returned when a person was asked for a tool's input and gave none.
var ErrNoInput = errors.New("the tool needs input and none was given")

// CallTool sends call.Params on c and, while the server answers with input_required, answers
// and retries with inputResponses and the echoed requestState, as many rounds as the server
// asks (at most MaxInputRounds). wctx bounds the requests (the command's --timeout), ctx the
// answers. A result still asking for input comes back as it is when nothing here answers all
// of it; the caller says what was missing.
func CallTool(ctx, wctx context.Context, c *rpc.Client, call Call) (*rpc.CallResult, error) {
	if err := call.prepare(wctx, c); err != nil {
		return nil, err
	}
	res, err := c.CallTool(wctx, call.Params)
	var rerr *rpc.Error
	if err != nil && call.unlisted && errors.As(err, &rerr) {
		err = fmt.Errorf("%w (the server lists no tool %q; 'mcptask tools' lists them)", err, call.Params.Name)
	}
	if err != nil {
		return nil, &CallError{Tool: call.Params.Name, Err: err}
	}
	for round := 1; res.Kind == rpc.KindInputRequired && round <= MaxInputRounds; round++ {
		responses, err := Respond(ctx, call.Answerer, call.About, res.InputRequests)
		if err != nil {
			return nil, err
		}
		if responses == nil && call.Ask != nil {
			if responses, err = call.Ask(ctx, res.InputRequests); err != nil {
				return nil, err
			}
			if responses == nil {
				return nil, ErrNoInput
			}
		}
		if len(responses) < len(res.InputRequests) {
			break
		}
		if call.Retry != nil {
			call.Retry(sortedKeys(responses))
		}
		p := call.Params
		p.ProgressToken, p.InputResponses, p.RequestState = "", responses, res.RequestState
		if res, err = c.CallTool(wctx, p); err != nil {
			return nil, &CallError{Tool: call.Params.Name, Round: round, Err: err}
		}
	}
	return res, nil
}
