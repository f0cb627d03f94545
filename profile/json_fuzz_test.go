package profile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzParseJSON: any input is either a policy that survives a
// MarshalJSON/ParseJSON round trip and nests no deeper than maxJSONDepth,
// or an *Error located inside the input (line and column at least 1, the
// line at most the input's line count).
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"base":"v1"}`,
		`{"version":1,"base":"v1","fs":[{"access":["read","write"],"subpath":"/Users/me/p"}],"fork":true}`,
		`{"version":1,"base":"v1","network":{"mode":"loopback","ports":[8080]},"waive":["secrets"]}`,
		`{"version":1,"base":"v1","fork":true,"fork":true}`,
		`{"version":2,"base":"v1","accept_gaps":["network-loopback","mach-services"],"home":"/home/me"}`,
		`{"version":1,"base":"v1","home":"/home/me"}`,
		"{\n\"version\": 1,\n\"base\": \"v1\",\n\"fs\": [{\"access\": \"read\"}]}",
		`[`, ``, `{"a":{"b":[1,{"c":2}]}}`,
		nested(maxJSONDepth - 1), nested(maxJSONDepth), nested(5000),
		`{"version":1,"base":"v1","fs":[{"access":` + strings.Repeat(`{"a":[`, 20) + strings.Repeat(`]}`, 20) + `}]}`,
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
		if d := jsonDepth(in); d > maxJSONDepth {
			t.Fatalf("ParseJSON accepted %q, nested %d deep (limit %d)", in, d, maxJSONDepth)
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

// jsonDepth is the deepest nesting of arrays and objects in a JSON text,
// outside strings.
func jsonDepth(in string) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range []byte(in) {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
