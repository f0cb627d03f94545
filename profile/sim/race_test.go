//go:build race

package sim

// raceEnabled: the race detector slows the property test tenfold, so it
// checks fewer cases per variant.
const raceEnabled = true
