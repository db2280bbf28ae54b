package output

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mcptask/mcptask/internal/config"
	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// How an error that ends a run becomes its exit code and its message: the mapping of the
// typed errors of the packages below the commands to the exit-code table (internal/exitcode),
// and the one place the run's last error is printed.

// ExitCode maps err, with which a run under ctx ended, to the exit-code table.
func ExitCode(ctx context.Context, err error) int {
	if err == nil {
		return exitcode.OK
	}
	var ee *exitcode.Error
	if errors.As(err, &ee) {
		return ee.Code
	}
	var ue *exitcode.UsageError
	if errors.As(err, &ue) {
		return exitcode.Usage
	}
	if errors.Is(err, connect.ErrTimeout) {
		return exitcode.Timeout
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return exitcode.Interrupted
	}
	if errors.Is(err, rpc.ErrAuth) {
		return exitcode.Auth
	}
	return exitcode.Failure
}

// Typed gives the errors of internal/connect and internal/config their exit codes: a usage
// problem is the UsageError it wraps, a record or project entry not trusted exits 2 without the usage
// hint, a server silent past --connect-timeout exits 1 and --timeout reached exits 124. Any
// other err comes back as it is.
func Typed(err error) error {
	var ue *exitcode.UsageError
	var ur *connect.UntrustedRecordError
	var ut *config.UntrustedError
	var na *connect.NoAnswerError
	var te *connect.TimeoutError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		return &exitcode.UsageError{Err: ue.Err}
	case errors.As(err, &ur), errors.As(err, &ut):
		return &exitcode.Error{Code: exitcode.Usage, Err: err}
	case errors.As(err, &na):
		return &exitcode.Error{Code: exitcode.Failure, Err: err}
	case errors.As(err, &te):
		return &exitcode.Error{Code: exitcode.Timeout, Err: err}
	}
	return err
}

// ErrorText is err as a person reads it on stderr. Server text reaches errors by many paths
// (JSON-RPC messages, version lists, task errors, stdio stderr, a value a parser quoted), so
// the whole message passes termsafe here, whatever its parts did before, and is bounded to
// termsafe.Limit (SECURITY.md, classes 2 and 8); red hides the run's credentials.
func ErrorText(red *redact.Redactor, err error) string {
	return termsafe.String(termsafe.Cut(red.Text(err.Error())))
}

// ReportError prints err, with which a run ended with code, once: a line on errOut, and with
// p's --json also a JSON object there (and with --jsonl the error event of the stream on p's
// output). reason is the OAuth reason of err, if any; command is the command whose help a
// usage error points to ("mcptask call"). An exitcode.Error marked Silent has
// been explained already and prints nothing.
func ReportError(p *Printer, errOut io.Writer, red *redact.Redactor, code int, err error, reason, command string) {
	var ee *exitcode.Error
	if errors.As(err, &ee) && ee.Silent {
		return
	}
	if p.JSON() {
		// JSON is data, kept as it is; only its size is bounded, and credentials are hidden.
		obj := Error{Type: "error", Code: code, Name: exitcode.Name(code), Message: termsafe.Cut(red.Text(err.Error())), Reason: reason}
		if na := (*connect.NoAnswerError)(nil); errors.As(err, &na) {
			obj.Reason = "no_answer"
		}
		var rerr *rpc.Error
		if errors.As(err, &rerr) {
			obj.RPCCode = &rerr.Code
			if len(rerr.Data) > 0 {
				obj.RPCData = red.JSON(rerr.Data)
			}
		}
		_ = WriteJSON(errOut, obj)
		if p.Stream() {
			_ = WriteJSON(p.Out, obj) // the error event of the stream
		}
		return
	}
	fmt.Fprintf(errOut, "mcptask: %s\n", ErrorText(red, err))
	var ue *exitcode.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", termsafe.Line(command))
	}
}

// Coded gives err the exit code chosen for it: a UsageError for exitcode.Usage, an
// exitcode.Error for any other code; code OK leaves the code to err itself.
func Coded(code int, err error) error {
	switch {
	case err == nil || code == exitcode.OK:
		return err
	case code == exitcode.Usage:
		return &exitcode.UsageError{Err: err}
	}
	return &exitcode.Error{Code: code, Err: err}
}

// Judge types err, of an outcome described with code, as a coded error (Coded) and gives the
// exit code it means under ctx (Reporter.Judge).
func Judge(ctx context.Context, code int, err error) (int, error) {
	err = Coded(code, err)
	return ExitCode(ctx, err), err
}
