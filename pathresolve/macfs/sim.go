package macfs

import (
	"io/fs"
	"maps"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/procage-go/procage/pathresolve"
)

// Paths of the tree [NewMacOS] lays out.
const (
	Home = "/Users/me"
	// TempDir is $TMPDIR as macOS spells it for a user; the kernel sees
	// KernelTempDir.
	TempDir       = "/var/folders/xx/yyyy/T"
	KernelTempDir = "/private/var/folders/xx/yyyy/T"
)

// FirmlinksText is the /usr/share/firmlinks of [NewMacOS], a subset of a
// macOS 14 list in the file's format (system path, tab, data path relative
// to /System/Volumes/Data) [reported: hashicorp/vagrant
// plugins/hosts/darwin/cap/path.rb @ b12a2327 for the format; entries as
// commonly listed for macOS 10.15 and later].
const FirmlinksText = "/AppleInternal\tAppleInternal\n" +
	"/Applications\tApplications\n" +
	"/Library\tLibrary\n" +
	"/System/Library/Caches\tSystem/Library/Caches\n" +
	"/Users\tUsers\n" +
	"/Volumes\tVolumes\n" +
	"/cores\tcores\n" +
	"/opt\topt\n" +
	"/private\tprivate\n" +
	"/usr/local\tusr/local\n"

// maxLinks is the simulated kernel's MAXSYMLINKS (xnu bsd/sys/param.h).
const maxLinks = 32

type kind int

const (
	kDir kind = iota
	kFile
	kLink
)

type volume struct{ caseSensitive bool }

type entry struct {
	name string // as stored, e.g. decomposed
	n    *node
}

type node struct {
	kind    kind
	target  string
	data    []byte
	entries []entry
	vol     *volume
	denied  bool
}

func (d *node) lookup(name string) *node {
	k := fold(name, d.vol.caseSensitive)
	for _, e := range d.entries {
		if fold(e.name, d.vol.caseSensitive) == k {
			return e.n
		}
	}
	return nil
}

// FS is an in-memory macOS-like file system implementing [pathresolve.FS].
// Lookups follow symbolic links as the kernel does (ELOOP after 32), fold
// Unicode normalization on every volume and case on case-insensitive ones,
// and keep names as they were created. Firmlinks are one directory reachable
// under two names. It counts calls per method and name. Safe for concurrent
// use.
type FS struct {
	mu        sync.Mutex
	root      *node
	firmlinks []pathresolve.Firmlink
	calls     map[string]map[string]int
}

// New returns an empty file system: a root directory on a case-insensitive
// volume.
func New() *FS {
	return &FS{
		root:  &node{kind: kDir, vol: &volume{}},
		calls: map[string]map[string]int{},
	}
}

// NewMacOS lays out a small macOS tree: the data volume under
// /System/Volumes/Data joined by the firmlinks of [FirmlinksText]
// (/Users, /private, /Applications, ...), /tmp, /var and /etc as relative
// links into private/ as on macOS [reported: Protonk VFS report; confirmed:
// the Rust procage's ROOT_LINKS], a user temp dir at [TempDir], [Home], /usr/bin and
// /bin, and /usr/share/firmlinks. The volume is case-insensitive.
func NewMacOS() *FS {
	f := New()
	must := func(err error) {
		if err != nil {
			panic("macfs: building the macOS tree: " + err.Error())
		}
	}
	fl, err := pathresolve.ParseFirmlinks(strings.NewReader(FirmlinksText))
	must(err)
	must(f.MkdirAll("/System/Library"))
	for _, l := range fl {
		must(f.MkdirAll(l.Data))
		must(f.Firmlink(l.System, l.Data))
	}
	for _, d := range []string{
		"/private/tmp", "/private/var/tmp", "/private/etc",
		"/private/var/folders/xx/yyyy/T", "/private/var/folders/xx/yyyy/C",
		"/Users/me/Documents", "/Users/Shared", "/usr/bin", "/bin", "/usr/share",
	} {
		must(f.MkdirAll(d))
	}
	must(f.Symlink("private/tmp", "/tmp"))
	must(f.Symlink("private/var", "/var"))
	must(f.Symlink("private/etc", "/etc"))
	for _, p := range []string{"/private/etc/hosts", "/private/etc/passwd", "/usr/bin/env", "/bin/sh", "/Users/me/.zshrc"} {
		must(f.WriteFile(p, nil))
	}
	must(f.WriteFile("/usr/share/firmlinks", []byte(FirmlinksText)))
	return f
}

