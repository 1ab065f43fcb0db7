package index

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/reme-dev/reme/store"
)

// record is everything the index stores about one note.
type record struct {
	id          int64 // the note's id when it replaces an older version; 0 for a new one
	path, dir   string
	size, mtime int64
	sha         string
	name, desc  string
	date        string
	fmErr       string
	sessionID   string
	sourceConv  string
	sourceRes   string
	dayIndex    bool
	kind, typ   string
	links       []linkRow
	tags        []noteTag
	chunks      []chunkData
	skipReason  string // set when the note is too large to index
}

// chunkData is a chunk ready for the index: its token text for FTS5 and
// its distinct tokens with their weighted frequencies.
type chunkData struct {
	Chunk
	name, desc, body string // FTS5 column text: tokens separated by spaces
	tokens           int    // tokens in all three columns (BM25's document length)
	terms            []termFreq
	textHash         []byte // of embedText, for chunk_vectors
}

// readRecord reads, hashes and parses one note. The stat is taken from the
// open file so that it describes the bytes that were read.
func (ix *Index) readRecord(rel string) (*record, error) {
	f, err := os.Open(ix.ws.Abs(rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotAFile
	}
	r := &record{path: rel, dir: path.Dir(rel), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if fi.Size() > ix.opt.MaxFileBytes {
		r.skipReason = fmt.Sprintf("file_too_large (%d > %d bytes)", fi.Size(), ix.opt.MaxFileBytes)
		return r, nil
	}
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	r.sha = store.Sum(raw)
	r.size = int64(len(raw))
	parseInto(r, raw)
	return r, nil
}

var errNotAFile = fmt.Errorf("not a file")

// parseInto fills the parsed fields of r from the note bytes.
func parseInto(r *record, raw []byte) {
	n := store.ParseNote(r.path, raw)
	fm := n.FM
	if n.FMErr != nil {
		r.fmErr = n.FMErr.Error()
	}
	r.name = fm.String("name")
	r.desc = fm.String("description")
	r.date = store.DateFromPath(r.path)
	r.sessionID = fm.String("session_id")
	r.sourceConv = fm.String("source_conversation")
	r.sourceRes = fm.String("source_resource")
	r.dayIndex = isDayIndexPage(r.path)
	r.kind = store.NoteKind(r.path)
	r.typ = strings.TrimSpace(fm.String("type"))
	for _, l := range store.ParseNoteLinks(n.Body, n.BodyLine) {
		r.links = append(r.links, linkRow{Link: l})
	}
	for _, l := range n.FrontmatterLinks() {
		r.links = append(r.links, linkRow{Link: l.Link, field: l.Key})
	}
	r.tags = noteTags(fm, n.Body)
	if r.dayIndex {
		return // linked, listed, but not searched: its text repeats its cards
	}
	chunks := ChunkMarkdown(n.Body, n.BodyLine, maxChunkBytes)
	if len(chunks) == 0 && (r.name != "" || r.desc != "") {
		// A note with only a header stays findable by its name and description.
		end := n.BodyLine - 1
		if end < 1 {
			end = 1
		}
		chunks = []Chunk{{StartLine: 1, EndLine: end, Text: ""}}
	}
	r.chunks = tokenizeChunks(noteTitle(r.path, r.name), r.desc, chunks)
	for i := range r.chunks {
		r.chunks[i].textHash = textHash(embedText(noteTitle(r.path, r.name), r.desc, r.chunks[i].Text))
	}
}

// noteTitle is what the name column holds: the frontmatter name, else the
// file name.
func noteTitle(p, name string) string {
	if name != "" {
		return name
	}
	return strings.TrimSuffix(p[strings.LastIndexByte(p, '/')+1:], ".md")
}

// Where a note's tag was found first.
const (
	tagFromMemory   = "memory_tags"
	tagFromObsidian = "tags"
	tagFromBody     = "inline"
)

type noteTag struct{ tag, source string }

// noteTags gathers a note's tags: memory_tags (at most three, as ReMe
// keeps them), then Obsidian's tags: frontmatter, then inline #tags; each
// tag once, where it was found first.
func noteTags(fm *store.Frontmatter, body string) []noteTag {
	var out []noteTag
	seen := map[string]bool{}
	add := func(tags []string, source string) {
		for _, t := range tags {
			if !seen[t] {
				seen[t] = true
				out = append(out, noteTag{t, source})
			}
		}
	}
	add(store.NormalizeTags(fm.Strings(store.TagKey), store.MaxTagsPerNote), tagFromMemory)
	add(store.FrontmatterTags(fm), tagFromObsidian)
	add(store.InlineTags(body), tagFromBody)
	return out
}

// isDayIndexPage matches daily/YYYY-MM-DD.md.
func isDayIndexPage(rel string) bool {
	d, ok := strings.CutPrefix(rel, store.DailyDir+"/")
	return ok && strings.HasSuffix(d, ".md") && store.IsDate(strings.TrimSuffix(d, ".md"))
}
