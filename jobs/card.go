package jobs

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// A Card is one markdown card in the life a job gives it: opened (an
// existing card, or a new one that does not exist yet), offered to the
// model through tools confined to it, and finished. Every byte a job writes
// to a card goes through put, create, rename or remove below, and each of
// them writes through the job's journal run (journal.go), so that a crash
// is rolled back and `reme undo` reverses a run.
//
// Keys the system owns (provenance, status, …) are never the model's: what
// the model sends for them is replaced by the system's value or ignored,
// never refused, so that a model following ReMe's prompts (which pass
// source_resource themselves) still gets its card written. Names follow
// one rule (cleanName) and the file stem always equals the frontmatter
// name, after a clash suffix too.
type Card struct {
	env  *Env
	spec CardSpec

	path      string       // the card on disk; "" until created
	before    cardSnapshot // the card as it was when opened
	wrote     bool         // a write of this run reached the disk
	skip      string       // the model's explicit skip reason
	clashName string       // a name given up because it was taken, for the model
	// memoryIndex is what the last refresh of MEMORY.md (an entry's
	// listing page) did, for the entry tools' results.
	memoryIndex *store.MemoryIndexResult
}

// CardSpec describes the card a job opens.
type CardSpec struct {
	// Dir is the folder of a new card, such as daily/2026-06-20 (an
	// existing card keeps its own).
	Dir string
	// Date is a new card's day: a name may not repeat it, and the day index
	// of that date lists the card (an existing card's comes from its path;
	// none outside daily/).
	Date string
	// Path is the existing card, or "" for a card the run may create.
	Path string
	// Announced is the path a create prompt names before the card exists
	// (ReMe's daily/<date>/<stem>.md for a resource); the tools accept it
	// for the new card, which is written under its name.
	Announced string
	// Kind says what the card holds (conversation, resource); a name that
	// even the stem cannot replace becomes <Kind>-<sha1(Stem)[:8]>.
	Kind string
	// Stem is the name of a card whose model-chosen name is empty.
	Stem string
	// ClashKey makes the suffix of a name that is taken:
	// <name>--<sha1(ClashKey)[:8]>, then -2, -3 …
	ClashKey string
	// System are the keys the job owns, with their values: set on every
	// write, whatever the model sent (provenance such as session_id).
	System []KeyValue
	// OwnTags makes memory_tags the system's (auto_tag sets them after the
	// card is written); otherwise a model may set them, normalised.
	OwnTags bool
	// OnlyKeys, when set, are the only frontmatter keys the model may
	// change (auto_tag's memory_tags).
	OnlyKeys []string
	// FixedPath keeps an existing card where it is whatever its name says
	// (the profile, whose name is the person's).
	FixedPath bool
}

// KeyValue is a frontmatter key with its value.
type KeyValue struct {
	Key   string
	Value any
}

// CardResult is where a finished card is and whether the run changed it.
type CardResult struct {
	Path     string
	Created  bool
	Modified bool
	Index    *store.DayIndexResult
	// Renamed is the path the card had before Finish renamed it.
	Renamed string
}

// ownedKeys are never the model's to set: provenance is the system's, and
// status belongs to later processing. Compared case-insensitively.
var ownedKeys = map[string]bool{
	"status": true, "session_id": true, "source_conversation": true, "source_resource": true,
	"source_images": true, SourceSHA256Key: true, "kind": true, "media_type": true, "distiller": true,
}

// maxNameRunes bounds a card name; maxKeyRunes a frontmatter key.
const (
	maxNameRunes = 100
	maxKeyRunes  = 64
)

// OpenCard opens the card a job is about to write: spec.Path when it
// exists, else a card to be created under spec.Dir.
func OpenCard(env *Env, spec CardSpec) (*Card, error) {
	if spec.Stem == "" {
		spec.Stem = "card"
	}
	c := &Card{env: env, spec: spec, path: spec.Path}
	if c.path != "" {
		rel, err := env.WS.Rel(c.path)
		if err != nil {
			return nil, err
		}
		// An existing card stays where it is, wherever a person moved it:
		// a rename keeps its folder, and its own day's index lists it.
		c.path = rel
		c.spec.Dir = path.Dir(rel)
		c.spec.Date = store.DateFromPath(rel)
		b, err := os.ReadFile(env.WS.Abs(rel))
		switch {
		case err == nil:
			c.before = cardSnapshot{path: rel, bytes: b}
		case !errors.Is(err, fs.ErrNotExist): // a card gone already can still be removed
			return nil, fmt.Errorf("open card %s: %w", rel, err)
		}
	}
	return c, nil
}

