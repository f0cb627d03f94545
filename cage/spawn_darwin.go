package cage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
)

// killRounds is how many search-and-kill rounds ending a forking run makes
// before giving up [confirmed: procage 0.3.1 lifetime.rs ROUNDS = 64].
const killRounds = 64

// sZomb is p_stat of a zombie [confirmed: xnu bsd/sys/proc.h, #define SZOMB 5].
const sZomb = 5

// checkPIDOffset is the offset of the pid in the Sandbox call-2 block
// [reported: Finch; libsandbox.md §8.4]. The child writes its own pid there
// (forkexec Call.WithPID), since the pid is unknown before fork.
const checkPIDOffset = 8

var loadLib = sync.OnceValues(libsandbox.Load)

// osBuild names the macOS build, kern.osversion [confirmed: x/sys
// unix.Sysctl; procage 0.6.0 probe.rs records the OS build].
func osBuild() string {
	v, err := unix.Sysctl("kern.osversion")
	if err != nil || v == "" {
		return "macOS (build unknown)"
	}
	return "macOS " + v
}

func libOrUnsupported() (*libsandbox.Lib, error) {
	lib, err := loadLib()
	if err != nil {
		return nil, &UnsupportedError{OSBuild: osBuild(), What: "the private libsandbox interface is not available", Err: err}
	}
	return lib, nil
}

// hostEnforces: the host's volumes are the ones the cage's profile covers.
const hostEnforces = true

func platformSandboxed() (bool, error) {
	lib, err := libOrUnsupported()
	if err != nil {
		return false, err
	}
	is, err := lib.IsSandboxed(os.Getpid())
	if err != nil {
		return false, &UnsupportedError{OSBuild: osBuild(), What: "cannot tell whether this process is sandboxed", Err: err}
	}
	return is, nil
}

func platformCompiler() (compiler, error) {
	lib, err := libOrUnsupported()
	if err != nil {
		return nil, err
	}
	return lib, nil
}

// run is the state of one started run.
type run struct {
	pid     int
	marker  string // "" unless the policy forks
	tempDir string

	closeAfterWait []io.Closer
	copies         []func() error
	copyErr        chan error

	mu     sync.Mutex
	ctxErr error
	waited bool
	done   chan struct{}
}

// sandboxCalls prepares the child's raw calls: apply code, confirm the
// child is sandboxed (and, with a marker, that it denies the run prefix's
// sibling name, which only this profile does), consume each grant.
func sandboxCalls(lib *libsandbox.Lib, code []byte, marker string, grants []grant) ([]forkexec.Call, []any, error) {
	policy := &libsandbox.PolicyName[0]
	apply := libsandbox.NewApply(code)
	ca, err := forkexec.MacSyscall(forkexec.StepApply, policy, libsandbox.CallApply, apply.Arg(), nil)
	if err != nil {
		return nil, nil, err
	}
	self := libsandbox.NewSelfCheck(0)
	cc, err := forkexec.MacSyscall(forkexec.StepConfirm, policy, libsandbox.CallCheck, self.Arg(), self.Result())
	if err != nil {
		return nil, nil, err
	}
	calls := []forkexec.Call{ca, cc.WithPID(pidSlot(self))}
	keep := []any{apply, self}
	if marker != "" {
		sib, err := libsandbox.NewMarkerCheck(0, siblingName())
		if err != nil {
			return nil, nil, err
		}
		cs, err := forkexec.MacSyscall(forkexec.StepConfirm, policy, libsandbox.CallCheck, sib.Arg(), sib.Result())
		if err != nil {
			return nil, nil, err
		}
		calls = append(calls, cs.WithPID(pidSlot(sib)))
		keep = append(keep, sib)
	}
	for _, g := range grants {
		token, err := lib.IssueExtension(g.class, g.path)
		if err != nil {
			return nil, nil, fmt.Errorf("cage: issuing a grant for %q: %w", g.path, err)
		}
		cons, err := libsandbox.NewConsume(token)
		if err != nil {
			return nil, nil, err
		}
		// Chromium treats a handle > 0 as consumed; 0 is the "invalid" token.
		call, err := forkexec.MacSyscall(forkexec.StepConsume, policy, libsandbox.CallConsume, cons.Arg(), (*uint64)(unsafe.Pointer(cons.Handle())))
		if err != nil {
			return nil, nil, err
		}
		calls = append(calls, call)
		keep = append(keep, cons)
	}
	return calls, keep, nil
}

