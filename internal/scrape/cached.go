package scrape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/cache"
)

// cacheKey identifies a request's result: the normalized URL and every
// option that changes the document. Options that only decide whether and
// how long the cache is used (timeout, maxAge, minAge, storeInCache,
// lockdown, zeroDataRetention) and bookkeeping fields are left out.
func cacheKey(o *Options) string {
	k := *o
	k.URL = normalizeURL(o.URL)
	k.Timeout, k.MaxAge, k.MinAge = 0, 0, nil
	k.StoreInCache, k.Lockdown, k.ZeroDataRetention = false, false, false
	k.Origin, k.Integration, k.AuditMetadata = "", "", nil
	b, err := json.Marshal(k)
	if err != nil { // cannot happen for these types; never share a key then
		return cache.Key(fmt.Sprintf("unkeyable %p", o))
	}
	return cache.Key(string(b))
}

// normalizeURL lower-cases scheme and host, drops default ports and the
// fragment, so trivially different spellings share cache entries.
func normalizeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// fromCache returns a usable cached document, or an error wrapping
// cache.ErrMiss.
func (e *Engine) fromCache(ctx context.Context, key string, o *Options) (*Document, error) {
	entry, err := e.cache.Get(ctx, key)
	if err != nil {
		if !errors.Is(err, cache.ErrMiss) {
			e.log.WarnContext(ctx, "cache read failed", "err", err)
		}
		return nil, cache.ErrMiss
	}
	minAge := time.Duration(0)
	if o.MinAge != nil {
		minAge = max(*o.MinAge, cache.AnyAge)
	}
	if !cache.Usable(entry, o.MaxAge, minAge, e.now()) {
		return nil, cache.ErrMiss
	}
	var doc Document
	if err := json.Unmarshal(entry.Value, &doc); err != nil {
		e.log.WarnContext(ctx, "cache entry unreadable", "err", err)
		return nil, cache.ErrMiss
	}
	doc.Metadata.ScrapeID = newID()
	doc.Metadata.SourceURL = o.URL
	doc.Metadata.CacheState = "hit"
	doc.Metadata.CreditsUsed = int(billing.ScrapeCost(billing.ScrapeCostInput{Lockdown: o.Lockdown, CacheHit: true}))
	doc.Metadata.CachedAt = entry.CreatedAt.UTC().Format(time.RFC3339Nano)
	return &doc, nil
}

// store writes doc to the cache; failures are logged, never returned.
func (e *Engine) store(ctx context.Context, key string, doc *Document) {
	b, err := json.Marshal(doc)
	if err != nil {
		e.log.WarnContext(ctx, "cache encode failed", "err", err)
		return
	}
	if err := e.cache.Set(ctx, key, cache.Entry{Value: b, CreatedAt: e.now()}, e.cacheTTL); err != nil {
		e.log.WarnContext(ctx, "cache write failed", "err", err)
	}
}
