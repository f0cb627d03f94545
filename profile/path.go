package profile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/procage-go/procage/profile/sbpl"
)

// Reasons a path is refused by [CheckPath].
var (
	ErrPathTooLong     = fmt.Errorf("path is longer than %d bytes, the longest path macOS resolves (MAXPATHLEN)", MaxPathLen)
	ErrPathNotAbsolute = errors.New("path is not absolute")
	ErrPathNotClean    = errors.New("path is not normalised (no \".\", \"..\", \"//\" or trailing slash)")
	ErrPathControl     = errors.New("path contains a control character (a line break, tab or escape), line separator or bidirectional control, which no printed plan could show as it is")
)

// MaxPathLen is the longest path the macOS kernel looks up: MAXPATHLEN,
// 1024 bytes including the terminating NUL [confirmed: xnu bsd/sys/param.h,
// bsd/sys/syslimits.h PATH_MAX]. A longer policy path could never match,
// and would only make the profile large.
const MaxPathLen = 1023

// CheckPath reports whether path can be used in a policy: absolute,
// normalised, at most MaxPathLen bytes, and representable in SBPL (no NUL,
// valid UTF-8, no control character).
func CheckPath(path string) error {
	if len(path) > MaxPathLen {
		return ErrPathTooLong
	}
	if err := sbpl.CheckString(path); err != nil {
		if errors.Is(err, sbpl.ErrControl) {
			return ErrPathControl
		}
		return err
	}
	if !strings.HasPrefix(path, "/") {
		return ErrPathNotAbsolute
	}
	if path == "/" {
		return nil
	}
	if strings.HasSuffix(path, "/") {
		return ErrPathNotClean
	}
	for _, part := range strings.Split(path[1:], "/") {
		if part == "" || part == "." || part == ".." {
			return ErrPathNotClean
		}
	}
	return nil
}
