package scrape

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/urlnorm"
)

// cacheKey identifies a request's result: the normalized URL and every
// option that changes the document. Options that only decide whether and
// how long the cache is used (timeout, maxAge, minAge, storeInCache,
// lockdown, zeroDataRetention) and bookkeeping fields are left out.
func cacheKey(o *Options) string {
	k := *o
	k.URL = urlnorm.String(o.URL)
	k.Timeout, k.MaxAge, k.MinAge = 0, 0, nil
	k.StoreInCache, k.Lockdown, k.ZeroDataRetention = false, false, false
	k.Origin, k.Integration, k.AuditMetadata, k.TeamID = "", "", nil, ""
	b, err := json.Marshal(k)
	if err != nil { // cannot happen for these types; never share a key then
		return cache.Key(fmt.Sprintf("unkeyable %p", o))
	}
	return cache.Key(string(b))
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
	doc, err := decodeCached(entry.Value)
	if err != nil {
		e.log.WarnContext(ctx, "cache entry unreadable", "err", err)
		return nil, cache.ErrMiss
	}
	if o.HasFormat(FormatProduct) && doc.Product == nil {
		doc.Product = productJSON(nil) // a cached null reads back as absent
	}
	doc.Metadata.ScrapeID = newID()
	doc.Metadata.SourceURL = o.URL
	doc.Metadata.CacheState = "hit"
	doc.Metadata.CreditsUsed = int(billing.ScrapeCost(billing.ScrapeCostInput{Lockdown: o.Lockdown, CacheHit: true, RedactPII: o.RedactPII != nil}))
	doc.Metadata.CachedAt = entry.CreatedAt.UTC().Format(time.RFC3339Nano)
	return doc, nil
}

// store writes doc to the cache; failures are logged, never returned.
func (e *Engine) store(ctx context.Context, key string, doc *Document) {
	b, err := encodeCached(doc)
	if err != nil {
		e.log.WarnContext(ctx, "cache encode failed", "err", err)
		return
	}
	if err := e.cache.Set(ctx, key, cache.Entry{Value: b, CreatedAt: e.now()}, e.cacheTTL); err != nil {
		e.log.WarnContext(ctx, "cache write failed", "err", err)
	}
}

// cacheFormat tags the encoding of cached documents, so entries written by
// another encoding read as misses.
const cacheFormat = 1

// encodeCached writes a document as: format byte, the JSON of the document
// without its large text fields, then markdown, html, rawHtml and rawBase64
// as length-prefixed raw bytes (length+1, 0 = absent). Reading the texts
// back costs one copy each instead of a JSON string scan, which is most of
// what a cache hit would otherwise spend.
func encodeCached(d *Document) ([]byte, error) {
	texts := [4]*string{d.Markdown, d.HTML, d.RawHTML, d.RawBase64}
	skel := *d
	skel.Markdown, skel.HTML, skel.RawHTML, skel.RawBase64 = nil, nil, nil, nil
	meta, err := json.Marshal(&skel)
	if err != nil {
		return nil, err
	}
	n := 1 + binary.MaxVarintLen64 + len(meta)
	for _, t := range texts {
		if t != nil {
			n += binary.MaxVarintLen64 + len(*t)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, cacheFormat)
	b = binary.AppendUvarint(b, uint64(len(meta)))
	b = append(b, meta...)
	for _, t := range texts {
		if t == nil {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(*t))+1)
		b = append(b, *t...)
	}
	return b, nil
}

// decodeCached reads what encodeCached wrote.
func decodeCached(b []byte) (*Document, error) {
	if len(b) == 0 || b[0] != cacheFormat {
		return nil, errors.New("scrape: unknown cache entry format")
	}
	b = b[1:]
	next := func() ([]byte, bool, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k)+1 {
			return nil, false, errors.New("scrape: truncated cache entry")
		}
		b = b[k:]
		if n == 0 {
			return nil, false, nil
		}
		v := b[:n-1]
		b = b[n-1:]
		return v, true, nil
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, errors.New("scrape: truncated cache entry")
	}
	var d Document
	if err := json.Unmarshal(b[k:k+int(n)], &d); err != nil {
		return nil, err
	}
	b = b[k+int(n):]
	for _, dst := range []**string{&d.Markdown, &d.HTML, &d.RawHTML, &d.RawBase64} {
		v, ok, err := next()
		if err != nil {
			return nil, err
		}
		if ok {
			s := string(v)
			*dst = &s
		}
	}
	return &d, nil
}
