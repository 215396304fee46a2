package limits

// Rate limit classes: the route groups that have their own per-minute
// counters.
const (
	ClassScrape          = "scrape"           // POST /scrape, /batch/scrape items, /parse
	ClassMap             = "map"              // POST /map
	ClassSearch          = "search"           // POST /search
	ClassCrawl           = "crawl"            // POST /crawl
	ClassAgent           = "agent"            // POST /agent and /extract
	ClassInteractCreate  = "interact-create"  // creating an interact session
	ClassInteractExecute = "interact-execute" // executing in an interact session
	ClassStatus          = "status"           // every status and read route
)

// BaseRate returns the base per-minute rate limit of class (the reference
// server's plan-independent base), 0 for an unknown class.
func BaseRate(class string) int {
	switch class {
	case ClassScrape, ClassMap, ClassSearch, ClassInteractExecute:
		return 10
	case ClassCrawl, ClassAgent, ClassInteractCreate:
		return 2
	case ClassStatus:
		return 500
	}
	return 0
}

// RatePerMinute returns a team's per-minute limit for class: the base rate
// times the team's multiplier. A multiplier <= 0 means unlimited (0, which
// Allow treats as no limit).
func RatePerMinute(class string, multiplier int) int {
	if multiplier <= 0 {
		return 0
	}
	return BaseRate(class) * multiplier
}
