package httpapi

import (
	"net/http"

	"github.com/firegate/firegate/internal/auth"
)

// errZDRNotSupported answers the routes that cannot run without keeping
// data (agent, extract) for a team with zero data retention.
var errZDRNotSupported = &Error{Status: http.StatusBadRequest, Code: "ZDR_NOT_SUPPORTED",
	Message: "Your team has zero data retention enabled. This is not supported on extract."}

// errZDRMonitor answers creating or running a monitor for a team with zero
// data retention forced on: a monitor keeps the pages it compares.
var errZDRMonitor = &Error{Status: http.StatusBadRequest, Code: "ZDR_NOT_SUPPORTED",
	Message: "Your team has zero data retention enabled. This is not supported on monitor."}

// applyTeamZDR settles a request's zero data retention flag against the
// team's settings: a team with it forced on runs every request with it,
// asked for or not; otherwise asking for it needs the team's permission.
func applyTeamZDR(team auth.Team, zdr *bool) error {
	if team.Limits.ZeroDataRetentionForced {
		*zdr = true
		return nil
	}
	if *zdr && !team.Unlimited && !team.Limits.ZeroDataRetention {
		return errZDRNotEnabled
	}
	return nil
}
