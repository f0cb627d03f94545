//go:build !unix

package cage

// rlimitCore: no such limit here (and nothing spawns).
const rlimitCore = -1
