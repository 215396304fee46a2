package branding

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// rgb is an opaque sRGB colour.
type rgb struct{ r, g, b float64 }

// parseHex reads "#rgb", "#rrggbb" or "#rrggbbaa" (the script's form); a
// translucent colour is composited over bg. ok is false for "", a fully
// transparent colour or anything else.
func parseHex(s string, bg rgb) (rgb, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(strings.ToLower(s)), "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	if len(s) == 6 {
		s += "ff"
	}
	if len(s) != 8 {
		return rgb{}, false
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return rgb{}, false
	}
	c := rgb{float64(v >> 24 & 0xff), float64(v >> 16 & 0xff), float64(v >> 8 & 0xff)}
	a := float64(v&0xff) / 255
	if a == 0 {
		return rgb{}, false
	}
	return rgb{c.r*a + bg.r*(1-a), c.g*a + bg.g*(1-a), c.b*a + bg.b*(1-a)}, true
}

// hex is "#rrggbb".
func (c rgb) hex() string {
	cl := func(v float64) int { return int(math.Round(math.Max(0, math.Min(255, v)))) }
	return fmt.Sprintf("#%02x%02x%02x", cl(c.r), cl(c.g), cl(c.b))
}

// luminance is the WCAG relative luminance.
func (c rgb) luminance() float64 {
	lin := func(v float64) float64 {
		v /= 255
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.r) + 0.7152*lin(c.g) + 0.0722*lin(c.b)
}

// contrast is the WCAG contrast ratio of two colours.
func contrast(a, b rgb) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// saturation is the HSL saturation, 0..1.
func (c rgb) saturation() float64 {
	mx := math.Max(c.r, math.Max(c.g, c.b)) / 255
	mn := math.Min(c.r, math.Min(c.g, c.b)) / 255
	l := (mx + mn) / 2
	if mx == mn {
		return 0
	}
	if l > 0.5 {
		return (mx - mn) / (2 - mx - mn)
	}
	return (mx - mn) / (mx + mn)
}

// dist is the Euclidean distance in RGB.
func (c rgb) dist(o rgb) float64 {
	return math.Sqrt((c.r-o.r)*(c.r-o.r) + (c.g-o.g)*(c.g-o.g) + (c.b-o.b)*(c.b-o.b))
}

// hue is the HSL hue in degrees, 0..360 (0 for a grey).
func hue(c rgb) float64 {
	r, g, b := c.r/255, c.g/255, c.b/255
	mx, mn := math.Max(r, math.Max(g, b)), math.Min(r, math.Min(g, b))
	d := mx - mn
	if d == 0 {
		return 0
	}
	var h float64
	switch mx {
	case r:
		h = math.Mod((g-b)/d, 6)
	case g:
		h = (b-r)/d + 2
	default:
		h = (r-g)/d + 4
	}
	h *= 60
	if h < 0 {
		h += 360
	}
	return h
}
