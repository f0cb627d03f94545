package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/plantext"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
)

// header is what plan's header lines say, read back by readHeader.
type header struct {
	Rules    int
	Home     string
	Rewrites []pathresolve.Rewrite
	Params   []string
	Refused  []string
}

// readHeader parses the comment lines plan prints before the plan's own
// text (comment is ";" or "#") and returns the rest. A line it does not
// know ends the header.
func readHeader(text, comment string) (*header, string, error) {
	var h header
	for {
		line, rest, ok := strings.Cut(text, "\n")
		if !ok {
			return nil, "", fmt.Errorf("no plan after the header")
		}
		body, isComment := strings.CutPrefix(line, comment+" ")
		if !isComment {
			return &h, text, nil
		}
		known, err := h.line(body)
		if err != nil {
			return nil, "", fmt.Errorf("header line %q: %w", line, err)
		}
		if !known {
			return &h, text, nil // the plan's own first comment
		}
		text = rest
	}
}

// words reads s as literal parts and words: a part "" is a word.
func words(s string, parts ...string) ([]string, error) {
	var out []string
	for _, p := range parts {
		if p != "" {
			var ok bool
			if s, ok = strings.CutPrefix(s, p); !ok {
				return nil, fmt.Errorf("want %q at %q", p, s)
			}
			continue
		}
		quoted := strings.HasPrefix(s, `"`)
		w, rest, err := plantext.ReadWord(s)
		if err != nil {
			return nil, err
		}
		if !quoted && rest == "" && strings.HasSuffix(w, ")") {
			// A plain word at the end of the line runs into the ")".
			w, rest = strings.TrimSuffix(w, ")"), ")"
		}
		out = append(out, w)
		s = rest
	}
	if s != "" {
		return nil, fmt.Errorf("trailing %q", s)
	}
	return out, nil
}

func (h *header) line(s string) (bool, error) {
	switch {
	case strings.HasPrefix(s, "procage plan: "):
		_, err := fmt.Sscanf(s, "procage plan: %d rules", &h.Rules)
		return true, err
	case strings.HasPrefix(s, "paths resolved against "):
		w, err := words(s, "paths resolved against a simulated macOS file system (home ", "", ")")
		if err == nil {
			h.Home = w[0]
		}
		return true, err
	case strings.HasPrefix(s, "rewrite: "):
		w, err := words(s, "rewrite: ", "", " -> ", "", " (", "", " ", "", ")")
		if err == nil {
			reason := pathresolve.ReasonSymlink
			if w[2] == pathresolve.ReasonFirmlink.String() {
				reason = pathresolve.ReasonFirmlink
			}
			h.Rewrites = append(h.Rewrites, pathresolve.Rewrite{From: w[0], To: w[1], Reason: reason, Via: w[3]})
		}
		return true, err
	case strings.HasPrefix(s, "parameter bound per spawn: "):
		w, err := words(s, "parameter bound per spawn: ", "")
		if err == nil {
			h.Params = append(h.Params, w[0])
		}
		return true, err
	case strings.HasPrefix(s, "procage run refuses this plan: "):
		w, err := words(s, "procage run refuses this plan: gap ", "", " not accepted (--accept-gap ", "", " accepts it)")
		if err == nil {
			if w[0] != w[1] {
				return true, fmt.Errorf("gap %q, flag for %q", w[0], w[1])
			}
			h.Refused = append(h.Refused, w[0])
		}
		return true, err
	}
	return false, nil
}

// printable fails unless the text is valid UTF-8 with no rune a printed
// plan must not carry (plantext.Unsafe: it could start a line, a terminal
// sequence or reorder what is shown), and every header line (up to the
// plan's own text) printable text.
func printable(t *testing.T, text, plan string) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Fatalf("not UTF-8:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.ContainsFunc(line, plantext.Unsafe) {
			t.Fatalf("line %q holds an unsafe character:\n%s", line, text)
		}
	}
	header, _ := strings.CutSuffix(text, plan)
	for _, line := range strings.Split(header, "\n") {
		if strings.ContainsFunc(line, func(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }) {
			t.Fatalf("header line %q is not printable text:\n%s", line, text)
		}
	}
}

