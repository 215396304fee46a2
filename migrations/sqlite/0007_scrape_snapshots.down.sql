DROP TABLE scrape_snapshots;
