package cage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/procage-go/procage/internal/egress"
	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/pathresolve"
)

// startRun starts the child through the cage's backend: the private
// temporary directory, the environment, the backend's child calls, the
// descriptors, then fork and exec; then the copies and the context watch.
// Everything it made is undone if it fails.
func (cmd *Cmd) startRun(path string, grants []grant) (err error) {
	c := cmd.cage
	r := &run{}
	cacheGrant, extraEnv, err := c.beginRun()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && r.tempDir != "" {
			err = errors.Join(err, removeTemp(r.tempDir, r.tempMade))
		}
		if err != nil {
			c.endRun()
		}
	}()
	if cacheGrant != nil {
		grants = append(grants, *cacheGrant)
	}
	if c.cfg.privateTemp {
		dir, g, err := c.privateTemp()
		if err != nil {
			return err
		}
		if r.tempMade, err = os.Lstat(dir); err != nil {
			os.Remove(dir)
			return err
		}
		r.tempDir = dir
		grants = append(grants, g)
		extraEnv = append(extraEnv, "TMPDIR="+dir)
	}
	env, err := cmd.environ(extraEnv...)
	if err != nil {
		return err
	}
	proxyCfg, isProxy, err := c.proxyConfig()
	if err != nil {
		return err
	}
	var proxy *egress.Proxy
	nn := c.ownNetNS()
	proxyInNS := isProxy && nn != nil && nn.Proxy
	proxyPort := 0
	switch {
	case proxyInNS:
		// The child listens on this port of its own 127.0.0.1 (nothing
		// else is bound in a new namespace) and hands the listener over;
		// the proxy is served on it once the child has executed.
		proxyPort = 20000 + rand.IntN(40000)
		if c.cfg.proxyPort != 0 {
			proxyPort = c.cfg.proxyPort
		}
		env, _ = dedupEnv(append(env, egress.Env(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(proxyPort)), proxyCfg.Credential)...))
	case isProxy:
		var ln net.Listener
		if c.cfg.proxyPort != 0 {
			if ln, err = net.Listen("tcp", netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(c.cfg.proxyPort)).String()); err != nil {
				return fmt.Errorf("cage: starting the egress proxy: %w", err)
			}
		}
		if proxy, err = egress.Start(proxyCfg, ln); err != nil {
			return fmt.Errorf("cage: starting the egress proxy: %w", err)
		}
	}
	if proxy != nil {
		defer func() {
			if err != nil {
				_ = proxy.Stop()
			}
		}()
		// After the caller's Env, which cannot name another proxy: the
		// child reaches none but this one.
		env, _ = dedupEnv(append(env, proxy.Env()...))
		proxyPort = proxy.Port()
		cmd.proxyMu.Lock()
		cmd.proxy = proxy
		cmd.proxyMu.Unlock()
	}
	if c.policy.Forking() {
		r.marker = newMarker()
	}

	files, reopens, err := cmd.childFiles()
	if err != nil {
		return err
	}
	fds := make([]uintptr, len(files))
	for i, f := range files {
		fds[i] = f.Fd()
	}
	cs, err := c.be.child(&spawnSpec{path: path, target: cmd.execTarget, grants: grants, temp: r.tempDir, marker: r.marker, tty: c.cfg.tty,
		keptFD: forkexec.KeptAbove(fds), dir: absDir(cmd.Dir), proxyPort: proxyPort, reopen: reopens})
	if err != nil {
		return err
	}
	if cs.cleanup != nil {
		defer cs.cleanup()
	}
	// Fail closed whatever the backend: no child without an apply and a
	// confirm call (forkexec checks this itself only on darwin).
	if !hasStep(cs.calls, forkexec.StepApply) || !hasStep(cs.calls, forkexec.StepConfirm) {
		return errNoApply
	}
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	attr := &forkexec.Attr{
		Path: path, Args: args, Env: env, Dir: cmd.Dir, Files: fds,
		ProcessGroup: c.cfg.tty == TTYInherit, Calls: cs.calls,
		PIDNamespace: cs.pidNamespace, MountProc: cs.mountProc,
	}
	if c.cfg.coreLimitZero() {
		// First, so a caller's later limits cannot fail on it.
		attr.Rlimits = append(attr.Rlimits, forkexec.Rlimit{Resource: rlimitCore})
	}
	for _, l := range c.cfg.rlimits {
		attr.Rlimits = append(attr.Rlimits, forkexec.Rlimit{Resource: l.Resource, Cur: l.Cur, Max: l.Max})
	}
	pr, err := forkexec.StartProc(attr)
	pid := pr.Pid
	runtime.KeepAlive(cs.keep)
	runtime.KeepAlive(files)
	if err != nil {
		if se, ok := errors.AsType[*forkexec.StepError](err); ok && cs.name != nil {
			return &ApplyError{Step: Step(se.Step), Call: cs.name(se), Errno: se.Err}
		}
		return applyError(err)
	}
	if cs.handoff != nil {
		if err := cmd.serveNet(cs.handoff, proxyCfg, proxyInNS, nn); err != nil {
			// The target runs already: end its process group and reap it.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			_, _ = forkexec.Wait(pid)
			return err
		}
	}
	p, err := os.FindProcess(pid)
	if err != nil { // never on Unix; reap rather than leak
		_, _ = pr.Wait()
		return err
	}
	r.pid, r.init, cmd.Process, cmd.run = pid, pr.Init, p, r

	if len(cmd.goroutine) > 0 {
		errc := make(chan error, 1)
		cmd.goroutineErr = errc
		type status struct {
			running  int
			firstErr error
		}
		statusc := make(chan status, 1)
		statusc <- status{running: len(cmd.goroutine)}
		for _, fn := range cmd.goroutine {
			go func() {
				err := fn()
				st := <-statusc
				if st.firstErr == nil {
					st.firstErr = err
				}
				st.running--
				if st.running == 0 {
					errc <- st.firstErr
				} else {
					statusc <- st
				}
			}()
		}
		cmd.goroutine = nil
	}
	if (cmd.Cancel != nil || cmd.WaitDelay != 0) && cmd.ctx.Done() != nil {
		resultc := make(chan ctxResult)
		cmd.ctxResult = resultc
		go cmd.watchCtx(resultc)
	}
	return nil
}

