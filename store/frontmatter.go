package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// ErrFrontmatter is wrapped by every frontmatter parse error.
var ErrFrontmatter = errors.New("invalid frontmatter")

// maxYAMLNodes bounds alias expansion so a hostile "billion laughs"
// document cannot blow up memory when converted to values.
const maxYAMLNodes = 10000

// maxAliasBytes bounds the scalar bytes reached through aliases, so that a
// large scalar repeated by many aliases cannot blow up a conversion either.
const maxAliasBytes = 1 << 20

// expandBudget is what one conversion of a node tree may still expand.
type expandBudget struct{ nodes, aliasBytes int }

func newExpandBudget() *expandBudget {
	return &expandBudget{nodes: maxYAMLNodes, aliasBytes: maxAliasBytes}
}

// spend charges one node; it reports false once the budget is exhausted.
func (b *expandBudget) spend(n *yaml.Node, viaAlias bool) bool {
	b.nodes--
	if viaAlias && n != nil {
		b.aliasBytes -= len(n.Value)
	}
	return b.nodes >= 0 && b.aliasBytes >= 0
}

// Frontmatter is a note's YAML header kept as a yaml.v3 node tree, so that
// rewriting keeps key order, unknown keys and comments. Values are read with
// one interpretation everywhere (YAML 1.2 core schema): `no` and
// `2026-06-20` stay strings.
type Frontmatter struct {
	doc   *yaml.Node // DocumentNode holding a MappingNode
	dirty bool       // changed since parsing; unchanged headers are written back byte for byte
	// src is the YAML text parsed and changed the keys set or deleted since:
	// a rewrite re-renders only those and copies every other key's lines
	// as they were (PyYAML's wrapped scalars and list indentation included).
	src     string
	changed map[string]bool
}

// NewFrontmatter returns an empty mapping.
func NewFrontmatter() *Frontmatter {
	return &Frontmatter{doc: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}}
}

// SplitFrontmatter separates a leading `---` fenced YAML block from the body.
// bodyLine is the 1-based line number of the body's first line. Without a
// complete fence the whole text is body.
func SplitFrontmatter(text string) (yamlText, body string, bodyLine int, ok bool) {
	s := splitFrontmatter(text)
	return s.yaml, s.body, s.bodyLine, s.ok
}

// fmSplit is a split note text; open and close are the fence lines exactly
// as found (trailing blanks, "\r\n"), so an unedited header can be written
// back byte for byte.
type fmSplit struct {
	yaml, body  string
	bodyLine    int
	open, close string
	ok          bool
}

func splitFrontmatter(text string) fmSplit {
	first, rest, found := strings.Cut(text, "\n")
	if !found || strings.TrimSpace(first) != "---" {
		return fmSplit{body: text, bodyLine: 1}
	}
	open := text[:len(first)+1]
	line := 2
	off := 0
	for off <= len(rest) {
		end := strings.IndexByte(rest[off:], '\n')
		var cur string
		next := len(rest) + 1
		if end < 0 {
			cur = rest[off:]
		} else {
			cur = rest[off : off+end]
			next = off + end + 1
		}
		if strings.TrimSpace(cur) == "---" {
			s := fmSplit{yaml: rest[:off], bodyLine: line + 1, open: open, ok: true}
			if next <= len(rest) {
				s.body, s.close = rest[next:], rest[off:next]
			} else {
				s.close = rest[off:]
			}
			return s
		}
		if end < 0 {
			break
		}
		off = next
		line++
	}
	return fmSplit{body: text, bodyLine: 1}
}

// ParseFrontmatter parses the YAML between the fences. The root must be a
// mapping; an empty block is an empty mapping.
func ParseFrontmatter(yamlText string) (*Frontmatter, error) {
	if strings.TrimSpace(yamlText) == "" {
		return NewFrontmatter(), nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yamlText), &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFrontmatter, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		fm := NewFrontmatter() // only comments
		fm.src = yamlText
		return fm, nil
	}
	if doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: not a mapping", ErrFrontmatter)
	}
	return &Frontmatter{doc: &doc, src: yamlText}, nil
}

func (f *Frontmatter) mapping() *yaml.Node { return f.doc.Content[0] }

