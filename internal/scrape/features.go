package scrape

import (
	"fmt"
	"slices"
)

// checkSupported rejects valid requests for capabilities this server does
// not provide yet, naming the field, so nothing is silently dropped.
// llmOK says a language model is configured.
func checkSupported(o *Options, browserOK, profilesOK, llmOK bool) error {
	if len(o.Actions) > 0 && !browserOK {
		return unsupported(ErrActionsNotSupported, "actions",
			"Actions are not supported by this server yet: they need the browser engine, which is not available")
	}
	for _, f := range o.Formats {
		switch f.Type {
		case FormatScreenshot:
			if browserOK {
				continue
			}
			return unsupported(ErrScreenshotNotSupported, "formats.screenshot",
				"Screenshots are not supported by this server yet: they need the browser engine, which is not available")
		case FormatBranding:
			if browserOK {
				continue
			}
			return unsupported(ErrBrandingNotSupported, "formats.branding",
				"The branding format is not supported by this server yet: it needs the browser engine, which is not available")
		case FormatSummary, FormatJSON, FormatDeterministicJSON, FormatQuestion, FormatHighlights, FormatQuery:
			if llmOK {
				continue
			}
			return unsupported(ErrLLMNotConfigured, "formats."+f.Type,
				"The "+f.Type+" format needs a language model, and this server has none configured yet")
		case FormatChangeTracking:
			if !slices.Contains(f.Modes, ModeJSON) {
				continue
			}
			if llmOK {
				continue
			}
			return unsupported(ErrLLMNotConfigured, "formats.changeTracking.modes",
				"The json mode of changeTracking needs a language model, and this server has none configured yet (git-diff does not)")
		case FormatMenu:
			if llmOK {
				return unsupported(ErrFormatNotSupported, "formats."+f.Type,
					"The "+f.Type+" format is not supported by this server yet (json, deterministicJson, summary, question, highlights, query and product are)")
			}
			return unsupported(ErrLLMNotConfigured, "formats."+f.Type,
				"The "+f.Type+" format needs a language model, and this server has none configured yet")
		}
	}
	if o.OnlyCleanContent && llmOK && (o.ZeroDataRetention || o.Lockdown) {
		return unsupported(ErrZDRViolation, "onlyCleanContent",
			"onlyCleanContent is not supported on zero data retention (or lockdown) requests")
	}
	if o.OnlyCleanContent && !llmOK {
		return unsupported(ErrLLMNotConfigured, "onlyCleanContent",
			"onlyCleanContent needs a language model, and this server has none configured yet")
	}
	if o.Profile != nil && (!browserOK || !profilesOK) {
		return unsupported(ErrProfileNotSupported, "profile",
			"Browser profiles are not supported by this server yet: they need the browser engine, which is not available")
	}
	if o.DomainTools {
		return fmt.Errorf("%w: domainTools needs catalog access, which this server does not provide", ErrForbidden)
	}
	return nil
}
