package exitcode

import (
	"strings"
	"testing"
)

func TestWorst(t *testing.T) {
	for _, tc := range []struct {
		codes []int
		want  int
	}{
		{nil, OK},
		{[]int{OK, OK}, OK},
		{[]int{OK, StillRunning, Expired}, Expired},
		{[]int{Cancelled, TaskFailed, InputRequired}, TaskFailed},
		{[]int{TaskFailed, 99}, Failure}, // an unknown code counts as a failure
		{[]int{Failure, Timeout, Auth}, Timeout},
		{[]int{Timeout, Interrupted}, Interrupted},
	} {
		if got := Worst(tc.codes); got != tc.want {
			t.Errorf("Worst(%v) = %d, want %d", tc.codes, got, tc.want)
		}
	}
	if n := CountBad([]int{OK, TaskFailed, OK, Timeout}); n != 2 {
		t.Errorf("CountBad: %d, want 2", n)
	}
}

func TestTable(t *testing.T) {
	seen := map[int]bool{}
	for _, e := range Table {
		if seen[e.Code] {
			t.Errorf("code %d twice in the table", e.Code)
		}
		seen[e.Code] = true
		if Name(e.Code) != e.Name || !strings.Contains(Help(), e.Name) {
			t.Errorf("code %d: name %q not given by Name or Help", e.Code, e.Name)
		}
	}
	for _, c := range severity {
		if !seen[c] {
			t.Errorf("severity orders code %d, which the table lacks", c)
		}
	}
	if len(severity) != len(Table) {
		t.Errorf("severity orders %d codes, the table has %d", len(severity), len(Table))
	}
	if Name(99) != "error" {
		t.Errorf("an unknown code is named %q", Name(99))
	}
}
