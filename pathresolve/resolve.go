package pathresolve

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Reason says why a [Rewrite] happened.
type Reason int

const (
	// ReasonSymlink: a symbolic link was followed.
	ReasonSymlink Reason = iota + 1
	// ReasonFirmlink: a data-volume spelling was replaced by the
	// system-volume spelling of the same directory.
	ReasonFirmlink
)

func (r Reason) String() string {
	switch r {
	case ReasonSymlink:
		return "symlink"
	case ReasonFirmlink:
		return "firmlink"
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Rewrite records one step from the spelling written to the kernel
// spelling. From and To are whole paths (cleaned lexically for display);
// Via is the kernel spelling of the symbolic link, or the System side of the
// firmlink, that caused it. The first Rewrite's From is the input.
type Rewrite struct {
	From, To string
	Reason   Reason
	Via      string
}

// Result is a resolved path.
type Result struct {
	Input string // as written
	Path  string // the spelling the kernel matches
	// Rewrites in the order they happened; empty when nothing was rewritten.
	Rewrites []Rewrite
	// Links are the symbolic links the lookup passed through, each in
	// kernel spelling, in order, without duplicates. A sandboxed child needs
	// file-read-metadata on each to look the path up in the caller's
	// spelling.
	Links []string
	// CaseSensitive reports whether the volume of Volume compares names
	// case-sensitively.
	CaseSensitive bool
	// Volume is the longest existing prefix of Path.
	Volume string
	// Exists reports whether all of Path exists (Volume == Path).
	Exists bool
}

// Option configures a [Resolver]. It is sealed: only this package makes
// Options.
type Option interface{ apply(*config) }

type config struct {
	firmlinks []Firmlink
	maxLinks  int
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithFirmlinks makes the resolver rewrite each firmlink's Data spelling to
// its System spelling. Without it the resolver knows no firmlinks; on macOS
// pass [HostFirmlinks] (or use [NewHost]).
func WithFirmlinks(fl []Firmlink) Option {
	fl = append([]Firmlink(nil), fl...)
	return optionFunc(func(c *config) { c.firmlinks = append(c.firmlinks, fl...) })
}

// WithMaxSymlinks sets how many symbolic links one resolution may follow
// before failing with [ErrLoop]; n < 1 means [MaxSymlinks], the host
// kernel's limit.
func WithMaxSymlinks(n int) Option {
	return optionFunc(func(c *config) { c.maxLinks = n })
}

// Resolver resolves paths to the kernel's spelling. It remembers every
// answer its FS gave, so paths sharing prefixes cost one lookup per distinct
// component; make a new Resolver to see later changes. It is safe for
// concurrent use.
type Resolver struct {
	fsys      FS
	firmlinks map[string]Firmlink // by Data
	folded    map[string]Firmlink // by strings.ToLower(Data)
	maxLinks  int

	mu    sync.Mutex
	lstat map[string]*memo[fs.FileInfo]
	links map[string]*memo[string]
	cs    map[string]*memo[bool]
}

type memo[T any] struct {
	once sync.Once
	v    T
	err  error
}

// New returns a Resolver over fsys (nil means [OS]).
func New(fsys FS, opts ...Option) *Resolver {
	if fsys == nil {
		fsys = OS()
	}
	var c config
	for _, o := range opts {
		o.apply(&c)
	}
	if c.maxLinks < 1 {
		c.maxLinks = MaxSymlinks
	}
	r := &Resolver{
		fsys:      fsys,
		firmlinks: map[string]Firmlink{},
		folded:    map[string]Firmlink{},
		maxLinks:  c.maxLinks,
		lstat:     map[string]*memo[fs.FileInfo]{},
		links:     map[string]*memo[string]{},
		cs:        map[string]*memo[bool]{},
	}
	for _, f := range c.firmlinks {
		r.firmlinks[f.Data] = f
		r.folded[strings.ToLower(f.Data)] = f
	}
	return r
}

// NewHost returns a Resolver over the host file system with the host's
// firmlinks.
func NewHost() (*Resolver, error) {
	fl, err := HostFirmlinks()
	if err != nil {
		return nil, err
	}
	return New(OS(), WithFirmlinks(fl)), nil
}

func cached[T any](r *Resolver, m map[string]*memo[T], key string, f func(string) (T, error)) (T, error) {
	r.mu.Lock()
	e := m[key]
	if e == nil {
		e = &memo[T]{}
		m[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() { e.v, e.err = f(key) })
	return e.v, e.err
}

// CheckAbs reports whether path is acceptable to [Resolver.Resolve]:
// absolute, normalised (no ".", "..", repeated or trailing slash, not empty)
// and free of NUL bytes. The error is a [*PathError] as Resolve returns.
func CheckAbs(p string) error {
	if i := strings.IndexByte(p, 0); i >= 0 {
		end := strings.IndexByte(p[i:], '/')
		if end < 0 {
			end = len(p)
		} else {
			end += i
		}
		return &PathError{Path: p, Component: p[:end], Err: ErrNUL}
	}
	if p == "" {
		return &PathError{Path: p, Err: ErrNotAbsolute}
	}
	if p[0] != '/' {
		first, _, _ := strings.Cut(p, "/")
		return &PathError{Path: p, Component: first, Err: ErrNotAbsolute}
	}
	if p == "/" {
		return nil
	}
	for i := 1; ; {
		j := strings.IndexByte(p[i:], '/')
		end := len(p)
		if j >= 0 {
			end = i + j
		}
		switch p[i:end] {
		case "":
			c := p[:i]
			if i < len(p) {
				c = p[:i+1]
			}
			return &PathError{Path: p, Component: c, Err: ErrNotNormal}
		case ".", "..":
			return &PathError{Path: p, Component: p[:end], Err: ErrNotNormal}
		}
		if j < 0 {
			return nil
		}
		i = end + 1
	}
}

// Resolve returns the spelling of p the kernel matches, following symbolic
// links component by component (absolute and relative targets, links to
// links) and rewriting firmlinked data-volume spellings. Names that exist
// keep the caller's spelling: on a case- or normalization-insensitive volume
// no case or Unicode form is invented, since Seatbelt matches paths
// insensitively anyway. A missing tail is kept, lexically, under the
// resolved longest existing prefix, so a rule can name a file created
// later.
func (r *Resolver) Resolve(p string) (Result, error) {
	if err := CheckAbs(p); err != nil {
		return Result{}, err
	}
	w := walker{r: r, res: Result{Input: p}, cur: "/", isDir: true}
	if err := w.run(split(p)); err != nil {
		return Result{}, err
	}
	return w.res, nil
}

type walker struct {
	r       *Resolver
	res     Result
	cur     string   // resolved existing prefix, kernel spelling
	isDir   bool     // whether cur is a directory
	missing []string // names under cur that do not exist
	nlinks  int
	seen    map[string]bool
}

func (w *walker) run(pending []string) error {
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		if len(w.missing) > 0 {
			// Under a missing name nothing can be a link yet: keep the tail
			// lexically. A ".." there (only a link target can bring one)
			// fails as the kernel's lookup does, with ENOENT at the missing
			// name: applied lexically it would name a path the kernel
			// never reaches, and an allow on it would be broader.
			switch name {
			case ".":
			case "..":
				return w.fail(join(w.cur, w.missing[0]), syscall.ENOENT)
			default:
				w.missing = append(w.missing, name)
			}
			continue
		}
		if !w.isDir {
			return w.fail(w.cur, syscall.ENOTDIR)
		}
		switch name {
		case ".":
			continue
		case "..":
			// cur holds no links, so its lexical parent is its real one.
			w.cur = path.Dir(w.cur)
			continue
		}
		next := join(w.cur, name)
		fi, err := cached(w.r, w.r.lstat, next, w.r.fsys.Lstat)
		if errors.Is(err, fs.ErrNotExist) {
			w.missing = append(w.missing, name)
			continue
		}
		if err != nil {
			return w.fail(next, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if w.nlinks >= w.r.maxLinks {
				return w.fail(next, fmt.Errorf("%w (more than %d followed)", ErrLoop, w.r.maxLinks))
			}
			w.nlinks++
			target, err := cached(w.r, w.r.links, next, w.r.fsys.Readlink)
			if err != nil {
				return w.fail(next, err)
			}
			if target == "" {
				return w.fail(next, fmt.Errorf("symbolic link has an empty target: %w", fs.ErrNotExist))
			}
			w.addLink(next)
			from := display(w.cur, append([]string{name}, pending...))
			if target[0] == '/' {
				w.cur = "/"
			}
			tcomps := split(target)
			if strings.HasSuffix(target, "/") {
				// A trailing slash demands a directory: "file/" is ENOTDIR
				// to the kernel (POSIX path resolution; checked against
				// linux). The "." makes the walk apply the directory check.
				tcomps = append(tcomps, ".")
			}
			pending = append(tcomps, pending...)
			w.res.Rewrites = append(w.res.Rewrites, Rewrite{
				From: from, To: display(w.cur, pending), Reason: ReasonSymlink, Via: next,
			})
			continue
		}
		w.cur, w.isDir = next, fi.IsDir()
		if f, ok, err := w.firmlink(next); err != nil {
			return w.fail(next, err)
		} else if ok {
			from := display(w.cur, pending)
			w.cur = f.System
			w.res.Rewrites = append(w.res.Rewrites, Rewrite{
				From: from, To: display(w.cur, pending), Reason: ReasonFirmlink, Via: f.System,
			})
		}
	}
	w.res.Volume = w.cur
	w.res.Exists = len(w.missing) == 0
	w.res.Path = display(w.cur, w.missing)
	// Mount points are directories, so a file's volume is its directory's;
	// asking the directory lets files in one directory share one answer.
	csPath := w.cur
	if !w.isDir {
		csPath = path.Dir(w.cur)
	}
	cs, err := cached(w.r, w.r.cs, csPath, w.r.fsys.CaseSensitive)
	if err != nil {
		return w.fail(csPath, err)
	}
	w.res.CaseSensitive = cs
	return nil
}

// firmlink reports the firmlink whose Data side is p. A spelling differing
// only in case counts when p's volume is case-insensitive.
func (w *walker) firmlink(p string) (Firmlink, bool, error) {
	if f, ok := w.r.firmlinks[p]; ok {
		return f, true, nil
	}
	f, ok := w.r.folded[strings.ToLower(p)]
	if !ok {
		return Firmlink{}, false, nil
	}
	cs, err := cached(w.r, w.r.cs, p, w.r.fsys.CaseSensitive)
	if err != nil || cs {
		return Firmlink{}, false, err
	}
	return f, true, nil
}

func (w *walker) addLink(l string) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if !w.seen[l] {
		w.seen[l] = true
		w.res.Links = append(w.res.Links, l)
	}
}

func (w *walker) fail(component string, err error) error {
	// Drop an fs.PathError naming the same path: the component says it.
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == component {
		err = pe.Err
	}
	return &PathError{Path: w.res.Input, Component: component, Err: err}
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

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

func display(base string, comps []string) string {
	if len(comps) == 0 {
		return base
	}
	return path.Clean(base + "/" + strings.Join(comps, "/"))
}
