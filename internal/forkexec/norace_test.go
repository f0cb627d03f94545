//go:build !race && (darwin || linux)

package forkexec

const raceEnabled = false
