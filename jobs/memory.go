package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
)

// Long-term memory: one markdown file per entry under
// memory/entries/, a profile at memory/profile.md, and MEMORY.md listing
// the entries. The operations below are the memory tools (memory_search,
// memory_get, memory_write, memory_delete) for a person at the command
// line and for a model alike; every write goes through the card type, so
// entries get the same confinement, naming and index upkeep as cards.

// ErrStale refuses a write to an entry that changed since the caller (or
// reme's last write) saw it: a hand edit is never overwritten blindly.
var ErrStale = errors.New("changed since it was read")

// DefaultMaxEntryBytes bounds an entry's text.
const DefaultMaxEntryBytes = 64 << 10

// Description and name bounds: an index line, not a document.
const (
	maxEntryNameRunes        = 100
	maxEntryDescriptionRunes = 1000
)

// MemoryOptions configure the long-term layers.
type MemoryOptions struct {
	// Extract runs the long-term pass after auto_memory and auto_memory_cc.
	Extract bool
	// ProfileAuto lets that pass update memory/profile.md.
	ProfileAuto bool
	// MaxEntryBytes bounds an entry's content (0: DefaultMaxEntryBytes).
	MaxEntryBytes int
	// IndexBounds bound MEMORY.md.
	IndexBounds store.MemoryIndexBounds
	// VerifyAfterDays: older entries are shown with a reminder to verify
	// them (0: DefaultVerifyAfterDays).
	VerifyAfterDays int
}

func (o MemoryOptions) maxEntryBytes() int {
	if o.MaxEntryBytes <= 0 {
		return DefaultMaxEntryBytes
	}
	return o.MaxEntryBytes
}

// MemorySessionOptions say who is using the memory tools.
type MemorySessionOptions struct {
	// Agent marks a model's session: it may change the profile only when
	// MemoryOptions.ProfileAuto is set.
	Agent bool
	// Source, when set, is the source of every entry written (a wikilink to
	// the card or session the model read); a request's own is ignored.
	Source string
	// Prompt names the prompt set of a model's session, for the journal.
	Prompt string
	// Run, when set, makes the session's writes one journal run of this
	// command, begun at the first write and ended by the caller
	// (Env.endRun); otherwise each write is a run of its own, unless the
	// caller's run is open.
	Run string
}

// Memory is one session of the memory tools. It remembers the version of
// each entry it read or wrote, so that a write based on what it saw goes
// through and a write over a version it never saw is refused.
type Memory struct {
	env  *Env
	opt  MemorySessionOptions
	seen map[string]string // path -> sha256 of the version this session saw

	// Changes lists what this session wrote or deleted, in order.
	Changes []MemoryChange
}

// MemoryChange is one entry written or deleted.
type MemoryChange struct {
	Action string `json:"action"` // created, updated, deleted
	Path   string `json:"path"`
	Type   string `json:"type,omitempty"`
	Name   string `json:"name,omitempty"`
	// Trash is where a deleted entry went.
	Trash string `json:"trash,omitempty"`
}

// NewMemory starts a session of the memory tools.
func NewMemory(env *Env, opt MemorySessionOptions) *Memory {
	return &Memory{env: env, opt: opt, seen: map[string]string{}}
}

