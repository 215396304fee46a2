DROP TABLE monitor_pages;
DROP TABLE monitor_checks;
DROP TABLE monitors;
