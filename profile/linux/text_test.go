package linux

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/internal/plantext"
	"github.com/procage-go/procage/profile"
)

// textPlan is what a plan's text says, read back by readText.
type textPlan struct {
	ABI, MinABI       int
	HandledFS         string
	HandledNet        string
	Scopes            string
	Rules             []PathRule
	NetRules          []NetRule
	Network           string
	Seccomp           []string
	Denied            []Denial
	Accepted, Refused []profile.GapPart
}

// readText parses the text Plan.String writes, line by line; a line it
// does not know is an error, so a path that forged a line would show.
func readText(text string) (*textPlan, error) {
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("text does not end in a newline")
	}
	var tp textPlan
	ceiling := false
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if err := tp.line(line, &ceiling); err != nil {
			return nil, fmt.Errorf("line %d %q: %w", i+1, line, err)
		}
	}
	if !ceiling {
		return nil, fmt.Errorf("no seccomp ceiling line")
	}
	return &tp, nil
}

func (tp *textPlan) line(line string, ceiling *bool) error {
	cut := func(prefix string) (string, bool) { return strings.CutPrefix(line, prefix) }
	if rest, ok := cut("# Linux plan: "); ok {
		_, err := fmt.Sscanf(rest, "Landlock ABI %d planned, at least %d needed", &tp.ABI, &tp.MinABI)
		return err
	}
	if _, ok := cut("needs ABI "); ok {
		return nil // constant text
	}
	if rest, ok := cut("landlock handled fs: "); ok {
		tp.HandledFS = rest
		return nil
	}
	if rest, ok := cut("landlock handled net: "); ok {
		tp.HandledNet = rest
		return nil
	}
	if rest, ok := cut("landlock scopes: "); ok {
		tp.Scopes = rest
		return nil
	}
	if rest, ok := cut("path "); ok {
		layer, rest, err := plantext.ReadWord(rest)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(rest, " ") {
			return fmt.Errorf("no space after the layer")
		}
		rest = strings.TrimLeft(rest, " ")
		path, rights, err := plantext.ReadWord(rest)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(rest, `"`) {
			// A plain path is a word ending in the separator's colon.
			var ok bool
			if path, ok = strings.CutSuffix(path, ":"); !ok {
				return fmt.Errorf("no colon after the path")
			}
			rights = ":" + rights
		}
		rights, ok := strings.CutPrefix(rights, ": ")
		if !ok {
			return fmt.Errorf("no \": \" after the path")
		}
		a, err := parseFS(rights)
		if err != nil {
			return err
		}
		tp.Rules = append(tp.Rules, PathRule{Path: path, Access: a, Layer: Layer(layer)})
		return nil
	}
	if rest, ok := cut("tcp port "); ok {
		port, access, ok := strings.Cut(rest, ": ")
		n, err := strconv.ParseUint(port, 10, 16)
		if !ok || err != nil {
			return fmt.Errorf("bad port rule")
		}
		var a NetAccess
		for _, name := range strings.Split(access, "|") {
			switch name {
			case "bind_tcp":
				a |= NetBindTCP
			case "connect_tcp":
				a |= NetConnectTCP
			default:
				return fmt.Errorf("unknown net right %q", name)
			}
		}
		tp.NetRules = append(tp.NetRules, NetRule{Port: uint16(n), Access: a})
		return nil
	}
	if rest, ok := cut("network: "); ok {
		tp.Network = rest
		return nil
	}
	if _, ok := cut("seccomp: other architectures"); ok {
		*ceiling = true
		return nil
	}
	if _, ok := cut("seccomp "); ok {
		tp.Seccomp = append(tp.Seccomp, line)
		return nil
	}
	if rest, ok := cut("hard-deny "); ok {
		return tp.denial(rest)
	}
	for _, g := range []struct {
		prefix string
		to     *[]profile.GapPart
	}{{"ACCEPTED GAP (not enforced) ", &tp.Accepted}, {"REFUSED GAP (not accepted) ", &tp.Refused}} {
		rest, ok := cut(g.prefix)
		if !ok {
			continue
		}
		quoted := strings.HasPrefix(rest, `"`)
		name, rest, err := plantext.ReadWord(rest)
		if err != nil {
			return err
		}
		if !quoted {
			// A plain name is followed by the colon; a gap name never has
			// one.
			if n, found := strings.CutSuffix(name, ":"); found {
				name, rest = n, ":"+rest
			}
		}
		detail, ok := strings.CutPrefix(rest, ": ")
		if !ok {
			return fmt.Errorf("no \": \" after the gap")
		}
		if detail, err = plantext.Unquote(detail); err != nil {
			return err
		}
		*g.to = append(*g.to, profile.GapPart{Gap: profile.Gap(name), Detail: detail})
		return nil
	}
	return fmt.Errorf("not a line of a Linux plan")
}

