package index

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Dump renders the index content canonically (no row ids), so that two
// indexes can be compared: an index kept up to date incrementally must equal
// one rebuilt from the same files.
func (ix *Index) Dump(ctx context.Context) (string, error) {
	var b strings.Builder
	queries := []struct{ title, q string }{
		{"notes", `SELECT path, dir, name, description, coalesce(date, ''), size, mtime, sha256,
			coalesce(frontmatter_error, ''), coalesce(session_id, ''), coalesce(source_conversation, ''),
			coalesce(source_resource, ''), day_index, coalesce(skipped, '') FROM notes ORDER BY path`},
		{"links", `SELECT n.path, coalesce(t.path, l.target) target, l.anchor, l.alias, l.embed, l.line,
			coalesce(l.written, t.path, l.target) written, l.markdown, l.field, l.name, l.status, l.candidates
			FROM links l JOIN notes n ON n.id = l.note_id LEFT JOIN notes t ON t.id = l.target_id
			ORDER BY n.path, l.line, l.field, target, l.anchor, l.alias, l.embed, written, l.markdown`},
		{"note_names", `SELECT n.path, nn.name FROM note_names nn JOIN notes n ON n.id = nn.note_id ORDER BY n.path`},
		{"tags", `SELECT n.path, t.tag, t.pos, t.source FROM tags t JOIN notes n ON n.id = t.note_id ORDER BY n.path, t.pos`},
		{"chunks", `SELECT n.path, c.start_line, c.end_line, c.tokens, hex(c.text_hash) FROM chunks c JOIN notes n ON n.id = c.note_id
			ORDER BY n.path, c.start_line, c.end_line`},
		{"stats", `SELECT chunks, tokens FROM fts_stats`},
		{"frequent terms", `SELECT term, df FROM frequent_terms ORDER BY term`},
		{"scan", `SELECT dir, hex(files) FROM scan_dirs ORDER BY dir`},
		{"fts", `SELECT count(*) FROM chunk_fts`},
	}
	for _, q := range queries {
		rows, err := ix.db.QueryContext(ctx, q.q)
		if err != nil {
			return "", fmt.Errorf("dump %s: %w", q.title, err)
		}
		cols, _ := rows.Columns()
		fmt.Fprintf(&b, "== %s\n", q.title)
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", fmt.Errorf("dump %s: %w", q.title, err)
			}
			for i, v := range vals {
				if i > 0 {
					b.WriteByte('\t')
				}
				fmt.Fprintf(&b, "%v", v)
			}
			b.WriteByte('\n')
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", fmt.Errorf("dump %s: %w", q.title, err)
		}
	}
	if err := ix.dumpChunkTerms(ctx, &b); err != nil {
		return "", err
	}
	// FTS5 can check its own structure against the rows.
	if _, err := ix.db.ExecContext(ctx, `INSERT INTO chunk_fts(chunk_fts, rank) VALUES('integrity-check', 0)`); err != nil {
		return "", fmt.Errorf("fts integrity check: %w", err)
	}
	return b.String(), nil
}

// dumpChunkTerms lists the frequent words of each chunk by name (ids
// depend on the index's history; words no longer frequent are left out).
func (ix *Index) dumpChunkTerms(ctx context.Context, b *strings.Builder) error {
	names := map[int64]string{}
	rows, err := ix.db.QueryContext(ctx, `SELECT id, term FROM frequent_terms`)
	if err != nil {
		return fmt.Errorf("dump chunk terms: %w", err)
	}
	for rows.Next() {
		var id int64
		var term string
		if err := rows.Scan(&id, &term); err != nil {
			rows.Close()
			return fmt.Errorf("dump chunk terms: %w", err)
		}
		names[id] = term
	}
	rows.Close()
	rows, err = ix.db.QueryContext(ctx, `SELECT n.path, c.start_line, coalesce(t.terms, x'') FROM chunks c JOIN notes n ON n.id = c.note_id
		LEFT JOIN chunk_terms t ON t.id = c.id ORDER BY n.path, c.start_line, c.end_line`)
	if err != nil {
		return fmt.Errorf("dump chunk terms: %w", err)
	}
	defer rows.Close()
	b.WriteString("== chunk terms\n")
	var ids []int64
	for rows.Next() {
		var p string
		var line int
		var blob []byte
		if err := rows.Scan(&p, &line, &blob); err != nil {
			return fmt.Errorf("dump chunk terms: %w", err)
		}
		if ids, err = decodeIDs(ids[:0], blob); err != nil {
			return fmt.Errorf("dump chunk terms: %w", err)
		}
		var words []string
		for _, id := range ids {
			if w, ok := names[id]; ok {
				words = append(words, w)
			}
		}
		sort.Strings(words)
		fmt.Fprintf(b, "%s:%d\t%s\n", p, line, strings.Join(words, " "))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dump chunk terms: %w", err)
	}
	var orphans int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM chunk_terms WHERE id NOT IN (SELECT id FROM chunks)`).Scan(&orphans); err != nil {
		return fmt.Errorf("dump chunk terms: %w", err)
	}
	fmt.Fprintf(b, "lists of no chunk: %d\n", orphans)
	return nil
}
