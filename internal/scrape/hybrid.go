package scrape

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Engine choice for fetched pages: a page whose HTML is not the page a
// reader sees until its scripts have run goes to the browser. That covers
// client-rendered apps (an empty root element) and hybrid pages, served
// with their frame and some text but completed by script: a placeholder
// where content will be ("Loading prices...", a spinner, a skeleton,
// aria-busy), an empty element a script mounts into, framework state whose
// text is not in the HTML, content kept in <template> elements, a
// <noscript> asking for JavaScript, or inline scripts far outweighing the
// text. A static page with ordinary scripts (analytics, a theme toggle, a
// cookie banner) shows none of these and stays on plain HTTP.
//
// renderReason reads the parsed tree in one walk; the state blobs, when
// there are any, are scanned up to maxBlobScan bytes and their text looked
// up in the page's, so the cost stays in microseconds for ordinary pages.

// Limits of the detection.
const (
	// maxPlaceholderText is the longest text taken for a loading
	// placeholder ("Loading prices…").
	maxPlaceholderText = 48
	// maxBlobScan bounds the bytes of state blobs scanned for text.
	maxBlobScan = 32 << 10
	// maxBlobSamples bounds the texts of state blobs looked up in the page.
	maxBlobSamples = 12
	// minBlobMissing is how many of a blob's texts must be absent from the
	// page (and at least half of those looked up) for it to hold content
	// the HTML lacks.
	minBlobMissing = 3
	// minTemplateText is the text held in <template> elements that, when
	// it is at least the content's text, marks content waiting to be
	// stamped.
	minTemplateText = 200
	// scriptHeavy: inline script code at least this many times the visible
	// text (and at least minHeavyScript bytes) marks a page its scripts
	// build, when the text is short (below maxHeavyText).
	scriptHeavy    = 25
	minHeavyScript = 32 << 10
	maxHeavyText   = 1500
	// minStaticText is the visible text below which a page with scripts is
	// taken for client-rendered.
	minStaticText = 40
	// minNoscriptContent is the text (non-space bytes) of a <noscript>
	// that holds the page for clients without scripts, not a message
	// (htmlclean expands such a fallback on a page without text).
	minNoscriptContent = 200
	// The content (the page's <main>, else what is outside its header,
	// navigation, footer and asides) is taken for incomplete when it holds
	// a loading text and less than maxContentLoading, or another sign of
	// script-filled content (a spinner, an empty mount point, a <noscript>
	// asking for JavaScript, framework state holding text the HTML lacks)
	// and less than maxContentThin. Spinners, loaders and "enable
	// JavaScript" notices sit on a third of the WCXB pages, complete as
	// served: in their chrome, or beside content that is there.
	maxContentLoading = 2000
	maxContentThin    = 500
	// maxVisibleCount: the visible text is counted up to this, past every
	// threshold it is compared with.
	maxVisibleCount = 16 << 10
)

// Signs of script-filled content, as bits of pageScan.inMain and inOpen.
const (
	signLoading  = 1 << iota // a loading text
	signBusy                 // aria-busy, a spinner, loader or skeleton
	signMount                // an empty element named for scripts to mount into
	signNoscript             // a <noscript> asking for JavaScript
)

// pageScan holds what one walk of a page found.
type pageScan struct {
	visible   int // non-space bytes of visible body text (to maxVisibleCount)
	mainText  int // of it, inside <main> (or role=main)
	openText  int // of it, outside the page's chrome
	mains     int
	code      int // bytes of inline script code (not JSON data)
	scripts   int
	templates int // non-space bytes of text in <template> elements
	noscript  int // non-space bytes of the long <noscript> elements
	// inMain and inOpen are the signs seen inside <main> and outside the
	// chrome; placeholder is the first loading text.
	inMain, inOpen int
	placeholder    string
	appRoot        bool     // an empty root element of a framework
	blobs          []string // state blobs (framework data scripts)
	inBody         bool
	hidden         *html.Node // the hidden element the walk is in, or nil
	main, chrome   *html.Node // the main and chrome elements it is in
}

