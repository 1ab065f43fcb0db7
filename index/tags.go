package index

import (
	"context"
	"fmt"
)

// TagPage is one page of list_tags (ReMe's shape).
type TagPage struct {
	TotalTags  int     `json:"total_tags"`
	TotalPages int     `json:"total_pages"`
	Page       int     `json:"page"`
	Range      [2]int  `json:"range"`
	Items      [][]any `json:"items"` // [tag, file count]
}

// TagListOptions page and order list_tags.
type TagListOptions struct {
	Page     int
	PageSize int
	OrderBy  string // tag or file_count
	Order    string // asc or desc; default asc for tag, desc for file_count
}

// ListTags counts notes per tag. Tags are in ReMe's canonical form
// (case-folded), the form search --tag matches and auto_tag writes; they
// come from memory_tags, Obsidian's tags: frontmatter and inline #tags.
func (ix *Index) ListTags(ctx context.Context, opt TagListOptions) (*TagPage, error) {
	if opt.Page < 1 {
		return nil, fmt.Errorf("page must be >= 1")
	}
	if opt.PageSize < 1 || opt.PageSize > 1000 {
		return nil, fmt.Errorf("page_size must be between 1 and 1000")
	}
	var order string
	switch opt.OrderBy {
	case "", "tag":
		order = "tag"
		if opt.Order == "" {
			opt.Order = "asc"
		}
	case "file_count":
		order = "n"
		if opt.Order == "" {
			opt.Order = "desc"
		}
	default:
		return nil, fmt.Errorf("order_by must be tag or file_count, not %q", opt.OrderBy)
	}
	if opt.Order != "asc" && opt.Order != "desc" {
		return nil, fmt.Errorf("order must be asc or desc, not %q", opt.Order)
	}
	var total int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(DISTINCT tag) FROM tags`).Scan(&total); err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	p := &TagPage{TotalTags: total, Page: opt.Page, Items: [][]any{}}
	p.TotalPages = (total + opt.PageSize - 1) / opt.PageSize
	rows, err := ix.db.QueryContext(ctx, `SELECT tag, count(*) AS n FROM tags GROUP BY tag
		ORDER BY `+order+` `+opt.Order+`, tag ASC LIMIT ? OFFSET ?`, opt.PageSize, (opt.Page-1)*opt.PageSize)
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var label string
		var n int
		if err := rows.Scan(&label, &n); err != nil {
			return nil, fmt.Errorf("list tags: %w", err)
		}
		p.Items = append(p.Items, []any{label, n})
	}
	if len(p.Items) > 0 {
		first := (opt.Page-1)*opt.PageSize + 1
		p.Range = [2]int{first, first + len(p.Items) - 1}
	}
	return p, rows.Err()
}
