package cmd

import (
	"time"

	"github.com/spf13/cobra"
)

// WaitFlags are the flags of every command that waits for tasks: --timeout and --interval.
type WaitFlags struct {
	Timeout  time.Duration
	Interval time.Duration
	// Once is --timeout 0: check once and exit (8 when still running).
	Once bool
}

// AddFlags registers --timeout and --interval on c.
func (w *WaitFlags) AddFlags(c *cobra.Command) {
	c.Flags().DurationVar(&w.Timeout, "timeout", 0, "give up waiting after this long (exit 124); 0 checks once (exit 8 while still running); the task keeps running")
	c.Flags().DurationVar(&w.Interval, "interval", 0, "poll no faster than this (can only slow the server's suggested interval)")
}

// resolve reads what the flags mean once parsed: --timeout 0 given explicitly is Once.
func (w *WaitFlags) resolve(c *cobra.Command) error {
	w.Once = c.Flags().Changed("timeout") && w.Timeout == 0
	if w.Timeout < 0 || w.Interval < 0 {
		return flagErrorf("--timeout and --interval must not be negative")
	}
	return nil
}

// addJSONLFlag registers --jsonl, which implies --json for everything but the event stream.
func addJSONLFlag(c *cobra.Command, f *Factory) {
	c.Flags().BoolVar(&f.Global.JSONL, "jsonl", false, "stream JSON events on stdout, one a line (status, progress, result…)")
}
