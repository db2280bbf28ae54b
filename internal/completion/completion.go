// Package completion tells the world outside mcptask that a task ended, for a person or a
// script that is not watching: it runs the user's command (--on-complete, Hooks) and notifies
// the desktop through the terminal (--notify, Notifier). It is one package because both are
// one idea with one trigger: a task's end, as the command judged it (Ended), turned into a
// message to someone else; the Sink wires both to the follow engine. It sits beside
// internal/follow, as answerexec does, because the engine starts no processes, and apart from
// internal/ci, which writes the job log rather than telling anyone.
package completion

import (
	"time"

	"github.com/mcptask/mcptask/internal/follow"
)

// Ended is the end of one task as the command judged it: what a hook is given and a
// notification says.
type Ended struct {
	TaskID, Tool, Server string
	// Outcome is the end's name (MCPTASK_STATUS): completed, failed, cancelled, expired,
	// input_required, timeout, interrupted, error.
	Outcome string
	// Code is the exit code the task's end means (MCPTASK_EXIT_CODE).
	Code int
	// Envelope is the task's --json envelope, already encoded: a hook's stdin.
	Envelope []byte
	// Took is how long the task was followed, or lived.
	Took time.Duration
}

// Sink is the follow engine's sink (follow.Sink) that runs the hook and sends the notification
// of each task that ends. Either may be nil.
type Sink struct {
	Hooks    *Hooks
	Notifier *Notifier
	// End judges the end of a task that ended at the given time; it is asked once per task,
	// and only when there is a hook or a notifier.
	End func(o follow.Outcome, at time.Time) Ended
}

// Event implements follow.Sink.
func (s *Sink) Event(ev follow.Event) {
	if s == nil || ev.Kind != follow.KindResult || ev.Outcome == nil || (s.Hooks == nil && s.Notifier == nil) {
		return
	}
	e := s.End(*ev.Outcome, ev.Time)
	s.Hooks.Start(e)
	s.Notifier.Notify(e)
}
