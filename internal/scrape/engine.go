package scrape

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/htmlclean"
	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/markdown"
	"github.com/firegate/firegate/internal/pagemeta"
	"github.com/firegate/firegate/internal/pause"
	"github.com/firegate/firegate/internal/product"
	"github.com/firegate/firegate/internal/proxypool"
	"github.com/firegate/firegate/internal/threat"
)

// Fetcher fetches one URL over plain HTTP. *fetch.Client implements it.
type Fetcher interface {
	Do(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

// Engine turns validated Options into a Document.
type Engine struct {
	fetcher  Fetcher
	browser  Renderer   // nil: no browser
	media    MediaStore // screenshots and PDFs of the browser
	mediaURL func(id string) string
	profiles ProfileStore // nil: profiles unsupported
	locker   ProfileLocker
	cache    cache.Cache // nil: no cache
	cacheTTL time.Duration
	observe  Observer        // nil: no metrics
	llm      LLM             // nil: the model formats answer SCRAPE_LLM_NOT_CONFIGURED
	changes  ChangeStore     // nil: changeTracking answers SCRAPE_CHANGE_TRACKING_NOT_SUPPORTED
	threat   *threat.Checker // nil: only the request's own threatProtection lists
	proxies  proxypool.Pools // the basic and enhanced pools; empty: direct

	// converter, mediaFiles, streamer and signedURL make the audio and
	// video formats; a nil converter answers SCRAPE_MEDIA_NOT_SUPPORTED.
	converter  MediaConverter
	mediaFiles MediaFiles
	streamer   MediaStreamer
	signedURL  func(id string) string
	mediaTmp   string
	extractor  MediaExtractor // nil: no yt-dlp

	// llmContext is the model's context in tokens.
	llmContext int
	// renderAlways: every fetched HTML page goes to the browser.
	renderAlways bool
	log          *slog.Logger
	now          func() time.Time
}

// Observer receives the engine's measurements; *metrics.Metrics implements
// it.
type Observer interface {
	// ObserveScrape records one scrape: the engine that produced the answer
	// (EngineCache, EngineFetch, EngineBrowser, EnginePDF), its outcome (see
	// Outcome) and how long it took.
	ObserveScrape(engine, outcome string, d time.Duration)
	// ObserveCache records one read of the document cache.
	ObserveCache(hit bool)
}

// Engine names reported to the Observer.
const (
	EngineCache   = "cache"
	EngineFetch   = "fetch"
	EngineBrowser = "browser"
	EnginePDF     = "pdf"
)

// Config holds the engine's collaborators and settings.
type Config struct {
	Fetcher Fetcher
	// Cache stores documents for maxAge, minAge and lockdown; nil disables
	// caching (cache-only requests then always miss).
	Cache cache.Cache
	// CacheTTL is how long an entry is kept; default 7 days.
	CacheTTL time.Duration
	// Browser renders pages that need JavaScript, actions or screenshots;
	// nil (or an unavailable one) keeps every scrape on plain HTTP and
	// rejects browser-only requests.
	Browser Renderer
	// Media stores screenshots and PDFs; MediaURL turns a media id into the
	// URL returned to the user. Both are needed with Browser.
	Media    MediaStore
	MediaURL func(id string) string
	// Profiles keeps browser profiles per team and Locker grants one saving
	// session per profile; both are needed for the profile option.
	Profiles ProfileStore
	Locker   ProfileLocker
	// Metrics, when set, receives each scrape's engine, outcome and time
	// and each cache read; nil records nothing.
	Metrics Observer
	// LLM produces the json, summary, question, highlights and query
	// formats and onlyCleanContent; nil rejects them with
	// SCRAPE_LLM_NOT_CONFIGURED.
	LLM LLM
	// Changes keeps the previous scrape of each URL per team for the
	// changeTracking format; nil rejects it.
	Changes ChangeStore
	// LLMContextTokens is the model's context length; longer pages are cut
	// into parts. Default 32768.
	LLMContextTokens int
	// Threat is the operator's threat blocklist; nil applies only the
	// lists of a request's threatProtection.
	Threat *threat.Checker
	// Converter makes the audio and video formats, stored in MediaFiles
	// and linked by SignedMediaURL (an absolute signed URL of a stored
	// id); Streamer opens their URLs (default: Fetcher, when it can).
	// Without Converter the formats answer SCRAPE_MEDIA_NOT_SUPPORTED.
	// MediaTempDir holds the files being made (default the system's).
	Converter      MediaConverter
	MediaFiles     MediaFiles
	Streamer       MediaStreamer
	SignedMediaURL func(id string) string
	MediaTempDir   string
	// Extractor, when set, asks yt-dlp for the media of pages that name
	// none (video platforms); nil finds those none.
	Extractor MediaExtractor

	// Proxies are the outbound proxy pools of the proxy option; empty
	// pools send every request from the server's own address.
	Proxies proxypool.Pools
	// RenderAlways renders every fetched HTML page in the browser (when
	// there is one), not only those that look incomplete without their
	// scripts (RENDER_POLICY=always).
	RenderAlways bool
	Log          *slog.Logger
}

// New returns an engine.
func New(c Config) *Engine {
	if c.CacheTTL <= 0 {
		c.CacheTTL = 7 * 24 * time.Hour
	}
	if c.Locker == nil {
		c.Profiles = nil
	}
	if c.LLMContextTokens <= 0 {
		c.LLMContextTokens = 32768
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{fetcher: c.Fetcher, browser: c.Browser, media: c.Media, mediaURL: c.MediaURL, profiles: c.Profiles, locker: c.Locker,
		cache: c.Cache, cacheTTL: c.CacheTTL, observe: c.Metrics, llm: c.LLM, changes: c.Changes, threat: c.Threat, llmContext: c.LLMContextTokens, log: c.Log, now: time.Now,
		proxies: c.Proxies, converter: c.Converter, mediaFiles: c.MediaFiles, streamer: c.Streamer, signedURL: c.SignedMediaURL, mediaTmp: c.MediaTempDir,
		extractor: c.Extractor}
	e.renderAlways = c.RenderAlways
	if e.streamer == nil {
		if s, ok := c.Fetcher.(MediaStreamer); ok {
			e.streamer = s
		}
	}
	if e.streamer == nil {
		e.converter = nil // nothing to fetch the media with
	}
	return e
}

// Scrape runs one scrape. The whole call, waits included, is bounded by
// opts.Timeout; running past it returns an error wrapping ErrTimeout. A
// panic inside it is returned as a *PanicError.
func (e *Engine) Scrape(ctx context.Context, opts Options) (doc *Document, err error) {
	defer e.recoverPanic(ctx, opts.URL, &doc, &err)
	if err := checkSupported(&opts, e.browserOK(), e.profiles != nil, e.llm != nil); err != nil {
		return nil, err
	}
	if err := e.checkMedia(&opts); err != nil {
		return nil, err
	}
	if opts.HasFormat(FormatChangeTracking) && e.changes == nil {
		return nil, unsupported(ErrChangeTrackingNotSupported, "formats.changeTracking",
			"Change tracking needs the durable store, which this engine was not given")
	}
	if err := e.checkThreat(&opts); err != nil {
		return nil, err
	}
	var plan *llmPlan
	if e.llm != nil {
		var err error
		if plan, opts, err = planLLM(&opts); err != nil {
			return nil, err
		}
	}
	changeJSON, err := planChangeJSON(&opts)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	doc, engine, err := e.scrapeWithLLM(ctx, opts, plan)
	if err == nil {
		err = e.checkFinalURL(&opts, doc)
	}
	var current json.RawMessage // changeTracking's json mode: the page's object now
	if err == nil && changeJSON != nil {
		jctx, cancel := changeJSONDeadline(ctx, &opts, start)
		current, err = e.extractChangeJSON(jctx, changeJSON, doc)
		cancel()
		if err == nil {
			doc.Metadata.CreditsUsed += changeJSONCredits(&opts)
		}
	}
	if err == nil {
		doc.Metadata.CreditsUsed += threatCredits(&opts)
		e.trackChanges(ctx, &opts, doc, current)
	}
	if e.observe != nil {
		e.observe.ObserveScrape(engine, Outcome(err), time.Since(start))
	}
	return doc, err
}

// scrapeWithLLM scrapes (plan's base options) and then runs the model
// formats on the document, all within opts.Timeout. The cache holds the
// document before the model formats, shared with plain scrapes.
func (e *Engine) scrapeWithLLM(ctx context.Context, opts Options, plan *llmPlan) (*Document, string, error) {
	if plan == nil && !e.modelRedacts(&opts) {
		return e.scrape(ctx, opts)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	doc, engine, err := e.scrape(ctx, opts)
	if err != nil {
		return nil, engine, err
	}
	// Names of people and places go before the model formats read the
	// markdown.
	if err := e.redactByModel(ctx, &opts, doc); err != nil {
		return nil, engine, err
	}
	if plan == nil {
		return doc, engine, nil
	}
	if err := e.runLLM(ctx, plan, doc); err != nil {
		return nil, engine, err
	}
	return doc, engine, nil
}

// scrape is Scrape after the feature check; it also returns the engine
// that answered (or failed).
func (e *Engine) scrape(ctx context.Context, opts Options) (*Document, string, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	cacheOnly := opts.Lockdown || opts.MinAge != nil
	// A cached screenshot is a link to stored media, which a zero data
	// retention caller gets inline instead: it takes a fresh render unless
	// it asked for the cache only.
	zdrMedia := opts.ZeroDataRetention && opts.HasFormat(FormatScreenshot) && !cacheOnly
	// Change tracking compares with the page as it is now: a cached copy
	// would report "same" until it expires.
	tracking := opts.HasFormat(FormatChangeTracking) && !cacheOnly
	// Audio and video links are made for each request (see media.go).
	avMedia := wantsMedia(&opts)
	readCache := e.cache != nil && len(opts.Actions) == 0 && opts.Profile == nil && !zdrMedia && !tracking && !avMedia && (cacheOnly || opts.MaxAge > 0)
	writeCache := e.cache != nil && opts.StoreInCache && !opts.ZeroDataRetention && opts.Profile == nil && !avMedia
	var key string
	if readCache || writeCache {
		key = cacheKey(&opts)
	}
	if readCache {
		doc, err := e.fromCache(ctx, key, &opts)
		if e.observe != nil {
			e.observe.ObserveCache(err == nil)
		}
		if err == nil {
			return doc, EngineCache, nil
		}
		if !errors.Is(err, cache.ErrMiss) {
			return nil, EngineCache, err
		}
	}
	if cacheOnly {
		if opts.Lockdown {
			return nil, EngineCache, ErrLockdownCacheMiss
		}
		return nil, EngineCache, ErrNoCachedData
	}

	engine := EngineFetch
	doc, err := e.fresh(ctx, &opts, &engine)
	if err != nil {
		return nil, engine, err
	}
	if readCache {
		doc.Metadata.CacheState = "miss"
	}
	if writeCache && doc.Metadata.StatusCode < 500 {
		e.store(ctx, key, doc)
	}
	return doc, engine, nil
}

// Outcome names the result of a scrape for metrics: "success", or the kind
// of failure ("timeout", "dns", "tls", "site", "blocked", "unsupported",
// "action", "cache_miss", "canceled", "error").
func Outcome(err error) string {
	switch {
	case err == nil:
		return "success"
	case errors.Is(err, ErrTimeout), errors.Is(err, ErrPDFInsufficientTime), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, ErrDNSResolution):
		return "dns"
	case errors.Is(err, ErrSSL):
		return "tls"
	case errors.Is(err, ErrBlockedTarget), errors.Is(err, ErrUnsafeDomain):
		return "blocked"
	case errors.Is(err, ErrSite):
		return "site"
	case errors.Is(err, ErrUnsupportedFile), errors.Is(err, ErrPDFTooLarge), errors.Is(err, ErrFileTooLarge), errors.Is(err, ErrMediaTooLarge):
		return "unsupported"
	case errors.Is(err, ErrAction):
		return "action"
	case errors.Is(err, ErrNoCachedData), errors.Is(err, ErrLockdownCacheMiss):
		return "cache_miss"
	case errors.Is(err, context.Canceled):
		return "canceled"
	default:
		return "error"
	}
}

// freshOnce is one attempt of fresh through rt's proxy: it fetches and
// renders the page, in the browser when the request needs one (or prefers
// one and there is one), else over plain HTTP, moving to the browser when
// the fetched page turns out to be client-rendered. It sets *engine to the
// engine that answered (fetch, browser or pdf) and rt.resp to the answer
// the document was made of.
func (e *Engine) freshOnce(ctx context.Context, opts *Options, engine *string, rt *route) (*Document, error) {
	start := time.Now()
	if needsBrowser(opts) || (prefersBrowser(opts) && e.browserOK()) {
		*engine = EngineBrowser
		return e.freshInBrowser(ctx, opts, start, rt)
	}
	hops := e.newHopGuard(opts)
	resp, err := e.fetcher.Do(ctx, fetch.Request{
		CheckHop:       hops.check,
		URL:            opts.URL,
		Headers:        opts.Headers,
		Mobile:         opts.Mobile,
		AcceptLanguage: fetch.AcceptLanguage(opts.Location.Languages),
		SkipTLSVerify:  opts.SkipTLSVerification,
		Proxy:          rt.Proxy,
		Chrome:         rt.Tier == proxypool.Enhanced, // Chromium's TLS, HTTP/2 and headers
	})
	if err != nil {
		if herr := hops.err(); herr != nil {
			return nil, herr
		}
		return nil, classifyFetchError(ctx, opts.URL, err)
	}
	rt.resp = resp
	if e.observe != nil && classifyContent(resp) == contentPDF {
		*engine = EnginePDF
	}
	if opts.WaitFor > 0 {
		if err := pause.For(ctx, opts.WaitFor); err != nil {
			return nil, &errcode.Failure{Kind: ErrTimeout, Msg: fmt.Sprintf("waitFor of %v did not fit in the timeout.", opts.WaitFor), Cause: err}
		}
	}
	doc, err := e.render(ctx, opts, resp, true)
	var need *renderNeeded
	if errors.As(err, &need) {
		doc, err = e.renderNeeded(ctx, opts, resp, need, engine, start, rt)
	}
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w after %v", ErrTimeout, time.Since(start).Round(time.Millisecond))
	}
	return doc, nil
}

// freshInBrowser renders the page in the browser.
func (e *Engine) freshInBrowser(ctx context.Context, opts *Options, start time.Time, rt *route) (*Document, error) {
	resp, res, err := e.renderInBrowser(ctx, opts, rt)
	if err != nil {
		return nil, err
	}
	rt.resp = resp
	brand := takeBranding(opts, res)
	doc, err := e.render(ctx, opts, resp, false)
	if err != nil {
		return nil, err
	}
	brand.attach(doc)
	if err := e.attachBrowserOutputs(ctx, opts, res, doc); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w after %v", ErrTimeout, time.Since(start).Round(time.Millisecond))
	}
	return doc, nil
}

// renderNeeded tells fresh that the fetched page is complete only in a
// browser, and why.
type renderNeeded struct{ reason string }

func (r *renderNeeded) Error() string { return "scrape: page needs rendering: " + r.reason }

// renderNeeded renders in the browser a fetched page that needs it. When
// the render fails while there is time left, the page is built from the
// fetched HTML with a warning saying so. (Without a browser, render gave
// the page from its HTML with that warning already.)
func (e *Engine) renderNeeded(ctx context.Context, opts *Options, resp *fetch.Response, need *renderNeeded, engine *string, start time.Time, rt *route) (*Document, error) {
	*engine = EngineBrowser
	doc, err := e.freshInBrowser(ctx, opts, start, rt)
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, browser.ErrProxy) {
		// (A proxy that failed is tried again through another.)
		return doc, err
	}
	e.log.WarnContext(ctx, "render failed, using the fetched html", "url", logsafe.URL(opts.URL), "reason", need.reason, "error", err)
	*engine = EngineFetch
	rt.resp = resp
	if doc, err = e.render(ctx, opts, resp, false); err != nil {
		return nil, err
	}
	addWarning(doc, incompleteWarning(need.reason, "the browser could not render it"))
	return doc, nil
}

