//go:build !darwin && !linux

package forkexec

import "errors"

// Start is not implemented on this OS.
func Start(*Attr) (int, error) {
	return 0, errors.ErrUnsupported
}
