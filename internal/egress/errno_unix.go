//go:build unix

package egress

import "syscall"

var errConnRefused error = syscall.ECONNREFUSED