// incompleteWarning tells the user that the page, which looks incomplete
// without its scripts (why), was not rendered (because).
func incompleteWarning(why, because string) string {
	return "This page looks incomplete without JavaScript (" + why + "), and " + because +
		"; the HTML as served was used, which may lack content the page's scripts add."
}

// render builds the document from a fetched response. With detectJS, an
// HTML page that is complete only once its scripts have run returns a
// *renderNeeded.
func (e *Engine) render(ctx context.Context, opts *Options, resp *fetch.Response, detectJS bool) (*Document, error) {
	doc := &Document{Metadata: Metadata{
		SourceURL:   opts.URL,
		URL:         resp.URL,
		StatusCode:  resp.StatusCode,
		ContentType: contentTypeHeader(resp),
		ScrapeID:    newID(),
		ProxyUsed:   "basic",
		CreditsUsed: int(billing.ScrapeCost(billing.ScrapeCostInput{})),
	}}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("The target answered HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		doc.Metadata.Error = &msg
	}
	if resp.Truncated {
		w := "The response body exceeded the size limit and was truncated."
		doc.Warning = &w
	}

	if wantsMedia(opts) && isMedia(resp) && !opts.HasFormat(FormatRawBase64) {
		return doc, nil // the media formats take it (media.go)
	}
	if opts.HasFormat(FormatRawBase64) {
		s := base64.StdEncoding.EncodeToString(resp.Body)
		doc.RawBase64 = &s
		return doc, nil
	}

	switch kind := classifyContent(resp); kind {
	case contentHTML:
		if err := e.renderHTML(opts, resp, doc, detectJS); err != nil {
			return nil, err
		}
	case contentText:
		text := resp.Text()
		if opts.HasFormat(FormatMarkdown) {
			doc.Markdown = &text
		}
		if opts.HasFormat(FormatRawHTML) {
			doc.RawHTML = &text
		}
		if opts.HasFormat(FormatHTML) {
			h := "<pre>" + html.EscapeString(text) + "</pre>"
			doc.HTML = &h
		}
	case contentPDF:
		if len(opts.Parsers) == 0 {
			s := base64.StdEncoding.EncodeToString(resp.Body)
			doc.Markdown = &s
			return doc, nil
		}
		if err := e.renderPDF(ctx, opts, resp.Body, doc); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: content type %q cannot be converted; request the rawBase64 format to receive the bytes", ErrUnsupportedFile, doc.Metadata.ContentType)
	}
	if opts.HasFormat(FormatProduct) && doc.Product == nil {
		doc.Product = productJSON(nil) // no HTML page: null
	}
	if opts.RedactPII != nil {
		redactDocument(opts.RedactPII, doc)
	}
	return doc, nil
}