func pidSlot(c *libsandbox.CheckCall) *uint64 {
	return (*uint64)(unsafe.Add(c.Arg(), checkPIDOffset))
}

func applyError(err error) error {
	if se, ok := errors.AsType[*forkexec.StepError](err); ok {
		return &ApplyError{Step: se.Step.String(), Errno: se.Err}
	}
	return err
}

func (cmd *Cmd) start(grants []grant) error {
	if err := probeApply(); err != nil {
		return err
	}
	if cmd.cage.policy.Forking() {
		if err := probeMarker(); err != nil {
			return err
		}
	}
	return cmd.startRun(grants)
}

// startRun starts the child once the probes passed (the marker probe
// calls it directly for its own child).
func (cmd *Cmd) startRun(grants []grant) (err error) {
	c := cmd.cage
	lib, err := libOrUnsupported()
	if err != nil {
		return err
	}
	r := &run{done: make(chan struct{})}
	defer func() {
		if err != nil {
			r.closeAll()
			if r.tempDir != "" {
				os.RemoveAll(r.tempDir)
			}
		}
	}()

	var extraEnv []string
	if c.cfg.privateTemp {
		dir, g, err := privateTemp()
		if err != nil {
			return err
		}
		r.tempDir = dir
		grants = append(grants, g)
		extraEnv = append(extraEnv, "TMPDIR="+dir)
	}
	env := environ(c.cfg.env, cmd.Env, os.Environ(), extraEnv...)

	code := c.bytecode
	if len(c.plan.Params) > 0 {
		// Per-spawn parameters are consumed by the compiler: compile now.
		if c.policy.Forking() {
			r.marker = newMarker()
		}
		code, err = c.compile(c.spawnParams(cmd.execTarget, r.marker))
		if err != nil {
			return err
		}
	}
	if len(code) == 0 {
		return errors.New("cage: BUG: no compiled profile")
	}
	calls, keep, err := sandboxCalls(lib, code, r.marker, grants)
	if err != nil {
		return err
	}
	files, closeAfterStart, err := cmd.stdio(r)
	defer func() {
		for _, f := range closeAfterStart {
			f.Close()
		}
	}()
	if err != nil {
		return err
	}
	fds := make([]uintptr, len(files))
	for i, f := range files {
		fds[i] = f.Fd()
	}
	attr := &forkexec.Attr{
		Path: cmd.Path, Args: cmd.Args, Env: env, Dir: cmd.Dir, Files: fds,
		ProcessGroup: c.cfg.tty == TTYInherit, Calls: calls,
	}
	for _, l := range c.cfg.rlimits {
		attr.Rlimits = append(attr.Rlimits, forkexec.Rlimit{Resource: l.Resource, Cur: l.Cur, Max: l.Max})
	}
	pid, err := forkexec.Start(attr)
	runtime.KeepAlive(keep)
	runtime.KeepAlive(files)
	if err != nil {
		return applyError(err)
	}
	p, err := os.FindProcess(pid)
	if err != nil { // never on Unix; reap rather than leak
		_, _ = forkexec.Wait(pid)
		return err
	}
	r.pid, cmd.Process, cmd.run = pid, p, r
	r.copyErr = make(chan error, len(r.copies))
	for _, fn := range r.copies {
		go func() { r.copyErr <- fn() }()
	}
	if done := cmd.ctx.Done(); done != nil {
		go func() {
			select {
			case <-done:
				// As os/exec: report the context only if the kill reached a
				// live child (not one that had already exited by itself).
				if err := cmd.Process.Signal(syscall.Signal(0)); err == nil {
					r.mu.Lock()
					r.ctxErr = cmd.ctx.Err()
					r.mu.Unlock()
				}
				_ = cmd.kill()
			case <-r.done:
			}
		}()
	}
	return nil
}

