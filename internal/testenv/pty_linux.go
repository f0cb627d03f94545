package testenv

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// OpenPTY opens a pseudo-terminal pair through /dev/ptmx (pty(7)), closed
// when the test ends; it skips, naming why, where the system has none.
func OpenPTY(tb testing.TB) (master, slave *os.File) {
	tb.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		Skip(tb, ReasonNoPTY, err.Error())
	}
	tb.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		tb.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return m, s
}