// checkMacPlan: plan's whole text, header included, is a profile that
// reads back (profile/sbpl's reader) as exactly the forms the lowering
// wrote, and its header as exactly the cage's rule count, home, rewrites
// and parameters.
func checkMacPlan(t *testing.T, c *cage.Cage, b *backend) string {
	t.Helper()
	text := planText(c, b, nil)
	printable(t, text, c.Plan())
	plan := c.SeatbeltPlan()
	got, err := sbpl.Parse(text)
	if err != nil {
		t.Fatalf("the printed plan does not parse: %v\n%s", err, text)
	}
	if diff := cmp.Diff(plan.Profile, got); diff != "" {
		t.Fatalf("the printed plan is not the lowered profile (-lowered +read):\n%s\n%s", diff, text)
	}
	h, rest, err := readHeader(text, ";")
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if rest != c.Plan() {
		t.Fatalf("after the header comes %q, not the plan", rest)
	}
	want := &header{Rules: plan.NumRules(), Rewrites: c.Rewrites(), Params: plan.Params}
	if b.simulated {
		want.Home = c.Home()
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Fatalf("the header does not read back (-cage +header):\n%s\n%s", diff, text)
	}
	return text
}

// checkLinuxPlan: plan's header reads back as exactly the cage's rewrites
// and the refused gaps, and the plan's own text (whose lines package
// profile/linux's tests read back as its rules) follows unchanged.
func checkLinuxPlan(t *testing.T, c *cage.Cage, b *backend) string {
	t.Helper()
	refused := c.LinuxPlan().Refused
	text := planText(c, b, refused)
	printable(t, text, c.Plan())
	h, rest, err := readHeader(text, "#")
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if rest != c.Plan() {
		t.Fatalf("after the header comes %q, not the plan", rest)
	}
	want := &header{Rewrites: c.Rewrites(), Refused: gapList(refused)}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Fatalf("the header does not read back (-cage +header):\n%s\n%s", diff, text)
	}
	return text
}