// denial reads "CLASS: LAYER PATH loses RIGHTS (protected PATH)".
func (tp *textPlan) denial(s string) error {
	class, rest, err := plantext.ReadWord(s)
	if err != nil {
		return err
	}
	class, ok := strings.CutSuffix(class, ":")
	if !ok {
		return fmt.Errorf("no colon after the class")
	}
	layer, rest, err := plantext.ReadWord(strings.TrimPrefix(rest, " "))
	if err != nil {
		return err
	}
	path, rest, err := plantext.ReadWord(strings.TrimPrefix(rest, " "))
	if err != nil {
		return err
	}
	rest, ok = strings.CutPrefix(rest, " loses ")
	if !ok {
		return fmt.Errorf("no \" loses \"")
	}
	rights, rest, ok := strings.Cut(rest, " (protected ")
	if !ok {
		return fmt.Errorf("no \" (protected \"")
	}
	a, err := parseFS(rights)
	if err != nil {
		return err
	}
	prot, tail, err := plantext.ReadWord(rest)
	if err != nil {
		return err
	}
	if tail == "" {
		// A plain word runs to the end of the line, the ")" with it.
		var ok bool
		if prot, ok = strings.CutSuffix(prot, ")"); !ok {
			return fmt.Errorf("no closing parenthesis")
		}
	} else if tail != ")" {
		return fmt.Errorf("trailing %q", tail)
	}
	tp.Denied = append(tp.Denied, Denial{Class: profile.Class(class), Protected: prot, Path: path, Layer: Layer(layer), Access: a})
	return nil
}

// parseFS reads FSAccess.String's names.
func parseFS(s string) (FSAccess, error) {
	if s == "none" {
		return 0, nil
	}
	var a FSAccess
	for _, name := range strings.Split(s, "|") {
		i := 0
		for ; i < len(fsNames) && fsNames[i] != name; i++ {
		}
		if i == len(fsNames) {
			return 0, fmt.Errorf("unknown right %q", name)
		}
		a |= 1 << i
	}
	return a, nil
}

// fromPlan is what pl's text should say.
func fromPlan(pl *Plan) *textPlan {
	tp := &textPlan{ABI: pl.ABI, MinABI: pl.MinABI, HandledFS: pl.HandledFS.String(), HandledNet: pl.HandledNet.String(), Scopes: pl.Scopes.String(),
		NetRules: pl.NetRules, Network: pl.Network.String(), Denied: pl.Denied}
	for _, r := range pl.Rules {
		r.Why = "" // not in the text
		tp.Rules = append(tp.Rules, r)
	}
	for _, r := range pl.Seccomp {
		tp.Seccomp = append(tp.Seccomp, fmt.Sprintf("seccomp %s  # %s", r, r.Why))
	}
	for _, g := range pl.Accepted {
		tp.Accepted = append(tp.Accepted, profile.GapPart{Gap: g.Gap, Detail: g.Detail})
	}
	for _, g := range pl.Refused {
		tp.Refused = append(tp.Refused, profile.GapPart{Gap: g.Gap, Detail: g.Detail})
	}
	return tp
}