// MemoryWriteRequest creates an entry, or updates one: the entry at Path,
// else the one entry already named Name. Empty fields of an update keep
// their value. Path may also be memory/profile.md.
type MemoryWriteRequest struct {
	Path        string `json:"path,omitempty"`
	Type        string `json:"type,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Content     string `json:"content,omitempty"`
	Due         string `json:"due,omitempty"`
	Expires     string `json:"expires,omitempty"`
	// Hash is the sha256 of the version the change is based on (memory_get
	// returns it); a file with another hash is not overwritten.
	Hash string `json:"hash,omitempty"`
	// Source is a wikilink to where the memory comes from.
	Source string `json:"source,omitempty"`
}

// MemoryWriteResult reports a write.
type MemoryWriteResult struct {
	Path   string `json:"path"`
	Action string `json:"action"` // created, updated, unchanged
	Hash   string `json:"hash"`
	// RenamedFrom is the entry's former path when a new name renamed it.
	RenamedFrom string                   `json:"renamed_from,omitempty"`
	Notes       []string                 `json:"notes,omitempty"`
	Index       *store.MemoryIndexResult `json:"index,omitempty"`
}

// MemoryEntry is an entry (or the profile) as memory_get returns it.
type MemoryEntry struct {
	Path        string `json:"path"`
	Type        string `json:"type,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Created     string `json:"created,omitempty"`
	Updated     string `json:"updated,omitempty"`
	Source      string `json:"source,omitempty"`
	Due         string `json:"due,omitempty"`
	Expires     string `json:"expires,omitempty"`
	Content     string `json:"content"`
	// Hash is the sha256 of the file: pass it to memory_write or
	// memory_delete to change this version.
	Hash string `json:"hash"`
	// Raw is the file as Get read and hashed it, so that a caller shows
	// the very version Hash names.
	Raw []byte `json:"-"`
}

// MemoryRef names an entry: by path, or by its name.
type MemoryRef struct {
	Path string `json:"path,omitempty"`
	Name string `json:"name,omitempty"`
}

// MemoryDeleteRequest names the entry to delete.
type MemoryDeleteRequest struct {
	Path string `json:"path,omitempty"`
	Name string `json:"name,omitempty"`
	// Hash is the version to delete (memory_get returns it).
	Hash string `json:"hash,omitempty"`
	// Reason is kept with the archived entry (archive_reason).
	Reason string `json:"reason,omitempty"`
}

// MemoryDeleteResult reports a delete: the entry is in the trash.
type MemoryDeleteResult struct {
	Path  string                   `json:"path"`
	Trash string                   `json:"trash"`
	Index *store.MemoryIndexResult `json:"index,omitempty"`
}

// whyLine and howLine find the two lines a feedback entry must have
// ("Why:" and "How to apply:", also bold or as list items, with a
// full-width colon).
var (
	whyLine = store.LazyRegexp(`(?mi)^[ \t>*_-]*(?:\*\*|__)?why(?:\*\*|__)?[ \t]*(?:\*\*|__)?[:：]`)
	howLine = store.LazyRegexp(`(?mi)^[ \t>*_-]*(?:\*\*|__)?how to apply(?:\*\*|__)?[ \t]*(?:\*\*|__)?[:：]`)
)

// checkFeedback says what a feedback entry's text lacks.
func checkFeedback(body string) error {
	var missing []string
	if !whyLine().MatchString(body) {
		missing = append(missing, `a "Why:" line`)
	}
	if !howLine().MatchString(body) {
		missing = append(missing, `a "How to apply:" line`)
	}
	if len(missing) > 0 {
		return inputErr("a feedback entry must say why and how to apply it; the content has no %s", strings.Join(missing, " and no "))
	}
	return nil
}

// resolveMemoryPath validates a path given for an entry or the profile.
func (m *Memory) resolveMemoryPath(p string) (rel string, profile bool, err error) {
	rel, err = m.env.WS.Rel(strings.TrimSpace(p))
	if err != nil {
		return "", false, inputErr("path %q: %v", p, err)
	}
	rel, _ = store.ResolveMarkdown(rel)
	switch {
	case rel == store.ProfilePath:
		return rel, true, nil
	case store.IsEntryPath(rel):
		return rel, false, nil
	}
	return "", false, inputErr("path %s is outside %s/: the memory tools change only entries and %s", rel, store.EntriesDir, store.ProfilePath)
}

// effectiveName is what an entry is called: its name, else its file stem.
func effectiveName(e store.EntryInfo) string {
	if e.Name != "" {
		return e.Name
	}
	return stemOf(e.Path)
}

// findByName lists the entries called name (case and surrounding spaces
// ignored).
func findByName(entries []store.EntryInfo, name string) []store.EntryInfo {
	var out []store.EntryInfo
	for _, e := range entries {
		if strings.EqualFold(strings.TrimSpace(effectiveName(e)), strings.TrimSpace(name)) {
			out = append(out, e)
		}
	}
	return out
}