// coreLimitZero reports whether a run starts with RLIMIT_CORE 0 (soft and
// hard): unless WithCoreDumps, or WithRlimits names RLIMIT_CORE itself.
func (c *config) coreLimitZero() bool {
	return !c.coreDumps && rlimitCore >= 0 && !slices.ContainsFunc(c.rlimits, func(l Rlimit) bool { return l.Resource == rlimitCore })
}

// errNoApply reports a backend that prepared no apply or confirm call.
var errNoApply = errors.New("cage: no apply and confirm calls")

func hasStep(calls []forkexec.Call, s forkexec.Step) bool {
	for _, c := range calls {
		if c.Step() == s {
			return true
		}
	}
	return false
}

// applyError maps the child's failed step to an *ApplyError.
func applyError(err error) error {
	if se, ok := errors.AsType[*forkexec.StepError](err); ok {
		return &ApplyError{Step: Step(se.Step), Errno: se.Err}
	}
	return err
}

// realTempDir returns the real temporary directory in the kernel's
// spelling; for the macOS backend it must not be on a case-sensitive
// volume (Seatbelt matches paths by name).
func realTempDir(b Backend) (string, error) {
	r, err := pathresolve.NewHost()
	if err != nil {
		return "", err
	}
	res, err := r.Resolve(plainSlashes(os.TempDir()))
	if err != nil {
		return "", err
	}
	if res.CaseSensitive && b == BackendMacOS {
		return "", &pathresolve.CaseSensitiveError{Path: res.Path, Volume: res.Volume}
	}
	return res.Path, nil
}

