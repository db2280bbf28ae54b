package connect

import (
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Check validates the connection settings before anything is sent: --connect-timeout,
// --protocol and the OAuth flags (AuthOptions.Check). Problems are UsageErrors.
func (o Options) Check(getenv func(string) string) error {
	if o.ConnectTimeout < 0 {
		return exitcode.Usagef("--connect-timeout %s: want a duration such as 30s, or 0 to wait as long as it takes", o.ConnectTimeout)
	}
	switch o.Protocol {
	case "auto", rpc.VersionModern, rpc.VersionLegacy:
	default:
		return exitcode.Usagef("--protocol %q: want auto, %s or %s", o.Protocol, rpc.VersionModern, rpc.VersionLegacy)
	}
	return o.Auth.Check(getenv)
}
