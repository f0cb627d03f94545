package libsandbox

import "golang.org/x/sys/unix"

// osBuild names the kernel release: on linux only fakes can load.
func osBuild() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "linux"
	}
	return "linux " + unix.ByteSliceToString(u.Release[:])
}
