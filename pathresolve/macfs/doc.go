// Package macfs is a simulated macOS file system: in memory,
// implementing [pathresolve.FS]. The CLI resolves a macOS plan against it
// off macOS, and tests in any package use it:
//
//	fsys := macfs.NewMacOS()
//	r := pathresolve.New(fsys, pathresolve.WithFirmlinks(fsys.Firmlinks()))
//	res, _ := r.Resolve("/tmp/x") // res.Path == "/private/tmp/x"
//
// The tree has /tmp, /var and /etc as relative links into /private, a user
// temp dir under /private/var/folders, /Users/me, the data volume under
// /System/Volumes/Data joined by firmlinks, /usr/bin and /bin. Methods add
// files, directories and links, mount case-sensitive volumes, make
// directories unsearchable and count calls.
//
// # Limitations
//
// Case folding is strings.ToLower and normalization covers only precomposed
// Latin-1 letters ([NFD], [NFC]); APFS folds more. ".." after a firmlink
// returns the way it came. Nothing here is Seatbelt: it simulates lookups
// only.
package macfs
