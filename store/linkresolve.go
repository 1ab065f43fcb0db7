package store

import (
	"path"
	"slices"
	"strings"
)

// LinkStatus says how a link found its file.
type LinkStatus string

// Link statuses. Exact and short links lead to one file; an ambiguous
// link is reported with its candidates, never guessed.
const (
	LinkExact     LinkStatus = "exact"     // the path as written (from the workspace root, or from the note for ./, ../ and markdown links)
	LinkShort     LinkStatus = "short"     // a file name or path suffix that one file has ([[note]], [[folder/note]])
	LinkAmbiguous LinkStatus = "ambiguous" // a name or suffix that several files have
	LinkMissing   LinkStatus = "missing"   // no file
)

// Resolves reports whether the link leads to one file.
func (s LinkStatus) Resolves() bool { return s == LinkExact || s == LinkShort }

// LinkFiles answers what link resolution asks about the workspace.
type LinkFiles interface {
	// Exists reports a regular file at a clean workspace-relative path.
	Exists(rel string) bool
	// Named lists the files whose LinkName is name.
	Named(name string) []string
}

// Resolution is where a link leads.
type Resolution struct {
	// Path is the file; for an ambiguous or missing link, the path the
	// link names literally (ReMe's reading of it).
	Path       string
	Status     LinkStatus
	Candidates []string // the files an ambiguous link may mean, sorted
	// AsWritten: the link names its file exactly (the path as written,
	// extension included, found first). Only that file's removal can change
	// where such a link leads; no file added elsewhere can.
	AsWritten bool
}

// LinkName is the name a file is found by from a short link: its last
// path segment, lower-cased, without ".md" (Obsidian matches names without
// regard to case and lets links omit ".md").
func LinkName(p string) string {
	name := strings.ToLower(path.Base(p))
	return strings.TrimSuffix(name, ".md")
}

// ResolveLink finds the file a link in the note at from leads to, the way
// Obsidian does:
//
//   - "/a/b" is a path from the workspace root; "./b" and "../b" are
//     relative to the note's folder;
//   - a wikilink is first the workspace path as written (ReMe's literal
//     [[daily/2026-06-20/x.md]]), and a markdown link first the path
//     relative to the note, then the other of the two;
//   - ".md" may be left out;
//   - otherwise the link is a file name ([[note]]) or the end of a path
//     ([[folder/note]]), compared without regard to case: it resolves when
//     exactly one file matches and is ambiguous when several do.
func ResolveLink(from string, l Link, files LinkFiles) Resolution {
	t := strings.TrimSpace(l.Target)
	dir := path.Dir(from)
	var exact []string
	searchable := true
	switch {
	case strings.HasPrefix(t, "/"):
		exact, searchable = []string{cleanRel(t[1:])}, false
	case strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../"):
		exact, searchable = []string{cleanRel(path.Join(dir, t))}, false
	case l.Markdown:
		exact = []string{cleanRel(path.Join(dir, t)), cleanRel(t)}
	case strings.Contains(t, "/"):
		exact = []string{cleanRel(t), cleanRel(path.Join(dir, t))}
	default:
		exact = []string{cleanRel(t)}
	}
	for i, p := range exact {
		if p == "" {
			continue
		}
		for j, q := range withMD(p) {
			if files.Exists(q) {
				return Resolution{Path: q, Status: LinkExact, AsWritten: i == 0 && j == 0}
			}
		}
	}
	literal := exact[0]
	if literal == "" {
		literal = t
	}
	if !searchable || t == "" {
		return Resolution{Path: literal, Status: LinkMissing}
	}
	suffixes := withMD(strings.ToLower(strings.TrimPrefix(t, "/")))
	var found []string
	for _, f := range files.Named(LinkName(t)) {
		lf := strings.ToLower(f)
		for _, s := range suffixes {
			if lf == s || strings.HasSuffix(lf, "/"+s) {
				found = append(found, f)
				break
			}
		}
	}
	switch len(found) {
	case 0:
		return Resolution{Path: literal, Status: LinkMissing}
	case 1:
		return Resolution{Path: found[0], Status: LinkShort}
	}
	slices.Sort(found)
	return Resolution{Path: literal, Status: LinkAmbiguous, Candidates: slices.Compact(found)}
}

