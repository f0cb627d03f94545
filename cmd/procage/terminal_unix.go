//go:build darwin || linux

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// restoreTerminal records the termios(3) settings of f when it is a
// terminal and returns a function that puts them back if they changed.
// TCSANOW rather than TCSADRAIN: output stuck behind flow control must not
// hold procage. If procage runs in the background when the settings
// changed, the restore stops it with SIGTTOU, as any job's would
// (termios(3)).
func restoreTerminal(f *os.File) func() {
	fd := int(f.Fd())
	saved, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {} // not a terminal
	}
	return func() {
		now, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err == nil && *now == *saved {
			return
		}
		_ = unix.IoctlSetTermios(fd, ioctlSetTermios, saved)
	}
}
