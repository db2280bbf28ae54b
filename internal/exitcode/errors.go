package exitcode

// UsageError is a usage error: a bad flag, argument or input; nothing was sent. It exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

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
