//go:build darwin || linux

// The binding builds on linux too, so the tests can load a fake library.

package libsandbox

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"structs"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// cProfile mirrors the struct a sandbox_profile_t points to (24 bytes).
// A pointer-typed purego return keeps go vet's unsafeptr check quiet.
// [confirmed: Chromium seatbelt.cc, WebKit SandboxSPI.h; reported: Protonk
// notes observed [0, ptr, 0x1a0] on macOS 14.4.1]
type cProfile struct {
	_       structs.HostLayout
	builtin *byte   // 0: NULL for compiled text
	data    *byte   // 8: bytecode
	size    uintptr // 16: bytecode length
}

// maxBytecode bounds a copy from a corrupt profile. Real profiles are at most
// a few hundred KiB (the compiler caps serialized tables at 65535 bytes:
// status-im/status-legacy#16353, moonbitlang/openseek#1296).
const maxBytecode = 64 << 20

// maxCString bounds a read of a C string from the library.
const maxCString = 1 << 20

// Lib is the loaded private interface. Its methods are safe for concurrent
// use; compiles are serialised.
type Lib struct {
	paths [2]string // indexed by whichLib
	addr  [numSymbols]uintptr

	mu       sync.Mutex // the compiler's thread safety is unknown [needs a Mac]
	compiles atomic.Int64

	compileString func(text *byte, params unsafe.Pointer, errp **byte) *cProfile
	freeProfile   func(p *cProfile)
	createParams  func() unsafe.Pointer
	setParam      func(p unsafe.Pointer, key, value *byte) int32
	freeParams    func(p unsafe.Pointer)
	freeError     func(e *byte)
	free          func(p *byte)

	// afterSetParams runs between the last sandbox_set_param and the compile;
	// tests use it to collect garbage while libsandbox holds the pointers.
	afterSetParams func()
}

var (
	loadOnce sync.Once
	loaded   *Lib
	errLoad  error
)

// Load loads the system libraries and resolves every symbol the project uses,
// once per process. A missing library or symbol is an *UnsupportedError
// naming it and the OS build; the result is cached either way.
func Load() (*Lib, error) {
	loadOnce.Do(func() { loaded, errLoad = open(LibsandboxPath, LibSystemPath) })
	return loaded, errLoad
}

// open loads the two libraries from the given paths (tests load fakes).
func open(libsandboxPath, libsystemPath string) (*Lib, error) {
	l := &Lib{paths: [2]string{inLibsandbox: libsandboxPath, inLibSystem: libsystemPath}}
	var handles [2]uintptr
	closeAll := func() {
		for _, h := range handles {
			if h != 0 {
				_ = purego.Dlclose(h)
			}
		}
	}
	for i, p := range l.paths {
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			closeAll()
			return nil, &UnsupportedError{Library: p, OSBuild: osBuild(), Err: err}
		}
		handles[i] = h
	}
	for id, s := range symbols {
		a, err := purego.Dlsym(handles[s.lib], s.name)
		if err == nil && a == 0 {
			err = errors.New("dlsym returned NULL")
		}
		if err != nil {
			closeAll()
			return nil, &UnsupportedError{Symbol: s.name, Library: l.paths[s.lib], OSBuild: osBuild(), Err: err}
		}
		l.addr[id] = a
	}
	// Signatures: Chromium seatbelt.cc, WebKit SandboxSPI.h.
	purego.RegisterFunc(&l.compileString, l.addr[symCompileString])
	purego.RegisterFunc(&l.freeProfile, l.addr[symFreeProfile])
	purego.RegisterFunc(&l.createParams, l.addr[symCreateParams])
	purego.RegisterFunc(&l.setParam, l.addr[symSetParam])
	purego.RegisterFunc(&l.freeParams, l.addr[symFreeParams])
	purego.RegisterFunc(&l.freeError, l.addr[symFreeError])
	purego.RegisterFunc(&l.free, l.addr[symFree])
	return l, nil
}

func (l *Lib) unsupported(id symbolID, err error) error {
	return &UnsupportedError{Symbol: symbols[id].name, Library: l.paths[symbols[id].lib], OSBuild: osBuild(), Err: err}
}

// Compiles reports how many times this Lib has called the compiler.
func (l *Lib) Compiles() int64 { return l.compiles.Load() }

// MacSyscallAddr is the address of libSystem's __mac_syscall, for a forked
// child that calls it through a raw libc call.
func (l *Lib) MacSyscallAddr() uintptr { return l.addr[symMacSyscall] }