// Firmlinks returns the firmlinks added with [FS.Firmlink].
func (f *FS) Firmlinks() []pathresolve.Firmlink {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pathresolve.Firmlink(nil), f.firmlinks...)
}

func pathErr(op, name string, err syscall.Errno) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// walk looks name up from the root. followLast says whether a final
// symbolic link is followed. It returns the node and its parent directory.
func (f *FS) walk(name string, followLast bool) (n, parent *node, err syscall.Errno) {
	if !strings.HasPrefix(name, "/") {
		return nil, nil, syscall.EINVAL
	}
	stack := []*node{f.root}
	comps := split(name)
	links := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		dir := stack[len(stack)-1]
		if dir.kind != kDir {
			return nil, nil, syscall.ENOTDIR
		}
		switch c {
		case ".":
			continue
		case "..":
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if dir.denied {
			return nil, nil, syscall.EACCES
		}
		ch := dir.lookup(c)
		if ch == nil {
			return nil, nil, syscall.ENOENT
		}
		if ch.kind == kLink && (len(comps) > 0 || followLast) {
			if links >= maxLinks {
				return nil, nil, syscall.ELOOP
			}
			links++
			if strings.HasPrefix(ch.target, "/") {
				stack = stack[:1]
			}
			tcomps := split(ch.target)
			if strings.HasSuffix(ch.target, "/") {
				// "file/" is ENOTDIR, as in the kernel: keep the slash's
				// directory check as a "." component.
				tcomps = append(tcomps, ".")
			}
			comps = append(tcomps, comps...)
			continue
		}
		stack = append(stack, ch)
	}
	n = stack[len(stack)-1]
	parent = n
	if len(stack) > 1 {
		parent = stack[len(stack)-2]
	}
	return n, parent, 0
}

func split(p string) []string {
	var out []string
	for c := range strings.SplitSeq(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

func (f *FS) count(method, name string) {
	m := f.calls[method]
	if m == nil {
		m = map[string]int{}
		f.calls[method] = m
	}
	m[name]++
}

// Lstat implements [pathresolve.FS].
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count("Lstat", name)
	n, _, errno := f.walk(name, false)
	if errno != 0 {
		return nil, pathErr("lstat", name, errno)
	}
	return info{name: path.Base(name), n: n}, nil
}

// Readlink implements [pathresolve.FS].
func (f *FS) Readlink(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count("Readlink", name)
	n, _, errno := f.walk(name, false)
	if errno != 0 {
		return "", pathErr("readlink", name, errno)
	}
	if n.kind != kLink {
		return "", pathErr("readlink", name, syscall.EINVAL)
	}
	return n.target, nil
}

// CaseSensitive implements [pathresolve.FS]: the volume of name, following
// a final link as pathconf does.
func (f *FS) CaseSensitive(name string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count("CaseSensitive", name)
	n, _, errno := f.walk(name, true)
	if errno != 0 {
		return false, pathErr("pathconf", name, errno)
	}
	return n.vol.caseSensitive, nil
}

// Calls returns how often method ("Lstat", "Readlink", "CaseSensitive")
// was called, per name.
func (f *FS) Calls(method string) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.calls[method])
}

// ResetCalls forgets the counted calls.
func (f *FS) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = map[string]map[string]int{}
}

// MkdirAll creates name and missing parents, following links as mkdir -p.
func (f *FS) MkdirAll(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mkdirAll(name)
}

