package completion

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/proc"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// MaxHooks is how many hook commands run at once: a thousand tasks that end together must not
// start a thousand processes.
const MaxHooks = 4

// Hooks runs the user's command when a task ends (--on-complete): no shell (a user who wants
// one writes it), the task's envelope on stdin, the task in its environment, its output on
// Stderr, bounded by Timeout. A hook's failure is reported on Stderr and changes nothing else.
// Make it with NewHooks.
type Hooks struct {
	command string
	argv    []string
	argvErr error

	// Timeout bounds one run; past it the hook's process group is killed.
	Timeout time.Duration
	// Stderr gets the hook's stdout and stderr, and the reports of hooks that failed.
	Stderr io.Writer
	// ErrorText renders an error of mcptask's own for Stderr (nil: its text as is).
	ErrorText func(error) string

	slots chan struct{} // bounds the hooks running at once (MaxHooks)
	wg    sync.WaitGroup
}

// NewHooks returns the Hooks that run argv, which the command layer split from command (as it
// splits --stdio); err is why it could not, and a hook that cannot run is reported at each
// task's end, as one that fails is.
func NewHooks(command string, argv []string, err error) *Hooks {
	if err == nil && len(argv) == 0 {
		err = errors.New("no command")
	}
	return &Hooks{command: command, argv: argv, argvErr: err, Timeout: time.Minute, Stderr: io.Discard, slots: make(chan struct{}, MaxHooks)}
}

// Start runs the hook for the task that ended, in the background: at most MaxHooks at once,
// the rest wait their turn. Wait waits for them all.
func (h *Hooks) Start(e Ended) {
	if h == nil {
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.slots <- struct{}{}
		defer func() { <-h.slots }()
		h.run(e)
	}()
}

// Wait waits for the hooks started so far to end.
func (h *Hooks) Wait() {
	if h != nil {
		h.wg.Wait()
	}
}

// run runs the hook for one task and reports how it failed.
func (h *Hooks) run(e Ended) {
	report := func(format string, args ...any) {
		fmt.Fprintf(h.Stderr, "mcptask: --on-complete for task %s: %s\n", termsafe.Line(e.TaskID), fmt.Sprintf(format, args...))
	}
	if h.argvErr != nil {
		report("cannot run %q: %v", h.command, h.argvErr)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.argv[0], h.argv[1:]...)
	cmd.Stdin = bytes.NewReader(e.Envelope)
	// One writer for both: os/exec then lets one goroutine at a time write to it.
	cmd.Stdout, cmd.Stderr = h.Stderr, h.Stderr
	var err error
	cmd.Env, err = environment(e)
	if err != nil {
		report("MCPTASK_TASK_ID is not set: %s", h.errorText(err))
	}
	// The whole process group goes when the time is up: a hook that started children must
	// not outlive it.
	proc.Group(cmd)
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		report("%s did not end within %s and was killed (--on-complete-timeout)", h.argv[0], h.Timeout)
	case err != nil:
		report("%s: %v", h.argv[0], err)
	}
}

func (h *Hooks) errorText(err error) string {
	if h.ErrorText == nil {
		return err.Error()
	}
	return h.ErrorText(err)
}

// environment is the hook's: mcptask's own and the task's. It is read by scripts that print it
// or pass it on: the tool and server are cleaned and cut, and an id that is not plain visible
// ASCII (rpc.CheckTaskID) is left out rather than passed on raw, with the reason; the envelope
// on stdin keeps the exact values as JSON.
func environment(e Ended) ([]string, error) {
	env := append(os.Environ(),
		"MCPTASK_STATUS="+e.Outcome,
		"MCPTASK_EXIT_CODE="+strconv.Itoa(e.Code),
		"MCPTASK_TOOL="+termsafe.Line(termsafe.Cut(e.Tool)),
		"MCPTASK_SERVER="+termsafe.Line(termsafe.Cut(e.Server)),
	)
	if err := rpc.CheckTaskID(e.TaskID); err != nil {
		return env, err
	}
	return append(env, "MCPTASK_TASK_ID="+e.TaskID), nil
}
