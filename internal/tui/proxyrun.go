package tui

import (
	"context"
	"errors"
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"
)

// ProxyScreen is the terminal the proxy view draws on.
type ProxyScreen struct {
	In  io.Reader
	Out io.Writer
	// Width and Height are the terminal's size; 0 lets the program ask.
	Width, Height int
}

// RunProxy shows the proxy view on s until the user quits or ctx ends. feed runs on a
// goroutine of its own and hands the proxy's events to send, which blocks while the program
// is busy and returns at once when it has ended: feed never holds up anything but itself.
func RunProxy(ctx context.Context, o ProxyOptions, s ProxyScreen, feed func(send func(ProxyEvent))) error {
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(s.In), tea.WithOutput(s.Out), tea.WithFPS(FPS)}
	if s.Width > 0 && s.Height > 0 {
		popts = append(popts, tea.WithWindowSize(s.Width, s.Height))
	}
	prog := tea.NewProgram(NewProxyModel(o), popts...)
	go feed(func(ev ProxyEvent) { prog.Send(ProxyEventMsg(ev)) })
	_, err := prog.Run()
	if err != nil && ctx.Err() == nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("proxy view: %w", err)
	}
	return nil
}
