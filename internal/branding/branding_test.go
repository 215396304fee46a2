package branding

import (
	"strings"
	"testing"
)

func TestParseHex(t *testing.T) {
	white, navy := rgb{255, 255, 255}, rgb{11, 16, 32}
	for _, tc := range []struct {
		in   string
		bg   rgb
		want string
		ok   bool
	}{
		{"#4F46E5", white, "#4f46e5", true},
		{"#4f46e5ff", white, "#4f46e5", true},
		{"#fff", navy, "#ffffff", true},
		{"#ffffff14", navy, "#1e2331", true}, // 8% white over navy
		{"#00000080", white, "#7f7f7f", true},
		{"#00000000", white, "", false},
		{"", white, "", false},
		{"rgb(1,2,3)", white, "", false},
	} {
		c, ok := parseHex(tc.in, tc.bg)
		if ok != tc.ok || (ok && c.hex() != tc.want) {
			t.Errorf("parseHex(%q) = %s, %v; want %s, %v", tc.in, c.hex(), ok, tc.want, tc.ok)
		}
	}
}

func TestFirstFamily(t *testing.T) {
	for in, want := range map[string]string{
		`"Inter", system-ui, sans-serif`:           "Inter",
		`-apple-system, "Segoe UI", Roboto, Arial`: "Roboto",
		`system-ui, sans-serif`:                    "system-ui",
		`'JetBrains Mono', monospace`:              "JetBrains Mono",
	} {
		if got := firstFamily(in); got != want {
			t.Errorf("firstFamily(%q) = %q, want %q", in, got, want)
		}
	}
}

// A page without buttons: the palette comes from links and headings.
func TestBuildWithoutButtons(t *testing.T) {
	raw, err := Parse(`{"bodyBackground":"","htmlBackground":"#fafaf9ff","body":{"color":"#1c1917ff","fontFamily":"Merriweather, serif","fontSize":17,"fontWeight":300},
		"headings":[{"tag":"h1","color":"#9a3412ff","fontFamily":"Merriweather, serif","fontSize":40,"fontWeight":900,"lineHeight":48}],
		"links":[{"value":"#0f766eff","count":300}],"texts":[{"value":"#1c1917ff","count":4000},{"value":"#78716cff","count":900}],
		"spacings":[{"value":"12","count":10},{"value":"6","count":9},{"value":"18","count":5}]}`)
	if err != nil {
		t.Fatal(err)
	}
	b := Build(raw)
	got := map[string]string{"bg": str(b.Colors.Background), "text": str(b.Colors.TextPrimary), "text2": str(b.Colors.TextSecondary),
		"primary": str(b.Colors.Primary), "secondary": str(b.Colors.Secondary), "accent": str(b.Colors.Accent), "scheme": b.ColorScheme, "font": str(b.Typography.FontFamilies.Primary)}
	want := map[string]string{"bg": "#fafaf9", "text": "#1c1917", "text2": "#78716c", "primary": "#0f766e", "secondary": "#9a3412", "accent": "<nil>", "scheme": "light", "font": "Merriweather"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %s, want %s", k, got[k], w)
		}
	}
	if b.Components.ButtonPrimary != nil || b.Spacing.BaseUnit != 6 || *b.Typography.FontWeights.Regular != 300 || *b.Typography.FontWeights.Bold != 900 {
		t.Errorf("buttons %+v, base unit %d, weights %+v", b.Components.ButtonPrimary, b.Spacing.BaseUnit, b.Typography.FontWeights)
	}
	if _, err := Parse(strings.Repeat(" ", MaxRawBytes+1)); err == nil {
		t.Error("an oversized answer was parsed")
	}
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