func (e *Engine) renderHTML(opts *Options, resp *fetch.Response, doc *Document, detectJS bool) error {
	raw := resp.Text()
	if opts.HasFormat(FormatRawHTML) {
		doc.RawHTML = &raw
	}
	root, err := parseHTML(raw)
	if err != nil {
		return err
	}
	if detectJS {
		ok := e.browserOK()
		if e.renderAlways && ok {
			return &renderNeeded{reason: "RENDER_POLICY is always"}
		}
		if r := renderReason(root); r != "" {
			if ok {
				return &renderNeeded{reason: r}
			}
			addWarning(doc, incompleteWarning(r, "this server has no browser to render it"))
		}
	}
	var pageURL *url.URL // none for an upload: links stay relative
	if resp.URL != "" {
		if pageURL, err = url.Parse(resp.URL); err != nil {
			return fmt.Errorf("%w: final url %q: %v", ErrSite, resp.URL, err)
		}
	}
	var base *url.URL
	if opts.HasFormat(FormatLinks) || opts.HasFormat(FormatImages) {
		page := pagemeta.Extract(root, pageURL) // one walk for all of it
		base, doc.Metadata.Page = page.Base, page.Metadata
		if opts.HasFormat(FormatLinks) {
			doc.Links = nonNil(page.Links)
		}
		if opts.HasFormat(FormatImages) {
			doc.Images = nonNil(page.Images)
		}
	} else {
		base = pagemeta.BaseURL(root, pageURL)
		doc.Metadata.Page = pagemeta.Metadata(root, base)
	}
	if opts.HasFormat(FormatProduct) {
		doc.Product = productJSON(product.Extract(root, base))
	}
	if f, ok := opts.FormatOf(FormatAttributes); ok {
		sels := make([]pagemeta.AttributeSelector, len(f.Selectors))
		for i, s := range f.Selectors {
			sels[i] = pagemeta.AttributeSelector{Selector: s.Selector, Attribute: s.Attribute}
		}
		vals, err := pagemeta.Attributes(root, sels)
		if err != nil {
			return fmt.Errorf("scrape: attributes: %w", err)
		}
		doc.Attributes = make([]AttributeValue, len(vals))
		for i, v := range vals {
			doc.Attributes[i] = AttributeValue{Selector: v.Selector, Attribute: v.Attribute, Values: v.Values}
		}
	}

	if !opts.HasFormat(FormatHTML) && !opts.HasFormat(FormatMarkdown) {
		return nil
	}
	cleaned, rep, err := htmlclean.CleanReport(root, htmlclean.Options{
		BaseURL:         base,
		OnlyMainContent: opts.OnlyMainContent,
		IncludeTags:     opts.IncludeTags,
		ExcludeTags:     opts.ExcludeTags,
		Reparse:         func() (*html.Node, error) { return parseHTML(raw) },
	})
	if err != nil {
		return fmt.Errorf("scrape: clean: %w", err)
	}
	if w := fallbackWarning(rep.Fallback); w != "" {
		addWarning(doc, w)
	}
	if opts.HasFormat(FormatHTML) {
		var buf bytes.Buffer
		if err := html.Render(&buf, cleaned); err != nil {
			return fmt.Errorf("scrape: render html: %w", err)
		}
		s := buf.String()
		doc.HTML = &s
	}
	if opts.HasFormat(FormatMarkdown) {
		md, err := markdown.Convert(cleaned, markdown.Options{RemoveBase64Images: opts.RemoveBase64Images})
		if err != nil {
			return fmt.Errorf("scrape: markdown: %w", err)
		}
		doc.Markdown = &md
	}
	return nil
}

