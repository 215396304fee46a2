package httpapi

import "fmt"

// The request-validation machinery shared by every v2 body is in four
// files: jsonobject.go splits a body into raw members (decoded level by
// level so unknown keys and type errors get exact paths), validator.go
// collects per-field issues through typed accessors, rules.go holds the
// reusable value rules (URLs, CSS selectors, country codes) and schema.go
// rewrites JSON schemas for extraction. This file holds the contract's
// messages they answer with.

// Messages of the contract, word for word.
const (
	msgBadRequest   = "Bad Request"
	msgInvalidJSON  = "Bad request, malformed JSON"
	msgTooLarge     = "Request body is too large"
	msgUnrecognized = "Unrecognized key in body -- please review the v2 API documentation for request body changes"
	msgInvalidURL   = "Invalid URL"
	// msgURLMissing is the error of a body without url; a url that is
	// there but not one says so (malformedURL). Both keep the contract's
	// "Invalid URL" first.
	msgURLMissing     = "Invalid URL: url is required (an absolute http or https URL such as https://example.com)"
	msgInvalidCountry = "Invalid country code. Please use a valid ISO 3166-1 alpha-2 country code."
	// msgCountryPattern is the 400 for a location.country that is not two
	// upper-case letters (the contract's pattern), such as "us".
	msgCountryPattern = "Invalid country code. location.country must be two upper-case letters (ISO 3166-1 alpha-2), such as US."
)

// malformedURL is the error of a url string that is not an http(s) URL
// with a host, quoting (the start of) it.
func malformedURL(s string) string {
	const show = 100
	if r := []rune(s); len(r) > show {
		s = string(r[:show]) + "..."
	}
	return fmt.Sprintf("Invalid URL: %q is not an http or https URL with a valid host", s)
}
