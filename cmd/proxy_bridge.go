package cmd

import (
	"io"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/proxy"
	"github.com/spf13/cobra"
)

// The flags of `mcptask proxy --bridge-tasks` (issue 22): kept apart from proxy.go so that the
// bridge and the proxy's other flags change without touching each other.

func addBridgeFlags(c *cobra.Command, opts *ProxyOptions) {
	c.Flags().BoolVar(&opts.BridgeTasks, "bridge-tasks", false, "run the tool calls of hosts that do not speak Tasks as tasks: followed by mcptask, kept in the ledger, answered as one ordinary call")
	c.Flags().StringVar(&opts.OnInput, "on-input", "", "with --bridge-tasks, `MODE` for a task's question the host cannot take: fail (the default: the call fails naming 'mcptask update' and the task), decline, or exec:CMD")
	c.Flags().DurationVar(&opts.BridgeProgress, "bridge-progress", proxy.DefaultProgressEvery, "with --bridge-tasks, how often a host that sent a progressToken hears that its task still runs")
}

// bridgeOptions reads the bridge flags; nil when --bridge-tasks is off.
func bridgeOptions(opts *ProxyOptions, stderr io.Writer) (*proxy.BridgeOptions, error) {
	if !opts.BridgeTasks {
		if opts.OnInput != "" {
			return nil, flagErrorf("--on-input applies to --bridge-tasks only: without it the host answers its own tasks' questions")
		}
		return nil, nil
	}
	if opts.BridgeProgress < 100*time.Millisecond {
		return nil, flagErrorf("--bridge-progress %s: want at least 100ms", opts.BridgeProgress)
	}
	bo := &proxy.BridgeOptions{ProgressEvery: opts.BridgeProgress}
	switch {
	case opts.OnInput == "" || opts.OnInput == "fail":
	case opts.OnInput == "decline" || strings.HasPrefix(opts.OnInput, execPrefix):
		// The proxy's stdin may be the host's stream: nothing is read from it.
		a := &AnswerFlags{OnInput: opts.OnInput}
		ans, err := a.parse(strings.NewReader(""), stderr)
		if err != nil {
			return nil, err
		}
		bo.Answerer = ans
	default:
		return nil, flagErrorf("--on-input %q: want fail, decline or exec:CMD (the proxy has no terminal to prompt on)", opts.OnInput)
	}
	return bo, nil
}