func paths(es []store.EntryInfo) string {
	var ps []string
	for _, e := range es {
		ps = append(ps, e.Path)
	}
	return strings.Join(ps, ", ")
}

// locate finds the entry a reference names: an existing path, or the one
// entry with that name.
func (m *Memory) locate(entries []store.EntryInfo, ref MemoryRef) (store.EntryInfo, bool, error) {
	if strings.TrimSpace(ref.Path) != "" {
		rel, profile, err := m.resolveMemoryPath(ref.Path)
		if err != nil {
			return store.EntryInfo{}, false, err
		}
		if profile {
			return store.EntryInfo{Path: rel}, true, nil
		}
		for _, e := range entries {
			if e.Path == rel {
				return e, false, nil
			}
		}
		return store.EntryInfo{}, false, fmt.Errorf("%w: no entry at %s", store.ErrNotFound, rel)
	}
	name := strings.TrimSpace(ref.Name)
	if name == "" {
		return store.EntryInfo{}, false, inputErr("give the entry's path or name")
	}
	found := findByName(entries, name)
	switch len(found) {
	case 0:
		return store.EntryInfo{}, false, fmt.Errorf("%w: no entry is named %q", store.ErrNotFound, name)
	case 1:
		return found[0], false, nil
	}
	return store.EntryInfo{}, false, inputErr("%d entries are named %q (%s); give the path of the one you mean", len(found), name, paths(found))
}

// inRun journals fn's writes: in the session's shared run (begun now if
// need be), in the open run, or in a run of its own named command.
func (m *Memory) inRun(command string, fn func() error) error {
	if m.opt.Run == "" {
		return m.env.withRun(command, m.opt.Prompt, fn)
	}
	if m.env.Run() == nil {
		if err := m.env.beginRun(m.opt.Run, m.opt.Prompt); err != nil {
			return err
		}
	}
	return fn()
}

// Get returns an entry or the profile, with the hash of its version.
func (m *Memory) Get(ctx context.Context, ref MemoryRef) (*MemoryEntry, error) {
	var entries []store.EntryInfo
	if strings.TrimSpace(ref.Path) == "" {
		var err error
		if entries, err = m.env.WS.ListEntries(); err != nil {
			return nil, err
		}
	} else if rel, _, err := m.resolveMemoryPath(ref.Path); err != nil {
		return nil, err
	} else {
		entries = []store.EntryInfo{{Path: rel}}
	}
	e, _, err := m.locate(entries, ref)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(m.env.WS.Abs(e.Path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no file at %s", store.ErrNotFound, e.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", e.Path, err)
	}
	n := store.ParseNote(e.Path, raw)
	if n.FMErr != nil {
		return nil, fmt.Errorf("the frontmatter of %s does not parse (%v); repair it by hand", e.Path, n.FMErr)
	}
	out := entryOf(n, raw)
	out.Raw = raw
	m.seen[e.Path] = out.Hash
	return out, nil
}

func entryOf(n *store.Note, raw []byte) *MemoryEntry {
	info := store.EntryInfoOf(n)
	return &MemoryEntry{
		Path: n.Path, Type: info.Type, Name: info.Name, Description: info.Description,
		Created: info.Created, Updated: info.Updated, Source: n.FM.String("source"),
		Due: info.Due, Expires: info.Expires, Content: n.Content(), Hash: store.Sum(raw),
	}
}

