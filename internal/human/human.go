// Package human writes durations for a person to read. There is one form, so that an age or
// a wait reads the same in `mcptask list`, `mcptask get`, `mcptask auth status`, the live
// view, the proxy's view and a CI job summary. It imports nothing of mcptask, because the
// views may not import rpc or state and the CI summary should not need them.
package human

import (
	"fmt"
	"time"
)

// Duration renders d compactly, in at most its two largest units, truncated, never wider
// than six cells below 100 days: 850ms, 12s, 3m04s, 2h05m, 5d03h. Days start at 48 hours,
// so a task of yesterday still reads in hours. A negative d (a deadline already past, a
// clock that went back) reads 0s.
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Until renders the time d from now to a moment: "in 5m00s" ahead, "3m04s ago" past (an
// expiry in `mcptask auth status`).
func Until(d time.Duration) string {
	if d < 0 {
		return Duration(-d) + " ago"
	}
	return "in " + Duration(d)
}
