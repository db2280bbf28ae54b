// Package proc starts the programs a user names for mcptask to run (an --on-complete hook, an
// --on-input exec: program) so that ending them ends everything they started: on Unix each
// runs in a process group of its own, and cancelling it kills the group. It is a package
// because both the command layer (hooks) and internal/follow/answerexec (answering programs)
// need the same, platform-specific, few lines.
package proc
