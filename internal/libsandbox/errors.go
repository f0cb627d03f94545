package libsandbox

import (
	"errors"
	"fmt"
)

// ErrInvalidArgument reports an argument that cannot be passed to libsandbox,
// such as a string with a NUL byte. Test with errors.Is.
var ErrInvalidArgument = errors.New("libsandbox: invalid argument")

// CompileError is libsandbox's own message for a profile it rejected.
type CompileError struct {
	Message string
}

func (e *CompileError) Error() string { return "libsandbox: compile: " + e.Message }

// UnsupportedError reports that this host does not offer the private
// interface: a library that does not load, a missing symbol, or a result
// shape the binding does not understand. It satisfies
// errors.Is(err, errors.ErrUnsupported).
type UnsupportedError struct {
	Symbol  string // the C symbol; empty when the library itself failed to load
	Library string // path of the library
	OSBuild string // e.g. "macOS 23E224" (kern.osversion) or "linux 6.1.0"
	Err     error
}

func (e *UnsupportedError) Error() string {
	what := "cannot load " + e.Library
	if e.Symbol != "" {
		what = fmt.Sprintf("%s from %s", e.Symbol, e.Library)
	}
	msg := fmt.Sprintf("libsandbox: %s on %s", what, e.OSBuild)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + " (the private Seatbelt interface is unavailable on this OS build; sandboxing cannot be used here)"
}

// Is reports errors.ErrUnsupported as a match.
func (e *UnsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

func (e *UnsupportedError) Unwrap() error { return e.Err }