// FuzzPlanText (issue 24): whatever a policy path and the home directory
// hold (a line break, a comment or form after it, escape sequences), the
// text plan prints for macOS parses to exactly the lowered profile and
// its header, and the Linux header to exactly its rewrites and refused
// gaps.
func FuzzPlanText(f *testing.F) {
	for _, s := range []string{"x", "x\n(allow default)", "x\npath base     /: execute|read_file|read_dir", "x\r; rewrite: /a -> /b", "a b -> c (d e)", `"`, `\`, "\x1b]0;t\a", "\u2028(allow default)", "x)"} {
		f.Add(s, "me")
	}
	mac, err := simulatedMac()
	if err != nil {
		f.Fatal(err)
	}
	lin, err := newBackend("linux")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, user string) {
		home := "/Users/" + user
		pol, err := profile.New(profile.BaseV1, profile.Read("/tmp/"+name), profile.ReadWrite(home+"/"+name), profile.Fork(),
			profile.Network(profile.NetworkLoopback, 8080), profile.Home(home))
		if err != nil {
			return // not a policy: a policy path with a control character is refused
		}
		c, err := cage.New(pol, append(mac.opts, cage.WithHome(home))...)
		if err != nil {
			t.Fatalf("macOS plan of a valid policy: %v", err)
		}
		checkMacPlan(t, c, mac)

		c, err = cage.New(pol, append(lin.opts, cage.PlanOnly())...)
		if err != nil {
			t.Fatalf("Linux plan of a valid policy: %v", err)
		}
		checkLinuxPlan(t, c, lin)
	})
}

// TestPlanInjection (issue 24): a policy path holding a line break is
// refused, naming why, for both backends; a path the policy may hold (a
// space, a quote, a backslash, " -> ") is quoted in the header, so the
// saved plan reads back exactly.
func TestPlanInjection(t *testing.T) {
	t.Setenv("USER", "me")
	for _, tt := range []struct{ args, want string }{
		{"--backend macos --read", "procage plan: --read $'/tmp/x\\x0a(allow default)': path contains a control character (a line break, tab or escape), line separator or bidirectional control, which no printed plan could show as it is\n"},
		{"--backend linux --read", "procage plan: --read $'/tmp/x\\x0apath base     /: execute|read_file|read_dir': path contains a control character (a line break, tab or escape), line separator or bidirectional control, which no printed plan could show as it is\n"},
	} {
		path := "/tmp/x\n(allow default)"
		if strings.Contains(tt.args, "linux") {
			path = "/tmp/x\npath base     /: execute|read_file|read_dir"
		}
		code, out, errs := runCLI(t, append(append([]string{"plan"}, strings.Fields(tt.args)...), path)...)
		if code != exitFailure || out != "" || errs != tt.want {
			t.Errorf("plan %s %q: exit %d, stdout %q, stderr %q; want 125, nothing, %q", tt.args, path, code, out, errs, tt.want)
		}
	}

	const odd = `/tmp/a "b" \c -> d (symlink e)`
	code, out, errs := runCLI(t, "plan", "--backend", "macos", "--read", odd)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := "; procage plan: 56 rules\n" +
		"; paths resolved against a simulated macOS file system (home /Users/me)\n" +
		`; rewrite: "/tmp/a \"b\" \\c -> d (symlink e)" -> "/private/tmp/a \"b\" \\c -> d (symlink e)" (symlink /tmp)` + "\n" +
		"(version 1)\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("plan starts\n%s\nwant\n%s", out[:min(len(out), len(want)+80)], want)
	}
	h, _, err := readHeader(out, ";")
	if err != nil || len(h.Rewrites) != 1 || h.Rewrites[0].From != odd || h.Rewrites[0].To != "/private"+odd {
		t.Errorf("header read back as %+v, %v", h, err)
	}
}

// TestPlanLinkTarget (issue 24): a policy path may be a link whose target
// holds a line break; the Linux plan shows the kernel spelling quoted, in
// the rewrite header and the rule, and forges no rule.
func TestPlanLinkTarget(t *testing.T) {
	dir := realTempDir(t)
	target := dir + "/x\npath base     /: execute|read_file|read_dir"
	if err := os.Symlink(target, dir+"/l"); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "plan", "--backend", "linux", "--read", dir+"/l")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	q := strconv.Quote(target)
	for _, want := range []string{
		"# rewrite: " + dir + "/l -> " + q + " (symlink " + dir + "/l)\n",
		"\npath policy   " + q + ": read_file|read_dir\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\npath base     /: ") {
		t.Errorf("the link's target forged a base rule on /:\n%s", out)
	}
}

// TestPlanShowsRefusedGaps (issue 24): plan prints the Linux plan of a
// policy with gaps, exit 0: a header line per gap says run refuses it and
// which flag accepts it, the plan marks it REFUSED GAP, and stderr warns
// in the words run's refusal uses. Accepted, the header line goes and the
// plan marks it ACCEPTED GAP.
func TestPlanShowsRefusedGaps(t *testing.T) {
	args := []string{"plan", "--backend", "linux", "--tier", "t2", "--read", "/tmp", "--network", "loopback", "--port", "8080", "--mach", "com.apple.x"}
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"# procage run refuses this plan: gap network-loopback not accepted (--accept-gap network-loopback accepts it)\n" +
			"# procage run refuses this plan: gap mach-services not accepted (--accept-gap mach-services accepts it)\n" +
			"# Linux plan: ",
		"\nREFUSED GAP (not accepted) network-loopback: Landlock filters TCP by port, not address",
		"\nREFUSED GAP (not accepted) mach-services: com.apple.x\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if want := "procage plan: warning: run refuses this plan: linux cannot enforce network-loopback: "; !strings.HasPrefix(errs, want) ||
		!strings.HasSuffix(errs, "(to run it unenforced: --accept-gap network-loopback --accept-gap mach-services)\n") || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q, want one warning line naming both flags", errs)
	}
	code, out, _ = runCLI(t, append(args, "--json")...)
	var j struct {
		Refused []string `json:"refused_gaps"`
		Profile string
	}
	if err := json.Unmarshal([]byte(out), &j); code != 0 || err != nil || !slices.Equal(j.Refused, []string{"network-loopback", "mach-services"}) || !strings.Contains(j.Profile, "\nREFUSED GAP ") {
		t.Errorf("--json: exit %d, %v, refused_gaps %q", code, err, j.Refused)
	}

	code, out, errs = runCLI(t, append(args, "--accept-gap", "network-loopback", "--accept-gap", "mach-services")...)
	if code != 0 || errs != "" || strings.Contains(out, "REFUSED") || strings.Contains(out, "# procage run refuses") ||
		!strings.Contains(out, "\nACCEPTED GAP (not enforced) network-loopback: ") {
		t.Errorf("with the gaps accepted: exit %d, stderr %q:\n%s", code, errs, out)
	}
}
