-- The last scrape of a URL per team and change-tracking tag ('' for none),
-- which the next changeTracking scrape compares against. Saving replaces it.
CREATE TABLE scrape_snapshots (
    team_id    uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    url        text        NOT NULL,
    tag        text        NOT NULL,
    markdown   text        NOT NULL,
    json       bytea,
    scraped_at timestamptz NOT NULL,
    PRIMARY KEY (team_id, url, tag)
);
