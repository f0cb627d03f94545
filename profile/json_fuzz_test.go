package profile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzParseJSON: any input is either a policy that survives a
// MarshalJSON/ParseJSON round trip, or an *Error located inside the input
// (line and column at least 1, the line at most the input's line count).
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"base":"v1"}`,
		`{"version":1,"base":"v1","fs":[{"access":["read","write"],"subpath":"/Users/me/p"}],"fork":true}`,
		`{"version":1,"base":"v1","network":{"mode":"loopback","ports":[8080]},"waive":["secrets"]}`,
		`{"version":1,"base":"v1","fork":true,"fork":true}`,
		"{\n\"version\": 1,\n\"base\": \"v1\",\n\"fs\": [{\"access\": \"read\"}]}",
		`[`, ``, `{"a":{"b":[1,{"c":2}]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseJSON(strings.NewReader(in))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("ParseJSON(%q) = %v, not a *profile.Error", in, err)
			}
			if pe.Line < 1 || pe.Column < 1 || pe.Line > strings.Count(in, "\n")+1 {
				t.Fatalf("ParseJSON(%q) = %v at line %d, column %d: outside the input", in, err, pe.Line, pe.Column)
			}
			return
		}
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("Marshal of a parsed policy: %v", err)
		}
		q, err := ParseJSON(strings.NewReader(string(data)))
		if err != nil || !p.Equal(q) {
			t.Fatalf("round trip of %q: %v\n%v\n%v", in, err, p, q)
		}
	})
}