// privateTemp creates the run's temporary directory under the real
// temporary directory, in the kernel's spelling, and its read-write grant.
func privateTemp() (string, grant, error) {
	r, err := pathresolve.NewHost()
	if err != nil {
		return "", grant{}, err
	}
	res, err := r.Resolve(os.TempDir())
	if err != nil {
		return "", grant{}, fmt.Errorf("cage: resolving the temporary directory: %w", err)
	}
	if res.CaseSensitive {
		return "", grant{}, &CaseSensitiveError{Path: res.Path, Volume: res.Volume}
	}
	dir, err := os.MkdirTemp(res.Path, "procage-run-")
	if err != nil {
		return "", grant{}, fmt.Errorf("cage: creating the run's temporary directory: %w", err)
	}
	return dir, grant{path: dir, class: profile.ExtensionReadWrite}, nil
}

// stdio returns the child's descriptors 0, 1, 2, as os/exec builds them.
func (cmd *Cmd) stdio(r *run) (files, closeAfterStart []*os.File, err error) {
	in, err := cmd.reader(r, cmd.Stdin)
	if err != nil {
		return nil, nil, err
	}
	files, closeAfterStart = append(files, in.f), append(closeAfterStart, in.closeAfterStart...)
	out, err := cmd.writer(r, cmd.Stdout)
	if err != nil {
		return nil, closeAfterStart, err
	}
	files, closeAfterStart = append(files, out.f), append(closeAfterStart, out.closeAfterStart...)
	if cmd.Stderr != nil && interfaceEqual(cmd.Stderr, cmd.Stdout) {
		return append(files, out.f), closeAfterStart, nil
	}
	errf, err := cmd.writer(r, cmd.Stderr)
	if err != nil {
		return nil, closeAfterStart, err
	}
	return append(files, errf.f), append(closeAfterStart, errf.closeAfterStart...), nil
}

type childFile struct {
	f               *os.File
	closeAfterStart []*os.File
}

func (cmd *Cmd) reader(r *run, rd io.Reader) (childFile, error) {
	switch v := rd.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		return childFile{f, []*os.File{f}}, err
	case *os.File:
		return childFile{f: v}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return childFile{}, err
	}
	r.closeAfterWait = append(r.closeAfterWait, pw)
	r.copies = append(r.copies, func() error {
		_, err := io.Copy(pw, rd)
		if err1 := pw.Close(); err == nil {
			err = err1
		}
		// The child may exit without reading all of its input (os/exec).
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
			err = nil
		}
		return err
	})
	return childFile{pr, []*os.File{pr}}, nil
}

func (cmd *Cmd) writer(r *run, w io.Writer) (childFile, error) {
	switch v := w.(type) {
	case nil:
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		return childFile{f, []*os.File{f}}, err
	case *os.File:
		return childFile{f: v}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return childFile{}, err
	}
	r.closeAfterWait = append(r.closeAfterWait, pr)
	r.copies = append(r.copies, func() error {
		_, err := io.Copy(w, pr)
		pr.Close()
		return err
	})
	return childFile{pw, []*os.File{pw}}, nil
}

// interfaceEqual reports a == b without panicking on uncomparable types.
func interfaceEqual(a, b any) bool {
	defer func() { _ = recover() }()
	return a == b
}

func (r *run) closeAll() {
	for _, c := range r.closeAfterWait {
		c.Close()
	}
}