// checkRequest validates what can be checked before the workspace is
// read; it trims the request's fields.
func (m *Memory) checkRequest(req *MemoryWriteRequest) error {
	for _, f := range []*string{&req.Path, &req.Type, &req.Name, &req.Description, &req.Due, &req.Expires, &req.Hash, &req.Source} {
		*f = strings.TrimSpace(*f)
	}
	req.Type, req.Hash = strings.ToLower(req.Type), strings.ToLower(req.Hash)
	if req.Type != "" && !store.IsEntryType(req.Type) {
		return inputErr("type must be one of %s, not %q", strings.Join(store.EntryTypes, ", "), req.Type)
	}
	if !utf8.ValidString(req.Content) || !utf8.ValidString(req.Name) || !utf8.ValidString(req.Description) {
		return inputErr("the text is not valid UTF-8")
	}
	if n, limit := len(req.Content), m.env.Memory.maxEntryBytes(); n > limit {
		return inputErr("the content is %d bytes; an entry holds at most %d (memory.max_entry_bytes): keep the durable fact, not the conversation", n, limit)
	}
	if utf8.RuneCountInString(req.Name) > maxEntryNameRunes {
		return inputErr("the name is longer than %d characters", maxEntryNameRunes)
	}
	if strings.ContainsAny(req.Name, "\n\r") {
		return inputErr("the name must be one line")
	}
	if utf8.RuneCountInString(req.Description) > maxEntryDescriptionRunes {
		return inputErr("the description is longer than %d characters: one sentence for the index", maxEntryDescriptionRunes)
	}
	for _, d := range []struct{ key, v string }{{"due", req.Due}, {"expires", req.Expires}} {
		if d.v != "" {
			if _, err := store.ParseDate(d.v); err != nil {
				return inputErr("%s must be a date (YYYY-MM-DD), not %q", d.key, d.v)
			}
		}
	}
	if req.Hash != "" && !validHashPrefix(req.Hash) {
		return inputErr("hash must be the sha256 memory_get printed (at least 12 hex digits), not %q", req.Hash)
	}
	return nil
}