// renderReason reports why the fetched page needs rendering, as a phrase
// for the warning given when it cannot be ("a loading placeholder"), or ""
// when its HTML is already the page.
func renderReason(root *html.Node) string {
	var s pageScan
	s.walk(root)
	content, signs := s.openText, s.inOpen
	if s.mains == 1 {
		content, signs = s.mainText, s.inMain
	}
	switch {
	case s.scripts > 0 && s.visible+s.noscript < minStaticText:
		return "almost no text without its scripts"
	case s.appRoot && content+s.noscript < maxContentLoading:
		return "an empty root element for its scripts to fill"
	case signs&signLoading != 0 && content < maxContentLoading:
		return "a loading placeholder (\"" + s.placeholder + "\")"
	case content >= maxContentThin:
	case signs&signBusy != 0:
		return "a loading placeholder (aria-busy or a spinner or skeleton)"
	case signs&signMount != 0:
		return "an empty element for its scripts to fill"
	case signs&signNoscript != 0:
		return "a <noscript> message asking for JavaScript"
	}
	switch {
	case s.code >= minHeavyScript && s.visible < maxHeavyText && s.code >= scriptHeavy*s.visible:
		return "far more script than text"
	case s.templates >= minTemplateText && s.templates >= content && content < maxContentLoading:
		return "content kept in <template> elements"
	case content < maxContentThin && len(s.blobs) > 0 && blobTextMissing(root, s.blobs):
		return "framework state holding text the HTML lacks"
	}
	return ""
}

// walk scans the tree iteratively (pages nest deeply), entering and
// leaving each node once.
func (s *pageScan) walk(root *html.Node) {
	n := root
	for {
		if s.enter(n) && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for {
			s.leave(n)
			if n == root {
				return
			}
			if n.NextSibling != nil {
				n = n.NextSibling
				break
			}
			n = n.Parent
		}
	}
}

// sign records a sign of script-filled content where the walk is.
func (s *pageScan) sign(bit int) {
	if s.main != nil {
		s.inMain |= bit
	}
	if s.chrome == nil {
		s.inOpen |= bit
	}
}

// enter looks at n and reports whether to walk into it.
func (s *pageScan) enter(n *html.Node) bool {
	switch n.Type {
	case html.TextNode:
		if s.inBody && s.hidden == nil {
			s.text(n)
		}
		return false
	case html.ElementNode:
	default:
		return true
	}
	switch n.DataAtom {
	case atom.Body:
		s.inBody = true
	case atom.Script:
		s.script(n)
		return false
	case atom.Style, atom.Svg, atom.Math:
		return false
	case atom.Template:
		_, dsd := attr(n, "shadowrootmode")
		_, dsdOld := attr(n, "shadowroot")
		if !dsd && !dsdOld && s.hidden == nil {
			s.templates += templateText(n)
		}
		return false
	case atom.Noscript:
		if s.hidden != nil {
			return false
		}
		// A long <noscript> is the page for clients without scripts
		// (forum software serves its posts so), which the cleaning
		// reads; a short one asking for JavaScript is a sign.
		if t := noscriptText(n); t >= minNoscriptContent {
			s.noscript += t
		} else if asksForJavaScript(n) {
			s.sign(signNoscript)
		}
		return false
	case atom.Main:
		s.enterMain(n)
	case atom.Header, atom.Nav, atom.Footer, atom.Aside:
		if s.chrome == nil {
			s.chrome = n
		}
	}
	if s.hidden != nil {
		return true
	}
	if len(n.Attr) == 0 {
		if s.inBody && n.Data == "app-root" && isEmpty(n) {
			s.appRoot = true
		}
		return true
	}
	if s.chrome != nil && s.main == nil {
		// In the page's chrome only what hides text matters: signs there
		// do not count.
		if hiddenQuick(n) {
			s.hidden = n
		}
		return true
	}
	a := readAttrs(n)
	if a.isHidden() {
		s.hidden = n
		return true
	}
	if a.isPreloader() {
		return false // a whole-page overlay the page's scripts lift
	}
	switch strings.ToLower(a.role) {
	case "main":
		s.enterMain(n)
	case "banner", "navigation", "contentinfo", "complementary":
		if s.chrome == nil {
			s.chrome = n
		}
	}
	if !s.inBody || n.DataAtom == atom.Body || n.DataAtom == atom.Html {
		return true
	}
	switch {
	case a.isAppRoot(n) && isEmpty(n):
		s.appRoot = true
	case a.isBusy(n) && !inControl(n) && looksLoading(n):
		s.sign(signBusy)
	case a.isMountPoint(n) && isEmpty(n):
		s.sign(signMount)
	}
	return true
}

