DROP TABLE IF EXISTS interact_frames;
DROP TABLE IF EXISTS interact_pages;
