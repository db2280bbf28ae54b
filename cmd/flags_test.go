package cmd

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// parsed runs args through the real command tree with one command rebuilt around a runF that
// keeps the options it is given instead of running: what the flags parse to, without a
// server. It returns the error the tree returned (nil when runF was reached).
func parsed[O any](t *testing.T, name string, build func(*Factory, func(context.Context, *O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &lockedBuffer{}, ErrOut: &lockedBuffer{}})
	f.Getenv = func(k string) string {
		switch k {
		case "MCPTASK_STATE":
			return testLedger(t)
		case "XDG_STATE_HOME":
			return testStateHome(t)
		case "XDG_CONFIG_HOME", "HOME":
			return t.TempDir()
		}
		return ""
	}
	root := NewCmdRoot(f)
	for _, c := range root.Commands() {
		if c.Name() == name {
			root.RemoveCommand(c)
		}
	}
	var got *O
	root.AddCommand(build(f, func(_ context.Context, o *O) error { got = o; return nil }))
	err := execute(t.Context(), f, root, append([]string{name}, args...))
	if err == nil && got == nil {
		t.Fatalf("%s %q: runF was not reached", name, args)
	}
	return got, err
}

// usage asserts that err is a usage error (exit 2) that says want.
func usage(t *testing.T, err error, want string) {
	t.Helper()
	var fe *FlagError
	if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
		t.Errorf("want a usage error saying %q, got %v", want, err)
	}
}

// Every command built with a runF parses its arguments and flags into its options, and
// refuses bad ones as usage errors before anything runs (issue 21: runF is used by the
// flag-parsing table tests, for every command that has one).
func TestFlagsParseIntoOptions(t *testing.T) {
	t.Run("call", func(t *testing.T) {
		o, err := parsed(t, "call", NewCmdCall, "build", "--arg", "a=1", "--arg", "b=x", "--ttl", "90s", "--timeout", "0", "--on-input", "decline")
		if err != nil || o.Tool != "build" || !slices.Equal(o.Arg, []string{"a=1", "b=x"}) || o.TTL != 90*time.Second || !o.Once || o.OnInput != "decline" {
			t.Errorf("call parsed to %+v, %v", o, err)
		}
		if o, err := parsed(t, "call", NewCmdCall, "build", "--timeout", "5m"); err != nil || o.Once || o.Timeout != 5*time.Minute {
			t.Errorf("--timeout 5m is not --timeout 0: %+v, %v", o, err)
		}
		_, err = parsed(t, "call", NewCmdCall, "build", "--ttl", "-1s")
		usage(t, err, "must not be negative")
		_, err = parsed(t, "call", NewCmdCall)
		usage(t, err, "call needs a tool name: mcptask call TOOL")
	})
	t.Run("cancel", func(t *testing.T) {
		o, err := parsed(t, "cancel", NewCmdCancel, "t1", "t2", "--wait", "--timeout", "2m")
		if err != nil || !slices.Equal(o.TaskIDs, []string{"t1", "t2"}) || !o.Wait || o.Timeout != 2*time.Minute {
			t.Errorf("cancel parsed to %+v, %v", o, err)
		}
		_, err = parsed(t, "cancel", NewCmdCancel, "t1", "--timeout", "2m")
		usage(t, err, "--timeout applies to cancel --wait only")
	})
	t.Run("get", func(t *testing.T) {
		if o, err := parsed(t, "get", NewCmdGet, "t1"); err != nil || o.TaskID != "t1" {
			t.Errorf("get parsed to %+v, %v", o, err)
		}
		_, err := parsed(t, "get", NewCmdGet, "t1", "t2")
		usage(t, err, "arg")
	})
	t.Run("result", func(t *testing.T) {
		o, err := parsed(t, "result", NewCmdResult, "t1", "--interval", "3s", "--answer", "name=x")
		if err != nil || o.TaskID != "t1" || o.Interval != 3*time.Second || o.Once || !slices.Equal(o.Answer, []string{"name=x"}) {
			t.Errorf("result parsed to %+v, %v", o, err)
		}
		_, err = parsed(t, "result", NewCmdResult, "t1", "--interval", "-3s")
		usage(t, err, "must not be negative")
	})
	t.Run("list", func(t *testing.T) {
		if o, err := parsed(t, "list", NewCmdList, "-a", "--remote"); err != nil || !o.All || !o.Remote {
			t.Errorf("list parsed to %+v, %v", o, err)
		}
	})
	t.Run("resume", func(t *testing.T) {
		o, err := parsed(t, "resume", NewCmdResume, "--timeout", "0")
		if err != nil || len(o.TaskIDs) != 0 || !o.Once {
			t.Errorf("resume parsed to %+v, %v", o, err)
		}
	})
	t.Run("watch", func(t *testing.T) {
		o, err := parsed(t, "watch", NewCmdWatch, "a", "b", "--answers", "@answers.json")
		if err != nil || !slices.Equal(o.TaskIDs, []string{"a", "b"}) || o.Answers != "@answers.json" {
			t.Errorf("watch parsed to %+v, %v", o, err)
		}
		_, err = parsed(t, "watch", NewCmdWatch)
		usage(t, err, "watch needs a task id: mcptask watch TASK-ID")
	})
	t.Run("update", func(t *testing.T) {
		o, err := parsed(t, "update", NewCmdUpdate, "t1", "--answer", "ok=true")
		if err != nil || o.TaskID != "t1" || o.Timeout != time.Minute || !slices.Equal(o.Answer, []string{"ok=true"}) {
			t.Errorf("update parsed to %+v, %v", o, err)
		}
	})
	t.Run("tools", func(t *testing.T) {
		if o, err := parsed(t, "tools", NewCmdTools); err != nil || o.Name != "" {
			t.Errorf("tools: %+v, %v", o, err)
		}
		if o, err := parsed(t, "tools", NewCmdTools, "sleep"); err != nil || o.Name != "sleep" {
			t.Errorf("tools sleep: %+v, %v", o, err)
		}
		_, err := parsed(t, "tools", NewCmdTools, "sleep", "extra")
		usage(t, err, "tools takes one NAME")
	})
	t.Run("proxy", func(t *testing.T) {
		o, err := parsed(t, "proxy", NewCmdProxy, "--server", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0", "--allowed-host", "a.example", "--no-ledger")
		if err != nil || o.Listen != "127.0.0.1:0" || !slices.Equal(o.AllowedHosts, []string{"a.example"}) || !o.NoLedger {
			t.Errorf("proxy parsed to %+v, %v", o, err)
		}
	})
	t.Run("unknown flag", func(t *testing.T) {
		_, err := parsed(t, "get", NewCmdGet, "t1", "--no-such-flag")
		usage(t, err, "no-such-flag")
	})
}