// enterMain notes a main element.
func (s *pageScan) enterMain(n *html.Node) {
	if s.main == nil {
		s.main = n
		s.mains++
	}
}

// text counts a visible text node (its bytes from the first that is not
// white space: close enough for the thresholds) and looks for a
// placeholder in it.
func (s *pageScan) text(n *html.Node) {
	d := n.Data
	i := 0
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\t' || d[i] == '\r' || d[i] == '\f') {
		i++
	}
	if i == len(d) {
		return
	}
	if s.visible < maxVisibleCount {
		k := len(d) - i
		s.visible += k
		if s.main != nil {
			s.mainText += k
		}
		if s.chrome == nil {
			s.openText += k
		}
	}
	if len(d)-i > 2*maxPlaceholderText || len(phrasesByInitial[initial(d[i])]) == 0 {
		return
	}
	if t := strings.TrimSpace(d[i:]); isLoadingText(t) && !inControl(n) {
		if s.placeholder == "" {
			s.placeholder = collapse(t)
		}
		s.sign(signLoading)
	}
}

// leave ends the hidden, main and chrome parts when the walk leaves their
// elements.
func (s *pageScan) leave(n *html.Node) {
	switch n {
	case s.hidden:
		s.hidden = nil
	case s.main:
		s.main = nil
	case s.chrome:
		s.chrome = nil
	}
}

// script counts an inline or external script and keeps framework state.
func (s *pageScan) script(n *html.Node) {
	s.scripts++
	if _, ok := attr(n, "src"); ok || n.FirstChild == nil {
		return
	}
	body := n.FirstChild.Data
	typ, _ := attr(n, "type")
	typ = strings.ToLower(strings.TrimSpace(typ))
	id, _ := attr(n, "id")
	switch {
	case typ == "application/ld+json" || typ == "importmap" || typ == "speculationrules":
		return // metadata, not content
	case isStateBlob(id, typ, body):
		s.blobs = append(s.blobs, body)
	case typ == "" || strings.Contains(typ, "javascript") || typ == "module":
		s.code += len(body)
	}
}

// isStateID reports the id of a JSON script holding a page's data.
func isStateID(id string) bool {
	id = strings.ToLower(id)
	for _, w := range []string{"data", "state", "props", "initial", "preload", "hydrat"} {
		if strings.Contains(id, w) {
			return true
		}
	}
	return false
}

// stateMarkers name the globals and script ids under which frameworks
// serialise a page's data for the client.
var stateMarkers = []string{"__NEXT_DATA__", "__NUXT__", "__NUXT_DATA__", "__INITIAL_STATE__",
	"__PRELOADED_STATE__", "__APOLLO_STATE__", "__next_f", "__remixContext", "__INITIAL_DATA__",
	"__SERVER_DATA__", "__APP_STATE__", "__INITIAL_PROPS__", "__staticRouterHydrationData"}

// isStateBlob reports a script holding a page's data: a JSON script whose
// id says data or state ("pricing-data", "initial-state"), or one of the
// frameworks' state globals and ids. (JSON scripts without such an id
// are mostly settings, whose texts, a cookie notice's say, are not meant
// for the page.)
func isStateBlob(id, typ, body string) bool {
	if typ == "application/json" && isStateID(id) {
		return true
	}
	head := body
	if len(head) > 256 {
		head = head[:256]
	}
	for _, m := range stateMarkers {
		if id == m || strings.Contains(head, m) {
			return true
		}
	}
	return false
}

