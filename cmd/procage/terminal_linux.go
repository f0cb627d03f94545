package main

import "golang.org/x/sys/unix"

// tcgetattr and tcsetattr(TCSANOW) as ioctls (ioctl_tty(2)).
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
