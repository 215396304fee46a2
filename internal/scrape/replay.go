package scrape

import "github.com/firegate/firegate/internal/actions"

// BrowserActions converts a request's actions to the browser's, as a
// render runs them (the interact routes replay a scrape with them).
func BrowserActions(in []Action) []actions.Action { return toBrowserActions(in) }

// CountryTimezone is the IANA zone a render emulates for a location's
// country ("" for none).
func CountryTimezone(cc string) string { return countryTimezone(cc) }
