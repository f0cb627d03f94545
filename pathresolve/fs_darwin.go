package pathresolve

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// MaxSymlinks is the number of symbolic links one lookup may follow; the
// next one fails with ELOOP. xnu: "#define MAXSYMLINKS 32" in
// bsd/sys/param.h, checked as ni_loopcnt++ >= MAXSYMLINKS in
// bsd/vfs/vfs_lookup.c namei() [confirmed: apple/darwin-xnu @ 03489ce2].
const MaxSymlinks = 32

// pcCaseSensitive is _PC_CASE_SENSITIVE: "#define _PC_CASE_SENSITIVE 11" in
// xnu bsd/sys/unistd.h [confirmed: apple/darwin-xnu @ 03489ce2]. x/sys
// v0.50.0 does not define it (zerrors_darwin_{amd64,arm64}.go have no _PC_
// names).
const pcCaseSensitive = 11

// firmlinksFile lists the firmlinks of the sealed system volume since
// macOS 10.15 [confirmed: hashicorp/vagrant plugins/hosts/darwin/cap/path.rb
// @ b12a2327, FIRMLINK_DEFS].
const firmlinksFile = "/usr/share/firmlinks"

// CaseSensitive asks pathconf(name, _PC_CASE_SENSITIVE): 1 sensitive,
// 0 insensitive. A volume that cannot answer (EINVAL, or -1 without an
// error, as POSIX allows for an unsupported variable) is reported as
// case-sensitive: the cage then refuses allow rules there, the safe side
// [inferred].
func (osFS) CaseSensitive(name string) (bool, error) {
	for {
		v, err := unix.Pathconf(name, pcCaseSensitive)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EINVAL):
			return true, nil
		case err != nil:
			return false, &fs.PathError{Op: "pathconf", Path: name, Err: err}
		}
		return v != 0, nil
	}
}

// HostFirmlinks parses /usr/share/firmlinks. A missing file (macOS before
// 10.15, which has no firmlinks) gives nil, nil.
func HostFirmlinks() ([]Firmlink, error) {
	f, err := os.Open(firmlinksFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseFirmlinks(f)
}
