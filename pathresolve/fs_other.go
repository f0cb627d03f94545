//go:build !darwin

package pathresolve

// MaxSymlinks is the number of symbolic links one lookup may follow; the
// next one fails with ELOOP. Linux: MAXSYMLINKS 40 in
// include/linux/namei.h, checked as total_link_count++ >= MAXSYMLINKS in
// fs/namei.c [confirmed: torvalds/linux]. Other non-darwin systems use the
// same value [inferred].
const MaxSymlinks = 40

// CaseSensitive reports true: outside macOS the volumes this library meets
// are case-sensitive, and Seatbelt does not exist there.
func (osFS) CaseSensitive(string) (bool, error) { return true, nil }

// HostFirmlinks returns nil: only macOS has firmlinks.
func HostFirmlinks() ([]Firmlink, error) { return nil, nil }
