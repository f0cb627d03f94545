package pathresolve

import (
	"io/fs"
	"os"
)

// FS is the view of the file system the resolver asks. [OS] is the host's;
// macfs provides a simulated macOS one.
type FS interface {
	// Lstat describes name without following a final symbolic link.
	// Intermediate components are looked up as the kernel would.
	Lstat(name string) (fs.FileInfo, error)
	// Readlink returns the target of the symbolic link name, unmodified.
	Readlink(name string) (string, error)
	// CaseSensitive reports whether the volume holding the existing path
	// name compares names case-sensitively.
	CaseSensitive(name string) (bool, error)
}

// OS returns the host's file system. On darwin CaseSensitive asks
// pathconf(name, _PC_CASE_SENSITIVE); on other systems it reports true, as
// their usual file systems are case-sensitive.
func OS() FS { return osFS{} }

type osFS struct{}

func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) Readlink(name string) (string, error)   { return os.Readlink(name) }
