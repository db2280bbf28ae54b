package usagetext

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Wrap refills prose to the width, keeps a table's rows (a long one going on below its last
// column), and never breaks a quoted command.
func TestWrap(t *testing.T) {
	text := "A paragraph of words that goes on for longer than the width allows, so it wraps.\n" +
		"and continues here, see 'mcptask help exit-codes' for more.\n\n" +
		"EXIT STATUS\n  0 fine; 1 an error of the transport or the protocol; 2 a usage error\n  (nothing sent).\n\n" +
		"  124  timeout         --timeout reached; the task keeps running and stays resumable\n" +
		"    0  ok              fine"
	got := Wrap(text, 50)
	for _, line := range strings.Split(got, "\n") {
		if len(line) > 50 {
			t.Errorf("line wider than 50: %q", line)
		}
	}
	for _, want := range []string{
		"'mcptask help exit-codes'",                          // a command stays on one line
		"  0 fine; 1 an error of the transport or the",       // the prose block refilled at its indent
		"  124  timeout         --timeout reached; the task", // the table row keeps its columns
		"\n                       keeps running",             // and goes on below its last column
		"    0  ok              fine",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Wrap lacks %q:\n%s", want, got)
		}
	}
}

// Flags are laid out in one column fitting the width, with mcptask's placeholders: D for a
// duration, N for a number, the flag's last word for a string; a name too long for the column
// has its description below it.
func TestFlagBlock(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Duration("timeout", 0, "give up after this long, which is a long description that must wrap somewhere")
	fs.Int("max-conns", 8, "at most this many")
	fs.String("auth-store", "auto", "where credentials live")
	fs.String("args", "", "tool arguments as a `JSON` object")
	fs.String("a-very-long-flag-name-indeed", "", "described below")
	got := flagBlock(fs, 60)
	for _, line := range strings.Split(got, "\n") {
		if len(line) > 60 {
			t.Errorf("line wider than 60: %q", line)
		}
	}
	for _, want := range []string{"--timeout D ", "--max-conns N ", "--auth-store STORE\n", "--args JSON ", "(default 8)",
		"--a-very-long-flag-name-indeed INDEED\n                        described below"} {
		if !strings.Contains(got, want) {
			t.Errorf("flags lack %q:\n%s", want, got)
		}
	}
}
