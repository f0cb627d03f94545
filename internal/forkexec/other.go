//go:build !darwin && !linux

package forkexec

import (
	"errors"
	"syscall"
)

// Start is not implemented on this OS.
func Start(*Attr) (int, error) {
	return 0, errors.ErrUnsupported
}

// Wait is not implemented on this OS.
func Wait(int) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	return ws, errors.ErrUnsupported
}
