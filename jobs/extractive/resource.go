package extractive

import (
	"path"
	"strings"

	"github.com/reme-dev/reme/store"
)

const (
	resMaxOutline = 30   // headings listed in the outline
	resMaxExcerpt = 1500 // bytes of the resource quoted as its excerpt
	resMaxDesc    = 200  // runes of the description
)

// Resource builds the card of a text resource without a model: its outline
// (the markdown headings), its opening as a quoted excerpt cut at a
// character boundary, and the link to the file, so that the resource is at
// least searchable. rel is the resource's workspace path, link its
// wikilink. Name is the file's stem; Description the first line of text,
// or "Resource <rel>" for a file without one.
func Resource(rel, text, link string) Card {
	var outline []string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") && len(outline) < resMaxOutline {
			outline = append(outline, "- "+strings.TrimSpace(strings.TrimLeft(t, "#")))
		}
	}
	excerpt := text
	if len(excerpt) > resMaxExcerpt {
		excerpt = store.TruncateBytes(excerpt, resMaxExcerpt) + "…"
	}
	var b strings.Builder
	if len(outline) > 0 {
		b.WriteString("## Outline\n\n" + strings.Join(outline, "\n") + "\n\n")
	}
	b.WriteString("## Excerpt\n\n")
	for _, l := range strings.Split(strings.TrimSpace(excerpt), "\n") {
		b.WriteString("> " + l + "\n")
	}
	b.WriteString("\n## " + extSourceTitle + "\n\n" + extSourceLine(link) + "\n")
	desc := firstLine(text)
	if desc == "" {
		desc = "Resource " + rel
	}
	return Card{
		Name:        strings.TrimSuffix(path.Base(rel), path.Ext(rel)),
		Description: desc,
		Body:        b.String(),
	}
}

// firstLine is the first line with text, markers (# > - *) removed.
func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#>-*"))
		if t != "" {
			return store.TruncateRunes(t, resMaxDesc, "…")
		}
	}
	return ""
}
