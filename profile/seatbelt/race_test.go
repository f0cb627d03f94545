//go:build race

package seatbelt

// raceEnabled: the race detector distorts timings, so timing tests skip.
const raceEnabled = true
