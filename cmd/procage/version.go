package main

import "runtime/debug"

// readBuildInfo is debug.ReadBuildInfo; tests replace the build info.
var readBuildInfo = debug.ReadBuildInfo

// version is procage's module version from the build information: a
// release tag for 'go install ...@v1.2.3', or "(devel)" for a build from a
// checkout, then followed by the VCS revision when the build recorded one.
func version(read func() (*debug.BuildInfo, bool)) string {
	bi, ok := read()
	if !ok || bi.Main.Version == "" {
		return "(unknown version: built without module information)"
	}
	v := bi.Main.Version
	if v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "+dirty"
	}
	return v + " " + rev
}
