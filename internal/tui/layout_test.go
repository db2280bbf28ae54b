package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestShortIDs: each id gets the shortest prefix of at least 8 characters that no other id
// of the view starts with, then "…"; an id for which no shorter prefix is unique is shown
// whole.
func TestShortIDs(t *testing.T) {
	got := shortIDs([]string{
		"786512e2-9e0d-44bd-8f29-789f320fe840",
		"786512e2-9e0d-44bd-8f29-000000000000", // shares 24 characters with the first
		"1f0c9a7b-0000-4000-8000-000000000001",
		"short",
		"abcdefghi", // a prefix of 8 and "…" would be no shorter
		"ab€defghijk",
	})
	want := map[string]string{
		"786512e2-9e0d-44bd-8f29-789f320fe840": "786512e2-9e0d-44bd-8f29-7…",
		"786512e2-9e0d-44bd-8f29-000000000000": "786512e2-9e0d-44bd-8f29-0…",
		"1f0c9a7b-0000-4000-8000-000000000001": "1f0c9a7b…",
		"short":                                "short",
		"abcdefghi":                            "abcdefghi",
		"ab€defghijk":                          "ab€defgh…", // 8 characters, not 8 bytes
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: got %q, want %q", id, got[id], w)
		}
	}
	// Every shown prefix is unique among the ids and is a prefix of its own id.
	for id, p := range got {
		p = strings.TrimSuffix(p, "…")
		for other := range got {
			if other != id && strings.HasPrefix(other, p) && p != id {
				t.Errorf("%q's prefix %q also matches %q", id, p, other)
			}
		}
	}
}

// twoServers is a view of five tasks with UUID-long ids on two servers.
func twoServers(width int) Model {
	ids := []string{
		"786512e2-9e0d-44bd-8f29-789f320fe840",
		"786512e2-1c3a-4f0e-9b7d-2d6c5e4f3a21", // the same first 8 characters
		"1f0c9a7b-3c55-4e4a-9d12-6a1b5c0e2f11",
		"c0ffee00-1111-4222-8333-944455556666",
		"d15ea5e0-aaaa-4bbb-8ccc-dddddddddddd",
	}
	one, two := "http://127.0.0.1:8080/mcp", "http://build.example:9000/mcp"
	initial := map[string]Snapshot{
		ids[0]: {TaskID: ids[0], Tool: "research", Server: one, Status: "working", StatusMessage: "reading sources 3/7", CreatedAt: t0},
		ids[1]: {TaskID: ids[1], Tool: "deploy", Server: one, Status: "input_required", StatusMessage: "confirm the rollout",
			CreatedAt: t0, Inputs: []InputRequest{{Key: "ok", Kind: "elicitation/create", Mode: "form", Message: "Roll out?"}}},
		ids[2]: {TaskID: ids[2], Tool: "build", Server: two, Status: "completed", CreatedAt: t0},
		ids[3]: {TaskID: ids[3], Tool: "test", Server: two, Status: "working", StatusMessage: "412 of 900 passed", CreatedAt: t0},
		ids[4]: {TaskID: ids[4], Tool: "index", Server: two, Status: "failed", StatusMessage: "disk full", CreatedAt: t0},
	}
	now := t0.Add(90 * time.Second)
	m := New(newFake(), nil, ids, initial, Options{Now: func() time.Time { return now }, NoColor: true, DisableClock: true})
	m = batch(m, scheduled(ids[0], now.Add(time.Second), time.Second, "server's"), scheduled(ids[3], now.Add(2*time.Second), 2*time.Second, "default"))
	m, _ = update(m, tea.WindowSizeMsg{Width: width, Height: 16})
	return m
}

// checkFrame fails when a line of frame is wider than width.
func checkFrame(t *testing.T, name string, width int, frame string) string {
	t.Helper()
	frame = ansi.Strip(frame)
	for i, line := range strings.Split(frame, "\n") {
		if w := ansi.StringWidth(line); w > width {
			t.Errorf("%s: line %d is %d wide at %d columns: %q", name, i, w, width, line)
		}
	}
	return frame
}

