package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
)

// declineAll stands for the answerer the command layer makes of --on-input.
type declineAll struct{}

func (declineAll) Answer(context.Context, follow.Request) (json.RawMessage, bool, error) {
	return nil, false, nil
}

// TestProxyOptions: the bridge flags become the proxy's bridge: off without --bridge-tasks,
// --on-input's answerer made only for decline and exec:, and what does not fit refused as a
// usage error before anything runs.
func TestProxyOptions(t *testing.T) {
	var asked []string
	answerer := func(mode string) (follow.Answerer, error) {
		asked = append(asked, mode)
		if mode == "exec:" {
			return nil, errors.New("no program given")
		}
		return declineAll{}, nil
	}
	if b, err := ProxyOptions(Flags{ProgressEvery: time.Second}, answerer); b != nil || err != nil {
		t.Errorf("bridge off: %v %v, want nothing", b, err)
	}
	b, err := ProxyOptions(Flags{On: true, ProgressEvery: 2 * time.Second}, answerer)
	if err != nil || b == nil || b.ProgressEvery != 2*time.Second || b.Follow.Answers() {
		t.Errorf("--bridge-tasks: %+v %v, want a bridge that answers nothing itself", b, err)
	}
	b, err = ProxyOptions(Flags{On: true, OnInput: "decline", ProgressEvery: time.Second}, answerer)
	if err != nil || b == nil || !b.Follow.Answers() {
		t.Errorf("--on-input decline: %+v %v, want a bridge with the answerer", b, err)
	}
	if _, err := ProxyOptions(Flags{On: true, OnInput: "exec:", ProgressEvery: time.Second}, answerer); err == nil || err.Error() != "no program given" {
		t.Errorf("the answerer's error: %v, want it as it is", err)
	}
	if strings.Join(asked, ",") != "decline,exec:" {
		t.Errorf("answerer made for %q, want for decline and exec: only", asked)
	}
	for want, fl := range map[string]Flags{
		"applies to --bridge-tasks only": {OnInput: "decline", ProgressEvery: time.Second},
		"want at least 100ms":            {On: true, ProgressEvery: 50 * time.Millisecond},
		"no terminal to prompt on":       {On: true, OnInput: "prompt", ProgressEvery: time.Second},
	} {
		var ue *exitcode.UsageError
		if _, err := ProxyOptions(fl, answerer); !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want a exitcode.UsageError saying %q", fl, err, want)
		}
	}
}
