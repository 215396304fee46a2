package scrape

import (
	"encoding/json"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/branding"
	"github.com/firegate/firegate/internal/browser"
)

// brandingAction measures the rendered page for the branding format; it
// runs after the caller's actions, as the last one.
func brandingAction() actions.Action {
	return actions.Action{Type: actions.TypeExecuteJavascript, Script: branding.Script}
}

// brandingResult is the branding format's object, or why there is none.
type brandingResult struct {
	asked   bool
	value   json.RawMessage
	warning string
}

// takeBranding removes the branding script's return (the last JavaScript
// return) from the render's action results, so the caller's actions see
// only their own, and builds the branding object from it.
func takeBranding(o *Options, res *browser.Result) brandingResult {
	if !o.HasFormat(FormatBranding) {
		return brandingResult{}
	}
	out := brandingResult{asked: true, value: json.RawMessage("null")}
	if res == nil || res.Actions == nil || len(res.Actions.JavascriptReturns) == 0 {
		out.warning = "Branding could not be computed: the page gave no measurements."
		return out
	}
	js := res.Actions.JavascriptReturns
	last := js[len(js)-1]
	res.Actions.JavascriptReturns = js[:len(js)-1]
	s, ok := last.Value.(string)
	if !ok {
		out.warning = "Branding could not be computed: the page gave no measurements."
		return out
	}
	raw, err := branding.Parse(s)
	if err == nil && raw.Error != "" {
		out.warning = "Branding could not be computed on this page: " + raw.Error
		return out
	}
	if err != nil {
		out.warning = "Branding could not be computed: " + err.Error()
		return out
	}
	b, err := json.Marshal(branding.Build(raw))
	if err != nil {
		out.warning = "Branding could not be computed: " + err.Error()
		return out
	}
	out.value = b
	return out
}

// attach sets the document's branding (and warning) when it was asked for.
func (b brandingResult) attach(doc *Document) {
	if !b.asked {
		return
	}
	v := b.value
	doc.Branding = &v
	if b.warning != "" {
		addWarning(doc, b.warning)
	}
}