// checkText: every line of pl's text is printable, and the text reads back
// as exactly pl's rules.
func checkText(t *testing.T, pl *Plan) {
	t.Helper()
	text := pl.String()
	for _, line := range strings.Split(text, "\n") {
		if !utf8.ValidString(line) || strings.ContainsFunc(line, func(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }) {
			t.Fatalf("line %q is not printable text", line)
		}
	}
	got, err := readText(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if diff := cmp.Diff(fromPlan(pl), got); diff != "" {
		t.Fatalf("the text does not read back as the plan (-plan +text):\n%s\n%s", diff, text)
	}
}

// TestTextForgedLine (issue 24): a path with a line break in it (a policy
// path cannot have one, a link's target can) is one quoted path, not a
// second rule.
func TestTextForgedLine(t *testing.T) {
	const forged = "/tmp/x\npath base     /: execute|read_file|read_dir"
	if _, err := profile.New(profile.BaseV1, profile.Read(forged)); !errors.Is(err, profile.ErrPathControl) {
		t.Errorf("a policy path with a line break: %v, want ErrPathControl", err)
	}
	pol, err := profile.New(profile.BaseV1, profile.Read("/tmp/link"))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Lower(pol, Env{Env: profile.Env{Home: "/home/u", Resolved: map[string]string{"/tmp/link": forged}}})
	if err != nil {
		t.Fatal(err)
	}
	text := pl.String()
	if want := `path policy   "/tmp/x\npath base     /: execute|read_file|read_dir": read_file|read_dir` + "\n"; !strings.Contains(text, want) {
		t.Errorf("plan lacks %q:\n%s", want, text)
	}
	if strings.Contains(text, "\npath base     /: ") {
		t.Errorf("the path forged a base rule on /:\n%s", text)
	}
	checkText(t, pl)
}

// FuzzPlanText: whatever the policy's path, the home directory and the
// kernel spelling a path resolves to (any bytes: a link's target), the
// plan's text reads back as exactly the plan's rules, denials and gaps,
// one printable line each; refused gaps included.
func FuzzPlanText(f *testing.F) {
	for _, s := range []string{"x", "x\npath base     /: execute|read_file|read_dir", "x\rhard-deny secrets: policy / loses execute (protected /)", "a b: c", `"q"`, `\`, "\x1b[2J", "\u202e", "x)", "x:"} {
		f.Add(s, "u", s+"\xff")
	}
	f.Fuzz(func(t *testing.T, name, user, kernel string) {
		// Policy paths are checked (no control character); the kernel
		// spellings they resolve to and the home directory are not.
		home := "/home/" + user
		opts := []profile.Option{
			profile.Read("/p/home"), profile.ReadWrite("/srv/" + name), profile.Read("/p/ssh"),
			profile.UnixSocket("/run/" + name), profile.Network(profile.NetworkLoopback, 8080),
		}
		pol, err := profile.New(profile.BaseV1, opts...)
		if err != nil || path.Clean(home) != home || path.Clean("/srv/"+kernel) != "/srv/"+kernel || strings.Contains(kernel, "/") {
			return // not a policy, or not what a kernel spelling can be (clean, absolute)
		}
		env := Env{Accept: []profile.Gap{profile.GapLoopback}, Env: profile.Env{Home: home, Resolved: map[string]string{
			"/srv/" + name: "/srv/" + kernel, "/p/home": home, "/p/ssh": home + "/.ssh/" + kernel,
		}}}
		pl, err := Lower(pol, env)
		if pl == nil || (err != nil) != (len(pl.Refused) > 0) {
			t.Fatalf("Lower = %v, %v: want a plan, with an error just when it refuses gaps", pl, err)
		}
		if len(pl.Denied) == 0 || len(pl.Accepted) == 0 || len(pl.Refused) == 0 {
			t.Fatalf("plan without denials, accepted or refused gaps:\n%s", pl)
		}
		checkText(t, pl)
	})
}

// TestTextGoldens: the golden plans read back as their plans too.
func TestTextGoldens(t *testing.T) {
	for _, opts := range [][]profile.Option{
		nil,
		{profile.ReadWrite("/home/alice/project"), profile.Read("/home/alice/.ssh/keys"), profile.Network(profile.NetworkOn, 443), profile.Fork()},
		{profile.Read("/home/alice"), profile.MachLookup("com.apple.x"), profile.Seatbelt(`(allow sysctl-read)`), profile.ExecTargetOnly(), profile.UnixSocket("/run/a b")},
	} {
		pol, err := profile.New(profile.BaseV1, opts...)
		if err != nil {
			t.Fatal(err)
		}
		pl, _ := Lower(pol, Env{Env: profile.Env{Home: "/home/alice"}, Accept: []profile.Gap{profile.GapLocalServices}})
		checkText(t, pl)
	}
}
