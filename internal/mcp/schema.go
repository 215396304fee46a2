package mcp

// The tools' input schemas (JSON Schema 2020-12 objects). Their member
// names, types, enums and bounds are those of firecrawl-mcp's tools, so
// that prompts and agents written for it send the same arguments here; the
// API validates what is sent (the schemas only guide the model).

type schema = map[string]any

func object(props schema, required ...string) schema {
	s := schema{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// strict is object without members beyond props.
func strict(props schema, required ...string) schema {
	s := object(props, required...)
	s["additionalProperties"] = false
	return s
}

func describe(s schema, text string) schema {
	s["description"] = text
	return s
}

func str() schema                   { return schema{"type": "string"} }
func num() schema                   { return schema{"type": "number"} }
func boolean() schema               { return schema{"type": "boolean"} }
func anyObject() schema             { return schema{"type": "object"} }
func list(items schema) schema      { return schema{"type": "array", "items": items} }
func strList() schema               { return list(str()) }
func enum(values ...string) schema  { return schema{"type": "string", "enum": values} }
func uri() schema                   { return schema{"type": "string", "format": "uri"} }
func minLen(s schema, n int) schema { s["minLength"] = n; return s }
func maxLen(s schema, n int) schema { s["maxLength"] = n; return s }

func integer(lo, hi int) schema {
	s := schema{"type": "integer", "minimum": lo}
	if hi > 0 {
		s["maximum"] = hi
	}
	return s
}

func items(s schema, lo, hi int) schema {
	if lo > 0 {
		s["minItems"] = lo
	}
	if hi > 0 {
		s["maxItems"] = hi
	}
	return s
}

// formatNames are the format strings of firecrawl-mcp's scrape tools.
var formatNames = []string{"markdown", "html", "rawHtml", "screenshot", "links", "summary",
	"changeTracking", "branding", "json", "query", "audio"}

// actionTypes are its action types.
var actionTypes = []string{"wait", "screenshot", "scroll", "scrape", "click", "write", "press",
	"executeJavascript", "generatePDF"}

// scrapeProps are the scrape options, as firecrawl_scrape takes them and
// as the scrapeOptions of search, crawl, batch scrape and interact.
func scrapeProps() schema {
	return schema{
		"formats": describe(list(enum(formatNames...)),
			`What to return; default ["markdown"]. "json" takes jsonOptions, "query" takes queryOptions, "screenshot" may take screenshotOptions.`),
		"jsonOptions": describe(strict(schema{"prompt": str(), "schema": anyObject()}),
			"For the json format: a prompt and/or a JSON Schema the answer must match."),
		"queryOptions": strict(schema{"prompt": maxLen(str(), 10000), "mode": enum("directQuote", "freeform")}, "prompt"),
		"screenshotOptions": strict(schema{"fullPage": boolean(), "quality": num(),
			"viewport": strict(schema{"width": num(), "height": num()}, "width", "height")}),
		"parsers":    list(enum("pdf")),
		"pdfOptions": strict(schema{"maxPages": integer(1, 10000)}),
		"onlyMainContent": describe(boolean(),
			"Only the page's main content, without navigation, headers and footers (default true)."),
		"redactPII":   boolean(),
		"includeTags": strList(),
		"excludeTags": strList(),
		"waitFor":     describe(num(), "Milliseconds to wait after the page loads."),
		"actions": list(object(schema{"type": enum(actionTypes...), "selector": str(), "milliseconds": num(),
			"text": str(), "key": str(), "direction": enum("up", "down"), "script": str(), "fullPage": boolean()}, "type")),
		"mobile":              boolean(),
		"skipTlsVerification": boolean(),
		"removeBase64Images":  boolean(),
		"location":            strict(schema{"country": str(), "languages": strList()}),
		"storeInCache":        boolean(),
		"zeroDataRetention":   boolean(),
		"maxAge":              describe(num(), "Accept a cached copy at most this many milliseconds old; 0 fetches the page now."),
		"lockdown":            boolean(),
		"proxy":               enum("basic", "stealth", "enhanced", "auto"),
		"profile":             strict(schema{"name": str(), "saveChanges": boolean()}, "name"),
	}
}

// catalogCall is one call of the operator's tool catalog.
func catalogCall() schema {
	return object(schema{"provider": minLen(str(), 1), "capability": minLen(str(), 1),
		"version": maxLen(minLen(str(), 1), 128), "options": anyObject()}, "provider", "capability")
}

func scrapeSchema() schema {
	p := scrapeProps()
	p["url"] = describe(uri(), "The page to scrape (or alexandria instead).")
	p["timeout"] = describe(schema{"type": "integer", "exclusiveMinimum": 0}, "Milliseconds the scrape may take.")
	p["requestId"] = describe(schema{"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"},
		"Idempotency key of an alexandria call; one is made when omitted.")
	p["alexandria"] = describe(schema{"anyOf": []any{catalogCall(), items(list(catalogCall()), 1, 10)}},
		"Call tools of the server's catalog instead of scraping a URL: one {provider, capability, options} or 1 to 10 of them. Only timeout and requestId go with it.")
	p["toolDetail"] = enum("compact", "summary", "full")
	p["domainTools"] = describe(boolean(), "Add the catalog's tools for the page's domain (teams with catalog access).")
	return strict(p)
}

func searchSchema() schema {
	domain := maxLen(minLen(str(), 1), 253)
	source := enum("web", "images", "news", "alexandria", "exchange")
	so := scrapeProps()
	return strict(schema{
		"query":       describe(minLen(str(), 1), "What to search for; operators such as site:host, quoted phrases and -term work."),
		"limit":       integer(1, 100),
		"tbs":         describe(str(), "Time filter: qdr:h, qdr:d, qdr:w, qdr:m, qdr:y."),
		"filter":      str(),
		"location":    str(),
		"highlights":  boolean(),
		"toolDetail":  enum("compact", "summary", "full"),
		"domainTools": boolean(),
		"includeDomains": describe(list(domain),
			"Only results on these hosts (not with excludeDomains)."),
		"excludeDomains": list(domain),
		"sources": describe(list(schema{"anyOf": []any{source, strict(schema{"type": source}, "type")}}),
			`Default ["web","alexandria"]: web results and the catalog's matching tools (for teams with catalog access; others get the web results and a warning).`),
		"categories":    list(enum("research", "pdf", "developer", "github")),
		"enterprise":    list(enum("default", "anon", "zdr")),
		"scrapeOptions": describe(strict(so), "Scrape each web and news result with these options (costs the scrapes' credits)."),
	}, "query")
}

func mapSchema() schema {
	return strict(schema{
		"url":                   uri(),
		"search":                describe(str(), "Order the URLs by relevance to this text."),
		"sitemap":               enum("include", "skip", "only"),
		"includeSubdomains":     boolean(),
		"limit":                 num(),
		"ignoreQueryParameters": boolean(),
	}, "url")
}

func crawlSchema() schema {
	return strict(schema{
		"url":                    str(),
		"prompt":                 describe(str(), "Say in words which pages to crawl (needs the server's language model)."),
		"excludePaths":           strList(),
		"includePaths":           strList(),
		"maxDiscoveryDepth":      num(),
		"sitemap":                enum("skip", "include", "only"),
		"limit":                  num(),
		"allowExternalLinks":     boolean(),
		"allowSubdomains":        boolean(),
		"crawlEntireDomain":      boolean(),
		"delay":                  num(),
		"maxConcurrency":         num(),
		"webhook":                str(),
		"webhookHeaders":         schema{"type": "object", "additionalProperties": str()},
		"deduplicateSimilarURLs": boolean(),
		"ignoreQueryParameters":  boolean(),
		"scrapeOptions":          strict(scrapeProps()),
	}, "url")
}

func batchSchema() schema {
	return strict(schema{
		"urls":    describe(items(strList(), 1, 0), "The pages to scrape."),
		"options": describe(strict(scrapeProps()), "Scrape options applied to every page."),
	}, "urls")
}

func idSchema(what string) schema {
	return strict(schema{"id": describe(str(), what)}, "id")
}

func extractSchema() schema {
	return strict(schema{
		"urls":               describe(strList(), "Pages to extract from; a trailing /* takes the site's pages."),
		"prompt":             str(),
		"schema":             describe(anyObject(), "JSON Schema of the answer."),
		"allowExternalLinks": boolean(),
		"enableWebSearch":    boolean(),
		"includeSubdomains":  boolean(),
	}, "urls")
}

func agentSchema() schema {
	return strict(schema{
		"prompt":                maxLen(minLen(str(), 1), 10000),
		"urls":                  list(uri()),
		"schema":                anyObject(),
		"effort":                enum("low", "medium", "high"),
		"maxCredits":            schema{"type": "integer", "exclusiveMinimum": 0},
		"strictConstrainToURLs": boolean(),
		"threadId":              schema{"type": "string", "format": "uuid"},
		"mode":                  enum("extract", "chat"),
		"exchange":              anyObject(),
	}, "prompt")
}

func interactSchema() schema {
	return strict(schema{
		"scrapeId":      describe(minLen(str(), 1), "The scrapeId (metadata.scrapeId) of an earlier firecrawl_scrape; or url."),
		"url":           describe(uri(), "Scrape this page first and act on it; or scrapeId."),
		"prompt":        describe(minLen(str(), 1), "What to do on the page, in words (needs the server's language model); or code."),
		"code":          minLen(str(), 1),
		"language":      enum("bash", "python", "node"),
		"timeout":       schema{"type": "number", "minimum": 1, "maximum": 300},
		"scrapeOptions": strict(scrapeProps()),
	})
}

func findToolsSchema() schema {
	sel := func() schema { return items(list(minLen(str(), 1)), 1, 50) }
	return strict(schema{
		"query":        maxLen(minLen(str(), 1), 2000),
		"urls":         items(list(schema{"type": "string", "pattern": "^https?://"}), 1, 100),
		"providers":    sel(),
		"categories":   sel(),
		"groups":       sel(),
		"capabilities": sel(),
		"level":        enum("categories", "providers", "groups", "tools"),
		"expand":       list(enum("options", "response", "examples")),
		"limit":        integer(1, 100),
		"offset":       integer(0, 0),
	})
}

func creditUsageSchema() schema {
	return strict(schema{"view": enum("current", "historical"), "byApiKey": boolean()})
}

func monitorCreateSchema() schema {
	return strict(schema{
		"body":           describe(anyObject(), "A full POST /v2/monitor body; or the simple members below."),
		"page":           str(),
		"pages":          strList(),
		"queries":        strList(),
		"searchWindow":   enum("5m", "15m", "1h", "6h", "24h", "7d"),
		"maxResults":     integer(1, 50),
		"includeDomains": strList(),
		"excludeDomains": strList(),
		"goal":           describe(str(), "What change matters, in words."),
		"name":           str(),
		"scheduleText":   describe(str(), `When to check, e.g. "every 30 minutes" (the default).`),
		"timezone":       str(),
		"email":          str(),
		"includeDiffs":   boolean(),
		"webhookUrl":     str(),
	})
}

func pageSchema(props schema, required ...string) schema {
	props["limit"] = schema{"type": "integer", "exclusiveMinimum": 0}
	props["offset"] = integer(0, 0)
	return strict(props, required...)
}

func feedbackSchema() schema {
	rating := enum("good", "bad", "partial")
	code := maxLen(minLen(schema{"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"}, 1), 80)
	return strict(schema{
		"endpoint":         enum("search", "scrape", "parse", "map", "crawl", "batch", "extract", "agent"),
		"jobId":            describe(schema{"type": "string", "format": "uuid"}, "The id of the scrape (metadata.scrapeId), search, map or job."),
		"rating":           rating,
		"issues":           items(list(code), 0, 20),
		"tags":             items(list(code), 0, 20),
		"note":             maxLen(str(), 4000),
		"valuableSources":  items(list(object(schema{"url": uri(), "reason": maxLen(str(), 1000)}, "url")), 0, 50),
		"missingContent":   items(list(object(schema{"topic": maxLen(minLen(str(), 1), 200), "description": maxLen(str(), 2000)}, "topic")), 0, 50),
		"querySuggestions": maxLen(str(), 2000),
		"url":              uri(),
		"pageNumbers":      items(list(schema{"type": "integer", "exclusiveMinimum": 0}), 0, 100),
		"metadata":         anyObject(),
	}, "endpoint", "rating")
}

func searchFeedbackSchema() schema {
	return strict(schema{
		"searchId":         schema{"type": "string", "format": "uuid"},
		"rating":           enum("good", "bad", "partial"),
		"valuableSources":  items(list(object(schema{"url": uri(), "reason": maxLen(str(), 1000)}, "url")), 0, 50),
		"missingContent":   items(list(object(schema{"topic": maxLen(minLen(str(), 1), 200), "description": maxLen(str(), 2000)}, "topic")), 0, 20),
		"querySuggestions": maxLen(str(), 2000),
	}, "searchId", "rating")
}
