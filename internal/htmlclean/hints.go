package htmlclean

import (
	"strings"
)

// hint is what an element's class and id say about it.
type hint uint8

const (
	hintNone     hint = iota
	hintNegative      // boilerplate: ads, share, comments, cookie banners, ...
	hintNav           // navigation, menus, breadcrumbs, tables of contents
	hintHeader        // a (site or page) header
)

// isNegativeWord reports class/id words (split on '-', '_' and camelCase) that
// mark boilerplate.
func isNegativeWord(w string) bool {
	switch w {
	case "sidebar", "cookie", "cookies", "consent", "gdpr",
		"share", "sharing", "sharebar", "social", "sharethis", "addthis", "related",
		"recommended", "recommendations", "recirculation", "comment", "comments",
		"commentlist", "disqus", "respond", "ad", "ads", "advert", "adverts",
		"advertisement", "advertising", "adsbygoogle", "adslot", "sponsor", "sponsored",
		"promo", "promotion", "newsletter", "subscribe", "subscription", "signup",
		"popup", "modal", "overlay", "lightbox", "footer", "masthead", "search", "tags",
		"tagcloud", "outbrain", "taboola", "noprint", "editsection", "skip", "toolbar",
		"topbar", "copyright", "legal", "paywall", "trending", "popular", "hatnote", "postprofile", "userinfo", "catlinks", "online",
		"signature", "avatar", "extras", "expand", "minicart", "basket", "bag":
		return true
	}
	return false
}

// isPostWord reports the negative words that, on a forum, mark its posts.
func isPostWord(w string) bool {
	switch w {
	case "comment", "comments", "commentlist", "respond", "disqus":
		return true
	}
	return false
}

// isPosterWord reports the words that, on a forum, mark the poster's
// details beside a post.
func isPosterWord(w string) bool {
	switch w {
	case "author", "authorpane", "userinfo", "poster", "postprofile", "memberinfo", "userdetails", "usercard":
		return true
	}
	return false
}

// isWeakNegativeWord reports class/id words that often mark boilerplate but
// also wrap content in page builders (every block of some is a "widget"):
// they lower a container's score without removing it.
func isWeakNegativeWord(w string) bool {
	switch w {
	case "widget", "widgets", "banner":
		return true
	}
	return false
}

// isNavWord reports words marking navigation.
func isNavWord(w string) bool {
	switch w {
	case "menu", "menus", "breadcrumb", "breadcrumbs", "toc", "pagination", "pager",
		"dropdown", "submenu":
		return true
	}
	return false
}

// isPositiveWord reports words marking content containers.
func isPositiveWord(w string) bool {
	switch w {
	case "article", "content", "main", "post", "entry", "body", "story", "text", "prose",
		"markdown", "blog", "page", "hentry", "articlebody", "documentation":
		return true
	}
	return false
}

// isHiddenToken reports whole class tokens for visually hidden helper text.
func isHiddenToken(w string) bool {
	switch w {
	case "sr-only", "screen-reader-text", "visually-hidden", "visuallyhidden",
		"screenreader-only":
		return true
	}
	return false
}

// strongerHint is the hint that wins of two: negative over navigation over
// header over none.
func strongerHint(h, th hint) hint {
	if th == hintNegative || (th == hintNav && h != hintNegative) || (th == hintHeader && h == hintNone) {
		return th
	}
	return h
}

// tokenInfo is the hint and weight (+25 positive, -25 negative) of one
// class or id token, ws its words (splitWords); page.classInfo combines
// them.
func tokenInfo(tok string, ws []string, pk pageKind) (hint, int) {
	var buf [64]byte
	if len(tok) > len(buf) {
		return hintNone, 0
	}
	low := buf[:0]
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low = append(low, c)
	}
	if isHiddenToken(string(low)) {
		return hintNegative, -25
	}
	if pk.isThread() && strings.Contains(string(low), "signature") {
		// A post's signature, also run together with another word
		// ("postsignature", "signaturecontainer").
		return hintNegative, -25
	}
	if isPosterWords(ws) {
		return hintNegative, -25
	}
	if pk == kindForum && isOPMark(string(low)) {
		// "isOriginalPoster", "op-post": a post by the thread's
		// starter, not a poster card.
		return hintNone, 0
	}
	if isSearchResults(string(low)) {
		// The results of a search are the page's content, not its
		// search box.
		return hintNone, 0
	}
	var neg, weak, nav, hdr, pos bool
	start := 0
	for i := 0; i <= len(tok); i++ {
		boundary := i == len(tok) || tok[i] == '-' || tok[i] == '_' || tok[i] == ':' ||
			(i > start && tok[i] >= 'A' && tok[i] <= 'Z' && tok[i-1] >= 'a' && tok[i-1] <= 'z')
		if !boundary {
			continue
		}
		if i > start {
			w := low[start:i]
			switch {
			case pk == kindForum && isPostWord(string(w)):
				// On a forum the comments are the posts.
				pos = true
			case pk == kindForum && isPosterWord(string(w)):
				// On a forum, the poster's card (rank, post count,
				// join date) beside every post.
				neg = true
			case isNegativeWord(string(w)):
				neg = true
			case isWeakNegativeWord(string(w)):
				weak = true
			case isNavWord(string(w)) || strings.HasPrefix(string(w), "nav"):
				nav = true
			case string(w) == "header":
				hdr = true
			case isPositiveWord(string(w)):
				pos = true
			}
		}
		if i < len(tok) && (tok[i] == '-' || tok[i] == '_' || tok[i] == ':') {
			start = i + 1
		} else {
			start = i
		}
	}
	switch {
	case neg:
		return hintNegative, -25
	case nav:
		return hintNav, -25
	case hdr && !pos:
		return hintHeader, -10
	case pos:
		return hintNone, 25
	case weak:
		return hintNone, -25
	}
	return hintNone, 0
}

// posterWords are the class words, alone or two run together, of a forum
// poster's title, banner, rank and statistics beside each post
// ("userTitle", "message-userBanner", "user_rank", "author_statistics").
var posterWords = map[string]bool{"usertitle": true, "userbanner": true, "userrank": true,
	"memberrank": true, "userstats": true, "authorstatistics": true, "userstatistics": true, "usercontacts": true}

// isPosterWords reports the words of a class token (splitWords) naming a
// part of a forum poster's card.
func isPosterWords(ws []string) bool {
	var buf [64]byte
	for i, w := range ws {
		if posterWords[w] {
			return true
		}
		if i > 0 {
			// Two words run together, without building a string.
			if pair := append(append(buf[:0], ws[i-1]...), w...); posterWords[string(pair)] {
				return true
			}
		}
	}
	return false
}

// isOPMark reports a lower-case class token marking the posts of a
// thread's original poster ("isOriginalPoster", "original-poster").
func isOPMark(tok string) bool {
	i := strings.Index(tok, "original")
	if i < 0 {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(tok[i+len("original"):], "-_"), "poster")
}

// isSearchResults reports a lower-case class token naming search results
// ("search-results", "searchResultList", "search-page-wrapper").
func isSearchResults(tok string) bool {
	i := strings.Index(tok, "search")
	if i < 0 {
		return false
	}
	rest := strings.TrimLeft(tok[i+len("search"):], "-_")
	return strings.HasPrefix(rest, "result") || strings.HasPrefix(rest, "page") || strings.HasPrefix(rest, "listing")
}
