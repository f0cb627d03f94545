//go:build race

package profile

// raceEnabled: the race detector distorts timings, so timing tests skip.
const raceEnabled = true