// blobTextMissing reports whether the state blobs hold text the page's
// HTML does not: of the prose strings sampled from them, at least
// minBlobMissing and half are not in the body's text.
func blobTextMissing(root *html.Node, blobs []string) bool {
	var samples []string
	budget := maxBlobScan
	for _, b := range blobs {
		if budget <= 0 || len(samples) >= maxBlobSamples {
			break
		}
		if len(b) > budget {
			b = b[:budget]
		}
		budget -= len(b)
		samples = proseRuns(b, samples, maxBlobSamples)
	}
	if len(samples) < minBlobMissing {
		return false
	}
	text := bodyText(root)
	missing := 0
	for _, p := range samples {
		if !strings.Contains(text, p) {
			missing++
		}
	}
	return missing >= minBlobMissing && 2*missing >= len(samples)
}

// proseRuns appends to out, up to limit, the runs of prose in s: stretches
// of letters, digits, spaces and sentence punctuation between the quotes,
// escapes and brackets of the data around them, of at least five words
// that are mostly plain words (not class lists, paths or code).
func proseRuns(s string, out []string, limit int) []string {
	start := -1
	for i := 0; i <= len(s) && len(out) < limit; {
		size, prose := 1, false
		if i < len(s) {
			if c := s[i]; c < utf8.RuneSelf {
				prose = proseByte[c]
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				prose = isProseRune(r)
			}
		}
		if prose {
			if start < 0 {
				start = i
			}
			i += size
			continue
		}
		if start >= 0 {
			if i-start >= 25 {
				if run := collapse(s[start:i]); isProse(run) {
					out = append(out, run)
				}
			}
			start = -1
		}
		i += size
	}
	return out
}

// proseByte marks the ASCII bytes of prose runs.
var proseByte = func() (t [utf8.RuneSelf]bool) {
	for c := 0; c < utf8.RuneSelf; c++ {
		t[c] = isProseRune(rune(c))
	}
	return t
}()

func isProseRune(r rune) bool {
	switch r {
	case ' ', '.', ',', '!', '?', ';', ':', '\'', '(', ')', '%', '&', '-', '’', '–', '—':
		return true
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isProse reports a run of at least five words, four in five of them
// plain words of letters (with trailing punctuation), over 24 bytes.
func isProse(run string) bool {
	if len(run) < 25 {
		return false
	}
	words := strings.Fields(run)
	if len(words) < 5 {
		return false
	}
	plain := 0
	for _, w := range words {
		w = strings.TrimRight(w, ".,!?;:)’'")
		w = strings.TrimLeft(w, "(")
		ok := w != ""
		for _, r := range w {
			if !unicode.IsLetter(r) && r != '\'' && r != '’' {
				ok = false
				break
			}
		}
		if ok {
			plain++
		}
	}
	return 5*plain >= 4*len(words)
}

// bodyText is the text of the page's body outside scripts, styles and
// templates, hidden or not, each run of white space written as one space.
func bodyText(root *html.Node) string {
	var b strings.Builder
	space := true // no space at the start
	var stack []*html.Node
	for n := root; n != nil || len(stack) > 0; {
		if n == nil {
			n = stack[len(stack)-1].NextSibling
			stack = stack[:len(stack)-1]
			continue
		}
		switch n.Type {
		case html.TextNode:
			d := n.Data
			for i := 0; i < len(d); i++ {
				switch c := d[i]; c {
				case ' ', '\n', '\t', '\r', '\f':
					if !space {
						b.WriteByte(' ')
						space = true
					}
				default:
					b.WriteByte(c)
					space = false
				}
			}
			if !space {
				b.WriteByte(' ')
				space = true
			}
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Template, atom.Noscript, atom.Head:
				n = n.NextSibling
				continue
			}
		}
		if n.FirstChild != nil {
			stack = append(stack, n)
			n = n.FirstChild
			continue
		}
		n = n.NextSibling
	}
	return b.String()
}

// loadingPhrases open the text of a loading placeholder, in the major
// European languages.
var loadingPhrases = []string{"loading", "please wait", "one moment", "fetching", "chargement",
	"veuillez patienter", "cargando", "carregando", "caricamento", "wird geladen", "laden", "lädt",
	"bitte warten", "ładowanie", "wczytywanie", "načítání", "betöltés", "se încarcă", "laddar", "indlæser",
	"laster", "ladataan", "φόρτωση", "загрузка", "завантаження"}

// isLoadingText reports the whole text of a loading placeholder: a
// loading phrase alone, or followed by a few words and an ellipsis
// ("Loading prices...", "Chargement…"). t is trimmed.
func isLoadingText(t string) bool {
	if len(t) > maxPlaceholderText || len(t) < 5 {
		return false
	}
	phrases := phrasesByInitial[initial(t[0])]
	if len(phrases) == 0 {
		return false
	}
	ellipsis := strings.HasSuffix(t, "...") || strings.HasSuffix(t, "…")
	if !ellipsis && len(t) > maxPhraseLen+1 {
		return false
	}
	bare := t
	for {
		switch {
		case strings.HasSuffix(bare, "…"):
			bare = bare[:len(bare)-len("…")]
			continue
		case len(bare) > 0 && (bare[len(bare)-1] == '.' || bare[len(bare)-1] == ' '):
			bare = bare[:len(bare)-1]
			continue
		}
		break
	}
	for _, p := range phrases {
		switch {
		case len(bare) == len(p) && strings.EqualFold(bare, p):
			return true
		case ellipsis && len(bare) > len(p) && strings.EqualFold(bare[:len(p)], p) && !startsLetter(bare[len(p):]):
			return true
		}
	}
	return false
}

// initial folds an ASCII letter to lower case.
func initial(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c | 0x20
	}
	return c
}

