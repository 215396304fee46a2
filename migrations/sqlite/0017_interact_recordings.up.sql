-- What a recorded interact session (recordSession) showed: its pages, each
-- a top-level document of its first page in the order shown, and JPEG
-- snapshots of them, bounded per session by the server. They go with
-- their session.
CREATE TABLE interact_pages (
    session_id TEXT    NOT NULL REFERENCES interact_sessions (id) ON DELETE CASCADE,
    page_no    INTEGER NOT NULL,
    url        TEXT    NOT NULL,
    title      TEXT    NOT NULL DEFAULT '',
    started_at TEXT    NOT NULL,
    PRIMARY KEY (session_id, page_no)
) STRICT;

CREATE TABLE interact_frames (
    session_id TEXT    NOT NULL,
    page_no    INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    taken_at   TEXT    NOT NULL,
    jpeg       BLOB    NOT NULL,
    PRIMARY KEY (session_id, page_no, seq),
    FOREIGN KEY (session_id, page_no) REFERENCES interact_pages (session_id, page_no) ON DELETE CASCADE
) STRICT;