// Len is the number of keys.
func (f *Frontmatter) Len() int { return len(f.mapping().Content) / 2 }

// Keys returns the keys in file order.
func (f *Frontmatter) Keys() []string {
	m := f.mapping()
	keys := make([]string, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		keys = append(keys, m.Content[i].Value)
	}
	return keys
}

func (f *Frontmatter) node(key string) *yaml.Node {
	m := f.mapping()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return resolveAlias(m.Content[i+1])
		}
	}
	return nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// Has reports whether key is present.
func (f *Frontmatter) Has(key string) bool { return f.node(key) != nil }

// String returns a scalar value as written (null is ""). Non-scalars are "".
func (f *Frontmatter) String(key string) string {
	n := f.node(key)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return ""
	}
	return n.Value
}

// Strings returns a list of scalars; a single scalar counts as a list of one.
func (f *Frontmatter) Strings(key string) []string {
	n := f.node(key)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" || n.Value == "" {
			return nil
		}
		return []string{n.Value}
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			c = resolveAlias(c)
			if c != nil && c.Kind == yaml.ScalarNode && c.ShortTag() != "!!null" {
				out = append(out, c.Value)
			}
		}
		return out
	}
	return nil
}

// IsList reports whether key holds a YAML sequence.
func (f *Frontmatter) IsList(key string) bool {
	n := f.node(key)
	return n != nil && n.Kind == yaml.SequenceNode
}

// Value converts one key's value to plain Go values (strings, bools, int64,
// json.Number, []any, map[string]any, nil).
func (f *Frontmatter) Value(key string) any {
	n := f.node(key)
	if n == nil {
		return nil
	}
	return toValue(n, newExpandBudget(), false)
}

// Map converts the whole mapping; JSON encoding of it sorts the keys.
func (f *Frontmatter) Map() map[string]any {
	v, _ := toValue(f.mapping(), newExpandBudget(), false).(map[string]any)
	if v == nil {
		v = map[string]any{}
	}
	return v
}

// JSON is the frontmatter as a JSON object.
func (f *Frontmatter) JSON() string {
	b, err := json.Marshal(f.Map())
	if err != nil {
		return "{}"
	}
	return string(b)
}

func toValue(n *yaml.Node, budget *expandBudget, viaAlias bool) any {
	if n == nil || !budget.spend(n, viaAlias) {
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		return toValue(n.Alias, budget, true)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return toValue(n.Content[0], budget, viaAlias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, toValue(c, budget, viaAlias))
		}
		return out
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolveAlias(n.Content[i])
			key := ""
			if k != nil {
				key = k.Value
			}
			if _, dup := out[key]; !dup {
				out[key] = toValue(n.Content[i+1], budget, viaAlias)
			}
		}
		return out
	}
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			return n.Value
		}
		return b
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return i
		}
		return n.Value
	case "!!float":
		if json.Valid([]byte(n.Value)) {
			return json.Number(n.Value)
		}
		return n.Value
	}
	return n.Value
}

// Set replaces a key's value in place, or appends the key. Comments on the
// key survive.
func (f *Frontmatter) Set(key string, v any) error {
	val, err := encodeValue(v)
	if err != nil {
		return fmt.Errorf("encode frontmatter %s: %w", key, err)
	}
	if val.Kind == yaml.SequenceNode && len(val.Content) <= 8 && allScalars(val.Content) {
		val.Style = yaml.FlowStyle // memory_tags: [a, b] reads better than a block list
	}
	guardFences(&val)
	quoteLinks(&val)
	m := f.mapping()
	f.markChanged(key)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			f.detach(old)
			val.LineComment = old.LineComment
			val.FootComment = old.FootComment
			if old.Kind == yaml.SequenceNode && val.Kind == yaml.SequenceNode {
				val.Style = old.Style
			}
			m.Content[i+1] = &val
			return nil
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	if strings.Contains(key, "\n") {
		k.Style = yaml.DoubleQuotedStyle
	}
	// A header whose keys are sorted (PyYAML's sort_keys, as ReMe writes
	// them) gets the new key at its sorted place, as PyYAML would put it.
	at := len(m.Content)
	if keys := f.Keys(); len(keys) > 1 && sort.StringsAreSorted(keys) {
		at = 2 * sort.SearchStrings(keys, key)
	}
	m.Content = append(m.Content[:at], append([]*yaml.Node{k, &val}, m.Content[at:]...)...)
	return nil
}