// fallbackWarning tells the user that onlyMainContent's rules were set
// aside, and what was returned instead ("" when they were not).
func fallbackWarning(f htmlclean.Fallback) string {
	const lead = "The main-content rules (onlyMainContent) kept less than a tenth of this page's text, so "
	switch f {
	case htmlclean.FallbackBlock:
		return lead + "the page's largest block of content was returned instead; set onlyMainContent to false for the whole page."
	case htmlclean.FallbackChrome:
		return lead + "the page without its navigation, header and footer was returned instead; set onlyMainContent to false for the whole page."
	case htmlclean.FallbackPage:
		return lead + "the whole page was returned: its text is all navigation, header or footer."
	}
	return ""
}

type contentKind int

const (
	contentOther contentKind = iota
	contentHTML
	contentText
	contentPDF
)

// classifyContent decides how to treat a body: by declared type, then by
// sniffing, so PDFs served as octet-stream and untyped HTML are recognised.
func classifyContent(resp *fetch.Response) contentKind {
	ct := resp.ContentType
	if bytes.HasPrefix(resp.Body, []byte("%PDF-")) || ct == "application/pdf" {
		return contentPDF
	}
	switch {
	case ct == "text/html" || ct == "application/xhtml+xml":
		return contentHTML
	case ct == "" || ct == "application/octet-stream":
		sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(resp.Body))
		switch {
		case sniffed == "text/html":
			return contentHTML
		case strings.HasPrefix(sniffed, "text/"):
			return contentText
		}
		return contentOther
	case strings.HasPrefix(ct, "text/"), ct == "application/json", ct == "application/xml",
		strings.HasSuffix(ct, "+json"), strings.HasSuffix(ct, "+xml"), ct == "application/javascript":
		return contentText
	}
	return contentOther
}

