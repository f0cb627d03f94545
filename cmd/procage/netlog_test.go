package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/procage-go/procage/cage"
)

// TestNetLogJSONDropped: the counts of what the run's proxy dropped are in
// the JSON when nonzero, and absent otherwise.
func TestNetLogJSONDropped(t *testing.T) {
	for _, d := range []cage.NetDropped{{}, {Records: 3, Conns: 7}} {
		var b bytes.Buffer
		if err := writeNetLogJSON(&b, nil, d); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		r, hasR := got["dropped_records"]
		c, hasC := got["dropped_conns"]
		if d.Records == 0 && (hasR || hasC) || d.Records != 0 && (r != float64(d.Records) || c != float64(d.Conns)) {
			t.Errorf("%+v: %s", d, b.String())
		}
	}
}