// TestTwoServersGolden: five tasks with UUID ids on two servers.
//
// Each row names its server by its URL without "http://" and "/mcp" (which all share), cut in
// the middle when the column is narrow, so that the port, where servers differ, stays.
//
// What a person sees: at 140 columns every id whole (it is what they copy), each with its
// server; at 100 the ids become their unique prefixes ("1f0c9a7b…", and for the two ids that
// share their first 8 characters "786512e2-9…" and "786512e2-1…"), which every command
// accepts, and the server column narrows; at 60 the tool, age and next-poll columns give way,
// but never the server, and the help line keeps i (a task waits for input) and q. Headers
// always stand apart.
func TestTwoServersGolden(t *testing.T) {
	for _, width := range []int{60, 100, 140} {
		m := drive(t, twoServers(width), width, func(tm *teatest.TestModel) { waitOutput(t, tm, "q detach") })
		frame := checkFrame(t, "two servers", width, m.View().Content)
		golden(t, fmt.Sprintf("two-servers-%d", width), frame)
		header := strings.Split(frame, "\n")[0]
		for _, title := range []string{" ID ", " STATUS ", " SERVER "} {
			if !strings.Contains(header+" ", title) {
				t.Errorf("%d columns: header %q lacks %q standing apart", width, header, title)
			}
		}
		if strings.Count(frame, ":8080") != 2 || strings.Count(frame, ":9000") != 3 {
			t.Errorf("%d columns: with two servers each row must say its server:\n%s", width, frame)
		}
		whole := strings.Contains(frame, "786512e2-9e0d-44bd-8f29-789f320fe840")
		if whole != (width == 140) {
			t.Errorf("%d columns: whole ids shown %v:\n%s", width, whole, frame)
		}
		if width < 140 && !strings.Contains(frame, "1f0c9a7b… ") {
			t.Errorf("%d columns: the unique prefix is not shown:\n%s", width, frame)
		}
		if help := lastLine(frame); !strings.HasSuffix(help, "q detach") || !strings.Contains(help, "i answer input") {
			t.Errorf("%d columns: help line %q must keep i and q", width, help)
		}
	}
}

func lastLine(frame string) string {
	lines := strings.Split(strings.TrimRight(frame, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestFilterGolden: `/` then "work" narrows the table to the working tasks while it is typed,
// enter keeps it, esc clears it.
//
// What a person sees: a "/work▏  2 of 5" line over the table, the two working tasks, and a
// help line that says the arrows move, enter keeps the filter, esc clears it and ctrl+c
// detaches (q and k/j are letters of the filter then); after enter the typing mark goes and the
// help offers "esc clear filter".
func TestFilterGolden(t *testing.T) {
	for _, width := range []int{60, 100, 140} {
		// Each frame is the real program's, driven by keys; ctrl+c ends it where it stands.
		typing := checkFrame(t, "filter", width, drive(t, twoServers(width), width, func(tm *teatest.TestModel) {
			tm.Type("/work")
			waitOutput(t, tm, "2 of 5")
		}).View().Content)
		final := drive(t, twoServers(width), width, func(tm *teatest.TestModel) {
			tm.Type("/work")
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
			waitOutput(t, tm, "/work  2 of 5")
		})
		kept := checkFrame(t, "filter kept", width, final.View().Content)
		golden(t, fmt.Sprintf("filter-%d", width), typing+"==== after enter\n"+kept)
		if !strings.Contains(typing, "/work▏  2 of 5") || strings.Count(typing, "working") != 3 { // 2 rows and the summary
			t.Errorf("%d columns: the filter must show the 2 working tasks:\n%s", width, typing)
		}
		if strings.Contains(typing, "failed ") || !strings.Contains(lastLine(typing), "esc clear filter") ||
			!strings.HasSuffix(lastLine(typing), "ctrl+c detach") || strings.Contains(lastLine(typing), "k up") {
			t.Errorf("%d columns: a task that does not match is shown, or the help is wrong:\n%s", width, typing)
		}
		if final.filtering || !strings.Contains(kept, "/work  2 of 5") || !strings.Contains(lastLine(kept), "esc clear filter") {
			t.Errorf("%d columns: enter must keep the filter:\n%s", width, kept)
		}
		m, _ := update(final, tea.KeyPressMsg{Code: tea.KeyEscape})
		if c := m.View().Content; strings.Contains(c, "of 5") || !strings.Contains(c, "failed") {
			t.Errorf("%d columns: esc must clear the filter:\n%s", width, c)
		}
	}
	// The filter matches the id, the tool, the status as shown or as the spec names it, and
	// the message, in any case.
	m := twoServers(100)
	for q, want := range map[string]int{"C0FFEE": 1, "deploy": 1, "input_required": 1, "DISK": 1, "": 5, "nothing": 0} {
		m.filter = q
		if got := len(m.shown()); got != want {
			t.Errorf("filter %q: %d tasks, want %d", q, got, want)
		}
	}
}

// TestHelpNarrowGolden: the key help at 60, 100 and 140 columns on the table and with `?`.
//
// What a person sees: the one-line help gives up the least important keys first (the ends, a
// page, the filter, the arrows) and never q; `?` lists the keys in columns that wrap below
// each other when they do not fit, q among them, and only the keys that work: no esc on the
// table without a filter.
func TestHelpNarrowGolden(t *testing.T) {
	for _, width := range []int{60, 100, 140} {
		m := twoServers(width)
		m, _ = update(m, tea.WindowSizeMsg{Width: width, Height: 8}) // the rows do not fit: paging works
		line := lastLine(checkFrame(t, "help", width, m.View().Content))
		final := drive(t, m, width, func(tm *teatest.TestModel) {
			tm.Type("?")
			waitOutput(t, tm, "home/g")
		})
		full := checkFrame(t, "full help", width, final.View().Content)
		golden(t, fmt.Sprintf("help-%d", width), line+"\n==== ?\n"+full)
		if !strings.HasSuffix(line, "q detach") {
			t.Errorf("%d columns: the help line lost q: %q", width, line)
		}
		for _, k := range []string{"q detach", "pgup", "home/g", "filter", "i answer input"} {
			if !strings.Contains(full, k) {
				t.Errorf("%d columns: ? does not list %q:\n%s", width, k, full)
			}
		}
		if strings.Contains(full, "esc") {
			t.Errorf("%d columns: ? lists esc, which does nothing on a table without a filter:\n%s", width, full)
		}
	}
	// At 40 columns the three columns of ? do not fit side by side: they wrap below each other,
	// every key still listed and no line wider than the terminal.
	m := twoServers(40)
	m, _ = update(m, tea.WindowSizeMsg{Width: 40, Height: 8})
	m, _ = update(m, tea.KeyPressMsg{Code: '?', Text: "?"})
	full := checkFrame(t, "full help at 40", 40, m.fullHelp(m.screenKeys()))
	for _, k := range []string{"q detach", "enter details", "home/g"} {
		if !strings.Contains(full, k) {
			t.Errorf("40 columns: ? lost %q:\n%s", k, full)
		}
	}
	if line := lastLine(twoServers(140).View().Content); strings.Contains(line, "pgup") {
		t.Errorf("paging is offered although every row fits: %q", line)
	}
}

// drive runs the real program over m on a terminal width columns wide (and as high as m
// was), lets steps type into it, ends it with ctrl+c and returns the final model.
func drive(t *testing.T, m Model, width int, steps func(tm *teatest.TestModel)) Model {
	t.Helper()
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(width, m.height))
	steps(tm)
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	// ctrl+c only detached (detach changes nothing else): the frame wanted is the one on the
	// screen before it, with its key help, not the final frame, which has none.
	fm.done, fm.detached = false, false
	return fm
}

// waitOutput waits until the program has drawn want.
func waitOutput(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(ansi.Strip(string(b)), want) },
		teatest.WithDuration(10*time.Second))
}

