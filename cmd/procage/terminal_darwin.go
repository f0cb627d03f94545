package main

import "golang.org/x/sys/unix"

// tcgetattr and tcsetattr(TCSANOW) as ioctls (xnu's sys/ttycom.h).
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
