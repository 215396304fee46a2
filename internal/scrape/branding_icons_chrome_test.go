package scrape

import (
	"testing"

	"github.com/firegate/firegate/internal/branding"
)

// TestBrandingIconsAndPersonality: the three branding test pages in
// Chrome. The shop declares icons of every kind (the largest favicon is
// chosen) and draws outline SVG icons in its pink; a rounded display face
// and a many-coloured palette read playful, and its words address
// shoppers. The invoicing SaaS reads professional and addresses
// businesses; the dark observability page reads modern with high energy.
func TestBrandingIconsAndPersonality(t *testing.T) {
	t.Parallel()
	e, _ := browserEngine(t)
	srv := brandingSite(t)

	_, b := scrapeBranding(t, e, srv.URL+"/shop")
	want := branding.Icons{Style: "outline", PrimaryColor: "#db2777", Favicon: srv.URL + "/icons/favicon-32.png",
		AppleTouchIcon: srv.URL + "/icons/apple-touch-icon.png", MaskIcon: srv.URL + "/icons/safari-pinned-tab.svg",
		MaskIconColor: "#db2777", Manifest: srv.URL + "/site.webmanifest"}
	if b.Icons == nil || *b.Icons != want {
		t.Errorf("shop icons = %+v, want %+v", b.Icons, want)
	}
	if p := b.Personality; p == nil || *p != (branding.Personality{Tone: "playful", Energy: "high", TargetAudience: "online shoppers"}) {
		t.Errorf("shop personality = %+v", p)
	}

	_, b = scrapeBranding(t, e, srv.URL+"/saas")
	if b.Icons == nil || *b.Icons != (branding.Icons{Favicon: srv.URL + "/favicon.svg"}) {
		t.Errorf("saas icons = %+v (no inline icons; one declared favicon)", b.Icons)
	}
	if p := b.Personality; p == nil || *p != (branding.Personality{Tone: "professional", Energy: "medium", TargetAudience: "businesses and teams"}) {
		t.Errorf("saas personality = %+v", p)
	}
	// The dark ink of its headings (#111827) is no accent colour: it has
	// a high HSL saturation but almost no chroma.
	if b.Colors.Accent != nil {
		t.Errorf("saas accent = %s, want none", *b.Colors.Accent)
	}

	_, b = scrapeBranding(t, e, srv.URL+"/dark")
	if b.Icons == nil || *b.Icons != (branding.Icons{Favicon: srv.URL + "/img/nightjar.ico"}) {
		t.Errorf("dark icons = %+v", b.Icons)
	}
	if p := b.Personality; p == nil || *p != (branding.Personality{Tone: "modern", Energy: "high", TargetAudience: "general audience"}) {
		t.Errorf("dark personality = %+v", p)
	}
}
