// Package branding computes the branding format from a rendered page: the
// browser runs Script once (it measures computed styles, never changes the
// page) and Build turns its measurements into the contract's object:
// colour scheme, palette, fonts and typography, spacing, button and input
// styles, logo and images. Every colour is "#rrggbb"; a translucent colour
// is composited over the page background.
package branding

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Script is the JavaScript expression the browser evaluates on the
// rendered page; it returns Raw as a JSON string.
//
//go:embed script.js
var Script string

// MaxRawBytes bounds the script's answer.
const MaxRawBytes = 1 << 20

// Raw is what Script measures.
type Raw struct {
	// Error is set when the script failed on the page.
	Error           string     `json:"error"`
	URL             string     `json:"url"`
	Title           string     `json:"title"`
	SiteName        string     `json:"siteName"`
	ColorSchemeMeta string     `json:"colorSchemeMeta"`
	RootColorScheme string     `json:"rootColorScheme"`
	HTMLBackground  string     `json:"htmlBackground"`
	BodyBackground  string     `json:"bodyBackground"`
	Body            *Text      `json:"body"`
	Headings        []Text     `json:"headings"`
	Code            *Text      `json:"code"`
	Texts           []Count    `json:"texts"`
	Links           []Count    `json:"links"`
	Families        []Count    `json:"families"`
	Weights         []Count    `json:"weights"`
	Buttons         []Box      `json:"buttons"`
	Inputs          []Box      `json:"inputs"`
	Statuses        []Status   `json:"statuses"`
	Spacings        []Count    `json:"spacings"`
	Radii           []Count    `json:"radii"`
	Transitions     []Count    `json:"transitions"`
	Logo            *LogoFound `json:"logo"`
	Favicon         string     `json:"favicon"`
	OGImage         string     `json:"ogImage"`
	ContainerWidth  float64    `json:"containerWidth"`
	IconLinks       []IconLink `json:"iconLinks"`
	IconOutline     int        `json:"iconOutline"` // inline icons drawn with strokes
	IconFilled      int        `json:"iconFilled"`  // inline icons drawn with fills
	IconColors      []Count    `json:"iconColors"`
	// Audience counts the page's words addressing developers,
	// businesses and shoppers.
	Audience map[string]int `json:"audience"`
}

// IconLink is one icon the page declares with a link element: rel is
// icon, apple-touch-icon, mask-icon or manifest; href is absolute.
type IconLink struct {
	Rel   string `json:"rel"`
	Href  string `json:"href"`
	Sizes string `json:"sizes"`
	Type  string `json:"type"`
	Color string `json:"color"` // mask-icon's colour, #rrggbbaa
}

// Text is the computed typography of one element.
type Text struct {
	Tag        string  `json:"tag"`
	Color      string  `json:"color"`
	FontFamily string  `json:"fontFamily"`
	FontSize   float64 `json:"fontSize"`
	FontWeight float64 `json:"fontWeight"`
	LineHeight float64 `json:"lineHeight"` // px; 0 = normal
}

// Count is a value and how often (or how much text) it was seen.
type Count struct {
	Value string  `json:"value"`
	Count float64 `json:"count"`
}

// Box is a button's or an input's computed style.
type Box struct {
	Background   string  `json:"background"`
	TextColor    string  `json:"textColor"`
	BorderColor  string  `json:"borderColor"`
	BorderWidth  float64 `json:"borderWidth"`
	BorderRadius string  `json:"borderRadius"`
	Padding      string  `json:"padding"`
	FontWeight   float64 `json:"fontWeight"`
	Area         float64 `json:"area"`
	Y            float64 `json:"y"`
	Text         string  `json:"text"`
	Classes      string  `json:"classes"`
}

// Status is an element named success, warning, danger or error.
type Status struct {
	Kind        string `json:"kind"`
	Background  string `json:"background"`
	TextColor   string `json:"textColor"`
	BorderColor string `json:"borderColor"`
}

// LogoFound is the logo the script chose.
type LogoFound struct {
	Kind string `json:"kind"` // img or svg
	Src  string `json:"src"`
	Alt  string `json:"alt"`
}

// Branding is the contract's branding object.
type Branding struct {
	ColorScheme string       `json:"colorScheme"`
	Logo        *string      `json:"logo"`
	Colors      Colors       `json:"colors"`
	Fonts       []Font       `json:"fonts"`
	Typography  Typography   `json:"typography"`
	Spacing     Spacing      `json:"spacing"`
	Components  Components   `json:"components"`
	Icons       *Icons       `json:"icons"`
	Images      Images       `json:"images"`
	Animations  *Animations  `json:"animations"`
	Layout      *Layout      `json:"layout"`
	Personality *Personality `json:"personality"`
}

