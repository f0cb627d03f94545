package egress

import "github.com/procage-go/procage/internal/egress/hostrule"

// The rules and decisions are package hostrule's, which the policy model
// uses without linking the proxy.
type (
	Rules    = hostrule.Rules
	Decision = hostrule.Decision
	Verdict  = hostrule.Verdict
)

// NewRules parses host patterns and address rules ([hostrule.NewRules]).
func NewRules(allow, deny, addrs []string) (*Rules, error) {
	return hostrule.NewRules(allow, deny, addrs)
}

const (
	Allowed       = hostrule.Allowed
	DeniedByRule  = hostrule.DeniedByRule
	DeniedNoRule  = hostrule.DeniedNoRule
	DeniedAddress = hostrule.DeniedAddress
	DeniedResolve = hostrule.DeniedResolve
	DeniedInvalid = hostrule.DeniedInvalid
)