// cleanRel cleans a workspace-relative path; "" when it leaves the
// workspace.
func cleanRel(p string) string {
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return ""
	}
	return p
}

// withMD is p, then p with ".md" when it lacks it.
func withMD(p string) []string {
	if strings.HasSuffix(strings.ToLower(p), ".md") {
		return []string{p}
	}
	return []string{p, p + ".md"}
}

// LinkTextFor returns the target to write in place of l's, in l's form, so
// that from the note at from it leads to dst: a full path stays a full
// path, a relative one relative, a short one as short as it can be while
// only dst matches it (Obsidian's "shortest path when possible"), and
// ".md" stays left out where it was. orig is where l led before. It
// reports false when no target in that form, nor a full path, leads to
// dst. Markdown targets are returned decoded; see EncodeMarkdownDest.
func LinkTextFor(from string, l Link, orig Resolution, dst string, files LinkFiles) (string, bool) {
	t := strings.TrimSpace(l.Target)
	// a file named only ".md" has no name to write without its extension
	noExt := !strings.HasSuffix(strings.ToLower(t), ".md") && strings.HasSuffix(strings.ToLower(orig.Path), ".md") &&
		strings.HasSuffix(strings.ToLower(dst), ".md") && LinkName(dst) != ""
	name := dst
	if noExt {
		name = dst[:len(dst)-len(".md")]
	}
	dir := path.Dir(from)
	relative := func() string {
		r := relPath(dir, name)
		if strings.HasPrefix(t, "./") && !strings.HasPrefix(r, "../") {
			r = "./" + r
		}
		return r
	}
	var tries []string
	switch {
	case strings.HasPrefix(t, "/"):
		tries = []string{"/" + name}
	case strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../"):
		r := relative()
		if !strings.HasPrefix(r, "./") && !strings.HasPrefix(r, "../") {
			r = "./" + r
		}
		tries = []string{r}
	case orig.Status == LinkShort:
		segs := strings.Split(name, "/")
		for k := len(segs) - 1; k >= 0; k-- {
			tries = append(tries, strings.Join(segs[k:], "/"))
		}
	case l.Markdown && slices.Contains(withMD(cleanRel(path.Join(dir, t))), orig.Path):
		tries = []string{relative()}
	default:
		tries = []string{name}
	}
	// a full path from the workspace root always reads the same, with its
	// extension when the path without it does not (a name that ends in a
	// space, which a link's trimmed target loses)
	full := []string{name}
	if name != dst {
		full = append(full, dst)
	}
	for _, p := range full {
		if !l.Markdown {
			tries = append(tries, p)
		}
		tries = append(tries, "/"+p)
	}
	for _, cand := range tries {
		probe := l
		probe.Target = cand
		if r := ResolveLink(from, probe, files); r.Status.Resolves() && r.Path == dst {
			return cand, true
		}
	}
	return "", false
}

// relPath is the path from folder dir to target, both workspace-relative.
func relPath(dir, target string) string {
	if dir == "." {
		return target
	}
	from := strings.Split(dir, "/")
	to := strings.Split(target, "/")
	i := 0
	for i < len(from) && i < len(to)-1 && from[i] == to[i] {
		i++
	}
	return strings.Repeat("../", len(from)-i) + strings.Join(to[i:], "/")
}

// ReplaceLinks rewrites the targets of links (as found in text by
// ParseLinks or ParseNoteLinks) for which repl returns a new target text,
// keeping everything else byte for byte. It returns the count replaced.
func ReplaceLinks(text string, links []Link, repl func(Link, string) (string, bool)) (string, int) {
	var b strings.Builder
	last, n := 0, 0
	for _, l := range links {
		written := text[l.TargetStart:l.TargetEnd]
		to, ok := repl(l, written)
		if !ok || to == written {
			continue
		}
		b.WriteString(text[last:l.TargetStart])
		b.WriteString(to)
		last = l.TargetEnd
		n++
	}
	if n == 0 {
		return text, 0
	}
	b.WriteString(text[last:])
	return b.String(), n
}