// TestPagingKeys: PgDn and PgUp move a page of rows, End/G and Home/g to the last and first.
func TestPagingKeys(t *testing.T) {
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("task-%03d", i)
	}
	m := New(newFake(), nil, ids, nil, Options{NoColor: true, DisableClock: true})
	m, _ = update(m, tea.WindowSizeMsg{Width: 80, Height: 20})
	room := m.tableRoom()
	press := func(k tea.KeyPressMsg) { m, _ = update(m, k) }
	press(tea.KeyPressMsg{Code: tea.KeyPgDown})
	if m.cursor != room {
		t.Errorf("pgdn: cursor %d, want a page (%d)", m.cursor, room)
	}
	press(tea.KeyPressMsg{Code: tea.KeyPgUp})
	press(tea.KeyPressMsg{Code: tea.KeyPgUp})
	if m.cursor != 0 {
		t.Errorf("pgup twice: cursor %d, want 0", m.cursor)
	}
	for _, k := range []struct {
		msg  tea.KeyPressMsg
		want int
	}{
		{tea.KeyPressMsg{Code: 'G', Text: "G"}, 99}, {tea.KeyPressMsg{Code: 'g', Text: "g"}, 0},
		{tea.KeyPressMsg{Code: tea.KeyEnd}, 99}, {tea.KeyPressMsg{Code: tea.KeyHome}, 0},
	} {
		press(k.msg)
		if m.cursor != k.want {
			t.Errorf("%s: cursor %d, want %d", k.msg, m.cursor, k.want)
		}
	}
	press(tea.KeyPressMsg{Code: tea.KeyEnd})
	if c := m.View().Content; !strings.Contains(c, "> task-099") {
		t.Errorf("End must show the last row:\n%s", c)
	}
}

// TestAnswerJumps: i with no question at the cursor goes to the first task waiting for input,
// clearing a filter that hides it; pressed there, it opens the form.
func TestAnswerJumps(t *testing.T) {
	m := twoServers(100)
	m.filter = "index"
	m, _ = update(m, tea.KeyPressMsg{Code: 'i', Text: "i"})
	if m.form != nil || m.filter != "" || m.selected().id != "786512e2-1c3a-4f0e-9b7d-2d6c5e4f3a21" {
		t.Fatalf("i must go to the task that asks (form %v, filter %q, at %s)", m.form != nil, m.filter, m.selected().id)
	}
	m, _ = update(m, tea.KeyPressMsg{Code: 'i', Text: "i"})
	if m.form == nil {
		t.Errorf("i on the task that asks must open its form")
	}
}

// TestConfirmHelp: while the y/n question about a cancel is on screen, the help line offers y
// and n (every other key, q too, answers no) and ctrl+c to detach, not the table's keys.
func TestConfirmHelp(t *testing.T) {
	m := twoServers(100)
	m, _ = update(m, tea.KeyPressMsg{Code: 'c', Text: "c"})
	line := lastLine(m.View().Content)
	if line != "y cancel it • n keep it running • ctrl+c detach" {
		t.Errorf("help line while confirming: %q", line)
	}
	m, _ = update(m, tea.KeyPressMsg{Code: 'q', Text: "q"})
	if m.confirm || m.detached || strings.Contains(lastLine(m.View().Content), "y cancel") {
		t.Errorf("q during the question must answer no and bring the table's help back")
	}
}
