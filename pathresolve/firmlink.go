package pathresolve

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// DataVolume is where macOS mounts the writable data volume; firmlinks
// join directories of the read-only system volume to directories under it
// [confirmed: hashicorp/vagrant plugins/hosts/darwin/cap/path.rb @ b12a2327,
// FIRMLINK_DATA_PATH; the Rust procage 0.7.0's DATA_VOLUME].
const DataVolume = "/System/Volumes/Data"

// Firmlink joins a system-volume directory to its data-volume twin, e.g.
// {"/Users", "/System/Volumes/Data/Users"}. Both spellings reach the same
// directory; the resolver rewrites the Data spelling to the System one.
type Firmlink struct{ System, Data string }

// ParseFirmlinks reads the /usr/share/firmlinks format: one firmlink a line,
// the system-volume path (absolute), white space (a tab on macOS), then the
// data-volume path relative to [DataVolume], e.g. "/Users\tUsers"
// [confirmed: hashicorp/vagrant plugins/hosts/darwin/cap/path.rb
// @ b12a2327, which splits each stripped line on /\s+/ into two fields].
// Blank lines and lines starting with "#" are skipped. A malformed line is
// an error wrapping [ErrFirmlinkSyntax] that names the line.
func ParseFirmlinks(r io.Reader) ([]Firmlink, error) {
	var out []Firmlink
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("pathresolve: firmlinks line %d %q: want two fields (system path, data path): %w", n, line, ErrFirmlinkSyntax)
		}
		sys, rel := fields[0], fields[1]
		if err := CheckAbs(sys); err != nil || sys == "/" {
			return nil, fmt.Errorf("pathresolve: firmlinks line %d %q: system path must be absolute, normalised and not /: %w", n, line, ErrFirmlinkSyntax)
		}
		data := DataVolume + "/" + rel
		if strings.HasPrefix(rel, "/") || CheckAbs(data) != nil {
			return nil, fmt.Errorf("pathresolve: firmlinks line %d %q: data path must be relative to %s and normalised: %w", n, line, DataVolume, ErrFirmlinkSyntax)
		}
		out = append(out, Firmlink{System: sys, Data: path.Clean(data)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("pathresolve: reading firmlinks: %w", err)
	}
	return out, nil
}
