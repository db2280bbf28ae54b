package cmd

import (
	"github.com/mcptask/mcptask/internal/iostreams"
)

// IOStreams is mcptask's terminal streams and its one TTY policy (internal/iostreams).
type IOStreams = iostreams.IOStreams

var (
	// SystemIO returns streams on the process's stdin, stdout and stderr.
	SystemIO = iostreams.System
	// TestIO returns streams on buffers, with no terminal.
	TestIO = iostreams.Test
)
