package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/procage-go/procage/cage"
)

// netRequestJSON is one request of a run's egress proxy as run --net-log
// --json prints it (docs/policy.md names the fields).
type netRequestJSON struct {
	Start      time.Time `json:"start"`
	DurationMS float64   `json:"duration_ms"`
	Proto      string    `json:"proto"`
	Method     string    `json:"method"`
	Host       string    `json:"host"`
	Port       int       `json:"port"`
	Verdict    string    `json:"verdict"`
	Rule       string    `json:"rule,omitempty"`
	Reason     string    `json:"reason"`
	Addr       string    `json:"addr,omitempty"`
	Sent       int64     `json:"sent"`
	Received   int64     `json:"received"`
	Status     int       `json:"status,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// writeNetLogJSON writes the run's record as one JSON object on one line,
// {"net_log": [...]}, so a tool reading stderr finds it as the line that
// starts with {"net_log": (the command's own output may come before).
// Dropped counts are present when nonzero: "dropped_records" (requests
// past the record's bound), "dropped_conns" (connections closed unserved).
func writeNetLogJSON(w io.Writer, reqs []cage.NetRequest, d cage.NetDropped) error {
	out := struct {
		NetLog         []netRequestJSON `json:"net_log"`
		DroppedRecords int              `json:"dropped_records,omitempty"`
		DroppedConns   int              `json:"dropped_conns,omitempty"`
	}{NetLog: []netRequestJSON{}, DroppedRecords: d.Records, DroppedConns: d.Conns}
	for _, r := range reqs {
		j := netRequestJSON{
			Start: r.Start.UTC(), DurationMS: float64(r.Duration.Microseconds()) / 1000,
			Proto: string(r.Proto), Method: r.Method, Host: r.Host, Port: r.Port,
			Verdict: string(r.Verdict), Rule: r.Rule, Reason: r.Reason,
			Sent: r.Sent, Received: r.Received, Status: r.Status, Error: r.Err,
		}
		if r.Addr.IsValid() {
			j.Addr = r.Addr.String()
		}
		out.NetLog = append(out.NetLog, j)
	}
	return json.NewEncoder(w).Encode(out) // one line: no indent
}
