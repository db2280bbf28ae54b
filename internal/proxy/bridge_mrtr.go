package proxy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// A 2026-07-28 host that does not speak Tasks asks its questions the way the era defines for a
// plain request: multi-round-trip requests (C26-MRTR). When a bridged task waits for input and
// the host's tools/call declared the capability the questions need (elicitation, sampling,
// roots in its _meta client capabilities), the proxy answers that tools/call with an
// InputRequiredResult {resultType "input_required", inputRequests, requestState}. The host
// retries its tools/call with a new id, inputResponses and the requestState echoed; the proxy
// knows the retry by its requestState, sends the answers to the task with tasks/update, and
// follows the task on, answering the retried request with the task's result, or another
// input_required round. The requestState names the task and carries an HMAC under a secret of
// this proxy run, so a host cannot make one up for a task it was never handed (another host's
// task). The task stays in the ledger throughout: a host that never retries leaves it waiting
// for `mcptask update`.

// mrtrStatePrefix starts the requestState of the proxy's own input_required rounds; any other
// requestState is the server's own MRTR round, which goes to the server as it is.
const mrtrStatePrefix = "mcptask-bridge."

// errBadState is a requestState that looks like the proxy's but is not one it made.
var errBadState = errors.New("the requestState was not made by this mcptask proxy (altered, or made by an earlier run of it)")

// mrtrState is the requestState of an input_required round of task id, run by tool.
func (b *bridge) mrtrState(id, tool string) string {
	payload, _ := json.Marshal(map[string]string{"t": id, "n": tool})
	p := base64.RawURLEncoding.EncodeToString(payload)
	return mrtrStatePrefix + p + "." + base64.RawURLEncoding.EncodeToString(b.mac(p))
}

func (b *bridge) mac(payload string) []byte {
	m := hmac.New(sha256.New, b.secret[:])
	m.Write([]byte(payload))
	m.Write([]byte{0})
	m.Write([]byte(b.p.opts.Server.Key()))
	return m.Sum(nil)
}

// parseMRTRState returns the task id and tool of a requestState the proxy made; ours is false
// for any other requestState (the server's own), and err is set for one that looks like the
// proxy's but fails its check.
func (b *bridge) parseMRTRState(raw json.RawMessage) (id, tool string, ours bool, err error) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || !strings.HasPrefix(s, mrtrStatePrefix) {
		return "", "", false, nil
	}
	p, sig, ok := strings.Cut(strings.TrimPrefix(s, mrtrStatePrefix), ".")
	if !ok || len(s) > 4096 {
		return "", "", true, errBadState
	}
	got, derr := base64.RawURLEncoding.DecodeString(sig)
	if derr != nil || !hmac.Equal(got, b.mac(p)) {
		return "", "", true, errBadState
	}
	payload, derr := base64.RawURLEncoding.DecodeString(p)
	var v struct {
		T string `json:"t"`
		N string `json:"n"`
	}
	if derr != nil || json.Unmarshal(payload, &v) != nil || v.T == "" {
		return "", "", true, errBadState
	}
	return v.T, v.N, true, nil
}

// hostInputCaps reads what a 2026-07-28 request declares it can answer (C26-MRTR: the server
// sends only input requests of the kinds the client declared): the elicitation modes,
// sampling, roots. nil when it declares none.
func hostInputCaps(params json.RawMessage) *inputCaps {
	var p struct {
		Meta struct {
			Caps map[string]json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta.Caps == nil {
		return nil
	}
	c := &inputCaps{}
	if e, ok := p.Meta.Caps["elicitation"]; ok {
		var modes map[string]json.RawMessage
		_ = json.Unmarshal(e, &modes)
		_, form := modes["form"]
		_, url := modes["url"]
		// An elicitation capability that names no mode means form (C26-SCHEMA
		// ClientCapabilities.elicitation, as in 2025-11-25).
		c.form = form || !url
		c.url = url
	}
	_, c.sampling = p.Meta.Caps["sampling"]
	_, c.roots = p.Meta.Caps["roots"]
	if !c.form && !c.url && !c.sampling && !c.roots {
		return nil
	}
	return c
}

// inputCaps are the kinds of question a 2026-07-28 host declared it can answer.
type inputCaps struct{ form, url, sampling, roots bool }

// can reports whether the host can answer question r.
func (c *inputCaps) can(r Question) bool {
	if c == nil {
		return false
	}
	switch r.Method {
	case "elicitation/create":
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(r.Params, &p)
		if p.Mode == "url" {
			return c.url
		}
		return c.form
	case "sampling/createMessage":
		return c.sampling
	case "roots/list":
		return c.roots
	}
	return false
}

// inputRequired is the InputRequiredResult that hands the host the questions of task id.
func (b *bridge) inputRequired(id, tool string, reqs []Question) (json.RawMessage, error) {
	in := make(map[string]any, len(reqs))
	for _, r := range reqs {
		q := map[string]any{"method": r.Method}
		if len(r.Params) > 0 {
			q["params"] = r.Params
		}
		in[r.Key] = q
	}
	return json.Marshal(map[string]any{"resultType": "input_required", "inputRequests": in, "requestState": b.mrtrState(id, tool)})
}
