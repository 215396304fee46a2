-- What a recorded interact session (recordSession) showed: its pages, each
-- a top-level document of its first page in the order shown, and JPEG
-- snapshots of them, bounded per session by the server. They go with
-- their session.
CREATE TABLE interact_pages (
    session_id uuid        NOT NULL REFERENCES interact_sessions (id) ON DELETE CASCADE,
    page_no    integer     NOT NULL,
    url        text        NOT NULL,
    title      text        NOT NULL DEFAULT '',
    started_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, page_no)
);

CREATE TABLE interact_frames (
    session_id uuid        NOT NULL,
    page_no    integer     NOT NULL,
    seq        integer     NOT NULL,
    taken_at   timestamptz NOT NULL,
    jpeg       bytea       NOT NULL,
    PRIMARY KEY (session_id, page_no, seq),
    FOREIGN KEY (session_id, page_no) REFERENCES interact_pages (session_id, page_no) ON DELETE CASCADE
);