// Icons are the page's icon set and declared icons; every member is a
// string, absent when unknown.
type Icons struct {
	// Style is outline or filled: how most of the page's inline icons
	// (small SVGs, icon fonts) are drawn.
	Style string `json:"style,omitempty"`
	// PrimaryColor is the icons' most used colour.
	PrimaryColor   string `json:"primaryColor,omitempty"`
	Favicon        string `json:"favicon,omitempty"` // the best link rel=icon
	AppleTouchIcon string `json:"appleTouchIcon,omitempty"`
	MaskIcon       string `json:"maskIcon,omitempty"`
	MaskIconColor  string `json:"maskIconColor,omitempty"`
	Manifest       string `json:"manifest,omitempty"` // the web app manifest, which lists more icons
}

// Personality is the brand's character as its palette, type and words
// suggest it (a heuristic; see personality).
type Personality struct {
	Tone           string `json:"tone"`   // professional, playful, modern, traditional, minimalist or bold
	Energy         string `json:"energy"` // low, medium or high
	TargetAudience string `json:"targetAudience"`
}

// Colors is the palette; each is "#rrggbb" or null.
type Colors struct {
	Primary       *string `json:"primary"`
	Secondary     *string `json:"secondary"`
	Accent        *string `json:"accent"`
	Background    *string `json:"background"`
	TextPrimary   *string `json:"textPrimary"`
	TextSecondary *string `json:"textSecondary"`
	Link          *string `json:"link"`
	Success       *string `json:"success"`
	Warning       *string `json:"warning"`
	Error         *string `json:"error"`
}

// Font is one font family the page uses.
type Font struct {
	Family string `json:"family"`
}

// Typography is families, sizes, weights and line heights.
type Typography struct {
	FontFamilies struct {
		Primary *string `json:"primary"`
		Heading *string `json:"heading"`
		Code    *string `json:"code"`
	} `json:"fontFamilies"`
	FontSizes struct {
		H1   *string `json:"h1"`
		H2   *string `json:"h2"`
		H3   *string `json:"h3"`
		Body *string `json:"body"`
	} `json:"fontSizes"`
	FontWeights struct {
		Light   *int `json:"light"`
		Regular *int `json:"regular"`
		Medium  *int `json:"medium"`
		Bold    *int `json:"bold"`
	} `json:"fontWeights"`
	LineHeights struct {
		Heading *float64 `json:"heading"`
		Body    *float64 `json:"body"`
	} `json:"lineHeights"`
}

// Spacing is the spacing scale.
type Spacing struct {
	BaseUnit     int               `json:"baseUnit"`
	BorderRadius string            `json:"borderRadius"`
	Padding      map[string]string `json:"padding"`
	Margins      map[string]string `json:"margins"`
}

// Components are the button and input styles.
type Components struct {
	ButtonPrimary   *Button `json:"buttonPrimary"`
	ButtonSecondary *Button `json:"buttonSecondary"`
	Input           *Button `json:"input"`
}

// Button is one component's colours and radius.
type Button struct {
	Background   string  `json:"background"`
	TextColor    string  `json:"textColor"`
	BorderColor  *string `json:"borderColor,omitempty"`
	BorderRadius string  `json:"borderRadius"`
}

// Images are the page's logo, favicon and og:image URLs.
type Images struct {
	Logo    *string `json:"logo"`
	Favicon *string `json:"favicon"`
	OGImage *string `json:"ogImage"`
}

// Animations is what the page animates with.
type Animations struct {
	TransitionDuration string `json:"transitionDuration"`
}

// Layout is the page's content width.
type Layout struct {
	ContainerWidth string `json:"containerWidth"`
}

// Parse decodes the script's answer.
func Parse(s string) (*Raw, error) {
	if len(s) > MaxRawBytes {
		return nil, fmt.Errorf("branding: the page's measurements are %d bytes, more than %d", len(s), MaxRawBytes)
	}
	var r Raw
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, fmt.Errorf("branding: the page's measurements are not JSON: %w", err)
	}
	return &r, nil
}

