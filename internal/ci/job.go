package ci

import (
	"cmp"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/human"
)

// Job is the CI side of one command run, as a sink of the follow engine (follow.Sink): it
// opens a log group for the lines about each task, and turns each task's end into an
// annotation and a row of the job summary (Finish). What an end means (its name, its message,
// the command that picks the task up again) is the command's to say (Verdict): the command
// owns the exit codes the names follow.
type Job struct {
	// Log is where the groups and annotations go (its Sys says which system, None for none).
	Log *Log
	// Start is when the run started: a task's time counts from here when neither its creation
	// nor its first event is known.
	Start time.Time
	// Verdict says how the end of a task reads. It is asked once per task that ends, and only
	// in a CI job.
	Verdict func(follow.Outcome) Verdict

	mu      sync.Mutex
	engaged bool // an engine reported to this job
	rows    []Row
	seen    map[string]time.Time // when each task was first seen
	tools   map[string]string    // each task's tool
	group   string               // the task whose log group is open
}

// Verdict is how the command reads the end of one task.
type Verdict struct {
	// Outcome is the end's name (Row.Outcome): completed, failed, cancelled, expired,
	// input_required, timeout, interrupted, error; or the task's status for one whose result
	// was left on the server (working, for cancel --wait).
	Outcome string
	// Server is the server as the summary may show it (its secrets redacted).
	Server string
	// Status is the task's last status message and Problem what went wrong, both redacted:
	// the summary shows the first there is, the annotation the other way round.
	Status, Problem string
	// Resume is the command that picks the task up again; it is shown for a task that keeps
	// running (stillRunning).
	Resume string
}

// stillRunning reports whether a task whose end is named outcome keeps running on its server.
func stillRunning(outcome string) bool {
	return outcome == "timeout" || outcome == "interrupted" || outcome == "input_required"
}

// Track notes when each task was first seen and its tool, for the log groups and the times
// taken. The progress printer calls it too, before it prints the first line of a task.
func (j *Job) Track(ev follow.Event) {
	if j == nil || ev.TaskID == "" {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.engaged = true
	if j.seen == nil {
		j.seen, j.tools = map[string]time.Time{}, map[string]string{}
	}
	if _, ok := j.seen[ev.TaskID]; !ok {
		j.seen[ev.TaskID] = ev.Time
	}
	if ev.Tool != "" {
		j.tools[ev.TaskID] = ev.Tool
	}
}

// GroupFor opens the log group of task id before a progress line about it, closing the group
// of another task: groups do not nest, so the lines of tasks followed together come in groups
// as they interleave.
func (j *Job) GroupFor(id string) {
	if j == nil || j.Log.Sys == None || id == "" || id == "-" {
		return
	}
	j.mu.Lock()
	same := j.group == id
	j.group = id
	tool := j.tools[id]
	j.mu.Unlock()
	if same {
		return
	}
	title := "task " + id
	if tool != "" {
		title += " (" + tool + ")"
	}
	j.Log.Group(title)
}

// Event implements follow.Sink: in a CI job, the end of each task closes its group and becomes
// an annotation and a summary row.
func (j *Job) Event(ev follow.Event) {
	if j == nil {
		return
	}
	j.Track(ev)
	if ev.Kind != follow.KindResult || ev.Outcome == nil || j.Log.Sys == None || j.Verdict == nil {
		return
	}
	o := *ev.Outcome
	v := j.Verdict(o)
	took := j.Took(o, ev.Time)
	row := Row{TaskID: o.TaskID, Tool: o.Tool, Server: v.Server, Outcome: v.Outcome, Took: took, Message: cmp.Or(v.Status, v.Problem)}
	if stillRunning(v.Outcome) {
		row.Resume = v.Resume
	}
	j.mu.Lock()
	j.rows = append(j.rows, row)
	closeGroup := j.group == o.TaskID
	if closeGroup {
		j.group = ""
	}
	j.mu.Unlock()
	if closeGroup {
		j.Log.EndGroup()
	}
	j.annotate(v.Outcome, o, took, cmp.Or(v.Problem, v.Status), row.Resume)
}

// Took is how long task o was followed until end, or lived when its creation time is known.
func (j *Job) Took(o follow.Outcome, end time.Time) time.Duration {
	if o.Task != nil && !o.Task.CreatedAt.IsZero() && o.Task.CreatedAt.Before(end) {
		return end.Sub(o.Task.CreatedAt)
	}
	j.mu.Lock()
	first, ok := j.seen[o.TaskID]
	j.mu.Unlock()
	if !ok {
		first = j.Start
	}
	return end.Sub(first)
}

// annotate writes the GitHub annotation of a task's end: an error for a task that failed,
// was cancelled or expired, a warning for one left running, a notice for one completed.
func (j *Job) annotate(name string, o follow.Outcome, took time.Duration, msg, resume string) {
	level := Error
	switch {
	case name == "completed" || name == "working":
		level = Notice
	case stillRunning(name):
		level = Warning
	}
	tool := o.Tool
	if tool == "" {
		tool = "task"
	}
	title := fmt.Sprintf("mcptask: %s %s", tool, strings.ReplaceAll(name, "_", " "))
	text := fmt.Sprintf("task %s on %s, after %s", o.TaskID, o.Server, human.Duration(took))
	if msg != "" {
		text += ": " + msg
	}
	if resume != "" && !strings.Contains(msg, resume) {
		text += "; it keeps running: " + resume
	}
	j.Log.Annotation(level, title, text)
}

// Finish closes the open group and, on GitHub, appends the summary of the tasks that ended
// under a heading naming command to the file at path ($GITHUB_STEP_SUMMARY; none when empty).
// A run that followed no task adds nothing.
func (j *Job) Finish(path, command string) error {
	j.mu.Lock()
	rows, engaged := j.rows, j.engaged
	j.mu.Unlock()
	j.Log.EndGroup()
	if j.Log.Sys != GitHub || !engaged || path == "" || len(rows) == 0 {
		return nil
	}
	return AppendSummary(path, command, rows)
}
