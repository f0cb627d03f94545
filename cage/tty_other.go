//go:build !darwin && !linux

package cage

import "os"

// terminalName: nothing spawns here, and no terminal is named.
func terminalName(*os.File) (string, bool) { return "", false }
