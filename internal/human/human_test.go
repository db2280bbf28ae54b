package human

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0ms"},
		{850 * time.Millisecond, "850ms"},
		{time.Second, "1s"},
		{12*time.Second + 900*time.Millisecond, "12s"},
		{time.Minute, "1m00s"},
		{3*time.Minute + 4*time.Second, "3m04s"},
		{time.Hour, "1h00m"},
		{2*time.Hour + 5*time.Minute + 59*time.Second, "2h05m"},
		{47*time.Hour + 59*time.Minute, "47h59m"},
		{48 * time.Hour, "2d00h"},
		{5*24*time.Hour + 3*time.Hour + 59*time.Minute, "5d03h"},
		{400 * 24 * time.Hour, "400d00h"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%s) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestUntil(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5 * time.Minute:                  "in 5m00s",
		0:                                "in 0ms",
		-(3*time.Minute + 4*time.Second): "3m04s ago",
	} {
		if got := Until(d); got != want {
			t.Errorf("Until(%s) = %q, want %q", d, got, want)
		}
	}
}