// phrasesByInitial holds the loading phrases by their first byte, in
// lower and in upper case.
var phrasesByInitial = func() (t [256][]string) {
	for _, p := range loadingPhrases {
		r, _ := utf8.DecodeRuneInString(p)
		lo, up := string(unicode.ToLower(r)), string(unicode.ToUpper(r))
		t[initial(lo[0])] = append(t[initial(lo[0])], p)
		if up[0] != lo[0] && initial(up[0]) != initial(lo[0]) {
			t[up[0]] = append(t[up[0]], p)
		}
	}
	return t
}()

// looksLoading reports an element whose text is empty or a loading
// phrase: a spinner or skeleton, not content that kept a class.
func looksLoading(n *html.Node) bool {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = nextIn(c, n) {
		if c.Type == html.TextNode {
			if b.Len() > maxPlaceholderText {
				return false
			}
			b.WriteString(c.Data)
		}
	}
	t := collapse(b.String())
	return t == "" || isLoadingText(t)
}

// maxPhraseLen is the length of the longest loading phrase.
const maxPhraseLen = 24

func startsLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

// elemAttrs are the attributes the detection reads, from one pass.
type elemAttrs struct {
	id, class, style, role string
	hidden, busy           bool   // the hidden attribute; aria-busy="true"
	reactClass             bool   // data-react-class
	idT, classT            uint16 // the triggers of id and class
}

func readAttrs(n *html.Node) elemAttrs {
	var e elemAttrs
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch a.Key {
		case "id":
			e.id, e.idT = a.Val, triggers(a.Val)
		case "class":
			e.class, e.classT = a.Val, triggers(a.Val)
		case "style":
			e.style = a.Val
		case "role":
			e.role = a.Val
		case "hidden":
			e.hidden = true
		case "aria-busy":
			e.busy = strings.EqualFold(strings.TrimSpace(a.Val), "true")
		case "data-react-class":
			e.reactClass = true
		}
	}
	return e
}

// isHidden reports an element hidden by attribute, inline style or the
// common utility classes. (React's streamed segments, hidden until moved
// in, are not.)
func (e *elemAttrs) isHidden() bool {
	if e.hidden && !strings.HasPrefix(e.id, "S:") {
		return true
	}
	if e.style != "" && (strings.Contains(e.style, "none") || strings.Contains(e.style, "hidden")) {
		v := strings.ReplaceAll(strings.ToLower(e.style), " ", "")
		if strings.Contains(v, "display:none") || strings.Contains(v, "visibility:hidden") {
			return true
		}
	}
	if e.classT&(tHide|tNone) != 0 {
		for tok := range strings.FieldsSeq(e.class) {
			switch tok {
			case "hidden", "d-none", "is-hidden", "hide", "u-hidden", "display-none":
				return true
			}
		}
	}
	return false
}

