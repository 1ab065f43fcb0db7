package index

import (
	"context"
	"fmt"
)

// lookupColumns are the frontmatter keys the notes table indexes.
var lookupColumns = map[string]string{
	"session_id":          "session_id",
	"source_conversation": "source_conversation",
	"source_resource":     "source_resource",
}

// NotesWith lists the notes whose frontmatter key equals value, cards under
// daily/ first. The caller syncs first.
func (ix *Index) NotesWith(ctx context.Context, key, value string) ([]string, error) {
	col, ok := lookupColumns[key]
	if !ok {
		return nil, fmt.Errorf("notes cannot be looked up by %q", key)
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT path FROM notes WHERE `+col+` = ?
		ORDER BY path NOT LIKE 'daily/%', path`, value)
	if err != nil {
		return nil, fmt.Errorf("look up notes by %s: %w", key, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("look up notes by %s: %w", key, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Sources maps each value of a lookup key to the note holding it (a card
// under daily/ when several do).
func (ix *Index) Sources(ctx context.Context, key string) (map[string]string, error) {
	col, ok := lookupColumns[key]
	if !ok {
		return nil, fmt.Errorf("notes cannot be looked up by %q", key)
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT `+col+`, path FROM notes WHERE `+col+` IS NOT NULL
		ORDER BY path NOT LIKE 'daily/%' DESC, path DESC`)
	if err != nil {
		return nil, fmt.Errorf("list notes by %s: %w", key, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var v, p string
		if err := rows.Scan(&v, &p); err != nil {
			return nil, fmt.Errorf("list notes by %s: %w", key, err)
		}
		out[v] = p // later rows win: daily/ cards, first by path
	}
	return out, rows.Err()
}
