package billing

import "time"

// Credit costs of the API (seed contract and reference server).
const (
	// CostBase is the cost of one scraped document (scrape, crawl page,
	// batch item, parse).
	CostBase = 1
	// CostJSON is the total cost of a document with the json format (or
	// changeTracking's json mode): it replaces CostBase.
	CostJSON = 5
	// CostDeterministicJSON and CostDeterministicJSONReused replace CostBase
	// for the deterministicJson format, when its script is generated and
	// when it is reused.
	CostDeterministicJSON       = 10
	CostDeterministicJSONReused = 3
	// CostLLMFormat is added for each question, query, highlights, audio
	// and video format.
	CostLLMFormat = 4
	// CostRedactPII is added for redactPII, plus again per PDF page after
	// the first.
	CostRedactPII = 4
	// CostZeroDataRetention is the default zero data retention surcharge
	// (team-configurable), not added under lockdown.
	CostZeroDataRetention = 1
	// CostLockdownHit and CostLockdownMiss are the whole cost of a lockdown
	// scrape answered from the cache and of one that missed.
	CostLockdownHit  = 5
	CostLockdownMiss = 1
	// CostThreatScan is added per URL scanned by threat protection.
	CostThreatScan = 2
	// CostMap is the cost of one map call.
	CostMap = 1
)

// Minimum credits a team must have before work starts (the credit
// pre-check). Crawl, batch scrape and search need MinimumForCount.
const (
	MinScrape   = 1
	MinMap      = 1
	MinParse    = 1
	MinMonitor  = 1
	MinInteract = 2
	MinAgent    = 20
	MinExtract  = 20
)

// MinimumForCount is the pre-check minimum of crawl (its limit), batch
// scrape (its number of URLs) and search (its limit): n, at least 1.
func MinimumForCount(n int) int64 {
	return max(int64(n), 1)
}

// ScrapeCostInput is what the cost of one scraped document depends on.
// Enhanced or stealth proxy, summary, branding, product, screenshot, links,
// html and actions cost nothing extra.
type ScrapeCostInput struct {
	// JSON is set for the json format or changeTracking with the json mode.
	JSON bool
	// DeterministicJSON is set for the deterministicJson format;
	// DeterministicJSONReused when its script was reused.
	DeterministicJSON       bool
	DeterministicJSONReused bool
	// Questions counts question and (deprecated) query formats; Highlights
	// counts highlights formats.
	Questions  int
	Highlights int
	// Audio and Video are set for those formats.
	Audio bool
	Video bool
	// PDFPages is the number of PDF pages converted to markdown by the pdf
	// parser. Leave it 0 for a non-PDF and for a PDF returned base64 with
	// parsers [] (a flat CostBase).
	PDFPages int
	// RedactPII is set when redactPII is on.
	RedactPII bool
	// ZDRSurcharge is the team's zero data retention surcharge when the
	// scrape runs with zero data retention (normally CostZeroDataRetention),
	// else 0.
	ZDRSurcharge int64
	// ThreatScans counts URLs scanned by threat protection.
	ThreatScans int
	// Lockdown is set for a lockdown scrape; CacheHit says whether the cache
	// answered it.
	Lockdown bool
	CacheHit bool
}

// ScrapeCost returns the credits one successfully scraped document costs
// (a failed scrape costs nothing and is not charged). A lockdown scrape
// costs a flat CostLockdownHit or CostLockdownMiss: nothing is fetched or
// generated, the cached document is returned as it was made. Otherwise the
// base (CostBase, or CostJSON / CostDeterministicJSON* which replace it) is
// increased by 1 per PDF page after the first (so a PDF costs 1 per page),
// CostLLMFormat per question, query, highlights, audio and video format,
// CostRedactPII (plus CostRedactPII per PDF page after the first), the zero
// data retention surcharge and CostThreatScan per scanned URL.
func ScrapeCost(in ScrapeCostInput) int64 {
	if in.Lockdown {
		if in.CacheHit {
			return CostLockdownHit
		}
		return CostLockdownMiss
	}
	cost := int64(CostBase)
	switch {
	case in.DeterministicJSON && in.DeterministicJSONReused:
		cost = CostDeterministicJSONReused
	case in.DeterministicJSON:
		cost = CostDeterministicJSON
	case in.JSON:
		cost = CostJSON
	}
	extraPages := int64(max(in.PDFPages-1, 0))
	cost += extraPages
	llm := int64(max(in.Questions, 0) + max(in.Highlights, 0))
	if in.Audio {
		llm++
	}
	if in.Video {
		llm++
	}
	cost += llm * CostLLMFormat
	if in.RedactPII {
		cost += CostRedactPII * (1 + extraPages)
	}
	cost += max(in.ZDRSurcharge, 0)
	cost += int64(max(in.ThreatScans, 0)) * CostThreatScan
	return cost
}

// SearchCost returns the credits of one search source's results: 2 per 10
// results, rounded up (10 per 10 with zero data retention). Sum it over the
// sources, and add the scrape cost of each scraped result.
func SearchCost(results int, zeroDataRetention bool) int64 {
	per10 := int64(2)
	if zeroDataRetention {
		per10 = 10
	}
	return ceilDiv(int64(max(results, 0)), 10) * per10
}

// ExtractCost returns the credits of an extract that used tokens LLM tokens:
// one per 15, rounded up.
func ExtractCost(tokens int64) int64 {
	return ceilDiv(max(tokens, 0), 15)
}

// InteractCost returns the credits of an interact (browser) session that
// lasted d: 120 per hour (at least 2), or 420 per hour (at least 7) when
// prompt-driven; rounded up to a whole credit.
func InteractCost(d time.Duration, promptDriven bool) int64 {
	perHour, minimum := int64(120), int64(2)
	if promptDriven {
		perHour, minimum = 420, 7
	}
	ms := max(d.Milliseconds(), 0)
	return max(ceilDiv(ms*perHour, time.Hour.Milliseconds()), minimum)
}

func ceilDiv(a, b int64) int64 {
	return (a + b - 1) / b
}
