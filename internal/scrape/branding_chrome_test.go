package scrape

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/branding"
)

// brandingSite serves the branding test pages of internal/branding with
// their images.
func brandingSite(t *testing.T) *httptest.Server {
	t.Helper()
	var logo bytes.Buffer
	if err := png.Encode(&logo, image.NewRGBA(image.Rect(0, 0, 120, 36))); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, name := range []string{"saas", "dark", "shop"} {
		page, err := os.ReadFile("../branding/testdata/" + name + ".html")
		if err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc("/"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
		})
	}
	mux.HandleFunc("/img/nightjar-logo.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(logo.Bytes())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func scrapeBranding(t *testing.T, e *Engine, u string, extra ...Action) (*Document, branding.Branding) {
	t.Helper()
	o := defaults(u, FormatMarkdown, FormatBranding)
	o.Actions = extra
	doc, err := e.Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Branding == nil {
		t.Fatal("no branding")
	}
	var b branding.Branding
	if err := json.Unmarshal(*doc.Branding, &b); err != nil {
		t.Fatalf("branding %s: %v", *doc.Branding, err)
	}
	return doc, b
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestBrandingLightSaaSPage(t *testing.T) {
	t.Parallel()
	e, cr := browserEngine(t)
	srv := brandingSite(t)
	doc, b := scrapeBranding(t, e, srv.URL+"/saas")
	if cr.count() != 1 {
		t.Errorf("renders = %d, want 1 (branding needs the browser)", cr.count())
	}
	if !strings.Contains(*doc.Markdown, "Invoices that pay themselves") {
		t.Errorf("markdown: %q", *doc.Markdown)
	}
	for name, c := range map[string][2]string{
		"colorScheme":   {b.ColorScheme, "light"},
		"primary":       {str(b.Colors.Primary), "#4f46e5"},
		"background":    {str(b.Colors.Background), "#ffffff"},
		"textPrimary":   {str(b.Colors.TextPrimary), "#111827"},
		"textSecondary": {str(b.Colors.TextSecondary), "#6b7280"},
		"link":          {str(b.Colors.Link), "#4f46e5"},
		"success":       {str(b.Colors.Success), "#dcfce7"},
		"error":         {str(b.Colors.Error), "#fee2e2"},
		"font primary":  {str(b.Typography.FontFamilies.Primary), "Inter"},
		"font heading":  {str(b.Typography.FontFamilies.Heading), "Inter"},
		"font code":     {str(b.Typography.FontFamilies.Code), "JetBrains Mono"},
		"h1":            {str(b.Typography.FontSizes.H1), "48px"},
		"h2":            {str(b.Typography.FontSizes.H2), "32px"},
		"h3":            {str(b.Typography.FontSizes.H3), "20px"},
		"body":          {str(b.Typography.FontSizes.Body), "16px"},
		"radius":        {b.Spacing.BorderRadius, "8px"},
		"button pad":    {b.Spacing.Padding["button"], "12px 24px"},
		"btn1 bg":       {b.Components.ButtonPrimary.Background, "#4f46e5"},
		"btn1 text":     {b.Components.ButtonPrimary.TextColor, "#ffffff"},
		"btn1 radius":   {b.Components.ButtonPrimary.BorderRadius, "8px"},
		"btn2 bg":       {b.Components.ButtonSecondary.Background, "#ffffff"},
		"btn2 text":     {b.Components.ButtonSecondary.TextColor, "#4f46e5"},
		"btn2 border":   {str(b.Components.ButtonSecondary.BorderColor), "#4f46e5"},
		"input bg":      {b.Components.Input.Background, "#f9fafb"},
		"input border":  {str(b.Components.Input.BorderColor), "#d1d5db"},
		"input radius":  {b.Components.Input.BorderRadius, "6px"},
		"favicon":       {str(b.Images.Favicon), srv.URL + "/favicon.svg"},
		"ogImage":       {str(b.Images.OGImage), srv.URL + "/static/og-card.png"},
		"animation":     {b.Animations.TransitionDuration, "0.15s"},
		"layout":        {b.Layout.ContainerWidth, "1200px"},
	} {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
	if b.Spacing.BaseUnit != 8 && b.Spacing.BaseUnit != 4 {
		t.Errorf("baseUnit = %d", b.Spacing.BaseUnit)
	}
	if w := b.Typography.FontWeights; w.Regular == nil || *w.Regular != 400 || w.Bold == nil || *w.Bold != 800 || w.Medium == nil || *w.Medium != 500 {
		t.Errorf("weights = %+v", w)
	}
	if lh := b.Typography.LineHeights; lh.Heading == nil || *lh.Heading != 1.1 || lh.Body == nil || *lh.Body != 1.5 {
		t.Errorf("line heights = %+v", lh)
	}
	if len(b.Fonts) < 2 || b.Fonts[0].Family != "Inter" || b.Fonts[1].Family != "JetBrains Mono" {
		t.Errorf("fonts = %+v", b.Fonts)
	}
	if b.Logo == nil || !strings.HasPrefix(*b.Logo, "data:image/svg+xml;base64,") || b.Images.Logo == nil || *b.Images.Logo != *b.Logo {
		t.Errorf("logo = %v", str(b.Logo))
	}
}

func TestBrandingDarkPageAndActions(t *testing.T) {
	t.Parallel()
	e, _ := browserEngine(t)
	srv := brandingSite(t)
	// The caller's own executeJavascript keeps its result; the branding
	// measurement is not among them.
	doc, b := scrapeBranding(t, e, srv.URL+"/dark", Action{Type: "executeJavascript", Script: "document.title"})
	if doc.Actions == nil || len(doc.Actions.JavascriptReturns) != 1 || doc.Actions.JavascriptReturns[0].Value != "Nightjar — observability for night owls" {
		t.Errorf("action results: %+v", doc.Actions)
	}
	for name, c := range map[string][2]string{
		"colorScheme":   {b.ColorScheme, "dark"},
		"background":    {str(b.Colors.Background), "#0b1020"},
		"textPrimary":   {str(b.Colors.TextPrimary), "#e5e7eb"},
		"textSecondary": {str(b.Colors.TextSecondary), "#94a3b8"},
		"link":          {str(b.Colors.Link), "#38bdf8"},
		"warning":       {str(b.Colors.Warning), "#facc15"},
		"font primary":  {str(b.Typography.FontFamilies.Primary), "Georgia"},
		"font heading":  {str(b.Typography.FontFamilies.Heading), "Space Grotesk"},
		"h1":            {str(b.Typography.FontSizes.H1), "56px"},
		"radius":        {b.Spacing.BorderRadius, "999px"},
		"btn2 border":   {str(b.Components.ButtonSecondary.BorderColor), "#334155"},
		"btn2 bg":       {b.Components.ButtonSecondary.Background, "#1e2331"}, // 8% white over the page
		"logo":          {str(b.Logo), srv.URL + "/img/nightjar-logo.png"},
		"favicon":       {str(b.Images.Favicon), srv.URL + "/img/nightjar.ico"},
		"ogImage":       {str(b.Images.OGImage), "<nil>"},
	} {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
	// oklch(0.72 0.19 150) is a green; the exact sRGB value is Chrome's.
	p := str(b.Colors.Primary)
	if len(p) != 7 || p[0] != '#' || !(p[3:5] > p[1:3] && p[3:5] > p[5:7]) || b.Components.ButtonPrimary.Background != p {
		t.Errorf("primary = %s (want the green call to action), button %+v", p, b.Components.ButtonPrimary)
	}
}
