// Package sbpl is a small typed model of the Seatbelt profile language
// (SBPL), with one writer, one reader and the operation and filter names
// libsandbox knows.
//
//	prof := &sbpl.Profile{Version: 1, Rules: []sbpl.Rule{
//		{Effect: sbpl.Deny, Ops: []string{"default"}},
//		{Effect: sbpl.Allow, Ops: []string{"file-read*"}, Filters: []*sbpl.Filter{sbpl.Subpath("/usr/lib")}},
//	}}
//	text, err := prof.Text() // (version 1)\n(deny default)\n(allow file-read* (subpath "/usr/lib"))\n
//
// Every string the writer emits goes through [Quote], the package's only
// SBPL string escaper, and every comment and layer name through the plan
// text quoting (printable text as it is, anything else as a Go string
// literal on one line); [Parse] reads the same subset back (version, allow and deny
// forms, comments and ";;" layer headings; debug forms are dropped), so
// write and read round-trip. [ReadProfile] also reads the little Scheme
// hand-written profiles use (constant defines, conditionals on parameters)
// and keeps each rule's line.
// [Rule.Validate] checks a rule against the generated name tables, refusing
// unknown operations and filters, (with no-sandbox), and every modifier but
// the [AcceptedModifiers] ([ErrModifier]). [FilterDenies] gives a deny
// without filters one that matches every path or address, so it does not
// depend on how Seatbelt ranks unfiltered against filtered rules.
//
// # Limitations
//
//   - The model covers rules, not Scheme: [Parse] rejects define, if,
//     import and other top-level forms; [ReadProfile] evaluates only
//     constant defines and conditions on parameters, and rejects import,
//     procedures and other expressions.
//   - The operation table is libsandbox's from macOS 14.4.1 and the filter
//     table libsandbox's from macOS 15.2 (see znames.go for provenance). A
//     later release may add names the validator does not know yet.
//   - Argument checking is by shape (a path filter takes one absolute path,
//     a network filter localhost or *), not a full type check: libsandbox
//     remains the final judge when the profile is compiled.
package sbpl
