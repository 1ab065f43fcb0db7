-- The reme index: a mirror of the workspace's markdown notes. It is derived
-- from the files and rebuilt from them whenever this version changes; it is
-- never migrated. Bump user_version with every change to this file.
PRAGMA user_version = 7;

-- One row per indexed note (markdown under daily/, digest/ and memory/, and
-- MEMORY.md).
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
  frontmatter_error   TEXT,                   -- YAML error: the note is indexed with empty frontmatter
  session_id          TEXT,
  source_conversation TEXT,
  source_resource     TEXT,
  day_index           INTEGER NOT NULL DEFAULT 0, -- daily/<date>.md pages: links only, not searched
  kind                TEXT NOT NULL DEFAULT '',   -- card, day_page, digest, entry, profile, memory_index (from the path)
  type                TEXT,                   -- frontmatter type (an entry's user, feedback, project, reference)
  skipped             TEXT                    -- why the note is not indexed (too large); kept so the scan does not retry it
);
CREATE INDEX notes_dir ON notes(dir);
CREATE INDEX notes_date ON notes(date);
CREATE INDEX notes_kind ON notes(kind);
CREATE INDEX notes_session_id ON notes(session_id) WHERE session_id IS NOT NULL;
CREATE INDEX notes_source_conversation ON notes(source_conversation) WHERE source_conversation IS NOT NULL;
CREATE INDEX notes_source_resource ON notes(source_resource) WHERE source_resource IS NOT NULL;

-- Links, one row per occurrence: wikilinks and markdown links to workspace
-- files in note bodies, and wikilinks in frontmatter values. Each is
-- resolved as Obsidian resolves it; links whose name a new or removed note
-- has are resolved again by the sync that sees it. A link to a note holds
-- the note's id rather than its path (a note keeps its id when edited;
-- removing it turns the links to it back into paths), and the target as
-- written only where it differs from the target: most links name their
-- file exactly, and the two paths were most of the table.
CREATE TABLE links (
  note_id    INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
  target_id  INTEGER,                         -- the note it leads to, if it leads to a note
  target     TEXT,                            -- otherwise the file it leads to; if none, the path it names literally
  anchor     TEXT NOT NULL DEFAULT '',
  alias      TEXT NOT NULL DEFAULT '',
  embed      INTEGER NOT NULL DEFAULT 0,
  line       INTEGER NOT NULL,
  written    TEXT,                            -- the target as written (markdown: percent-decoded); NULL when the same as the target
  markdown   INTEGER NOT NULL DEFAULT 0,      -- [text](path) rather than [[path]]
  field      TEXT NOT NULL DEFAULT '',        -- the frontmatter key holding it; '' in the body
  name       TEXT,                            -- lower-case file name it can match, without .md; NULL when it names its file exactly
  status     TEXT NOT NULL,                   -- exact, short, ambiguous or missing
  candidates TEXT NOT NULL DEFAULT ''         -- ambiguous: the matching files, one per line
);
CREATE INDEX links_target_id ON links(target_id) WHERE target_id IS NOT NULL;
CREATE INDEX links_target ON links(target) WHERE target IS NOT NULL;
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
-- Their text is not stored: results are read from the files. The chunks of
-- a note have consecutive ids.
CREATE TABLE chunks (
  id         INTEGER PRIMARY KEY,               -- also the rowid in chunk_fts
  note_id    INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
  start_line INTEGER NOT NULL,
  end_line   INTEGER NOT NULL,
  tokens     INTEGER NOT NULL,                  -- tokens in name, description and body: BM25's length
  text_hash  BLOB NOT NULL                      -- of the text an embedding model is given (chunk_vectors)
);
CREATE INDEX chunks_note ON chunks(note_id);
CREATE INDEX chunks_text_hash ON chunks(text_hash);

-- Full text, contentless. reme tokenizes in Go (lower case, no accents,
-- Porter stems, no English stop words, CJK as overlapping character pairs)
-- and stores the tokens separated by spaces, which the ascii tokenizer
-- splits on.
CREATE VIRTUAL TABLE chunk_fts USING fts5(
  name, description, body,
  content = '', contentless_delete = 1,
  tokenize = 'ascii'
);

-- BM25's collection figures: the number of chunks and of their tokens;
-- generation counts the index's write transactions, so that a search can
-- tell whether another process changed the index while it read; next_term
-- is the id the next frequent word gets (ids are never reused).
CREATE TABLE fts_stats (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  chunks     INTEGER NOT NULL,
  tokens     INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  next_term  INTEGER NOT NULL
);
INSERT INTO fts_stats(id, chunks, tokens, generation, next_term) VALUES (1, 0, 0, 0, 1);

-- Words found in many chunks: their exact document frequency and the
-- chunks where they weigh most (uvarint chunk id, one byte of weight,
-- best first), so that a search never visits every chunk holding them.
CREATE TABLE frequent_terms (
  term TEXT PRIMARY KEY,
  id   INTEGER NOT NULL,
  df   INTEGER NOT NULL,
  top  BLOB NOT NULL
) WITHOUT ROWID;

-- The frequent words each chunk holds (their ids, ascending, as uvarint
-- gaps or, when shorter, a bitmap after a zero byte; ids of words no longer
-- frequent are ignored), so that removing a chunk lowers their counts
-- without asking FTS5, which keeps no text.
CREATE TABLE chunk_terms (
  id    INTEGER PRIMARY KEY,                    -- the chunk's id
  terms BLOB NOT NULL
);

-- Embeddings of chunks (with a model configured), under the model's name
-- and the hash of the text embedded, so that a rebuild or a moved note
-- reuses them: each dimension of the unit vector as a signed byte, and
-- apart, in small rows that a first pass reads quickly, their signs (the
-- closest by Hamming distance are then compared by cosine). Model output
-- rather than a function of the files: a rebuild keeps them, and vectors no
-- chunk uses are dropped after each embedding pass.
CREATE TABLE chunk_vectors (
  model     TEXT NOT NULL,
  text_hash BLOB NOT NULL,
  vec       BLOB NOT NULL,
  PRIMARY KEY (model, text_hash)
) WITHOUT ROWID;
CREATE TABLE chunk_vector_signs (
  model     TEXT NOT NULL,
  text_hash BLOB NOT NULL,
  bits      BLOB NOT NULL,
  PRIMARY KEY (model, text_hash)
) WITHOUT ROWID;

-- Freshness-check cache: per folder, the size and mtime of the notes held.
CREATE TABLE scan_dirs (
  dir   TEXT PRIMARY KEY,
  files BLOB NOT NULL                           -- kept in the row: no overflow pages
);
