// Package pathresolve turns a policy path into the spelling the macOS kernel
// matches, recording every rewrite:
//
//	r, err := pathresolve.NewHost()
//	if err != nil {
//		return err
//	}
//	res, err := r.Resolve("/tmp/build")
//	// on macOS: res.Path == "/private/tmp/build", res.Links == ["/tmp"]
//
// Seatbelt compares rules with the path the kernel reconstructs, not the one
// the caller wrote: a rule on /tmp/x never fires because the kernel sees
// /private/tmp/x [reported: Protonk VFS report, measured on macOS 14.4.1;
// sources in docs/sources.md]. Every policy
// path therefore goes through a [Resolver] before lowering.
//
// # Path resolution
//
// [Resolver.Resolve] walks the path one component at a time, as namei does:
// symbolic links are read and their targets (absolute or relative, links to
// links) spliced in, up to [MaxSymlinks] links (then [ErrLoop]). Each link
// passed is returned in [Result.Links] so lowering can allow
// file-read-metadata on the link itself (on /etc, /tmp and /var always). A
// missing tail is kept under the resolved longest existing prefix, so a
// rule may name a file created later; [Result.Volume] is that prefix and
// [Result.CaseSensitive] its volume's answer to pathconf(_PC_CASE_SENSITIVE).
//
// # Firmlinks
//
// macOS 10.15 and later join system-volume directories such as /Users to
// data-volume ones under /System/Volumes/Data; /usr/share/firmlinks lists
// them ([HostFirmlinks], [ParseFirmlinks]). A path spelled through the data
// volume is rewritten to the system spelling: the Protonk VFS report
// measured that data-volume spellings are evaluated as the
// firmlink-translated path and that data-only literals do not match
// [reported], and the Rust procage's spelling matrix (measured on macOS
// 26.6.2) records that a rule spelled with the data-volume firmlink covers
// the file.
//
// # Case and Unicode normalization
//
// Seatbelt matches every path case- and normalization-insensitively, on
// every volume (specification, measured on macOS 26.6.2). The resolver
// therefore keeps the caller's spelling of existing names, e.g. /users/ME
// on a case-insensitive volume stays /users/ME, and never invents a case or
// normalization rewrite. The one exception is a firmlink's data spelling
// written in another case on a case-insensitive volume, which is rewritten
// to the firmlink's system spelling. Whether an allow rule may be used on a
// case-sensitive volume is the cage's decision ([CaseSensitiveError]).
//
// # Errors
//
// Every error from Resolve and [CheckAbs] is a [*PathError] naming the path
// and the component at fault; test with errors.Is for [ErrNotAbsolute],
// [ErrNotNormal], [ErrNUL], [ErrLoop] or the file system's error
// (fs.ErrPermission, syscall.ENOTDIR, ...). A missing component is not an
// error, except under a ".." that a link target brings after it: the
// kernel's lookup fails there (fs.ErrNotExist), and so does Resolve.
//
// # Limitations
//
//   - Resolution is a snapshot: a link changed after Resolve is not seen
//     (time-of-check to time-of-use), and a Resolver caches every answer for
//     its lifetime.
//   - A missing tail is kept lexically: a name created later as a symbolic
//     link is not followed.
//   - ".." is taken lexically from the resolved prefix, which holds no
//     symbolic links; after a firmlink rewrite it climbs the system side.
//   - Hard links have several names; the resolver returns the one written.
//   - Firmlinks are known only when given ([WithFirmlinks], [NewHost]).
//   - Off darwin, [OS] reports every volume as case-sensitive.
package pathresolve
