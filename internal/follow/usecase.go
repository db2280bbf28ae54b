package follow

import (
	"context"
	"encoding/json"
	"errors"

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

// typeArgs types call.Pairs from the tool's inputSchema into call.Params.Arguments; a tool
// the server does not list types them as if it had no schema.
func (call *Call) typeArgs(ctx context.Context, c *rpc.Client) error {
	if len(call.Pairs) == 0 {
		return nil
	}
	var tool *rpc.Tool
	err := call.Guard.run(ctx, "tools/list", func(ctx context.Context) (err error) {
		tool, err = c.Tool(ctx, call.Params.Name)
		return err
	})
	if err != nil {
		return err
	}
	var schema json.RawMessage
	if tool != nil {
		schema = tool.InputSchema
	}
	if call.Params.Arguments == nil {
		call.Params.Arguments = map[string]any{}
	}
	return toolargs.Type(call.Params.Arguments, call.Pairs, schema)
}

// MaxInputRounds bounds the multi-round-trip retries of one tools/call (C26-MRTR).
const MaxInputRounds = 16

// Call is one tools/call with multi-round-trip input (C26-MRTR).
type Call struct {
	Params rpc.CallParams
	// Pairs are arguments given as key=value (call --arg), typed from the tool's inputSchema
	// (one tools/list, through Guard) and set into Params.Arguments before the call; they win
	// over what Arguments held for their key. A value of the wrong type is a
	// *exitcode.UsageError, and nothing is called.
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
	if err := call.typeArgs(wctx, c); err != nil {
		return nil, err
	}
	res, err := c.CallTool(wctx, call.Params)
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
