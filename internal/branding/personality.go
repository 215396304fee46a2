package branding

import (
	"regexp"
	"strconv"
	"strings"
)

// icons is the icons object: the inline icon set's style and colour and
// the icons the page declares; nil when the page has none of them.
func icons(r *Raw, bg rgb) *Icons {
	ic := &Icons{}
	switch {
	case r.IconOutline > 0 && r.IconOutline >= r.IconFilled:
		ic.Style = "outline"
	case r.IconFilled > 0:
		ic.Style = "filled"
	}
	for _, c := range r.IconColors {
		if v, ok := parseHex(c.Value, bg); ok {
			ic.PrimaryColor = v.hex()
			break
		}
	}
	bestSize := -1
	for _, l := range r.IconLinks {
		switch l.Rel {
		case "icon":
			// The largest declared icon; a vector one (sizes "any" or
			// SVG) beats every bitmap.
			if size := iconSize(l); size > bestSize {
				ic.Favicon, bestSize = l.Href, size
			}
		case "apple-touch-icon":
			if ic.AppleTouchIcon == "" {
				ic.AppleTouchIcon = l.Href
			}
		case "mask-icon":
			if ic.MaskIcon == "" {
				ic.MaskIcon = l.Href
				if c, ok := parseHex(l.Color, bg); ok {
					ic.MaskIconColor = c.hex()
				}
			}
		case "manifest":
			if ic.Manifest == "" {
				ic.Manifest = l.Href
			}
		}
	}
	if *ic == (Icons{}) {
		return nil
	}
	return ic
}

// iconSize ranks a declared icon by its size: the largest side of its
// sizes, 1<<20 for a vector icon, 0 when unknown.
func iconSize(l IconLink) int {
	if strings.EqualFold(l.Sizes, "any") || strings.Contains(strings.ToLower(l.Type), "svg") || strings.HasSuffix(strings.ToLower(l.Href), ".svg") {
		return 1 << 20
	}
	best := 0
	for _, s := range strings.Fields(l.Sizes) {
		w, h, _ := strings.Cut(strings.ToLower(s), "x")
		a, _ := strconv.Atoi(w)
		b, _ := strconv.Atoi(h)
		best = max(best, a, b)
	}
	return best
}

var (
	serifFamily   = regexp.MustCompile(`(?i)\b(georgia|times|garamond|merriweather|playfair|lora|baskerville|serif pro|pt serif|source serif|crimson|cormorant|dm serif|libre caslon|bodoni|didot|cambria|palatino|book antiqua)\b`)
	playfulFamily = regexp.MustCompile(`(?i)\b(comic|nunito|quicksand|fredoka|baloo|chewy|pacifico|lobster|bubblegum|varela round|patrick hand|gloria|sniglet|grandstander|luckiest guy|caveat)\b`)
)

// isSerif reports whether a font-family list is a serif one: a known
// serif family first, or the generic serif before any sans-serif.
func isSerif(list string) bool {
	first := firstFamily(list)
	if serifFamily.MatchString(first) {
		return true
	}
	for _, f := range strings.Split(list, ",") {
		switch strings.ToLower(strings.Trim(strings.TrimSpace(f), `"'`)) {
		case "serif", "ui-serif":
			return true
		case "sans-serif", "ui-sans-serif", "system-ui":
			return false
		}
	}
	return false
}