// plainSlashes drops a trailing slash and doubled ones: TMPDIR ends in one
// on macOS (/var/folders/.../T/), and the resolver takes only the plain
// spelling. A "." or ".." stays, for the resolver to refuse: dropping it
// lexically could name another directory than the kernel does through a
// link.
func plainSlashes(p string) string {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// privateTemp creates the run's temporary directory under the real
// temporary directory, in the kernel's spelling, and its read-write grant.
func (c *Cage) privateTemp() (string, grant, error) {
	base, err := realTempDir(c.cfg.backend)
	if err != nil {
		return "", grant{}, err
	}
	dir, err := os.MkdirTemp(base, "procage-run-")
	if err != nil {
		return "", grant{}, err // an *fs.PathError naming the directory
	}
	return dir, grant{path: dir, write: true}, nil
}

// errTempReplaced: the run moved its temporary directory away and put
// something else at its path; the moved directory cannot be found.
var errTempReplaced = errors.New("the run replaced it (moved it away); what is at its path now was left alone")

// removeTemp removes a run's private temporary directory, which the run
// may have left with directories it cannot list or empty (chmod 0 needs no
// privilege on one's own files): each directory gets u+rwx back first, the
// parent before what is in it. os.Root keeps the walk inside dir, so a
// symbolic link the run planted is never followed out of it. A failure is
// a tempDirError, never ignored.
func removeTemp(dir string, made os.FileInfo) error {
	// The run can write dir's parent (a writable TMPDIR tree) and so rename
	// dir away and plant a link in its place: nothing at dir is touched
	// unless it is still the directory procage made (the run has ended, so
	// nothing swaps it now). A link is removed, never followed.
	if fi, err := os.Lstat(dir); err != nil {
		return tempDirError(dir, err)
	} else if !os.SameFile(fi, made) {
		if fi.Mode()&fs.ModeSymlink != 0 {
			os.Remove(dir)
		}
		return tempDirError(dir, errTempReplaced)
	}
	_ = os.Chmod(dir, 0o700)
	if root, err := os.OpenRoot(dir); err == nil {
		_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = root.Chmod(p, 0o700)
			}
			return nil // a directory still unreadable shows in RemoveAll's error
		})
		root.Close()
	}
	if err := os.RemoveAll(dir); err != nil {
		return tempDirError(dir, err)
	}
	return nil
}

// childFiles returns the child's descriptors 0, 1, 2 and ExtraFiles, as
// os/exec builds them, and those the child opens again by path (a backend
// that is [handedFiles] decides: a stdio file it copies goes through a
// pipe, as a reader or writer that is not an *os.File does).
func (cmd *Cmd) childFiles() ([]*os.File, []reopen, error) {
	h, _ := cmd.cage.be.(handedFiles)
	stdio := []any{cmd.Stdin, cmd.Stdout, cmd.Stderr}
	for i, v := range stdio {
		f, ok := v.(*os.File)
		if !ok || f == nil || h == nil {
			continue
		}
		cp, err := h.copyStdio(f)
		if err != nil {
			return nil, nil, err
		}
		if cp && i == 0 {
			stdio[i] = struct{ io.Reader }{f}
		} else if cp {
			stdio[i] = struct{ io.Writer }{f} // equal for Stdout == Stderr
		}
	}
	files := make([]*os.File, 0, 3+len(cmd.ExtraFiles))
	var null []*os.File
	in, err := cmd.childStdin(stdio[0], &null)
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.writerDescriptor(stdio[1], &null)
	if err != nil {
		return nil, nil, err
	}
	errf := out
	if stdio[2] == nil || !interfaceEqual(stdio[2], stdio[1]) {
		if errf, err = cmd.writerDescriptor(stdio[2], &null); err != nil {
			return nil, nil, err
		}
	}
	files = append(files, in, out, errf)
	for i, f := range cmd.ExtraFiles {
		if f == nil {
			return nil, nil, fmt.Errorf("cage: ExtraFiles[%d] is nil", i)
		}
		files = append(files, f)
	}
	var rs []reopen
	for i, f := range files {
		if h == nil {
			break
		}
		r, err := h.reopenFD(i, f, slices.Contains(null, f))
		if err != nil {
			return nil, nil, err
		}
		if r != nil {
			rs = append(rs, *r)
		}
	}
	return files, rs, nil
}

// childStdin is os/exec's stdin descriptor for v; a /dev/null it opens
// is added to null.
func (cmd *Cmd) childStdin(v any, null *[]*os.File) (*os.File, error) {
	switch v := v.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
		cmd.childIOFiles = append(cmd.childIOFiles, f)
		*null = append(*null, f)
		return f, nil
	case *os.File:
		return v, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.childIOFiles = append(cmd.childIOFiles, pr)
	cmd.parentIOPipes = append(cmd.parentIOPipes, pw)
	stdin := v.(io.Reader)
	cmd.goroutine = append(cmd.goroutine, func() error {
		_, err := io.Copy(pw, stdin)
		// The child may exit without reading all of its input (os/exec).
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
			err = nil
		}
		if err1 := pw.Close(); err == nil && !errors.Is(err1, os.ErrClosed) {
			err = err1
		}
		return err
	})
	return pr, nil
}

