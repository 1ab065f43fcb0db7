-- The reme index: a mirror of the workspace's markdown notes. It is derived
-- from the files and rebuilt from them whenever this version changes; it is
-- never migrated. Bump user_version with every change to this file.
PRAGMA user_version = 2;

-- One row per indexed note (markdown under daily/ and digest/).
CREATE TABLE notes (
  id                  INTEGER PRIMARY KEY,
  path                TEXT NOT NULL UNIQUE,   -- workspace-relative, POSIX
  dir                 TEXT NOT NULL,          -- parent folder, for the scan cache
  name                TEXT NOT NULL DEFAULT '',
  description         TEXT NOT NULL DEFAULT '',
  date                TEXT,                   -- from the path: daily/<date>/..., NULL if undated
  size                INTEGER NOT NULL,
  mtime               INTEGER NOT NULL,       -- nanoseconds since the epoch
  sha256              TEXT NOT NULL,
  frontmatter         TEXT NOT NULL DEFAULT '{}', -- the whole header as JSON
  frontmatter_error   TEXT,                   -- YAML error: the note is indexed with empty frontmatter
  session_id          TEXT,
  source_conversation TEXT,
  source_resource     TEXT,
  day_index           INTEGER NOT NULL DEFAULT 0, -- daily/<date>.md pages: links only, not searched
  skipped             TEXT                    -- why the note is not indexed (too large); kept so the scan does not retry it
);
CREATE INDEX notes_dir ON notes(dir);
CREATE INDEX notes_date ON notes(date);
CREATE INDEX notes_session_id ON notes(session_id) WHERE session_id IS NOT NULL;
CREATE INDEX notes_source_conversation ON notes(source_conversation) WHERE source_conversation IS NOT NULL;
CREATE INDEX notes_source_resource ON notes(source_resource) WHERE source_resource IS NOT NULL;

-- Links, one row per occurrence: wikilinks and markdown links to workspace
-- files in note bodies, and wikilinks in frontmatter values. Each is
-- resolved as Obsidian resolves it; links whose name a new or removed note
-- has are resolved again by the sync that sees it.
CREATE TABLE links (
  note_id    INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
  target     TEXT NOT NULL,                   -- the file it leads to; if none, the path it names literally
  anchor     TEXT NOT NULL DEFAULT '',
  alias      TEXT NOT NULL DEFAULT '',
  embed      INTEGER NOT NULL DEFAULT 0,
  line       INTEGER NOT NULL,
  written    TEXT NOT NULL,                   -- the target as written (markdown: percent-decoded)
  markdown   INTEGER NOT NULL DEFAULT 0,      -- [text](path) rather than [[path]]
  field      TEXT NOT NULL DEFAULT '',        -- the frontmatter key holding it; '' in the body
  name       TEXT,                            -- lower-case file name it can match, without .md; NULL when it names its file exactly
  status     TEXT NOT NULL,                   -- exact, short, ambiguous or missing
  candidates TEXT NOT NULL DEFAULT ''         -- ambiguous: the matching files, one per line
);
CREATE INDEX links_target ON links(target);
CREATE INDEX links_note ON links(note_id);
CREATE INDEX links_name ON links(name) WHERE name IS NOT NULL;

-- The name each note is found by from a short link ([[note]]): its file
-- name, lower-case, without .md.
CREATE TABLE note_names (
  note_id INTEGER PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
  name    TEXT NOT NULL
);
CREATE INDEX note_names_name ON note_names(name);

-- Tags in ReMe's canonical form (whitespace runs joined with "_",
-- case-folded): memory_tags (at most three), Obsidian's tags: frontmatter
-- and inline #tags. One row per tag and note.
CREATE TABLE tags (
  tag     TEXT NOT NULL,
  note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
  pos     INTEGER NOT NULL,                   -- order of first appearance in the note
  source  TEXT NOT NULL,                      -- where it appeared first: memory_tags, tags or inline
  PRIMARY KEY (tag, note_id)
) WITHOUT ROWID;
CREATE INDEX tags_note ON tags(note_id);

-- Markdown sections (with their heading breadcrumb), at most ~10 KB each.
CREATE TABLE chunks (
  id         INTEGER PRIMARY KEY,               -- also the rowid in chunk_fts
  note_id    INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
  start_line INTEGER NOT NULL,
  end_line   INTEGER NOT NULL,
  text       TEXT NOT NULL
);
CREATE INDEX chunks_note ON chunks(note_id);

-- Full text. Contentless: the text lives in chunks. CJK characters are
-- separated by spaces before indexing so that every character is a token
-- and queries match them as phrases.
CREATE VIRTUAL TABLE chunk_fts USING fts5(
  name, description, body,
  content = '', contentless_delete = 1,
  tokenize = 'porter unicode61 remove_diacritics 2'
);

-- Freshness-check cache: per folder, the size and mtime of the notes held.
CREATE TABLE scan_dirs (
  dir   TEXT PRIMARY KEY,
  files BLOB NOT NULL
) WITHOUT ROWID;