// detach replaces the aliases that other keys hold to anchors inside a
// value about to be replaced or deleted by copies of what they pointed to,
// so that no key is left referring to an anchor that is gone.
func (f *Frontmatter) detach(gone *yaml.Node) {
	anchored := map[*yaml.Node]bool{}
	var collect func(n *yaml.Node)
	collect = func(n *yaml.Node) {
		if n == nil || n.Kind == yaml.AliasNode {
			return
		}
		if n.Anchor != "" {
			anchored[n] = true
		}
		for _, c := range n.Content {
			collect(c)
		}
	}
	collect(gone)
	if len(anchored) == 0 {
		return
	}
	m := f.mapping()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i+1] == gone {
			continue
		}
		changed := false
		var walk func(p **yaml.Node)
		walk = func(p **yaml.Node) {
			n := *p
			if n == nil {
				return
			}
			if n.Kind == yaml.AliasNode && anchored[n.Alias] {
				c := cloneNode(n.Alias)
				c.Anchor = ""
				*p, changed = c, true
				return
			}
			for j := range n.Content {
				walk(&n.Content[j])
			}
		}
		walk(&m.Content[i+1])
		if changed {
			f.markChanged(m.Content[i].Value)
		}
	}
}

// setNode replaces a key's value with a node built from this mapping's
// own (a rewritten copy).
func (f *Frontmatter) setNode(key string, v *yaml.Node) {
	m := f.mapping()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			f.detach(m.Content[i+1])
			m.Content[i+1] = v
			f.markChanged(key)
			return
		}
	}
}

func (f *Frontmatter) markChanged(key string) {
	if f.changed == nil {
		f.changed = map[string]bool{}
	}
	f.changed[key] = true
	f.dirty = true
}

// encodeValue turns v into a node. yaml.v3's Node.Encode emits v and parses
// the text back; its emitter writes some strings ("\t\n") that its parser
// refuses, and drops the leading newline of others. Strings and lists of
// strings are therefore checked and, where needed, double-quoted directly.
func encodeValue(v any) (yaml.Node, error) {
	var val yaml.Node
	err := val.Encode(v)
	if err == nil {
		restoreStrings(&val, v)
		return val, nil
	}
	var items []any
	switch x := v.(type) {
	case string:
		if utf8.ValidString(x) {
			return yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x, Style: yaml.DoubleQuotedStyle}, nil
		}
		return val, err
	case []string:
		for _, s := range x {
			items = append(items, s)
		}
	case []any:
		items = x
	default:
		return val, err
	}
	seq := yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, it := range items {
		c, err := encodeValue(it)
		if err != nil {
			return val, err
		}
		seq.Content = append(seq.Content, &c)
	}
	return seq, nil
}

// restoreStrings puts back string values that yaml.v3's Node.Encode
// mangled (it drops the leading newline of a block scalar), double-quoted
// so that rendering keeps them exactly.
func restoreStrings(n *yaml.Node, v any) {
	switch x := v.(type) {
	case string:
		if n.Kind == yaml.ScalarNode && n.Value != x && utf8.ValidString(x) {
			n.Value, n.Tag, n.Style = x, "!!str", yaml.DoubleQuotedStyle
		}
	case []string:
		if n.Kind == yaml.SequenceNode && len(n.Content) == len(x) {
			for i := range x {
				restoreStrings(n.Content[i], x[i])
			}
		}
	case []any:
		if n.Kind == yaml.SequenceNode && len(n.Content) == len(x) {
			for i := range x {
				restoreStrings(n.Content[i], x[i])
			}
		}
	}
}