// personality judges the brand's tone, energy and audience from what
// Build found: serif type and square corners read traditional, a rounded
// display face or a pill-shaped, many-coloured palette playful, a grey
// palette minimalist, a huge heavy headline over a saturated palette
// bold, a blue-to-indigo palette with sans type and modest corners
// professional, anything else modern. Energy grows with the palette's
// chroma, its number of brand colours and the headline's size. The
// audience is the one the page's words address most (developers,
// businesses, shoppers), else a general one. Deterministic: no model.
func personality(r *Raw, b *Branding, bg rgb) *Personality {
	if r.Body == nil && len(r.Headings) == 0 {
		return nil // nothing measured
	}
	var sats []float64
	var primary *rgb
	for _, s := range []*string{b.Colors.Primary, b.Colors.Secondary, b.Colors.Accent, b.Colors.Link} {
		if s == nil {
			continue
		}
		c, _ := parseHex(*s, bg)
		if chroma(c) >= vivid {
			sats = append(sats, chroma(c))
			if primary == nil {
				primary = &c
			}
		}
	}
	distinct := 0 // saturated brand colours that differ
	var seen []rgb
	for _, s := range []*string{b.Colors.Primary, b.Colors.Secondary, b.Colors.Accent, b.Colors.Link} {
		if s == nil {
			continue
		}
		c, _ := parseHex(*s, bg)
		if chroma(c) < vivid {
			continue
		}
		dup := false
		for _, x := range seen {
			dup = dup || x.dist(c) < 40
		}
		if !dup {
			seen = append(seen, c)
			distinct++
		}
	}
	maxSat := 0.0
	for _, v := range sats {
		maxSat = max(maxSat, v)
	}
	radius := radiusPx(b.Spacing.BorderRadius)
	h1 := 0.0
	bodySerif, headSerif, playfulType := false, false, false
	if r.Body != nil {
		bodySerif = isSerif(r.Body.FontFamily)
		playfulType = playfulFamily.MatchString(r.Body.FontFamily)
	}
	for _, h := range r.Headings {
		if h.Tag == "h1" {
			h1 = h.FontSize
		}
		headSerif = headSerif || isSerif(h.FontFamily)
		playfulType = playfulType || playfulFamily.MatchString(firstFamily(h.FontFamily))
	}
	if len(r.Headings) == 0 {
		headSerif = bodySerif
	}
	bold := 400
	if w := b.Typography.FontWeights.Bold; w != nil {
		bold = *w
	}

	p := &Personality{}
	switch {
	case bodySerif && headSerif && radius <= 4:
		p.Tone = "traditional"
	case playfulType || (radius >= 16 && distinct >= 3):
		p.Tone = "playful"
	case maxSat < vivid:
		p.Tone = "minimalist"
	case h1 >= 64 && bold >= 800 && maxSat >= 0.6:
		p.Tone = "bold"
	case primary != nil && hue(*primary) >= 195 && hue(*primary) <= 255 && !bodySerif && radius <= 8:
		p.Tone = "professional"
	default:
		p.Tone = "modern"
	}
	energy := maxSat + 0.5*float64(max(distinct-1, 0))
	if h1 >= 48 {
		energy += 0.3
	}
	switch {
	case energy < 0.5:
		p.Energy = "low"
	case energy >= 1.3:
		p.Energy = "high"
	default:
		p.Energy = "medium"
	}
	p.TargetAudience = "general audience"
	dev, biz, shop := r.Audience["developers"], r.Audience["businesses"], r.Audience["shoppers"]
	if r.Code != nil {
		dev++ // code on the page
	}
	switch m := max(dev, biz, shop); {
	case m < 2:
	case shop == m:
		p.TargetAudience = "online shoppers"
	case dev == m:
		p.TargetAudience = "developers"
	default:
		p.TargetAudience = "businesses and teams"
	}
	return p
}

// vivid is the chroma from which a colour counts as a brand colour (a
// dark ink like #111827 has a high HSL saturation but little chroma).
const vivid = 0.3

// chroma is the colour's colourfulness, 0..1: its largest channel less
// its smallest.
func chroma(c rgb) float64 {
	return (max(c.r, c.g, c.b) - min(c.r, c.g, c.b)) / 255
}

// radiusPx reads a border radius in px ("6px"); a percentage of 50 or
// more is a pill (999); anything else 0.
func radiusPx(v string) float64 {
	if strings.HasSuffix(v, "%") {
		if f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64); err == nil && f >= 50 {
			return 999
		}
		return 0
	}
	f, _ := strconv.ParseFloat(strings.TrimSuffix(v, "px"), 64)
	return f
}