// hiddenQuick is elemAttrs.isHidden without the other attributes.
func hiddenQuick(n *html.Node) bool {
	var e elemAttrs
	for _, a := range n.Attr {
		switch a.Key {
		case "id":
			e.id = a.Val
		case "hidden":
			e.hidden = true
		case "style":
			e.style = a.Val
		case "class":
			if strings.Contains(a.Val, "id") || strings.Contains(a.Val, "none") {
				e.class, e.classT = a.Val, tHide|tNone
			}
		}
	}
	return e.isHidden()
}

// isBusy reports an element marked as loading: aria-busy="true", or a
// class word of a spinner, loader, skeleton or shimmer.
func (e *elemAttrs) isBusy(n *html.Node) bool {
	if e.busy {
		return true
	}
	if n.DataAtom == atom.Img || e.classT&(tLoad|tSpin|tSkel|tShim) == 0 {
		return false
	}
	for tok := range strings.FieldsSeq(e.class) {
		for _, w := range classWords(tok) {
			switch w {
			case "spinner", "spin", "loader", "loading", "skeleton", "shimmer":
				return true
			}
		}
	}
	return false
}

// isPreloader reports a page-wide loading overlay, which static pages have
// too: the content is already under it.
func (e *elemAttrs) isPreloader() bool {
	for i, v := range [2]string{e.id, e.class} {
		if [2]uint16{e.idT, e.classT}[i]&tLoad == 0 {
			continue
		}
		for tok := range strings.FieldsSeq(v) {
			ws := classWords(tok)
			for i, w := range ws {
				if w == "preloader" || w == "preload" || (w == "page" || w == "site") && i+1 < len(ws) && (ws[i+1] == "loader" || ws[i+1] == "loading") {
					return true
				}
			}
		}
	}
	return false
}

// appRootIDs are the ids frameworks render into.
var appRootIDs = map[string]bool{"root": true, "app": true, "__next": true, "__nuxt": true, "svelte": true,
	"___gatsby": true, "main-app": true, "application": true, "app-root": true, "react-root": true,
	"spa-root": true, "vue-app": true}

// isAppRoot reports the root element of a client-rendered app: a
// framework's root id or element.
func (e *elemAttrs) isAppRoot(n *html.Node) bool {
	return n.Data == "app-root" || e.id != "" && appRootIDs[strings.ToLower(e.id)]
}

// isMountPoint reports an element scripts render into: a React component
// placeholder, or an id ending in "root", "app" or "mount" that is not a
// portal for overlays or a widget's.
func (e *elemAttrs) isMountPoint(n *html.Node) bool {
	if e.reactClass {
		return true
	}
	id := e.id
	if id == "" {
		return false
	}
	if e.idT&(tRoot|tApp|tMount) == 0 {
		return false
	}
	ws := classWords(id)
	if len(ws) < 2 {
		return false
	}
	switch ws[len(ws)-1] {
	case "root", "app", "mount":
	default:
		return false
	}
	for _, w := range ws[:len(ws)-1] {
		switch w {
		case "modal", "portal", "toast", "tooltip", "popover", "dialog", "overlay", "notification",
			"notifications", "drawer", "snackbar", "announcer", "search", "cookie", "consent", "chat",
			"banner", "ad", "ads", "smart", "fb", "rail", "experience":
			return false
		}
	}
	return true
}

// isEmpty reports an element with no text and no media under it.
func isEmpty(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = nextIn(c, n) {
		switch c.Type {
		case html.TextNode:
			if strings.TrimSpace(c.Data) != "" {
				return false
			}
		case html.ElementNode:
			switch c.DataAtom {
			case atom.Img, atom.Picture, atom.Video, atom.Iframe, atom.Canvas, atom.Svg, atom.Object, atom.Embed:
				return false
			}
		}
	}
	return true
}