// redactRequest masks the secrets in what an entry will say (a key pasted
// into a conversation must not be shown to the agent on every turn from
// then on), and says what it masked, or "".
func redactRequest(req *MemoryWriteRequest) string {
	kinds := map[string]int{}
	for _, f := range []*string{&req.Description, &req.Content} {
		red, found := store.RedactSecrets(*f)
		*f = red
		for _, x := range found {
			kinds[x.Kind]++
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	var parts []string
	for k, n := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	return "secrets were masked before writing: " + strings.Join(parts, ", ")
}

func validHashPrefix(h string) bool {
	if len(h) < 12 || len(h) > 64 {
		return false
	}
	for _, r := range h {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// checkVersion refuses a change to a file whose bytes are not the version
// the caller based it on: the hash given, else the version this session
// saw, else one of the versions reme last wrote (a rolled back or undone
// write brings back an earlier one).
func (m *Memory) checkVersion(rel string, raw []byte, given string, written writtenHashes) error {
	have := store.Sum(raw)
	want, from := given, "the hash given"
	if want == "" {
		want, from = m.seen[rel], "the version read in this session"
	}
	if want == "" {
		if written.has(rel, have) {
			return nil
		}
		want, from = written.last(rel), "the version reme last wrote"
	}
	switch {
	case want == "":
		return fmt.Errorf("%w: %s was not written by reme, and this session has not read it: read it with memory_get and pass its hash (%s) so that nothing written by hand is lost", ErrStale, rel, have[:12])
	case !strings.HasPrefix(have, want):
		return fmt.Errorf("%w: %s was changed since %s (its hash is now %s, not %s): read it again with memory_get, merge, and pass the new hash", ErrStale, rel, from, have[:12], store.TruncateBytes(want, 12))
	}
	return nil
}

// Write creates or updates an entry (or the profile).
func (m *Memory) Write(ctx context.Context, req MemoryWriteRequest) (*MemoryWriteResult, error) {
	if err := m.checkRequest(&req); err != nil {
		return nil, err
	}
	masked := redactRequest(&req)
	var res *MemoryWriteResult
	err := m.inRun("memory_write", func() error {
		return m.env.Index.Locked(ctx, func() error {
			var err error
			res, err = m.write(ctx, req)
			return err
		})
	})
	if res != nil && masked != "" {
		res.Notes = append(res.Notes, masked)
	}
	return res, err
}

func (m *Memory) write(ctx context.Context, req MemoryWriteRequest) (*MemoryWriteResult, error) {
	ws := m.env.WS
	entries, err := ws.ListEntries()
	if err != nil {
		return nil, err
	}
	written, err := readWrittenHashes(m.env)
	if err != nil {
		return nil, err
	}
	var target store.EntryInfo
	profile, exists := false, false
	switch {
	case req.Path != "":
		rel, isProfile, err := m.resolveMemoryPath(req.Path)
		if err != nil {
			return nil, err
		}
		profile = isProfile
		if profile {
			if m.opt.Agent && !m.env.Memory.ProfileAuto {
				return nil, inputErr("%s is kept by hand (memory.profile_auto is off); write an entry of type user instead", store.ProfilePath)
			}
			target, exists = store.EntryInfo{Path: rel}, ws.Exists(rel)
			break
		}
		for _, e := range entries {
			if e.Path == rel {
				target, exists = e, true
			}
		}
		if !exists {
			return nil, fmt.Errorf("%w: no entry at %s (leave path out to create one)", store.ErrNotFound, rel)
		}
	case req.Name == "":
		return nil, inputErr("name is required: a short stable name for the entry (or give path to update one)")
	default:
		found := findByName(entries, req.Name)
		switch len(found) {
		case 0:
		case 1:
			// one entry has this name: it is updated in place
			target, exists = found[0], true
		default:
			return nil, inputErr("%d entries are named %q (%s); give the path of the one to update", len(found), req.Name, paths(found))
		}
	}
	if profile && req.Type != "" {
		return nil, inputErr("the profile has no type; type is for entries")
	}

	var old *store.Note
	var oldRaw []byte
	if exists {
		if oldRaw, err = os.ReadFile(ws.Abs(target.Path)); err != nil {
			return nil, fmt.Errorf("read %s: %w", target.Path, err)
		}
		old = store.ParseNote(target.Path, oldRaw)
		if old.FMErr != nil {
			return nil, inputErr("the frontmatter of %s does not parse (%v); repair it by hand first", target.Path, old.FMErr)
		}
	}

	// the entry as it will be
	next := MemoryEntry{Type: req.Type, Name: req.Name, Description: req.Description, Content: req.Content, Due: req.Due, Expires: req.Expires}
	if exists {
		was := entryOf(old, oldRaw)
		if strings.EqualFold(next.Name, effectiveName(target)) {
			next.Name = "" // the same name, whatever its letter case
		}
		next.Type = firstNonEmpty(next.Type, was.Type)
		next.Description = firstNonEmpty(next.Description, was.Description)
		if strings.TrimSpace(next.Content) == "" {
			next.Content = was.Content
		}
		next.Due = firstNonEmpty(next.Due, was.Due)
		next.Expires = firstNonEmpty(next.Expires, was.Expires)
	}
	if !profile {
		if err := m.checkEntry(entries, target, exists, &next); err != nil {
			return nil, err
		}
	} else if strings.TrimSpace(next.Content) == "" {
		return nil, inputErr("content is empty")
	}
	if src := m.sourceFor(req); exists && unchanged(old, next) && (src == "" || src == old.FM.String("source")) {
		// Nothing would change, so nothing can be lost: the entry is taken
		// as this version (which also heals a record a crash cut short).
		h := store.Sum(oldRaw)
		m.seen[target.Path] = h
		if written.last(target.Path) != h {
			written.add(target.Path, h)
			if err := writeWrittenHashes(m.env, written); err != nil {
				return nil, err
			}
		}
		return &MemoryWriteResult{Path: target.Path, Action: "unchanged", Hash: h}, nil
	}
	if exists {
		if err := m.checkVersion(target.Path, oldRaw, req.Hash, written); err != nil {
			return nil, err
		}
	}

	today := m.env.Today()
	var system []KeyValue
	if !profile {
		created := today
		if exists && strings.TrimSpace(old.FM.String("created")) != "" {
			created = old.FM.String("created")
		}
		system = append(system, KeyValue{"created", created})
	}
	system = append(system, KeyValue{"updated", today})
	if src := m.sourceFor(req); src != "" {
		system = append(system, KeyValue{"source", src})
	}
	spec := CardSpec{Dir: store.EntriesDir, Kind: "entry", Stem: "entry", System: system, FixedPath: profile}
	if exists || profile {
		spec.Path = target.Path
	}
	card, err := OpenCard(m.env, spec)
	if err != nil {
		return nil, err
	}
	meta := map[string]any{}
	if !profile {
		meta["type"] = next.Type
		for _, kv := range []struct{ key, v string }{{"due", next.Due}, {"expires", next.Expires}} {
			if kv.v != "" {
				meta[kv.key] = kv.v
			}
		}
	}
	answer, err := card.Write(ctx, next.Name, next.Description, next.Content, meta)
	if err != nil {
		return nil, err
	}
	if err := m.env.fault("memory-written"); err != nil {
		return nil, err
	}
	fin, err := card.Finish(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.env.fault("memory-finished"); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(ws.Abs(fin.Path))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", fin.Path, err)
	}
	res := &MemoryWriteResult{Path: fin.Path, Action: "updated", Hash: store.Sum(raw), RenamedFrom: fin.Renamed}
	if !exists {
		res.Action = "created"
	}
	if _, notes, ok := strings.Cut(answer, " (note: "); ok {
		res.Notes = append(res.Notes, strings.TrimSuffix(notes, ")"))
	}
	if fin.Renamed != "" {
		written[fin.Path] = written[fin.Renamed]
		delete(written, fin.Renamed)
	}
	written.add(fin.Path, res.Hash)
	m.seen[fin.Path] = res.Hash
	if err := writeWrittenHashes(m.env, written); err != nil {
		return nil, err
	}
	if !profile {
		res.Index = card.MemoryIndex()
	}
	m.Changes = append(m.Changes, MemoryChange{Action: res.Action, Path: res.Path, Type: next.Type, Name: stemOf(res.Path)})
	return res, nil
}

// checkEntry validates an entry as it will be written: a type, a name
// that is free, text that says why and how for feedback.
func (m *Memory) checkEntry(entries []store.EntryInfo, target store.EntryInfo, exists bool, next *MemoryEntry) error {
	if !exists {
		switch {
		case next.Type == "":
			return inputErr("type is required: one of %s", strings.Join(store.EntryTypes, ", "))
		case strings.TrimSpace(next.Content) == "":
			return inputErr("content is empty")
		}
	}
	if !store.IsEntryType(next.Type) {
		return inputErr("%s has type %q; give type (one of %s)", target.Path, next.Type, strings.Join(store.EntryTypes, ", "))
	}
	if next.Type == "feedback" {
		if err := checkFeedback(next.Content); err != nil {
			return err
		}
	}
	if next.Due != "" && next.Type != "project" {
		return inputErr("due is for project entries (a milestone with a deadline); a %s entry has none", next.Type)
	}
	if next.Name == "" {
		return nil
	}
	// the name may not be another entry's, nor become another entry's file
	for _, e := range findByName(entries, next.Name) {
		if e.Path != target.Path {
			return inputErr("the name %q is taken by another entry, %s; choose another name, or update that entry", next.Name, e.Path)
		}
	}
	probe, _ := OpenCard(m.env, CardSpec{Dir: store.EntriesDir, Kind: "entry", Stem: "entry"})
	dir := store.EntriesDir
	if exists {
		dir = path.Dir(target.Path)
	}
	file := dir + "/" + probe.cleanName(next.Name) + ".md"
	if file != target.Path && m.env.WS.Exists(file) {
		other := "another note"
		for _, e := range entries {
			if e.Path == file {
				other = fmt.Sprintf("another entry (named %q)", effectiveName(e))
			}
		}
		return inputErr("the name %q would make the file %s, which is %s; choose another name", next.Name, file, other)
	}
	return nil
}

// unchanged reports whether writing next would change nothing but dates.
func unchanged(old *store.Note, next MemoryEntry) bool {
	was := entryOf(old, nil)
	return (next.Name == "" || next.Name == was.Name) && next.Type == was.Type && next.Description == was.Description &&
		strings.TrimSpace(next.Content) == strings.TrimSpace(was.Content) && next.Due == was.Due && next.Expires == was.Expires
}

// sourceFor is the source a write records: the session's, else the
// request's as a wikilink, else "".
func (m *Memory) sourceFor(req MemoryWriteRequest) string {
	src := m.opt.Source
	if src == "" {
		src = req.Source
	}
	if src == "" {
		return ""
	}
	if t := store.LinkTarget(src); t != "" {
		return store.LinkTo(t)
	}
	return src
}

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// Delete moves an entry to the trash: it is archived as maintain archives
// (archive/memory/entries/…, marked with when, from where and why), and
// reme undo brings it back. A hash, when given or when this session read
// the entry, must match the file.
func (m *Memory) Delete(ctx context.Context, ref MemoryDeleteRequest) (*MemoryDeleteResult, error) {
	ref.Hash = strings.ToLower(strings.TrimSpace(ref.Hash))
	ref.Reason = strings.Join(strings.Fields(ref.Reason), " ")
	if utf8.RuneCountInString(ref.Reason) > maxEntryDescriptionRunes {
		return nil, inputErr("the reason is longer than %d characters", maxEntryDescriptionRunes)
	}
	if ref.Hash != "" && !validHashPrefix(ref.Hash) {
		return nil, inputErr("hash must be the sha256 memory_get printed (at least 12 hex digits), not %q", ref.Hash)
	}
	var res *MemoryDeleteResult
	err := m.inRun("memory_delete", func() error { return m.delete(ctx, ref, &res) })
	return res, err
}

func (m *Memory) delete(ctx context.Context, ref MemoryDeleteRequest, out **MemoryDeleteResult) error {
	var res *MemoryDeleteResult
	err := m.env.Index.Locked(ctx, func() error {
		entries, err := m.env.WS.ListEntries()
		if err != nil {
			return err
		}
		e, profile, err := m.locate(entries, MemoryRef{Path: ref.Path, Name: ref.Name})
		if err != nil {
			return err
		}
		if profile {
			return inputErr("%s is not deleted with memory_delete; edit it by hand", store.ProfilePath)
		}
		raw, err := os.ReadFile(m.env.WS.Abs(e.Path))
		if err != nil {
			return fmt.Errorf("read %s: %w", e.Path, err)
		}
		if ref.Hash != "" || m.seen[e.Path] != "" {
			// only what the caller saw is deleted; without a version to
			// compare, the trash keeps whatever it was
			if err := m.checkVersion(e.Path, raw, ref.Hash, nil); err != nil {
				return err
			}
		}
		card, err := OpenCard(m.env, CardSpec{Dir: store.EntriesDir, Kind: "entry", Path: e.Path})
		if err != nil {
			return err
		}
		reason := "deleted with memory_delete"
		if ref.Reason != "" {
			reason += ": " + ref.Reason
		}
		trash, err := card.Archive(ctx, "memory_delete", reason)
		if err != nil {
			return err
		}
		if err := m.env.fault("memory-trashed"); err != nil {
			return err
		}
		written, err := readWrittenHashes(m.env)
		if err != nil {
			return err
		}
		delete(written, e.Path)
		delete(m.seen, e.Path)
		if err := writeWrittenHashes(m.env, written); err != nil {
			return err
		}
		res = &MemoryDeleteResult{Path: e.Path, Trash: trash, Index: card.MemoryIndex()}
		m.Changes = append(m.Changes, MemoryChange{Action: "deleted", Path: e.Path, Type: e.Type, Name: effectiveName(e), Trash: trash})
		return nil
	})
	*out = res
	return err
}

// MemorySearchRequest searches the long-term layers.
type MemorySearchRequest struct {
	Query string `json:"query"`
	// Types narrows the search: user, feedback, project, reference, entry
	// (all four), profile, card (daily cards), digest. Empty: entries and
	// the profile.
	Types []string `json:"types,omitempty"`
	Limit int      `json:"limit,omitempty"`
}

// Search finds entries (and the profile) for a keyword query.
func (m *Memory) Search(ctx context.Context, req MemorySearchRequest) ([]NoteHit, error) {
	q := strings.TrimSpace(req.Query)
	if q == "" {
		return nil, inputErr("query cannot be empty")
	}
	types := req.Types
	if len(types) == 0 {
		types = []string{"entry", "profile"}
	}
	for _, t := range types {
		if !store.IsSearchType(t) {
			return nil, inputErr("type must be one of %s, not %q", strings.Join(store.SearchTypes, ", "), t)
		}
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 5
	}
	if err := m.env.Index.SyncScope(ctx, scopeOf(types)...); err != nil {
		return nil, err
	}
	return m.env.Index.SearchNotes(ctx, NoteQuery{Query: q, Types: types, Limit: limit})
}

// scopeOf is the index roots a search over types reads.
func scopeOf(types []string) []string {
	set := map[string]bool{}
	for _, t := range types {
		switch t {
		case "card":
			set[store.DailyDir] = true
		case "digest":
			set[store.DigestDir] = true
		case "memory_index":
			set[store.MemoryIndexPath] = true
		default:
			set[store.MemoryDir] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NoteQuery is a keyword search narrowed to kinds of note.
type NoteQuery struct {
	Query string
	Types []string // store.SearchTypes; empty: every searchable note
	Limit int
}

// NoteHit is a note a search found.
type NoteHit struct {
	Path        string  `json:"path"`
	Type        string  `json:"type,omitempty"`
	Name        string  `json:"name,omitempty"`
	Description string  `json:"description,omitempty"`
	Score       float64 `json:"score"`
	StartLine   int     `json:"start_line,omitempty"`
	EndLine     int     `json:"end_line,omitempty"`
	Text        string  `json:"text,omitempty"`
}

// NoteInfo is an indexed note's name, description and type.
type NoteInfo struct {
	Path        string `json:"path"`
	Type        string `json:"type,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// writtenHashes remembers the sha256 of the last versions of each entry
// reme wrote (newest last), so that an entry edited by hand since is not
// overwritten by a write that did not read it, while a version reme wrote
// that a rollback or an undo brought back is still its own. It is derived
// state: losing it only means that such a write must pass the hash.
type writtenHashes map[string][]string

// keptVersions is how many versions of an entry the record keeps.
const keptVersions = 4

func (w writtenHashes) has(rel, h string) bool {
	for _, x := range w[rel] {
		if x == h {
			return true
		}
	}
	return false
}

func (w writtenHashes) last(rel string) string {
	if v := w[rel]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

func (w writtenHashes) add(rel, h string) {
	v := append(w[rel], h)
	if len(v) > keptVersions {
		v = v[len(v)-keptVersions:]
	}
	w[rel] = v
}

type writtenHashesFile struct {
	Version int           `json:"version"`
	Entries writtenHashes `json:"entries"`
}

func writtenHashesPath(env *Env) string { return env.WS.MetadataPath("memory", "written.json") }

func readWrittenHashes(env *Env) (writtenHashes, error) {
	out := writtenHashes{}
	b, err := os.ReadFile(writtenHashesPath(env))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", writtenHashesPath(env), err)
	}
	var f writtenHashesFile
	if err := json.Unmarshal(b, &f); err != nil {
		env.logger().Warn("the record of entries reme wrote does not parse; writes to existing entries need their hash", "path", writtenHashesPath(env), "err", err)
		return out, nil
	}
	for p, hs := range f.Entries {
		// a path read back from state passes the same rules as user input;
		// the record of a file gone (deleted by hand, or rolled back) is
		// dropped
		if rel, err := env.WS.Rel(p); err != nil || rel != p || !(store.IsEntryPath(p) || p == store.ProfilePath) || !env.WS.Exists(p) {
			continue
		}
		for _, h := range hs {
			if validHashPrefix(h) {
				out.add(p, h)
			}
		}
	}
	return out, nil
}

func writeWrittenHashes(env *Env, m writtenHashes) error {
	b, err := json.Marshal(writtenHashesFile{Version: 1, Entries: m})
	if err != nil {
		return err
	}
	return store.WriteFileAbs(writtenHashesPath(env), b) // it creates the folder
}
