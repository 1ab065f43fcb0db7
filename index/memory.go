package index

import (
	"context"
	"fmt"
	"strings"

	"github.com/reme-dev/reme/store"
)

// typeCondition narrows notes (alias n) to search types (store.SearchTypes):
// an entry type, any entry, or a kind of note. With no types, every kind
// but MEMORY.md, whose lines repeat the entries' names and descriptions.
func typeCondition(types []string) (string, []any, error) {
	if len(types) == 0 {
		return "n.kind != ?", []any{store.KindMemoryIndex}, nil
	}
	var ors []string
	var args []any
	for _, t := range types {
		switch {
		case store.IsEntryType(t):
			ors = append(ors, "(n.kind = ? AND lower(n.type) = ?)")
			args = append(args, store.KindEntry, t)
		case store.IsSearchType(t):
			ors = append(ors, "n.kind = ?")
			args = append(args, t)
		default:
			return "", nil, fmt.Errorf("%w: type must be one of %s, not %q", ErrBadType, strings.Join(store.SearchTypes, ", "), t)
		}
	}
	return "(" + strings.Join(ors, " OR ") + ")", args, nil
}

// memoryChunkBase is the first chunk id of memory notes (see chunkID).
const memoryChunkBase = 1 << 40

// isMemoryKind reports the kinds of note under memory/ and MEMORY.md.
func isMemoryKind(kind string) bool {
	return kind == store.KindEntry || kind == store.KindProfile || kind == store.KindMemoryIndex
}

// memoryOnly reports whether search types name only memory notes, whose
// chunks a search can read alone.
func memoryOnly(types []string) bool {
	for _, t := range types {
		if !store.IsEntryType(t) && !isMemoryKind(t) {
			return false
		}
	}
	return len(types) > 0
}

// NoteInfo is an indexed note's kind, type, name and description.
type NoteInfo struct {
	Path        string `json:"path"`
	Kind        string `json:"kind"`
	Type        string `json:"type,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// ListNotes lists the indexed notes of the given search types (every note
// but MEMORY.md with none), by path. The caller syncs first.
func (ix *Index) ListNotes(ctx context.Context, types ...string) ([]NoteInfo, error) {
	cond, args, err := typeCondition(types)
	if err != nil {
		return nil, err
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT n.path, n.kind, coalesce(n.type, ''), n.name, n.description
		FROM notes n WHERE n.skipped IS NULL AND `+cond+` ORDER BY n.path`, args...)
	if err != nil {
		return nil, fmt.Errorf("list notes: %w", err)
	}
	defer rows.Close()
	var out []NoteInfo
	for rows.Next() {
		var n NoteInfo
		if err := rows.Scan(&n.Path, &n.Kind, &n.Type, &n.Name, &n.Description); err != nil {
			return nil, fmt.Errorf("list notes: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// KindCount is how many indexed notes have a kind and frontmatter type.
type KindCount struct {
	Kind  string `json:"kind"`
	Type  string `json:"type,omitempty"`
	Count int    `json:"count"`
}

// CountKinds counts the indexed notes by kind and type. The caller syncs
// first.
func (ix *Index) CountKinds(ctx context.Context) ([]KindCount, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT kind, coalesce(type, ''), count(*) FROM notes
		WHERE skipped IS NULL GROUP BY kind, coalesce(type, '') ORDER BY kind, coalesce(type, '')`)
	if err != nil {
		return nil, fmt.Errorf("count notes: %w", err)
	}
	defer rows.Close()
	var out []KindCount
	for rows.Next() {
		var k KindCount
		if err := rows.Scan(&k.Kind, &k.Type, &k.Count); err != nil {
			return nil, fmt.Errorf("count notes: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// memoryIndexChunks counts the chunks of MEMORY.md.
func (ix *Index) memoryIndexChunks(ctx context.Context) (int, error) {
	var n int
	err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks c JOIN notes n ON n.id = c.note_id WHERE n.kind = ?`, store.KindMemoryIndex).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("search: %w", err)
	}
	return n, nil
}