// nextIn is the node after c in a pre-order walk of n's subtree, or nil.
func nextIn(c, n *html.Node) *html.Node {
	if c.FirstChild != nil {
		return c.FirstChild
	}
	for c != n {
		if c.NextSibling != nil {
			return c.NextSibling
		}
		c = c.Parent
	}
	return nil
}

// inControl reports text or an element inside a button or form, where
// spinners and "Please wait" belong to a control, not to missing content.
func inControl(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && (p.DataAtom == atom.Button || p.DataAtom == atom.Form) {
			return true
		}
	}
	return false
}

// asksForJavaScript reports a <noscript> whose message asks for JavaScript
// (not one about a comments widget, which only that widget needs).
func asksForJavaScript(n *html.Node) bool {
	t := strings.ToLower(textOf(n))
	if !strings.Contains(t, "javascript") && !strings.Contains(t, "java script") {
		return false
	}
	return !strings.Contains(t, "comment") && !strings.Contains(t, "disqus")
}

// noscriptText is the non-space text of a <noscript>, which the parser
// keeps as raw text (markup included, close enough).
func noscriptText(n *html.Node) int {
	t := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			t += nonSpaceLen(c.Data)
		}
	}
	return t
}

// templateText is the non-space text inside a <template>.
func templateText(n *html.Node) int {
	t := 0
	for c := n.FirstChild; c != nil; c = nextIn(c, n) {
		if c.Type == html.TextNode {
			t += nonSpaceLen(c.Data)
		}
	}
	return t
}

// classWords splits a class or id token into lower-case words at '-',
// '_' and camelCase.
func classWords(tok string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(tok); i++ {
		boundary := i == len(tok) || tok[i] == '-' || tok[i] == '_' ||
			(i > start && tok[i] >= 'A' && tok[i] <= 'Z' && tok[i-1] >= 'a' && tok[i-1] <= 'z')
		if !boundary {
			continue
		}
		if i > start {
			out = append(out, strings.ToLower(tok[start:i]))
		}
		if i < len(tok) && (tok[i] == '-' || tok[i] == '_') {
			start = i + 1
		} else {
			start = i
		}
	}
	return out
}

// Triggers: three-letter pieces of the words the detection looks for in
// class and id names, found in one pass over a name whatever the case of
// the word's first letter ("loader", "isLoading", "Loader" all hold
// "oad"). A name without the piece is not read further.
const (
	tLoad  = 1 << iota // load, loader, loading, preload
	tSpin              // spin, spinner
	tSkel              // skeleton
	tShim              // shimmer
	tHide              // hidden, hide
	tNone              // d-none, display-none
	tRoot              // root
	tApp               // app
	tMount             // mount
)

// triggers returns the trigger bits of a class or id value.
func triggers(v string) uint16 {
	var t uint16
	for i := 0; i+2 < len(v); i++ {
		a, b, c := v[i], v[i+1], v[i+2]
		switch a {
		case 'o':
			switch {
			case b == 'a' && c == 'd':
				t |= tLoad
			case b == 'o' && c == 't':
				t |= tRoot
			case b == 'u' && c == 'n':
				t |= tMount
			case b == 'n' && c == 'e':
				t |= tNone
			}
		case 'p':
			switch {
			case b == 'i' && c == 'n':
				t |= tSpin
			case b == 'p' && (c < 'a' || c > 'z'), b == 'p' && i+2 == len(v)-1:
				t |= tApp
			}
		case 'k':
			if b == 'e' && c == 'l' {
				t |= tSkel
			}
		case 'i':
			if b == 'm' && c == 'm' {
				t |= tShim
			}
			if b == 'd' && (c == 'd' || c == 'e') {
				t |= tHide
			}
		}
	}
	if n := len(v); n >= 2 && v[n-2] == 'p' && v[n-1] == 'p' {
		t |= tApp // "...app" at the end
	}
	return t
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

func nonSpaceLen(s string) int {
	k := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\n', '\t', '\r', '\f':
		default:
			k++
		}
	}
	return k
}

// collapse replaces each run of white space in s by one space and trims it.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
