package httpapi

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/firegate/firegate/internal/exprlimit"
	"github.com/firegate/firegate/internal/scrape"
)

// actionFields lists the members each action may have besides type.
func actionFields(t string) ([]string, bool) {
	switch t {
	case "wait":
		return []string{"milliseconds", "selector"}, true
	case "screenshot":
		return []string{"fullPage", "quality", "viewport"}, true
	case "click":
		return []string{"selector", "all"}, true
	case "write":
		return []string{"text"}, true
	case "press":
		return []string{"key"}, true
	case "scroll":
		return []string{"direction", "selector"}, true
	case "scrape":
		return nil, true
	case "executeJavascript":
		return []string{"script"}, true
	case "pdf":
		return []string{"format", "landscape", "scale"}, true
	}
	return nil, false
}

const actionTypes = "'wait' | 'screenshot' | 'click' | 'write' | 'press' | 'scroll' | 'scrape' | 'executeJavascript' | 'pdf'"

// actions reads the actions array. It returns the actions, the wait time
// they add (sum of wait milliseconds plus 1000 per selector wait) and
// whether they were all valid.
func (v *validator) actions(path []any, raw json.RawMessage) ([]scrape.Action, int64, bool) {
	items, ok := v.array(path, raw)
	if !ok {
		return nil, 0, false
	}
	if len(items) > maxActions {
		v.addCustom(path, codeTooBig, msgTooManyActions)
		return nil, 0, false
	}
	n := len(v.details)
	out := make([]scrape.Action, 0, len(items))
	var waitMs int64
	for i, item := range items {
		a, ok := v.action(at(path, i), item)
		if !ok {
			continue
		}
		if a.Type == "wait" {
			if a.Selector != "" {
				waitMs += waitSelectorBudgetMs
			} else {
				waitMs += int64(a.Milliseconds)
			}
		}
		out = append(out, a)
	}
	return out, waitMs, len(v.details) == n
}

// action reads one action object, discriminated by type.
func (v *validator) action(path []any, raw json.RawMessage) (scrape.Action, bool) {
	m, ok := v.object(path, raw)
	if !ok {
		return scrape.Action{}, false
	}
	tp := at(path, "type")
	if !present(m, "type") {
		v.add(tp, codeInvalidDiscriminator, "Invalid discriminator value. Expected "+actionTypes)
		return scrape.Action{}, false
	}
	t, ok := v.str(tp, m.get("type"))
	if !ok {
		return scrape.Action{}, false
	}
	allowed, known := actionFields(t)
	if !known {
		v.add(tp, codeInvalidDiscriminator, "Invalid discriminator value. Expected "+actionTypes+", received '"+t+"'")
		return scrape.Action{}, false
	}
	n := len(v.details)
	v.checkKeys(path, m, func(k string) bool { return k == "type" || slices.Contains(allowed, k) })
	a := scrape.Action{Type: t}
	switch t {
	case "wait":
		hasMs, hasSel := present(m, "milliseconds"), present(m, "selector")
		if hasMs == hasSel {
			v.addCustom(path, codeCustom, msgWaitForm)
			break
		}
		if hasMs {
			// No bound of its own: the total wait budget reports it.
			ms, _ := v.integer(at(path, "milliseconds"), m.get("milliseconds"), 1, math.MaxInt32)
			a.Milliseconds = int(ms)
		} else {
			a.Selector, _ = v.reqString(path, m, "selector", 1, math.MaxInt)
			v.browserSelector(path, a.Selector)
		}
	case "screenshot":
		a.FullPage, a.Quality, a.Viewport = v.screenshotFields(path, m)
	case "click":
		a.Selector, _ = v.reqString(path, m, "selector", 0, math.MaxInt)
		v.browserSelector(path, a.Selector)
		a.All = v.optBool(path, m, "all", false)
	case "write":
		a.Text, _ = v.reqString(path, m, "text", 0, math.MaxInt)
	case "press":
		a.Key, _ = v.reqString(path, m, "key", 0, math.MaxInt)
	case "scroll":
		a.Direction = v.optEnum(path, m, "direction", "down", "up", "down")
		a.Selector, _ = v.optString(path, m, "selector")
		v.browserSelector(path, a.Selector)
	case "executeJavascript":
		a.Script, _ = v.reqString(path, m, "script", 0, math.MaxInt)
	case "pdf":
		a.PDFFormat = v.optEnum(path, m, "format", "Letter",
			"A0", "A1", "A2", "A3", "A4", "A5", "A6", "Letter", "Legal", "Tabloid", "Ledger")
		a.Landscape = v.optBool(path, m, "landscape", false)
		a.Scale = 1
		if present(m, "scale") {
			p := at(path, "scale")
			if s, ok := v.number(p, m.get("scale")); ok {
				if s > 0 && !math.IsInf(s, 0) {
					a.Scale = s
				} else {
					v.add(p, codeTooSmall, "Number must be greater than 0")
				}
			}
		}
	}
	return a, len(v.details) == n
}

// browserSelector checks the bounds of an action's selector (its length,
// its nesting): the browser parses it, with its own dialect, so it is not
// parsed here, but no request may hand the browser's parser a selector of
// megabytes nested a million deep.
func (v *validator) browserSelector(path []any, sel string) {
	if err := exprlimit.CheckSelector(sel); err != nil {
		v.add(at(path, "selector"), codeInvalidString, msgInvalidSelector+": "+err.Error())
	}
}