func (cmd *Cmd) wait() error {
	r := cmd.run
	r.mu.Lock()
	if r.waited {
		r.mu.Unlock()
		return errors.New("cage: Wait was already called")
	}
	r.waited = true
	r.mu.Unlock()

	state, err := cmd.Process.Wait()
	endErr := r.endMarked()
	var copyErr error
	for range r.copies {
		if e := <-r.copyErr; e != nil && copyErr == nil {
			copyErr = e
		}
	}
	r.closeAll()
	if r.tempDir != "" {
		os.RemoveAll(r.tempDir)
	}
	close(r.done)
	cmd.ProcessState = state
	r.mu.Lock()
	ctxErr := r.ctxErr
	r.mu.Unlock()
	var primary error
	switch {
	case err != nil:
		primary = err
	case ctxErr != nil:
		primary = ctxErr
	case !state.Success():
		primary = &exec.ExitError{ProcessState: state}
	case endErr != nil:
		return endErr
	default:
		return copyErr
	}
	if endErr != nil {
		// Processes of the run survived every kill round: never hide that
		// behind the exit status or the context's error (ErrRunNotEnded is
		// documented as returned by Wait). errors.Is/As still find both.
		return errors.Join(primary, endErr)
	}
	return primary
}

func (cmd *Cmd) kill() error {
	r := cmd.run
	// Signal while holding r.mu: wait sets r.waited under r.mu before it
	// reaps, so while r.waited is false and the lock is held the child
	// cannot be reaped and -pid still names its session/group (until it is
	// reaped the group id cannot be reused). Reading r.waited and unlocking
	// before signalling left a window in which a concurrent Wait could reap
	// the child and the pid be reused as another process group's id.
	r.mu.Lock()
	err := cmd.Process.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		err = nil
	}
	if !r.waited {
		_ = unix.Kill(-r.pid, unix.SIGKILL)
	}
	r.mu.Unlock()
	// A failed direct kill must not skip the marker search.
	return errors.Join(err, r.endMarked())
}

// endMarked kills every process carrying the run's marker.
func (r *run) endMarked() error {
	if r.marker == "" {
		return nil
	}
	lib, err := libOrUnsupported()
	if err != nil {
		return err
	}
	return killMarked(lib, r.marker)
}

// killMarked finds the user's processes whose sandbox allows marker and
// denies the sibling name (only a run's processes split that way,
// libsandbox.md §11) and kills them, in rounds, until a round finds none.
// Between finding a process and killing it the process could exit and its
// pid be reused: macOS has no process handle that closes that window.
func killMarked(lib *libsandbox.Lib, marker string) error {
	uid, self := uint32(os.Getuid()), int32(os.Getpid())
	sibling := siblingName()
	for round := range killRounds {
		procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
		if err != nil {
			return fmt.Errorf("cage: listing processes to end a run: %w", err)
		}
		found := 0
		for i := range procs {
			p := &procs[i]
			pid := p.Proc.P_pid
			if pid <= 1 || pid == self || p.Proc.P_stat == sZomb {
				continue
			}
			if p.Eproc.Ucred.Uid != uid && p.Eproc.Pcred.P_ruid != uid {
				continue
			}
			if !carriesMarker(lib, int(pid), marker, sibling) {
				continue
			}
			found++
			_ = unix.Kill(int(pid), unix.SIGKILL)
		}
		if found == 0 {
			return nil
		}
		// Give launchd time to reap what was killed.
		time.Sleep(time.Duration(round+1) * time.Millisecond)
	}
	return fmt.Errorf("%w: after %d rounds", ErrRunNotEnded, killRounds)
}

func markerState(lib *libsandbox.Lib, pid int, marker, sibling string) (markerDenied, siblingDenied bool, err error) {
	markerDenied, err = lib.Check(pid, "mach-lookup", libsandbox.FilterGlobalName, marker, libsandbox.CheckNoReport)
	if err != nil {
		return false, false, err
	}
	siblingDenied, err = lib.Check(pid, "mach-lookup", libsandbox.FilterGlobalName, sibling, libsandbox.CheckNoReport)
	return markerDenied, siblingDenied, err
}