// writerDescriptor is os/exec's descriptor for the writer v; a
// /dev/null it opens is added to null.
func (cmd *Cmd) writerDescriptor(v any, null *[]*os.File) (*os.File, error) {
	switch v := v.(type) {
	case nil:
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		cmd.childIOFiles = append(cmd.childIOFiles, f)
		*null = append(*null, f)
		return f, nil
	case *os.File:
		return v, nil
	}
	w := v.(io.Writer)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.childIOFiles = append(cmd.childIOFiles, pw)
	cmd.parentIOPipes = append(cmd.parentIOPipes, pr)
	cmd.goroutine = append(cmd.goroutine, func() error {
		_, err := io.Copy(w, pr)
		pr.Close() // in case io.Copy stopped due to a write error
		return err
	})
	return pw, nil
}

// interfaceEqual reports a == b without panicking on uncomparable types.
func interfaceEqual(a, b any) bool {
	defer func() { _ = recover() }()
	return a == b
}

func closeAll(cs []io.Closer) {
	for _, c := range cs {
		c.Close()
	}
}

// ctxResult is what watchCtx hands Wait.
type ctxResult struct {
	err   error
	ctx   bool        // err is the context's error: Cancel ended the run
	timer *time.Timer // if set, fires at the end of WaitDelay
}

// watchCtx is os/exec's: until it can hand Wait a result it watches the
// context; when the context is done first it calls Cancel, and after
// WaitDelay ends the run and closes the pipes.
func (cmd *Cmd) watchCtx(resultc chan<- ctxResult) {
	select {
	case resultc <- ctxResult{}:
		return
	case <-cmd.ctx.Done():
	}
	var res ctxResult
	if cmd.Cancel != nil {
		if err := cmd.Cancel(); err == nil {
			res = ctxResult{err: cmd.ctx.Err(), ctx: true}
		} else if !errors.Is(err, os.ErrProcessDone) {
			res.err = fmt.Errorf("cage: canceling Cmd: %w", err)
		}
	}
	if cmd.WaitDelay == 0 {
		resultc <- res
		return
	}
	timer := time.NewTimer(cmd.WaitDelay)
	select {
	case resultc <- ctxResult{err: res.err, ctx: res.ctx, timer: timer}:
		return
	case <-timer.C:
	}
	killed := false
	if err := cmd.killRun(); err == nil {
		killed = true
	} else if !errors.Is(err, os.ErrProcessDone) {
		res.err = fmt.Errorf("cage: killing Cmd: %w", err)
		res.ctx = false
	}
	if cmd.goroutineErr != nil {
		select {
		case gerr := <-cmd.goroutineErr:
			if res.err == nil && !killed {
				res.err = gerr
			}
		default:
			// Close the pipes in case an abandoned descendant holds them
			// open (go.dev/issue/23019), after the kill so the child dies
			// of SIGKILL rather than SIGPIPE.
			closeAll(cmd.parentIOPipes)
			<-cmd.goroutineErr
			if res.err == nil {
				res.err = exec.ErrWaitDelay
			}
		}
		cmd.goroutineErr = nil
	}
	resultc <- res
}

// awaitGoroutines waits for the copies; once WaitDelay has passed (timer,
// or one started now) it closes the pipes and returns exec.ErrWaitDelay.
func (cmd *Cmd) awaitGoroutines(timer *time.Timer) error {
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		cmd.goroutineErr = nil
	}()
	if cmd.goroutineErr == nil {
		return nil
	}
	if timer == nil {
		if cmd.WaitDelay == 0 {
			return <-cmd.goroutineErr
		}
		select {
		case err := <-cmd.goroutineErr:
			return err
		default:
		}
		timer = time.NewTimer(cmd.WaitDelay)
	}
	select {
	case <-timer.C:
		closeAll(cmd.parentIOPipes)
		<-cmd.goroutineErr
		return exec.ErrWaitDelay
	case err := <-cmd.goroutineErr:
		return err
	}
}

// absDir is the absolute working directory a child started in dir has
// ("": the caller's), or "" if it cannot be told.
func absDir(dir string) string {
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return filepath.Join(wd, dir)
}
