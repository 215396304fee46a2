DROP INDEX monitors_deleted_idx;
DROP TABLE monitor_email_recipients;