func carriesMarker(lib *libsandbox.Lib, pid int, marker, sibling string) bool {
	md, sd, err := markerState(lib, pid, marker, sibling)
	return err == nil && !md && sd
}

// probeProfile denies everything but the child's confirmation call, so the
// probe exercises the same in-child sequence as a real spawn.
const probeProfile = `(version 1)
(deny default)
(allow system-mac-syscall (require-all (mac-policy-name "Sandbox") (mac-syscall-number 2)))
`

// probeApply checks once per process that the in-child apply works: a
// child of /usr/bin/true under probeProfile must not run its target.
var probeApply = cachedVerdict(func() error {
	lib, err := libOrUnsupported()
	if err != nil {
		return err
	}
	code, err := lib.Compile(probeProfile, nil)
	if err != nil {
		return &UnsupportedError{OSBuild: osBuild(), What: "the probe profile does not compile", Err: err}
	}
	calls, keep, err := sandboxCalls(lib, code, "", nil)
	if err != nil {
		return &UnsupportedError{OSBuild: osBuild(), What: "preparing the probe", Err: err}
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	fd := null.Fd()
	pid, err := forkexec.Start(&forkexec.Attr{
		Path: "/usr/bin/true", Args: []string{"true"}, Files: []uintptr{fd, fd, fd}, Calls: calls,
	})
	runtime.KeepAlive(keep)
	if _, ok := errors.AsType[*forkexec.StepError](err); err != nil && !ok {
		// Not a verdict on the apply method (fork failed, say): not cached.
		return fmt.Errorf("cage: starting the apply probe: %w", err)
	}
	var status syscall.WaitStatus
	if err == nil {
		status, err = forkexec.Wait(pid)
		if err != nil {
			return &UnsupportedError{OSBuild: osBuild(), What: "waiting for the probe child", Err: err}
		}
	}
	return applyVerdict(osBuild(), applyError(err), status)
})

// probeMarker checks once per process that a forking run's processes can
// be found: a sleeping child of a forking policy must allow its marker and
// deny the sibling name.
var probeMarker = cachedVerdict(func() error {
	build := osBuild()
	pol, err := profile.New(profile.BaseV1, profile.Fork())
	if err != nil {
		return fmt.Errorf("cage: BUG: probe policy: %w", err)
	}
	c, err := New(pol)
	if err != nil {
		return &UnsupportedError{OSBuild: build, What: "preparing the run-marker probe", Err: err}
	}
	// Look the library up before starting the child, so no return path
	// leaves the probe child running and unreaped.
	lib, err := libOrUnsupported()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.Command(ctx, "/bin/sleep", "60")
	if err := cmd.startRun(nil); err != nil {
		if _, ok := errors.AsType[*ApplyError](err); !ok {
			// Not a verdict (fork or a pipe failed): not cached.
			return fmt.Errorf("cage: starting the run-marker probe: %w", err)
		}
		return &UnsupportedError{OSBuild: build, What: "starting the run-marker probe child", Err: err}
	}
	md, sd, qerr := markerState(lib, cmd.Process.Pid, cmd.run.marker, siblingName())
	_ = cmd.Kill()
	_ = cmd.Wait()
	return markerVerdict(build, md, sd, qerr)
})

// Probe runs (once per process; later calls return the cached answer) the
// checks spawning relies on: the in-child apply method, and the query that
// finds a forking run's processes.
func Probe() ProbeResult {
	r := ProbeResult{OSBuild: osBuild(), Apply: probeApply()}
	if r.Apply == nil {
		r.Marker = probeMarker()
	} else {
		r.Marker = errors.New("not checked: the apply probe failed")
	}
	return r
}