type cardSnapshot struct {
	path  string
	bytes []byte
}

// SetSystem makes key one of the system's keys with value, from the next
// write on (a job's own marks, such as distiller: extractive).
func (c *Card) SetSystem(key string, value any) {
	for i, kv := range c.spec.System {
		if kv.Key == key {
			c.spec.System[i].Value = value
			return
		}
	}
	c.spec.System = append(c.spec.System, KeyValue{key, value})
}

// Path is the card's path, "" while a new card is not written yet.
func (c *Card) Path() string { return c.path }

// Exists reports whether the card is on disk.
func (c *Card) Exists() bool { return c.path != "" && c.env.WS.Exists(c.path) }

// Wrote reports whether this run wrote the card.
func (c *Card) Wrote() bool { return c.wrote }

// Skipped is the reason the model gave for writing nothing, if it did. A
// model that skipped and then wrote the card after all did not skip: the
// card on disk is finished like any other.
func (c *Card) Skipped() string {
	if c.wrote {
		return ""
	}
	return c.skip
}

// Read reads the card; its frontmatter must parse for it to be changed.
func (c *Card) Read() (*store.Note, error) {
	if c.path == "" {
		return nil, errNoCardYet
	}
	n, err := c.env.WS.ReadNote(c.path)
	if err != nil {
		return nil, err
	}
	if n.FMErr != nil {
		return nil, fmt.Errorf("the frontmatter of %s does not parse (%v); it cannot be changed automatically", c.path, n.FMErr)
	}
	return n, nil
}

var errNoCardYet = errors.New("there is no card yet")

// Write writes the whole card: name, description and body, with meta as
// further keys; other keys of an existing card are kept. A new card is
// created under its name (cleaned, and suffixed when taken). It returns
// what the model is told: the path, and what the system changed.
func (c *Card) Write(ctx context.Context, name, description, body string, meta map[string]any) (string, error) {
	if strings.TrimSpace(body) == "" {
		return "", errors.New("content is empty")
	}
	var notes []string
	fm := store.NewFrontmatter()
	existed := c.path != "" && c.env.WS.Exists(c.path)
	var old *store.Note
	if existed {
		n, err := c.Read()
		if err != nil {
			return "", err
		}
		old, fm = n, n.FM
	}
	// name and description first (they lead a new card's header), then the rest
	clean := ""
	if strings.TrimSpace(name) != "" || (!existed && !c.spec.FixedPath) {
		var note string
		if clean, note = c.modelName(name); note != "" {
			notes = append(notes, note)
		}
		if err := fm.Set("name", clean); err != nil {
			return "", err
		}
	}
	if d := strings.TrimSpace(description); d != "" {
		if err := fm.Set("description", d); err != nil {
			return "", err
		}
	}
	rest := map[string]any{}
	for k, v := range meta {
		if k != "name" && k != "description" {
			rest[k] = v
		}
	}
	more, err := c.setMetadata(fm, rest)
	if err != nil {
		return "", err
	}
	notes = append(notes, more...)
	if !existed {
		n := store.NewNote("", fm, body)
		p, err := c.create(ctx, clean, n)
		if err != nil {
			return "", err
		}
		if want := c.spec.Dir + "/" + clean + ".md"; p != want && !c.spec.FixedPath {
			notes = append(notes, fmt.Sprintf("%s was taken by another note; the card is %s", want, p))
		}
		return withNotes("Wrote "+p, notes), nil
	}
	n := store.NewNote(c.path, fm, body)
	n.Encoding = old.Encoding
	if err := c.put(n); err != nil {
		return "", err
	}
	return withNotes("Rewrote "+c.path, notes), nil
}

// Update changes an existing card through fn and saves it.
func (c *Card) Update(fn func(n *store.Note) error) error {
	n, err := c.Read()
	if err != nil {
		return err
	}
	if err := fn(n); err != nil {
		return err
	}
	return c.put(n)
}

func withNotes(s string, notes []string) string {
	if len(notes) == 0 {
		return s
	}
	return s + " (note: " + strings.Join(notes, "; ") + ")"
}

