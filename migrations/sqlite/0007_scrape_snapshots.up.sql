-- The last scrape of a URL per team and change-tracking tag ('' for none),
-- which the next changeTracking scrape compares against. Saving replaces it.
CREATE TABLE scrape_snapshots (
    team_id    TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    url        TEXT NOT NULL,
    tag        TEXT NOT NULL,
    markdown   TEXT NOT NULL,
    json       BLOB,
    scraped_at TEXT NOT NULL,
    PRIMARY KEY (team_id, url, tag)
) STRICT;