// guardFences double-quotes every multi-line string with a line that reads
// as a `---` fence. Left to the encoder it becomes a literal block whose
// indented "---" line closes the header early (ReMe's parser strips lines
// before comparing); double-quoted it stays on one line with "\n" escapes,
// as PyYAML writes it.
func guardFences(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "\n") {
		for _, line := range strings.Split(n.Value, "\n") {
			if strings.TrimSpace(line) == "---" {
				n.Style = yaml.DoubleQuotedStyle
				break
			}
		}
	}
	for _, c := range n.Content {
		guardFences(c)
	}
}

// quoteLinks double-quotes wikilink strings ("[[session/dialog/x.jsonl]]"),
// the way ReMe writes provenance keys.
func quoteLinks(n *yaml.Node) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 && n.ShortTag() == "!!str" && strings.HasPrefix(n.Value, "[[") && !strings.Contains(n.Value, "\n") {
			n.Style = yaml.DoubleQuotedStyle
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			quoteLinks(c)
		}
	}
}

func allScalars(ns []*yaml.Node) bool {
	for _, n := range ns {
		if n.Kind != yaml.ScalarNode || strings.ContainsAny(n.Value, "\n") {
			return false
		}
	}
	return true
}

// Delete removes a key; it reports whether the key was present.
func (f *Frontmatter) Delete(key string) bool {
	m := f.mapping()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			f.detach(m.Content[i+1])
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			f.markChanged(key)
			return true
		}
	}
	return false
}

// Dirty reports whether the mapping changed since it was parsed.
func (f *Frontmatter) Dirty() bool { return f.dirty }

// Clone returns a deep copy.
func (f *Frontmatter) Clone() *Frontmatter {
	c := &Frontmatter{doc: cloneNode(f.doc), dirty: f.dirty, src: f.src}
	if f.changed != nil {
		c.changed = make(map[string]bool, len(f.changed))
		for k, v := range f.changed {
			c.changed[k] = v
		}
	}
	return c
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = cloneNode(ch)
	}
	return &c
}

// Render writes the mapping back as YAML (without fences). An empty mapping
// renders as "". A parsed header keeps every key that was not changed
// byte for byte; only set, added and deleted keys differ.
func (f *Frontmatter) Render() (string, error) {
	if f.src != "" {
		if !f.dirty {
			return f.src, nil
		}
		if out, ok, err := f.splice(); err != nil {
			return "", err
		} else if ok && f.reads(out) {
			return out, nil
		}
	}
	if f.Len() == 0 && f.doc.HeadComment == "" && f.mapping().HeadComment == "" {
		return "", nil
	}
	return encodeYAML(f.doc)
}

func encodeYAML(n *yaml.Node) (string, error) {
	spellFlowNulls(n, false)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "", fmt.Errorf("render frontmatter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("render frontmatter: %w", err)
	}
	return buf.String(), nil
}

// reads reports whether text parses to this mapping's values: the check
// that a spliced header says what was meant before it is written.
func (f *Frontmatter) reads(text string) bool {
	back, err := ParseFrontmatter(text)
	return err == nil && reflect.DeepEqual(back.Map(), f.Map())
}

// spellFlowNulls writes empty null values inside flow collections as
// "null": yaml.v3 would emit them as an empty quoted string there, which
// reads back as "" instead of null. A key is left as it is: a key is read
// by its text, so the empty null key ("{? }") must stay "" (written `""`),
// while "null" would read back as a key named null.
func spellFlowNulls(n *yaml.Node, flow bool) {
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode && flow && n.Value == "" && n.ShortTag() == "!!null" {
		n.Value = "null"
	}
	flow = flow || n.Style&yaml.FlowStyle != 0
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 && c.Kind == yaml.ScalarNode {
			continue
		}
		spellFlowNulls(c, flow)
	}
}

// srcLayout is the parsed header's text cut at its top-level keys.
type srcLayout struct {
	prefix     string            // lines before the first key (comments)
	lead       map[string]string // blank and comment lines just above a key
	text       map[string]string // a key's own lines: the key, its value and comments inside it
	tail       string            // blank and comment lines after the last key
	seqStyle   map[string]int    // column of a key's block-list items (1: "- a" under the key)
	indentless bool              // the header writes block lists as PyYAML does, at the key's column
	crlf       bool
}

