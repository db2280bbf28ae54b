package bridge

import (
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/proxy"
)

// Flags are the bridge's flags of `mcptask proxy`.
type Flags struct {
	// On is --bridge-tasks, OnInput --on-input (fail, decline or exec:CMD) and ProgressEvery
	// --bridge-progress.
	On            bool
	OnInput       string
	ProgressEvery time.Duration
}

// ProxyOptions is the proxy's bridge for fl, nil when --bridge-tasks is off. answerer makes
// the answerer of --on-input decline or exec:CMD (the command layer reads answer flags); with
// fail, or none, a question the host cannot take fails its call. Flags that do not fit are
// UsageErrors; answerer's errors come back as they are.
func ProxyOptions(fl Flags, answerer func(onInput string) (follow.Answerer, error)) (*proxy.BridgeOptions, error) {
	if !fl.On {
		if fl.OnInput != "" {
			return nil, exitcode.Usagef("--on-input applies to --bridge-tasks only: without it the host answers its own tasks' questions")
		}
		return nil, nil
	}
	if fl.ProgressEvery < 100*time.Millisecond {
		return nil, exitcode.Usagef("--bridge-progress %s: want at least 100ms", fl.ProgressEvery)
	}
	var onInput follow.Answerer
	switch {
	case fl.OnInput == "" || fl.OnInput == "fail":
	case fl.OnInput == "decline" || strings.HasPrefix(fl.OnInput, "exec:"):
		ans, err := answerer(fl.OnInput)
		if err != nil {
			return nil, err
		}
		onInput = ans
	default:
		return nil, exitcode.Usagef("--on-input %q: want fail, decline or exec:CMD (the proxy has no terminal to prompt on)", fl.OnInput)
	}
	return &proxy.BridgeOptions{ProgressEvery: fl.ProgressEvery, Follow: New(onInput)}, nil
}