// Build computes the branding object from the measurements.
func Build(r *Raw) *Branding {
	bg := rgb{255, 255, 255}
	for _, c := range []string{r.BodyBackground, r.HTMLBackground} {
		if v, ok := parseHex(c, rgb{255, 255, 255}); ok {
			bg = v
			break
		}
	}
	col := func(s string) (rgb, bool) { return parseHex(s, bg) }
	b := &Branding{Colors: Colors{Background: ptr(bg.hex())}}

	switch scheme := strings.ToLower(r.ColorSchemeMeta + " " + r.RootColorScheme); {
	case strings.Contains(scheme, "dark") && !strings.Contains(scheme, "light"):
		b.ColorScheme = "dark"
	case strings.Contains(scheme, "light") && !strings.Contains(scheme, "dark"):
		b.ColorScheme = "light"
	case bg.luminance() < 0.35:
		b.ColorScheme = "dark"
	default:
		b.ColorScheme = "light"
	}

	// Text colours: the body's, then the most used other one.
	var textPrimary rgb
	if r.Body != nil {
		if c, ok := col(r.Body.Color); ok {
			textPrimary = c
			b.Colors.TextPrimary = ptr(c.hex())
		}
	}
	for _, t := range r.Texts {
		c, ok := col(t.Value)
		if !ok || contrast(c, bg) < 1.5 {
			continue
		}
		if b.Colors.TextPrimary == nil {
			textPrimary = c
			b.Colors.TextPrimary = ptr(c.hex())
			continue
		}
		if c.dist(textPrimary) > 12 {
			b.Colors.TextSecondary = ptr(c.hex())
			break
		}
	}
	if len(r.Links) > 0 {
		if c, ok := col(r.Links[0].Value); ok {
			b.Colors.Link = ptr(c.hex())
		}
	}

	// Buttons: filled ones grouped by colour, weighted by area, colour and
	// names; the outlined or "secondary" one is the secondary.
	primary, secondary := pickButtons(r.Buttons, bg)
	if primary != nil {
		b.Components.ButtonPrimary = buttonOf(primary, bg, false)
		b.Colors.Primary = ptr(b.Components.ButtonPrimary.Background)
	}
	if secondary != nil {
		b.Components.ButtonSecondary = buttonOf(secondary, bg, true)
		if c, ok := col(secondary.Background); ok && c.dist(bg) > 20 {
			b.Colors.Secondary = ptr(c.hex())
		} else if c, ok := col(secondary.BorderColor); ok {
			b.Colors.Secondary = ptr(c.hex())
		}
	}
	// Saturated colours of links and headings fill what buttons left.
	var brand []rgb
	for _, s := range []*string{b.Colors.Primary, b.Colors.Secondary} {
		if s != nil {
			c, _ := parseHex(*s, bg)
			brand = append(brand, c)
		}
	}
	var pool []rgb
	if b.Colors.Link != nil {
		c, _ := parseHex(*b.Colors.Link, bg)
		pool = append(pool, c)
	}
	for _, h := range r.Headings {
		if c, ok := col(h.Color); ok {
			pool = append(pool, c)
		}
	}
	for _, bt := range r.Buttons {
		if c, ok := col(bt.Background); ok {
			pool = append(pool, c)
		}
	}
	for _, c := range pool {
		if c.saturation() < 0.25 || chroma(c) < vivid || slices.ContainsFunc(brand, func(x rgb) bool { return x.dist(c) < 40 }) {
			continue
		}
		switch {
		case b.Colors.Primary == nil:
			b.Colors.Primary = ptr(c.hex())
		case b.Colors.Secondary == nil && len(brand) < 2 && primary == nil:
			b.Colors.Secondary = ptr(c.hex())
		case b.Colors.Accent == nil:
			b.Colors.Accent = ptr(c.hex())
		default:
			continue
		}
		brand = append(brand, c)
	}
	for _, s := range r.Statuses {
		c, ok := col(s.Background)
		if !ok || c.dist(bg) < 20 {
			if c, ok = col(s.TextColor); !ok {
				continue
			}
		}
		target := map[string]**string{"success": &b.Colors.Success, "warning": &b.Colors.Warning, "danger": &b.Colors.Error, "error": &b.Colors.Error}[s.Kind]
		if target != nil && *target == nil {
			*target = ptr(c.hex())
		}
	}

	b.Fonts, b.Typography = typography(r)
	b.Spacing = spacing(r, primary)
	if len(r.Inputs) > 0 {
		b.Components.Input = buttonOf(&r.Inputs[0], bg, true)
		b.Spacing.Padding["input"] = normPadding(r.Inputs[0].Padding)
	}

	if r.Logo != nil && r.Logo.Src != "" {
		b.Logo = ptr(r.Logo.Src)
		b.Images.Logo = b.Logo
	}
	if r.Favicon != "" {
		b.Images.Favicon = ptr(r.Favicon)
	}
	if r.OGImage != "" {
		b.Images.OGImage = ptr(r.OGImage)
	}
	if len(r.Transitions) > 0 {
		b.Animations = &Animations{TransitionDuration: r.Transitions[0].Value}
	}
	if r.ContainerWidth > 0 {
		b.Layout = &Layout{ContainerWidth: strconv.Itoa(int(math.Round(r.ContainerWidth))) + "px"}
	}
	b.Icons = icons(r, bg)
	b.Personality = personality(r, b, bg)
	return b
}

