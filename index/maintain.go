package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
)

// IntegrityCheck runs SQLite's integrity check; it returns the problems it
// reports (none when the database is sound).
func (ix *Index) IntegrityCheck(ctx context.Context) ([]string, error) {
	rows, err := ix.db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		if isCorrupt(err) {
			return []string{err.Error()}, nil
		}
		return nil, fmt.Errorf("check index: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("check index: %w", err)
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		if isCorrupt(err) {
			return append(problems, err.Error()), nil
		}
		return nil, fmt.Errorf("check index: %w", err)
	}
	return problems, nil
}

// Optimize merges the full-text index into one segment, which answers
// queries a little faster after many small updates.
func (ix *Index) Optimize(ctx context.Context) error {
	err := ix.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO chunk_fts(chunk_fts) VALUES('optimize')`)
		return err
	})
	if err != nil {
		return fmt.Errorf("optimize index: %w", err)
	}
	ix.checkpoint(ctx)
	return nil
}

// hasArchived reports whether any archived note is indexed; search leaves
// them out by default, and skips the filter (and its cost) when there are
// none.
func hasArchived(ctx context.Context, q querier) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM notes WHERE path >= ? AND path < ? LIMIT 1)`,
		ArchiveDir+"/", ArchiveDir+"0").Scan(&n)
	if err != nil {
		return false, fmt.Errorf("search: %w", err)
	}
	return n > 0, nil
}

// Recreate throws a damaged database away and builds a new one from the
// files (a rebuild inside a damaged file can fail on the damage itself).
func (ix *Index) Recreate(ctx context.Context, progress Progress) (*SyncReport, error) {
	unlock, err := ix.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ix.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(ix.path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove damaged index: %w", err)
		}
	}
	if err := ix.open(ctx); err != nil {
		return nil, err
	}
	return ix.Rebuild(ctx, progress)
}