// layout cuts src at its top-level keys. It reports false for a header it
// cannot cut safely (flow style, keys not at column 1, duplicate keys).
func layout(src string) (*srcLayout, bool) {
	if strings.Contains(strings.ReplaceAll(src, "\r\n", ""), "\r") {
		return nil, false // a lone CR ends a line for YAML, not for the cut
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, false
	}
	lines := strings.SplitAfter(src, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	l := &srcLayout{lead: map[string]string{}, text: map[string]string{}, seqStyle: map[string]int{},
		crlf: strings.Contains(src, "\r\n")}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		l.prefix = src
		return l, true
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode || m.Style&yaml.FlowStyle != 0 {
		return nil, false
	}
	type cut struct {
		key  string
		line int // 0-based
	}
	var cuts []cut
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Column != 1 || k.Line < 1 || k.Line > len(lines) {
			return nil, false
		}
		if len(cuts) > 0 && k.Line <= cuts[len(cuts)-1].line+1 {
			return nil, false
		}
		if _, dup := l.text[k.Value]; dup {
			return nil, false
		}
		l.text[k.Value] = ""
		if v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 {
			l.seqStyle[k.Value] = v.Content[0].Column - 2 // the "- " precedes the first item
			if v.Content[0].Column-2 == 1 {
				l.indentless = true
			}
		}
		cuts = append(cuts, cut{k.Value, k.Line - 1})
	}
	if len(cuts) == 0 {
		l.prefix = src
		return l, true
	}
	l.prefix = strings.Join(lines[:cuts[0].line], "")
	for i, c := range cuts {
		end := len(lines)
		if i+1 < len(cuts) {
			end = cuts[i+1].line
		}
		// Blank and comment lines at the end of a key's lines belong to
		// what follows: the next key's head comment, or the header's tail.
		last := end
		for last > c.line+1 && isLeadLine(lines[last-1]) {
			last--
		}
		l.text[c.key] = strings.Join(lines[c.line:last], "")
		trailing := strings.Join(lines[last:end], "")
		if i+1 < len(cuts) {
			l.lead[cuts[i+1].key] = trailing
		} else {
			l.tail = trailing
		}
	}
	return l, true
}

// isLeadLine is a blank line or a comment at column 1.
func isLeadLine(line string) bool {
	t := strings.TrimRight(line, "\r\n")
	return strings.TrimSpace(t) == "" || strings.HasPrefix(t, "#")
}

// splice renders the header from the parsed text, re-rendering only the
// keys that changed.
func (f *Frontmatter) splice() (string, bool, error) {
	l, ok := layout(f.src)
	if !ok {
		return "", false, nil
	}
	var b strings.Builder
	b.WriteString(l.prefix)
	m := f.mapping()
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		orig, existed := l.text[k.Value]
		if existed {
			b.WriteString(l.lead[k.Value])
		}
		if existed && !f.changed[k.Value] {
			b.WriteString(orig)
			if !strings.HasSuffix(orig, "\n") {
				b.WriteString(lineEnd(l.crlf))
			}
			continue
		}
		key := *k
		if existed {
			key.HeadComment = "" // already written with the lead lines
		}
		pair, err := encodeYAML(&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{&key, v}})
		if err != nil {
			return "", true, err
		}
		col, ok := l.seqStyle[k.Value]
		if v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && ((ok && col == 1) || (!ok && l.indentless)) {
			pair = dedentBlock(pair, 2)
		}
		if l.crlf {
			pair = strings.ReplaceAll(pair, "\n", "\r\n")
		}
		b.WriteString(pair)
	}
	b.WriteString(l.tail)
	return b.String(), true, nil
}

func lineEnd(crlf bool) string {
	if crlf {
		return "\r\n"
	}
	return "\n"
}

// dedentBlock removes n spaces from every line after the first: yaml.v3
// indents a block list under its key, PyYAML does not.
func dedentBlock(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	pad := strings.Repeat(" ", n)
	for i := 1; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], pad) && strings.TrimSpace(lines[i]) != "" {
			return s // not uniformly indented: leave it as yaml.v3 wrote it
		}
		lines[i] = strings.TrimPrefix(lines[i], pad)
	}
	return strings.Join(lines, "")
}