// Compile compiles SBPL text with params and returns the bytecode, copied
// into Go memory; the C profile is freed before Compile returns. A profile
// libsandbox rejects is a *CompileError with its message.
func (l *Lib) Compile(text string, params []Param) ([]byte, error) {
	ctext, err := cString("profile text", text)
	if err != nil {
		return nil, err
	}
	// sandbox_set_param keeps the key and value pointers without copying
	// [confirmed: Chromium sandbox_serializer.cc], so all strings live in one
	// Go buffer, pinned (which also forces it onto the heap: a small
	// non-escaping append may otherwise use the movable stack) until the
	// compile and free_params have returned.
	var pbuf []byte
	offs := make([]int, 0, 2*len(params))
	for _, p := range params {
		if p.Key == "" {
			return nil, fmt.Errorf("libsandbox: parameter with an empty key (value %q): %w", p.Value, ErrInvalidArgument)
		}
		for _, s := range [2]string{p.Key, p.Value} {
			b, err := cString("parameter", s)
			if err != nil {
				return nil, err
			}
			offs = append(offs, len(pbuf))
			pbuf = append(pbuf, b...)
		}
	}

	l.mu.Lock()
	defer l.mu.Unlock()

	var pin runtime.Pinner
	defer pin.Unpin()
	var cparams unsafe.Pointer
	if len(params) > 0 {
		pin.Pin(&pbuf[0])
		cparams = l.createParams()
		if cparams == nil {
			return nil, l.unsupported(symCreateParams, errors.New("returned NULL"))
		}
		for i := 0; i < len(offs); i += 2 {
			if r := l.setParam(cparams, &pbuf[offs[i]], &pbuf[offs[i+1]]); r != 0 {
				l.freeParams(cparams)
				return nil, fmt.Errorf("libsandbox: sandbox_set_param(%q) returned %d", params[i/2].Key, r)
			}
		}
	}
	if l.afterSetParams != nil {
		l.afterSetParams()
	}

	var cerr *byte
	l.compiles.Add(1)
	prof := l.compileString(&ctext[0], cparams, &cerr)
	var msg string
	if cerr != nil {
		// Also set on some successful compiles [reported]: free it either way.
		msg = goString(cerr)
		l.freeError(cerr)
	}
	if cparams != nil {
		l.freeParams(cparams)
	}
	runtime.KeepAlive(pbuf)
	runtime.KeepAlive(ctext)

	if prof == nil {
		if msg == "" {
			msg = "failed without a message"
		}
		return nil, &CompileError{Message: msg}
	}
	code, err := l.copyProfile(prof)
	l.freeProfile(prof)
	return code, err
}

// copyProfile copies the bytecode out of prof, which the caller frees.
func (l *Lib) copyProfile(prof *cProfile) ([]byte, error) {
	if prof.builtin != nil {
		// Compiled text never names a builtin [reported: Protonk notes].
		return nil, l.unsupported(symCompileString, fmt.Errorf("returned builtin profile %q instead of bytecode", goString(prof.builtin)))
	}
	if prof.data == nil || prof.size == 0 || prof.size > maxBytecode {
		return nil, l.unsupported(symCompileString, fmt.Errorf("returned bytecode at %p of %d bytes", prof.data, prof.size))
	}
	code := make([]byte, prof.size)
	copy(code, unsafe.Slice(prof.data, prof.size))
	return code, nil
}

// IsSandboxed reports whether process pid runs under a Seatbelt profile:
// sandbox_check(pid, NULL, SANDBOX_FILTER_NONE) == 1 [confirmed: Chromium
// IsSandboxed].
func (l *Lib) IsSandboxed(pid int) (bool, error) {
	return l.Check(pid, "", FilterNone, "", 0)
}

