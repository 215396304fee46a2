package branding

import (
	"math"
	"testing"
)

func TestIconSize(t *testing.T) {
	for _, tc := range []struct {
		l    IconLink
		want int
	}{
		{IconLink{Sizes: "16x16 32x32"}, 32},
		{IconLink{Sizes: "any"}, 1 << 20},
		{IconLink{Type: "image/svg+xml"}, 1 << 20},
		{IconLink{Href: "https://a.example/i.SVG"}, 1 << 20},
		{IconLink{Sizes: "bogus"}, 0},
		{IconLink{}, 0},
	} {
		if got := iconSize(tc.l); got != tc.want {
			t.Errorf("iconSize(%+v) = %d, want %d", tc.l, got, tc.want)
		}
	}
}

func TestIsSerif(t *testing.T) {
	for list, want := range map[string]bool{
		`Georgia, "Times New Roman", serif`:           true,
		`"Playfair Display", Georgia`:                 true,
		`"Unknown Face", serif`:                       true,
		`"Inter", system-ui, sans-serif`:              false,
		`"Space Grotesk", "Helvetica Neue", Arial`:    false,
		`"Source Sans Pro", "Source Serif Pro"`:       false,
		`"Source Serif Pro", "Source Sans Pro", sans`: true,
	} {
		if got := isSerif(list); got != want {
			t.Errorf("isSerif(%q) = %v, want %v", list, got, want)
		}
	}
}

func TestHue(t *testing.T) {
	for _, tc := range []struct {
		c    rgb
		want float64
	}{{rgb{255, 0, 0}, 0}, {rgb{0, 255, 0}, 120}, {rgb{0, 0, 255}, 240}, {rgb{255, 0, 255}, 300}, {rgb{128, 128, 128}, 0}} {
		if got := hue(tc.c); math.Abs(got-tc.want) > 0.01 {
			t.Errorf("hue(%v) = %v, want %v", tc.c, got, tc.want)
		}
	}
}

// Synthetic measurements for the tones the Chrome pages do not show.
func TestPersonalityTones(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      Personality
	}{
		{"nothing measured", `{}`, Personality{}},
		{"traditional", `{"body":{"color":"#222222ff","fontFamily":"Georgia, serif","fontSize":18,"fontWeight":400},
			"headings":[{"tag":"h1","color":"#7f1d1dff","fontFamily":"'Playfair Display', serif","fontSize":40,"fontWeight":700}],
			"links":[{"value":"#7f1d1dff","count":50}],"radii":[{"value":"2px","count":3}]}`,
			Personality{Tone: "traditional", Energy: "low", TargetAudience: "general audience"}},
		{"minimalist", `{"body":{"color":"#111111ff","fontFamily":"Helvetica, sans-serif","fontSize":16,"fontWeight":400},
			"headings":[{"tag":"h1","color":"#000000ff","fontFamily":"Helvetica","fontSize":32,"fontWeight":500}],
			"links":[{"value":"#111111ff","count":50}],"buttons":[{"background":"#000000ff","textColor":"#ffffffff","area":4000,"borderRadius":"0px"}]}`,
			Personality{Tone: "minimalist", Energy: "low", TargetAudience: "general audience"}},
		{"bold, developers", `{"body":{"color":"#111111ff","fontFamily":"Inter, sans-serif","fontSize":16,"fontWeight":400},
			"headings":[{"tag":"h1","color":"#111111ff","fontFamily":"Inter","fontSize":96,"fontWeight":900}],
			"buttons":[{"background":"#ff3d00ff","textColor":"#ffffffff","area":9000,"borderRadius":"4px"}],
			"code":{"fontFamily":"monospace","fontSize":14},"audience":{"developers":5,"businesses":1}}`,
			Personality{Tone: "bold", Energy: "high", TargetAudience: "developers"}},
	} {
		r, err := Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		got := Build(r).Personality
		if tc.want == (Personality{}) {
			if got != nil {
				t.Errorf("%s: %+v, want null", tc.name, got)
			}
			continue
		}
		if got == nil || *got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
