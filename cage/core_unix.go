//go:build unix

package cage

import "syscall"

// rlimitCore is RLIMIT_CORE (4 on Linux and macOS).
const rlimitCore = syscall.RLIMIT_CORE