var (
	primaryName   = regexp.MustCompile(`(?i)primary|cta|main|submit|buy|signup|sign-up|get-started|start`)
	secondaryName = regexp.MustCompile(`(?i)secondary|outline|ghost|alt|default|light|tertiary`)
)

// pickButtons chooses the primary and secondary button.
func pickButtons(buttons []Box, bg rgb) (primary, secondary *Box) {
	type group struct {
		first *Box
		score float64
	}
	groups := map[string]*group{}
	var order []string
	for i := range buttons {
		bt := &buttons[i]
		c, ok := parseHex(bt.Background, bg)
		if !ok || c.dist(bg) < 20 || secondaryName.MatchString(bt.Classes) {
			continue
		}
		s := math.Sqrt(max(bt.Area, 1)) * (1 + 2*c.saturation())
		if primaryName.MatchString(bt.Classes) {
			s *= 2
		}
		k := c.hex()
		if groups[k] == nil {
			groups[k] = &group{first: bt}
			order = append(order, k)
		}
		groups[k].score += s
	}
	var best string
	for _, k := range order {
		if best == "" || groups[k].score > groups[best].score {
			best = k
		}
	}
	if best != "" {
		primary = groups[best].first
	}
	// Secondary: one named so, then an outlined one, then the next filled
	// colour.
	for i := range buttons {
		if bt := &buttons[i]; bt != primary && secondaryName.MatchString(bt.Classes) {
			return primary, bt
		}
	}
	for i := range buttons {
		bt := &buttons[i]
		c, ok := parseHex(bt.Background, bg)
		if bt != primary && bt.BorderWidth > 0 && bt.BorderColor != "" && (!ok || c.dist(bg) < 20) {
			return primary, bt
		}
	}
	var next string
	for _, k := range order {
		if k != best && (next == "" || groups[k].score > groups[next].score) {
			next = k
		}
	}
	if next != "" {
		secondary = groups[next].first
	}
	return primary, secondary
}

// buttonOf is a component's style; translucent or missing backgrounds
// become the page's.
func buttonOf(bt *Box, bg rgb, withBorder bool) *Button {
	out := &Button{Background: bg.hex(), TextColor: "#000000", BorderRadius: normRadius(bt.BorderRadius)}
	if c, ok := parseHex(bt.Background, bg); ok {
		out.Background = c.hex()
	}
	if c, ok := parseHex(bt.TextColor, bg); ok {
		out.TextColor = c.hex()
	}
	if withBorder {
		if c, ok := parseHex(bt.BorderColor, bg); ok && bt.BorderWidth > 0 {
			out.BorderColor = ptr(c.hex())
		}
	}
	return out
}

// genericFamilies are CSS generic and system font names, which say
// nothing about a brand.
var genericFamilies = map[string]bool{"serif": true, "sans-serif": true, "monospace": true, "cursive": true, "fantasy": true,
	"system-ui": true, "-apple-system": true, "blinkmacsystemfont": true, "ui-sans-serif": true, "ui-serif": true,
	"ui-monospace": true, "ui-rounded": true, "math": true, "emoji": true, "fangsong": true, "inherit": true, "initial": true,
	"segoe ui": true, "apple color emoji": true, "segoe ui emoji": true,
	"segoe ui symbol": true, "noto color emoji": true}

// firstFamily is the first family of a font-family list that is not a
// generic or system name, else the first one.
func firstFamily(list string) string {
	var first string
	for _, f := range strings.Split(list, ",") {
		f = strings.Trim(strings.TrimSpace(f), `"'`)
		if f == "" {
			continue
		}
		if first == "" {
			first = f
		}
		if !genericFamilies[strings.ToLower(f)] {
			return f
		}
	}
	return first
}

