-- The URLs that crawls with changeTracking found, per team, change-tracking
-- tag ('' for none) and crawl scope (the normalized start URL). The next
-- such crawl of the same scope revisits the remembered URLs its links and
-- sitemap did not lead to (visibility hidden), so that pages gone since are
-- reported as removed. A removed page is forgotten.
CREATE TABLE crawl_memory (
    team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    tag     TEXT NOT NULL,
    scope   TEXT NOT NULL,
    url     TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (team_id, tag, scope, url)
) STRICT;

CREATE INDEX crawl_memory_recent_idx ON crawl_memory (team_id, tag, scope, seen_at DESC);
