package exitcode

import "fmt"

// UsageError is a usage error: a bad flag, argument or input; nothing was sent. It exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError: every package that finds a problem the user fixes in a flag,
// an argument or the environment says so with it, and nothing else decides exit 2.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Error carries a chosen exit code. With Silent set, the output has already explained the
// failure and nothing more is printed.
type Error struct {
	Code   int
	Err    error
	Silent bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return Name(e.Code)
	}
	return e.Err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

// ExitCode lets packages that know only an interface read the code an error carries.
func (e *Error) ExitCode() int { return e.Code }
