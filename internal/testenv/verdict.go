package testenv

import (
	"fmt"
	"syscall"
)

// verdict reads sandbox_check's return value for "is it sandboxed": only 0
// and 1 are answers.
func verdict(r int32, errno syscall.Errno) (bool, error) {
	switch r {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, fmt.Errorf("sandbox_check returned %d (errno %d: %v), want 0 or 1", r, int(errno), errno)
}