func typography(r *Raw) ([]Font, Typography) {
	var t Typography
	fonts := []Font{}
	seen := map[string]bool{}
	add := func(f string) {
		if f != "" && !seen[strings.ToLower(f)] && len(fonts) < 8 {
			seen[strings.ToLower(f)] = true
			fonts = append(fonts, Font{Family: f})
		}
	}
	size := func(px float64) *string {
		if px <= 0 {
			return nil
		}
		return ptr(strconv.FormatFloat(math.Round(px*10)/10, 'f', -1, 64) + "px")
	}
	ratio := func(tx Text) *float64 {
		if tx.FontSize <= 0 {
			return nil
		}
		v := 1.2 // normal
		if tx.LineHeight > 0 {
			v = math.Round(tx.LineHeight/tx.FontSize*100) / 100
		}
		return &v
	}
	if r.Body != nil {
		if f := firstFamily(r.Body.FontFamily); f != "" {
			t.FontFamilies.Primary = ptr(f)
			add(f)
		}
		t.FontSizes.Body = size(r.Body.FontSize)
		t.LineHeights.Body = ratio(*r.Body)
	}
	for _, h := range r.Headings {
		switch h.Tag {
		case "h1":
			t.FontSizes.H1 = size(h.FontSize)
		case "h2":
			t.FontSizes.H2 = size(h.FontSize)
		case "h3":
			t.FontSizes.H3 = size(h.FontSize)
		}
		if t.FontFamilies.Heading == nil {
			if f := firstFamily(h.FontFamily); f != "" {
				t.FontFamilies.Heading = ptr(f)
				add(f)
			}
			t.LineHeights.Heading = ratio(h)
		}
	}
	if r.Code != nil {
		if f := firstFamily(r.Code.FontFamily); f != "" {
			t.FontFamilies.Code = ptr(f)
			add(f)
		}
	}
	for _, f := range r.Families {
		add(firstFamily(f.Value))
	}
	var weights []int
	for _, w := range r.Weights {
		if n, err := strconv.ParseFloat(w.Value, 64); err == nil && n > 0 {
			weights = append(weights, int(n))
		}
	}
	for _, h := range r.Headings {
		weights = append(weights, int(h.FontWeight))
	}
	regular := 400
	if r.Body != nil && r.Body.FontWeight > 0 {
		regular = int(r.Body.FontWeight)
	}
	t.FontWeights.Regular = &regular
	for _, w := range weights {
		switch {
		case w < 400 && w > 0 && (t.FontWeights.Light == nil || w < *t.FontWeights.Light):
			t.FontWeights.Light = ptr(w)
		case w >= 500 && w < 600 && t.FontWeights.Medium == nil:
			t.FontWeights.Medium = ptr(w)
		case w >= 600 && (t.FontWeights.Bold == nil || w > *t.FontWeights.Bold):
			t.FontWeights.Bold = ptr(w)
		}
	}
	return fonts, t
}

func spacing(r *Raw, primary *Box) Spacing {
	s := Spacing{BaseUnit: 4, BorderRadius: "0px", Padding: map[string]string{}, Margins: map[string]string{}}
	var total, by8, by4 float64
	for _, c := range r.Spacings {
		v, err := strconv.Atoi(c.Value)
		if err != nil || v <= 0 {
			continue
		}
		total += c.Count
		if v%8 == 0 {
			by8 += c.Count
		}
		if v%4 == 0 {
			by4 += c.Count
		}
	}
	switch {
	case total > 0 && by8/total >= 0.6:
		s.BaseUnit = 8
	case total > 0 && by4/total >= 0.6:
		s.BaseUnit = 4
	case len(r.Spacings) > 0:
		// No clear grid: the smallest of the common values.
		least := 0
		for _, c := range r.Spacings[:min(4, len(r.Spacings))] {
			if v, err := strconv.Atoi(c.Value); err == nil && v > 0 && (least == 0 || v < least) {
				least = v
			}
		}
		if least > 0 {
			s.BaseUnit = least
		}
	}
	switch {
	case primary != nil && normRadius(primary.BorderRadius) != "0px":
		s.BorderRadius = normRadius(primary.BorderRadius)
	case len(r.Radii) > 0:
		s.BorderRadius = normRadius(r.Radii[0].Value)
	}
	if primary != nil && primary.Padding != "" {
		s.Padding["button"] = normPadding(primary.Padding)
	}
	return s
}

// normRadius keeps a radius as CSS gives it ("6px", "50%"), "0px" for
// none.
func normRadius(v string) string {
	v = strings.TrimSpace(v)
	if v == "" || v == "0" {
		return "0px"
	}
	if f, err := strconv.ParseFloat(strings.TrimSuffix(v, "px"), 64); err == nil && strings.HasSuffix(v, "px") {
		return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) + "px"
	}
	return v
}

func normPadding(v string) string { return strings.Join(strings.Fields(v), " ") }

func ptr[T any](v T) *T { return &v }