func contentTypeHeader(resp *fetch.Response) string {
	if h := resp.Header.Get("Content-Type"); h != "" {
		return h
	}
	return resp.ContentType
}

// classifyFetchError maps fetch errors to engine sentinels, with a message
// written for the API user (the cause stays in the chain for the logs).
func classifyFetchError(ctx context.Context, rawURL string, err error) error {
	host := rawURL
	if u, perr := url.Parse(rawURL); perr == nil {
		host = u.Hostname()
	}
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != context.DeadlineExceeded:
		return err
	case errors.Is(err, fetch.ErrTimeout), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &errcode.Failure{Kind: ErrTimeout, Msg: "The page took longer than the timeout to respond.", Cause: err}
	case errors.Is(err, fetch.ErrDNS):
		return &errcode.Failure{Kind: ErrDNSResolution, Msg: "DNS resolution failed for hostname: " + host + ". Check that the URL is correct and the site exists.", Cause: err}
	case errors.Is(err, fetch.ErrTLS):
		return &errcode.Failure{Kind: ErrSSL, Msg: "TLS error while connecting to " + host + ": the certificate could not be verified. Set skipTlsVerification to true to skip verification.", Cause: err}
	case errors.Is(err, fetch.ErrBlocked):
		return &errcode.Failure{Kind: ErrBlockedTarget, Msg: "The URL " + rawURL + " leads to a loopback, private, link-local or metadata address, which this server does not fetch (ALLOW_PRIVATE_TARGETS=true allows it).", Cause: err}
	case errors.Is(err, fetch.ErrProxy):
		return &errcode.Failure{Kind: ErrSite, Msg: "The proxy failed to carry the request to " + host + " (it is skipped for a minute); try again.", Cause: err}
	case errors.Is(err, fetch.ErrTooManyRedirects):
		return &errcode.Failure{Kind: ErrSite, Msg: "The site " + host + " redirected too many times.", Cause: err}
	default:
		return &errcode.Failure{Kind: ErrSite, Msg: "Could not fetch " + rawURL + ": " + rootCause(err), Cause: err}
	}
}

// rootCause is the innermost error text, without package prefixes.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return strings.TrimPrefix(err.Error(), "fetch: ")
		}
		err = next
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// newID mints a scrape id (UUIDv7, time ordered).
func newID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// PanicError is a panic inside the engine, recovered and returned as the
// scrape's error. Callers run the engine on goroutines of their own
// (search's and monitors' fan-outs, batch and crawl workers) where a
// panic would end the whole server, every team's work with it; a page or
// file that finds a bug in a parser fails its own scrape instead. The
// stack goes to the log, not into the error.
type PanicError struct{ Value any }

func (e *PanicError) Error() string { return fmt.Sprintf("scrape: internal error: %v", e.Value) }

// recoverPanic, deferred by the engine's entry points, turns a panic into
// a *PanicError in *err (and a nil *doc) and logs it with its stack.
func (e *Engine) recoverPanic(ctx context.Context, url string, doc **Document, err *error) {
	p := recover()
	if p == nil {
		return
	}
	if e.log != nil {
		e.log.ErrorContext(ctx, "scrape panicked", "url", logsafe.URL(url), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
	*doc, *err = nil, &PanicError{Value: p}
}