// put writes an existing card with the system's keys in place and its
// secrets masked. It is the one way a card's bytes change after it was
// created.
func (c *Card) put(n *store.Note) error {
	if err := c.applySystem(n.FM); err != nil {
		return err
	}
	n.Path = c.path
	c.env.maskSecrets(n, c.path)
	b, err := n.Bytes()
	if err != nil {
		return err
	}
	run, err := c.env.journalRun()
	if err != nil {
		return err
	}
	if err := run.WriteFile(c.path, b, c.why("updated")); err != nil {
		return err
	}
	c.wrote = true
	return nil
}

// why explains a change to the card in the journal.
func (c *Card) why(what string) store.Why {
	kind := c.spec.Kind
	switch kind {
	case "":
		kind = "card"
	case "entry", "profile":
	default:
		kind += " card"
	}
	return store.Why{Reason: kind + " " + what}
}

// applySystem sets the system's keys; an unchanged key keeps its bytes.
func (c *Card) applySystem(fm *store.Frontmatter) error {
	for _, kv := range c.spec.System {
		if fm.Has(kv.Key) && sameValue(fm.Value(kv.Key), kv.Value) {
			continue
		}
		if err := fm.Set(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	return nil
}

func sameValue(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// create writes a new card at the first free path for name, claimed under
// the writer lock and created exclusively: two runs that pick the same
// name get two cards, never one overwritten. The frontmatter name is the
// stem of the path claimed.
func (c *Card) create(ctx context.Context, name string, n *store.Note) (string, error) {
	if err := c.applySystem(n.FM); err != nil {
		return "", err
	}
	if c.spec.FixedPath && c.path != "" {
		c.env.maskSecrets(n, c.path)
		// a card with a fixed place is created there or not at all
		n.Path = c.path
		b, err := n.Bytes()
		if err != nil {
			return "", err
		}
		run, err := c.env.journalRun()
		if err != nil {
			return "", err
		}
		if err := run.CreateFile(c.path, b, c.why("created")); err != nil {
			return "", err
		}
		c.wrote = true
		return c.path, nil
	}
	c.env.maskSecrets(n, c.spec.Dir+"/"+name+".md")
	p, err := c.claim(ctx, name, "", func(p string) error {
		if err := n.FM.Set("name", stemOf(p)); err != nil {
			return err
		}
		n.Path = p
		b, err := n.Bytes()
		if err != nil {
			return err
		}
		run, err := c.env.journalRun()
		if err != nil {
			return err
		}
		return run.CreateFile(p, b, c.why("created"))
	})
	if err != nil {
		return "", err
	}
	c.path, c.wrote = p, true
	return p, nil
}

// claim finds the first free path for name in the card's folder (name,
// then name--<sha1(ClashKey)[:8]>, then -2 … -99) and runs fn with it, all
// under the workspace writer lock; a path fn finds taken after all (a
// person's editor was faster) moves on to the next. keep is a path that
// counts as free: the card's own.
func (c *Card) claim(ctx context.Context, name, keep string, fn func(p string) error) (string, error) {
	var got string
	err := c.env.Index.Locked(ctx, func() error {
		for _, cand := range c.candidates(name) {
			p := c.spec.Dir + "/" + cand + ".md"
			if p != keep && c.env.WS.Exists(p) {
				continue
			}
			err := fn(p)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return err
			}
			got = p
			return nil
		}
		return fmt.Errorf("no free name for %q in %s", name, c.spec.Dir)
	})
	return got, err
}

func (c *Card) candidates(name string) []string {
	out := []string{name}
	base := name
	if c.spec.ClashKey != "" {
		h := sha1.Sum([]byte(c.spec.ClashKey))
		base = name + "--" + hex.EncodeToString(h[:])[:8]
		out = append(out, base)
	}
	for i := 2; i < 100; i++ {
		out = append(out, fmt.Sprintf("%s-%d", base, i))
	}
	return out
}

func stemOf(p string) string { return strings.TrimSuffix(path.Base(p), ".md") }

var (
	// unsafeNameChars cannot be in a file name, or in a [[link]] to it.
	unsafeNameChars = store.LazyRegexp("[<>:\"/\\\\|?*\\[\\]#`\\x00-\\x1f\\x7f]+")
	// nameSeparators are trimmed around a date taken out of a name.
	nameSeparators = " -_."
)

// cleanName is the one naming rule for cards (ReMe §6.3, plus the date
// rule of daily cards): the card's date is taken out of the name; runs of
// characters a file name or a link cannot hold become "-"; whitespace
// collapses; spaces and dots are trimmed at both ends; a name longer than
// 100 characters is cut. An empty result falls back to the stem (cleaned
// the same way), and one that is still not a file name (a reserved device
// name such as CON) becomes <kind>-<sha1(stem)[:8]>.
func (c *Card) cleanName(name string) string {
	clean := func(s string) string {
		s = strings.TrimSuffix(strings.TrimSpace(s), ".md")
		s = unsafeNameChars().ReplaceAllString(s, "-")
		if d := c.spec.Date; d != "" {
			for {
				i := strings.Index(s, d)
				if i < 0 {
					break
				}
				left := strings.TrimRight(s[:i], nameSeparators)
				right := strings.TrimLeft(s[i+len(d):], nameSeparators)
				if left != "" && right != "" {
					s = left + "-" + right
				} else {
					s = left + right
				}
			}
		}
		s = strings.Join(strings.Fields(s), " ")
		s = strings.Trim(s, " .")
		if r := []rune(s); len(r) > maxNameRunes {
			s = strings.Trim(string(r[:maxNameRunes]), " .-")
		}
		return s
	}
	s := clean(nameWithoutSecrets(name))
	if s == "" {
		s = clean(nameWithoutSecrets(c.spec.Stem))
	}
	if s == "" || store.ValidateName(s) != nil {
		h := sha1.Sum([]byte(c.spec.Stem))
		kind := c.spec.Kind
		if kind == "" {
			kind = "card"
		}
		s = kind + "-" + hex.EncodeToString(h[:])[:8]
	}
	return s
}

// nameWithoutSecrets masks the secrets in a name (a distiller that names a
// card after its first words can pick up a pasted token), each spelt
// redacted-<kind>: a placeholder's brackets cannot be in a file name.
func nameWithoutSecrets(name string) string {
	stem := strings.TrimSuffix(name, ".md") // a token's end is not seen before ".md"
	red, found := store.RedactSecrets(stem)
	if len(found) == 0 {
		return name
	}
	for _, f := range found {
		red = strings.Replace(red, store.Placeholder(f.Kind), "redacted-"+f.Kind, 1)
	}
	return red + name[len(stem):]
}

// modelName cleans a name the model chose, with a note for the model when
// the cleaning changed it.
func (c *Card) modelName(raw string) (clean, note string) {
	clean = c.cleanName(raw)
	if t := strings.TrimSpace(raw); t != "" && clean != strings.TrimSpace(strings.TrimSuffix(t, ".md")) {
		note = fmt.Sprintf("the name %q is not a usable file name here; the card is named %q", raw, clean)
	}
	return clean, note
}

// setMetadata applies model-supplied frontmatter to fm. Keys the system
// owns (in any letter case) keep the system's value; keys that cannot be
// frontmatter keys (empty, control characters, too long) are left out; a
// name is cleaned. What was not taken as sent is returned as notes for the
// model.
func (c *Card) setMetadata(fm *store.Frontmatter, meta map[string]any) ([]string, error) {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var notes []string
	for _, k := range keys {
		v := meta[k]
		canon := strings.ToLower(strings.TrimSpace(k))
		if reason := badKey(k); reason != "" {
			notes = append(notes, fmt.Sprintf("%q was left out: %s", k, reason))
			continue
		}
		if canon == "name" || canon == "description" {
			k = canon
		}
		if len(c.spec.OnlyKeys) > 0 && !containsFold(c.spec.OnlyKeys, k) {
			return nil, fmt.Errorf("only %s may be changed in this run", strings.Join(c.spec.OnlyKeys, ", "))
		}
		if c.owns(canon) {
			if k != canon || !c.hasSystemValue(canon) {
				notes = append(notes, fmt.Sprintf("%s is kept by the system; the value sent was ignored", k))
			} else {
				notes = append(notes, fmt.Sprintf("%s is set by the system", canon))
			}
			continue
		}
		switch k {
		case "name":
			name, ok := v.(string)
			if !ok {
				return nil, errors.New("name must be a string")
			}
			clean, note := c.modelName(name)
			if note != "" {
				notes = append(notes, note)
			}
			v = clean
		case "description":
			if _, ok := v.(string); !ok {
				return nil, errors.New("description must be a string")
			}
		case store.TagKey:
			tags, ok := toStrings(v)
			if !ok {
				return nil, fmt.Errorf("%s must be a list of strings", store.TagKey)
			}
			norm := store.NormalizeTags(tags, store.MaxTagsPerNote)
			if norm == nil {
				norm = []string{} // written as memory_tags: []
			}
			v = norm
		}
		if v == nil {
			fm.Delete(k)
			continue
		}
		if err := fm.Set(k, v); err != nil {
			return nil, err
		}
	}
	return notes, nil
}

func (c *Card) owns(key string) bool {
	if ownedKeys[key] {
		return true
	}
	if key == store.TagKey {
		return c.spec.OwnTags
	}
	return false
}

func (c *Card) hasSystemValue(key string) bool {
	for _, kv := range c.spec.System {
		if kv.Key == key {
			return true
		}
	}
	return false
}

// badKey says why k cannot be a frontmatter key, or "".
func badKey(k string) string {
	switch {
	case strings.TrimSpace(k) == "":
		return "the key is empty"
	case strings.TrimSpace(k) != k:
		return "the key has leading or trailing spaces"
	case utf8.RuneCountInString(k) > maxKeyRunes:
		return fmt.Sprintf("the key is longer than %d characters", maxKeyRunes)
	}
	for _, r := range k {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return "the key contains a line break or a control character"
		}
	}
	return ""
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func toStrings(v any) ([]string, bool) {
	switch t := v.(type) {
	case nil:
		return nil, true
	case string:
		return []string{t}, true
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// Finish brings a written card into its final shape: the system's keys in
// place, the file named after its (cleaned) name, with a clash suffix when
// that is taken and the frontmatter name changed to match, inbound links
// retargeted by the rename, and the day index and search index updated.
func (c *Card) Finish(ctx context.Context) (*CardResult, error) {
	n, err := c.Read()
	if err != nil {
		return nil, err
	}
	if !systemInPlace(n.FM, c.spec.System) {
		if err := c.put(n); err != nil {
			return nil, err
		}
	}
	res := &CardResult{}
	stem := stemOf(c.path)
	want := stem
	if name := n.Name(); strings.TrimSpace(name) != "" && !c.spec.FixedPath {
		want = c.cleanName(name)
	}
	if want != stem {
		old := c.path
		p, err := c.claim(ctx, want, old, func(p string) error {
			if p == old {
				return nil
			}
			run, err := c.env.journalRun()
			if err != nil {
				return err
			}
			return c.env.Index.Rename(ctx, run, old, p)
		})
		if err != nil {
			return nil, fmt.Errorf("rename %s: %w", old, err)
		}
		if p != old {
			c.path, res.Renamed = p, old
		}
	}
	if n.Name() != stemOf(c.path) && !c.spec.FixedPath {
		if err := c.Update(func(n *store.Note) error { return n.FM.Set("name", stemOf(c.path)) }); err != nil {
			return nil, err
		}
	}
	if res.Index, err = c.index(ctx); err != nil {
		return nil, err
	}
	after, _ := os.ReadFile(c.env.WS.Abs(c.path))
	res.Path = c.path
	res.Created = c.before.path == ""
	res.Modified = c.before.path != c.path || !bytes.Equal(c.before.bytes, after)
	return res, nil
}

func systemInPlace(fm *store.Frontmatter, system []KeyValue) bool {
	for _, kv := range system {
		if !fm.Has(kv.Key) || !sameValue(fm.Value(kv.Key), kv.Value) {
			return false
		}
	}
	return true
}

// Archive moves the card under archive/ as maintain archives notes (the
// same path, -2, -3 … when taken; marked with by, the day, where it was
// and why), through the journal, retargeting the links to it, and brings
// the indexes up to date; reme undo restores it.
func (c *Card) Archive(ctx context.Context, by, reason string) (string, error) {
	old := c.path
	var dst string
	run, err := c.env.journalRun()
	if err != nil {
		return "", err
	}
	err = c.env.Index.Locked(ctx, func() error {
		// the links to the card must be known: no note may be stale
		if err := c.env.Index.Sync(ctx); err != nil {
			return err
		}
		dst = archivePath(c.env.WS, old, nil)
		return c.env.Index.Archive(ctx, run, old, dst, archiveMark(by, c.env.Today(), old, "", reason), c.why("archived: "+reason))
	})
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", old, err)
	}
	// the listings of where it was
	if _, err := c.index(ctx); err != nil {
		return "", err
	}
	c.path = dst
	return dst, nil
}

// MemoryIndex is what the last refresh of MEMORY.md for this entry did
// (nil for a card that is not an entry).
func (c *Card) MemoryIndex() *store.MemoryIndexResult { return c.memoryIndex }

// Remove deletes the card and brings the indexes up to date.
func (c *Card) Remove(ctx context.Context) (*store.DayIndexResult, error) {
	run, err := c.env.journalRun()
	if err != nil {
		return nil, err
	}
	if err := run.Remove(c.path, c.why("removed")); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return c.index(ctx)
}

// index updates the day index page of the card's date (if any), MEMORY.md
// for an entry, and the search index for the card and those pages, under the writer lock, so that
// two jobs refreshing one day never lose each other's card.
func (c *Card) index(ctx context.Context) (*store.DayIndexResult, error) {
	date := c.spec.Date
	if date == "" {
		date = store.DateFromPath(c.path)
	}
	var idx *store.DayIndexResult
	err := c.env.Index.Locked(ctx, func() error {
		touched := []string{c.path}
		if date != "" {
			var err error
			run, err := c.env.journalRun()
			if err != nil {
				return err
			}
			if idx, err = run.RefreshDayIndex(date); err != nil {
				return err
			}
			touched = append(touched, idx.Path)
		}
		if store.IsEntryPath(c.path) {
			// an entry's listing page is MEMORY.md
			run, err := c.env.journalRun()
			if err != nil {
				return err
			}
			if c.memoryIndex, err = run.RefreshMemoryIndex(c.env.Memory.IndexBounds); err != nil {
				return err
			}
			touched = append(touched, store.MemoryIndexPath)
		}
		return c.env.Index.UpdatePaths(ctx, touched...)
	})
	return idx, err
}

// judge decides what a model run on the card came to. A run that wrote
// the card succeeded; one that said, through the skip tool or an answer
// starting "Skipped:" ("跳过：") without calling any tool, that the input
// is not worth a card is a skip (its reason in c.skip); a run that left an
// existing card as it was without a failed tool call found nothing to add.
// Everything else is a failure that says why: the model's error, the tool
// errors it gave up on, or the answer it ended with.
func (c *Card) judge(out *llm.AgentResult, runErr error) error {
	if c.skip != "" && !c.wrote {
		return nil
	}
	if runErr != nil {
		return fmt.Errorf("model: %w", runErr)
	}
	if c.wrote {
		return nil
	}
	if out != nil && len(out.ToolCalls) == 0 {
		if reason, ok := skipAnswer(out.Text); ok {
			c.skip = reason
			return nil
		}
	}
	lastErr := ""
	if out != nil {
		for _, tc := range out.ToolCalls {
			if tc.Error != "" {
				lastErr = tc.Name + ": " + tc.Error
			}
		}
	}
	if c.Exists() && lastErr == "" {
		return nil // an update that found nothing to change
	}
	var why []string
	if lastErr != "" {
		why = append(why, "its last tool error was "+lastErr)
	}
	if out != nil && strings.TrimSpace(out.Text) != "" {
		why = append(why, fmt.Sprintf("it answered %q", store.TruncateRunes(strings.TrimSpace(out.Text), 200, "…")))
	}
	if len(why) == 0 {
		why = append(why, "it said nothing")
	}
	if c.Exists() {
		return fmt.Errorf("%w: %s was not updated; %s", ErrNoCard, c.path, strings.Join(why, "; "))
	}
	return fmt.Errorf("%w: %s", ErrNoCard, strings.Join(why, "; "))
}

// skipAnswer reads a plain-text skip: "Skipped: <reason>" or "跳过：<reason>".
func skipAnswer(text string) (string, bool) {
	t := strings.TrimSpace(text)
	for _, p := range []string{"skipped:", "skipped -", "跳过：", "跳过:"} {
		if len(t) >= len(p) && strings.EqualFold(t[:len(p)], p) {
			reason := strings.TrimSpace(t[len(p):])
			if reason == "" {
				reason = "(no reason given)"
			}
			return reason, true
		}
	}
	return "", false
}
