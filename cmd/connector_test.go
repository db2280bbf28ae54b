package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/state"
)

// TestServersReadOnce: a run reads its config files once; what it read is what every later
// use in the run sees (issue 21: they were parsed twice, by the pre-run hook and by proxy
// --print-config).
func TestServersReadOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers":{"a":{"command":"a"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := TestIO()
	f := NewFactory(ios)
	f.Getenv = func(string) string { return "" }
	f.Global.Config = p
	first, err := f.servers()
	if err != nil || first.Entry("a") == nil {
		t.Fatalf("servers() = %v, %v", first, err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	again, err := f.servers()
	if err != nil || again != first {
		t.Fatalf("the config files were read again: %v, %v", again, err)
	}
}

// TestConnErrExitCodes: internal/connect's typed errors keep the exit codes of the table.
func TestConnErrExitCodes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{&exitcode.UsageError{Err: errors.New("x")}, ExitUsage},
		{&connect.UntrustedRecordError{Rec: state.Record{TaskID: "t"}, Reason: errors.New("unsigned")}, ExitUsage},
		{&connect.NoAnswerError{Server: "s", Waiting: "initialize"}, ExitFailure},
		{&connect.TimeoutError{Msg: "timeout reached: s had not answered"}, ExitTimeout},
	} {
		err := connErr(tc.err)
		if got := exitCode(ctx, err); got != tc.want {
			t.Errorf("%T: exit %d, want %d", tc.err, got, tc.want)
		}
		if got := exitCode(ctx, tc.err); tc.want != ExitUsage && got != tc.want {
			t.Errorf("%T unmapped: exit %d, want %d", tc.err, got, tc.want)
		}
	}
	var u *connect.UntrustedRecordError
	if !errors.As(connErr(&connect.UntrustedRecordError{Reason: errors.New("x")}), &u) {
		t.Error("a refused record is no longer found in its typed error")
	}
}
