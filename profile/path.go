package profile

import (
	"errors"
	"strings"

	"github.com/procage-go/procage/profile/sbpl"
)

// Reasons a path is refused by [CheckPath].
var (
	ErrPathNotAbsolute = errors.New("path is not absolute")
	ErrPathNotClean    = errors.New("path is not normalised (no \".\", \"..\", \"//\" or trailing slash)")
)

// CheckPath reports whether path can be used in a policy: absolute,
// normalised, and representable in SBPL (no NUL, valid UTF-8).
func CheckPath(path string) error {
	if err := sbpl.CheckString(path); err != nil {
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
