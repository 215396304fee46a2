package mcp

import (
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cleaned is a copy of args without the empty members models tend to send
// for options they do not mean (null, "", [], {}), as firecrawl-mcp drops
// them; the API then applies its defaults.
func cleaned(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		switch t := v.(type) {
		case nil:
			continue
		case string:
			if strings.TrimSpace(t) == "" {
				continue
			}
		case []any:
			if len(t) == 0 {
				continue
			}
		case map[string]any:
			if len(t) == 0 {
				continue
			}
		}
		out[k] = v
	}
	return out
}

// scrapeBody is the POST /v2/scrape body of firecrawl_scrape's arguments.
func scrapeBody(args map[string]any) (map[string]any, *sdk.CallToolResult) {
	return scrapeOptions(args, "")
}

// scrapeOptions makes firecrawl-mcp's scrape options API scrape options:
// format names become format objects where options go with them (json
// takes jsonOptions, query queryOptions, screenshot screenshotOptions) and
// the pdf parser takes pdfOptions. Everything else is the API's to check;
// prefix names the member in messages ("scrapeOptions.").
func scrapeOptions(args map[string]any, prefix string) (map[string]any, *sdk.CallToolResult) {
	out := cleaned(args)
	side := map[string]map[string]any{}
	for _, k := range []string{"jsonOptions", "queryOptions", "screenshotOptions", "pdfOptions"} {
		v, ok := out[k]
		if !ok {
			continue
		}
		m, isObj := v.(map[string]any)
		if !isObj {
			return nil, errorResult(prefix+k+": expected an object", nil)
		}
		side[k] = m
		delete(out, k)
	}
	if f, ok := out["formats"].([]any); ok {
		formats := make([]any, len(f))
		for i, v := range f {
			formats[i] = v
			name, _ := v.(string)
			var opts map[string]any
			switch name {
			case "json":
				opts = side["jsonOptions"]
			case "query":
				opts = side["queryOptions"]
			case "screenshot":
				opts = side["screenshotOptions"]
				if opts == nil {
					continue
				}
			default:
				continue
			}
			obj := map[string]any{"type": name}
			for k, o := range opts {
				obj[k] = o
			}
			formats[i] = obj
		}
		out["formats"] = formats
	}
	if p, ok := out["parsers"].([]any); ok && side["pdfOptions"] != nil {
		parsers := make([]any, len(p))
		for i, v := range p {
			parsers[i] = v
			if v == "pdf" {
				obj := map[string]any{"type": "pdf"}
				for k, o := range side["pdfOptions"] {
					obj[k] = o
				}
				parsers[i] = obj
			}
		}
		out["parsers"] = parsers
	}
	return out, nil
}