// Check asks whether process pid's sandbox denies operation op (empty: no
// operation, "is it sandboxed") on a filter argument, and returns true when
// denied.
//
// sandbox_check is variadic and darwin/arm64 passes variadic arguments on the
// stack, where purego's register-first calls do not put them [inferred
// from the arm64 calling convention and purego's SyscallN]. So sandbox_check is only called without a filter argument
// (FilterNone: fixed arguments only, identical on every ABI), and a filtered
// check goes through the non-variadic __mac_syscall("Sandbox", 2, block) with
// the block of [NewCheck] — the same block a forked child uses.
func (l *Lib) Check(pid int, op string, ft FilterType, arg string, flags CheckFlags) (denied bool, err error) {
	if pid < 0 || pid > math.MaxInt32 {
		return false, fmt.Errorf("libsandbox: check: pid %d out of range: %w", pid, ErrInvalidArgument)
	}
	if ft != FilterNone {
		c, err := NewCheck(pid, op, ft, arg, flags)
		if err != nil {
			return false, err
		}
		r, _, errno := purego.SyscallN(l.addr[symMacSyscall],
			uintptr(unsafe.Pointer(&PolicyName[0])), CallCheck, uintptr(c.Arg()))
		runtime.KeepAlive(c)
		if int32(r) != 0 {
			return false, callFailed("__mac_syscall(Sandbox, check)", pid, errno)
		}
		return *c.Result() != 0, nil
	}
	if arg != "" {
		return false, fmt.Errorf("libsandbox: check: filter argument %q given without a filter type: %w", arg, ErrInvalidArgument)
	}
	if _, err := kernelCheckFlags(flags); err != nil {
		return false, err
	}
	var cop []byte
	var opPtr *byte
	if op != "" {
		if cop, err = cString("operation", op); err != nil {
			return false, err
		}
		opPtr = &cop[0]
	}
	r, _, errno := purego.SyscallN(l.addr[symCheck],
		uintptr(pid), uintptr(unsafe.Pointer(opPtr)), uintptr(uint32(FilterNone)|uint32(flags)))
	runtime.KeepAlive(cop)
	switch int32(r) {
	case 0:
		return false, nil
	case 1:
		return true, nil
	case -1:
		return false, callFailed("sandbox_check", pid, errno)
	}
	return false, l.unsupported(symCheck, fmt.Errorf("returned %d, want 0, 1 or -1", int32(r)))
}

// IssueExtension issues a sandbox extension token of class (ExtensionRead,
// ExtensionReadWrite) for path, which must be canonical (symbolic links
// resolved, /tmp spelled /private/tmp). The token is a bearer capability:
// pass it to the child in memory, never in argv or the environment.
func (l *Lib) IssueExtension(class, path string) (string, error) {
	cc, err := cString("extension class", class)
	if err != nil {
		return "", err
	}
	cp, err := cString("path", path)
	if err != nil {
		return "", err
	}
	// flags 0, as Chromium passes [confirmed: Chromium seatbelt_extension.cc].
	r, _, errno := purego.SyscallN(l.addr[symExtensionIssueFile],
		uintptr(unsafe.Pointer(&cc[0])), uintptr(unsafe.Pointer(&cp[0])), 0)
	runtime.KeepAlive(cc)
	runtime.KeepAlive(cp)
	if r == 0 {
		return "", fmt.Errorf("libsandbox: issuing a %s extension for %q: %w", class, path, errnoErr(errno))
	}
	// r is a malloc'd C string; read it through a pointer-typed view of the
	// word, which go vet accepts (unlike unsafe.Pointer(r)).
	tok := *(**byte)(unsafe.Pointer(&r))
	s := goString(tok)
	l.free(tok)
	return s, nil
}

// ConsumeExtension consumes token into the calling process and returns the
// handle. A forked child consumes with [NewConsume] instead; this is for
// completeness and tests.
func (l *Lib) ConsumeExtension(token string) (int64, error) {
	ct, err := cString("extension token", token)
	if err != nil {
		return 0, err
	}
	r, _, errno := purego.SyscallN(l.addr[symExtensionConsume], uintptr(unsafe.Pointer(&ct[0])))
	runtime.KeepAlive(ct)
	if h := int64(r); h == -1 {
		return 0, fmt.Errorf("libsandbox: consuming an extension token: %w", errnoErr(errno))
	}
	return int64(r), nil
}

// ReleaseExtension releases a handle from ConsumeExtension.
func (l *Lib) ReleaseExtension(handle int64) error {
	r, _, errno := purego.SyscallN(l.addr[symExtensionRelease], uintptr(handle))
	if int32(r) != 0 {
		return fmt.Errorf("libsandbox: releasing extension handle %d: %w", handle, errnoErr(errno))
	}
	return nil
}

// errNoErrno stands in for errno where purego does not capture it (linux).
var errNoErrno = errors.New("failed (errno not captured on this platform)")

func errnoErr(errno uintptr) error {
	if errno == 0 {
		return errNoErrno
	}
	return syscall.Errno(errno)
}

func callFailed(call string, pid int, errno uintptr) error {
	return fmt.Errorf("libsandbox: %s for pid %d: %w", call, pid, errnoErr(errno))
}

// goString copies a NUL-terminated C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for n < maxCString && *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