func (f *FS) mkdirAll(name string) error {
	cur := "/"
	for _, c := range split(name) {
		next := path.Join(cur, c)
		n, _, errno := f.walk(next, true)
		switch {
		case errno == syscall.ENOENT:
			dir, _, derr := f.walk(cur, true)
			if derr != 0 {
				return pathErr("mkdir", next, derr)
			}
			dir.entries = append(dir.entries, entry{c, &node{kind: kDir, vol: dir.vol}})
		case errno != 0:
			return pathErr("mkdir", next, errno)
		case n.kind != kDir:
			return pathErr("mkdir", next, syscall.ENOTDIR)
		}
		cur = next
	}
	return nil
}

// add creates name (parents as needed) with n's kind, storing the last
// component as spelled.
func (f *FS) add(op, name string, n *node, replaceFile bool) error {
	if name == "/" || !strings.HasPrefix(name, "/") {
		return pathErr(op, name, syscall.EINVAL)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dirName, base := path.Split(name)
	if err := f.mkdirAll(dirName); err != nil {
		return err
	}
	dir, _, errno := f.walk(dirName, true)
	if errno != 0 {
		return pathErr(op, name, errno)
	}
	if old := dir.lookup(base); old != nil {
		if replaceFile && old.kind == kFile && n.kind == kFile {
			old.data = n.data
			return nil
		}
		return pathErr(op, name, syscall.EEXIST)
	}
	if n.vol == nil {
		n.vol = dir.vol
	}
	dir.entries = append(dir.entries, entry{base, n})
	return nil
}

// WriteFile creates or replaces the regular file name, creating parents.
func (f *FS) WriteFile(name string, data []byte) error {
	return f.add("open", name, &node{kind: kFile, data: append([]byte(nil), data...)}, true)
}

// Symlink creates the symbolic link name pointing at target, creating
// parents.
func (f *FS) Symlink(target, name string) error {
	return f.add("symlink", name, &node{kind: kLink, target: target}, false)
}

// Firmlink makes the existing directory data reachable as system too, as
// macOS firmlinks do, and records the pair for [FS.Firmlinks].
func (f *FS) Firmlink(system, data string) error {
	f.mu.Lock()
	n, _, errno := f.walk(data, true)
	f.mu.Unlock()
	if errno != 0 {
		return pathErr("firmlink", data, errno)
	}
	if n.kind != kDir {
		return pathErr("firmlink", data, syscall.ENOTDIR)
	}
	if err := f.add("firmlink", system, n, false); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.firmlinks = append(f.firmlinks, pathresolve.Firmlink{System: system, Data: data})
	return nil
}

// ReadFile returns the contents of the regular file name.
func (f *FS) ReadFile(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _, errno := f.walk(name, true)
	if errno != 0 {
		return nil, pathErr("open", name, errno)
	}
	if n.kind != kFile {
		return nil, pathErr("read", name, syscall.EISDIR)
	}
	return append([]byte(nil), n.data...), nil
}

// MountCaseSensitive mounts a new, empty case-sensitive volume at dir
// (created if missing). Everything created under dir afterwards is on it.
func (f *FS) MountCaseSensitive(dir string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.mkdirAll(dir); err != nil {
		return err
	}
	n, _, errno := f.walk(dir, true)
	if errno != 0 {
		return pathErr("mount", dir, errno)
	}
	if len(n.entries) > 0 {
		return pathErr("mount", dir, syscall.ENOTEMPTY)
	}
	n.vol = &volume{caseSensitive: true}
	return nil
}

// Deny makes the directory dir unsearchable, as chmod 0 would: looking up
// anything inside it fails with EACCES; dir itself stays visible.
func (f *FS) Deny(dir string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _, errno := f.walk(dir, true)
	if errno != 0 {
		return pathErr("chmod", dir, errno)
	}
	if n.kind != kDir {
		return pathErr("chmod", dir, syscall.ENOTDIR)
	}
	n.denied = true
	return nil
}

type info struct {
	name string
	n    *node
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return int64(len(i.n.data) + len(i.n.target)) }
func (i info) Mode() fs.FileMode {
	switch i.n.kind {
	case kDir:
		return fs.ModeDir | 0o755
	case kLink:
		return fs.ModeSymlink | 0o755
	}
	return 0o644
}
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.n.kind == kDir }
func (i info) Sys() any           { return nil }
