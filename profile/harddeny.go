package profile

import "github.com/procage-go/procage/profile/sbpl"

// hardDenyRules returns the deny rules of a hard-deny class, before the
// specificity expansion Lower applies. home is the kernel spelling of the
// user's home directory ("" = no home rules). PLACEHOLDER: the full classes
// land with the Base V1 / threat-model issue.
func hardDenyRules(c Class, home string) []sbpl.Rule {
	switch c {
	case ProcessAccess:
		return []sbpl.Rule{
			{Effect: sbpl.Deny, Ops: []string{"sysctl-read"}, Filters: []*sbpl.Filter{sbpl.F("sysctl-name-prefix", "kern.procargs")}, Comment: "R-25: other processes' arguments and environment"},
		}
	case Secrets:
		if home == "" {
			return nil
		}
		return []sbpl.Rule{
			{Effect: sbpl.Deny, Ops: []string{"file-read*", "file-write*"}, Filters: []*sbpl.Filter{sbpl.Subpath(home + "/.ssh")}, Comment: "SSH keys"},
		}
	}
	return nil
}
