//go:build !darwin && !linux

package libsandbox

import (
	"errors"
	"runtime"
)

// Lib is the loaded private interface; on this OS it never loads.
type Lib struct{}

var errNoSeatbelt = &UnsupportedError{
	Library: LibsandboxPath,
	OSBuild: runtime.GOOS,
	Err:     errors.New("only macOS has Seatbelt"),
}

// Load always fails here with an *UnsupportedError.
func Load() (*Lib, error) { return nil, errNoSeatbelt }

func (l *Lib) Compiles() int64         { return 0 }
func (l *Lib) MacSyscallAddr() uintptr { return 0 }

func (l *Lib) Compile(text string, params []Param) ([]byte, error) { return nil, errNoSeatbelt }
func (l *Lib) IsSandboxed(pid int) (bool, error)                   { return false, errNoSeatbelt }
func (l *Lib) Check(pid int, op string, ft FilterType, arg string, flags CheckFlags) (bool, error) {
	return false, errNoSeatbelt
}
func (l *Lib) IssueExtension(class, path string) (string, error) { return "", errNoSeatbelt }
func (l *Lib) ConsumeExtension(token string) (int64, error)      { return 0, errNoSeatbelt }
func (l *Lib) ReleaseExtension(handle int64) error               { return errNoSeatbelt }
