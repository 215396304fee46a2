DROP TABLE crawl_memory;
