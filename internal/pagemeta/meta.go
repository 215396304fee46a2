package pagemeta

import (
	"net/url"
	"strings"
)

// reservedKey maps a lower-case meta name to its API metadata key, or "".
func reservedKey(lower string) string {
	switch lower {
	case "description":
		return "description"
	case "keywords":
		return "keywords"
	case "robots":
		return "robots"
	case "og:title":
		return "ogTitle"
	case "og:description":
		return "ogDescription"
	case "og:url":
		return "ogUrl"
	case "og:image":
		return "ogImage"
	case "og:audio":
		return "ogAudio"
	case "og:determiner":
		return "ogDeterminer"
	case "og:locale":
		return "ogLocale"
	case "og:locale:alternate":
		return "ogLocaleAlternate"
	case "og:site_name":
		return "ogSiteName"
	case "og:video":
		return "ogVideo"
	case "dcterms.created":
		return "dcTermsCreated"
	case "dc.date.created":
		return "dcDateCreated"
	case "dc.date":
		return "dcDate"
	case "dcterms.type":
		return "dcTermsType"
	case "dc.type":
		return "dcType"
	case "dcterms.audience":
		return "dcTermsAudience"
	case "dcterms.subject":
		return "dcTermsSubject"
	case "dc.subject":
		return "dcSubject"
	case "dc.description":
		return "dcDescription"
	case "dcterms.keywords":
		return "dcTermsKeywords"
	case "article:modified_time":
		return "modifiedTime"
	case "article:published_time":
		return "publishedTime"
	case "article:tag":
		return "articleTag"
	case "article:section":
		return "articleSection"
	}
	return ""
}

// alwaysArray reports keys whose value is a []string even with one entry.
func alwaysArray(key string) bool { return key == "ogLocaleAlternate" }

// values collects metadata values per key, keeping first-seen order and
// dropping exact duplicates.
type values map[string][]string

func (v values) add(key, val string) {
	for _, have := range v[key] {
		if have == val {
			return
		}
	}
	v[key] = append(v[key], val)
}

func (w *walker) metadata(base *url.URL) map[string]any {
	computed := make(values, 16)
	for _, m := range w.metas {
		for _, k := range m.keys {
			if rk := reservedKey(asciiLower(k)); rk != "" {
				computed.add(rk, m.content)
			}
		}
	}
	if w.title != "" {
		computed.add("title", w.title)
	} else if og := computed["ogTitle"]; len(og) > 0 {
		computed.add("title", og[0])
	}
	if w.lang != "" {
		computed.add("language", w.lang)
	} else if w.contentLanguage != "" {
		computed.add("language", w.contentLanguage)
	}
	if fav := w.favicon(base); fav != "" {
		computed.add("favicon", fav)
	}

	custom := make(values, len(w.metas))
	for _, m := range w.metas {
		for _, k := range m.keys {
			if k == "" {
				continue
			}
			if rk := reservedKey(asciiLower(k)); rk != "" && strings.EqualFold(rk, k) {
				continue // "Description" folds into "description"
			}
			if _, taken := computed[k]; taken {
				continue
			}
			custom.add(k, m.content)
		}
	}

	out := make(map[string]any, len(computed)+len(custom))
	for _, v := range []values{computed, custom} {
		for k, vals := range v {
			if len(vals) == 1 && !alwaysArray(k) {
				out[k] = vals[0]
			} else {
				out[k] = vals
			}
		}
	}
	return out
}

// favicon resolves the preferred icon link.
func (w *walker) favicon(base *url.URL) string {
	best := ""
	for _, ic := range w.icons {
		u, ok := resolveHTTP(base, ic.href)
		if !ok {
			continue
		}
		if !ic.touch {
			return u
		}
		if best == "" {
			best = u
		}
	}
	return best
}

// asciiLower lower-cases ASCII letters, returning s itself when it has
// none to change (the common case: no allocation).
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
