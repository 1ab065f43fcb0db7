package store

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestSplitFrontmatter(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		yaml     string
		body     string
		bodyLine int
		ok       bool
	}{
		{"empty", "", "", "", 1, false},
		{"no fence", "hello\nworld\n", "", "hello\nworld\n", 1, false},
		{"fence not first line", "\n---\na: 1\n---\nbody", "", "\n---\na: 1\n---\nbody", 1, false},
		{"only opening fence", "---", "", "---", 1, false},
		{"unclosed", "---\na: 1\nbody\n", "", "---\na: 1\nbody\n", 1, false},
		{"unclosed no newline", "---\na: 1", "", "---\na: 1", 1, false},
		{"four dashes is not a fence", "----\na: 1\n----\nbody", "", "----\na: 1\n----\nbody", 1, false},
		{"basic", "---\na: 1\n---\nbody\n", "a: 1\n", "body\n", 3 + 1, true},
		{"blank line before body", "---\nname: x\ndescription: y\n---\n\nbody\n", "name: x\ndescription: y\n", "\nbody\n", 5, true},
		{"empty header", "---\n---\nbody", "", "body", 3, true},
		{"empty header no body", "---\n---\n", "", "", 3, true},
		{"closing fence at EOF", "---\na: 1\n---", "a: 1\n", "", 4, true},
		{"trailing spaces on fences", "--- \na: 1\n---   \nbody", "a: 1\n", "body", 4, true},
		{"leading spaces on fences", "  ---\na: 1\n ---\nbody", "a: 1\n", "body", 4, true},
		{"crlf", "---\r\na: 1\r\nb: 2\r\n---\r\nbody\r\n", "a: 1\r\nb: 2\r\n", "body\r\n", 5, true},
		{"first closing fence wins", "---\na: 1\n---\nbody\n---\nmore\n", "a: 1\n", "body\n---\nmore\n", 4, true},
		{"multi-line header", "---\na: 1\nb:\n  - x\n  - y\nc: |\n  text\n---\n# Title\n", "a: 1\nb:\n  - x\n  - y\nc: |\n  text\n", "# Title\n", 9, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y, body, line, ok := SplitFrontmatter(tt.in)
			if y != tt.yaml || body != tt.body || line != tt.bodyLine || ok != tt.ok {
				t.Fatalf("SplitFrontmatter(%q) = (%q, %q, %d, %v), want (%q, %q, %d, %v)",
					tt.in, y, body, line, ok, tt.yaml, tt.body, tt.bodyLine, tt.ok)
			}
			// The body's first line really is line bodyLine of the input.
			if ok && body != "" {
				lines := strings.Split(tt.in, "\n")
				first, _, _ := strings.Cut(body, "\n")
				if lines[line-1] != first {
					t.Fatalf("line %d of input is %q, body starts %q", line, lines[line-1], first)
				}
			}
		})
	}
}

func TestParseFrontmatterScalarsStayStrings(t *testing.T) {
	fm, err := ParseFrontmatter("name: no\ndate: 2026-06-20\nn: 010\nok: yes\noff: off\nt: true\nv: 1.10\nts: 2026-06-20T10:00:00Z\nempty:\nnul: null\ntilde: ~\nquoted: \"x\"\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"name":   "no",
		"date":   "2026-06-20",
		"n":      "010",
		"ok":     "yes",
		"off":    "off",
		"t":      "true",
		"v":      "1.10",
		"ts":     "2026-06-20T10:00:00Z",
		"empty":  "",
		"nul":    "",
		"tilde":  "",
		"quoted": "x",
		"absent": "",
	}
	for k, want := range tests {
		if got := fm.String(k); got != want {
			t.Errorf("String(%q) = %q, want %q", k, got, want)
		}
	}
	if !fm.Has("nul") || fm.Has("absent") {
		t.Errorf("Has(nul)=%v Has(absent)=%v", fm.Has("nul"), fm.Has("absent"))
	}
	wantKeys := []string{"name", "date", "n", "ok", "off", "t", "v", "ts", "empty", "nul", "tilde", "quoted"}
	if diff := cmp.Diff(wantKeys, fm.Keys()); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
	if fm.Len() != len(wantKeys) {
		t.Errorf("Len = %d", fm.Len())
	}
}

func TestFrontmatterValueTypes(t *testing.T) {
	src := `name: no
date: 2026-06-20
yes1: yes
b1: true
b2: false
b3: True
i: 42
neg: -7
lead: 010
big: 123456789012345678901234567890
hex: 0x1F
f: 1.5
e: 1e3
inf: .inf
nul: null
tilde: ~
empty:
list: [a, 1, true, null]
block:
  - x
  - y
nested:
  k: v
  n: 2
anchor: &a {p: 1}
ref: *a
`
	fm, err := ParseFrontmatter(src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"name":   "no",
		"date":   "2026-06-20",
		"yes1":   "yes",
		"b1":     true,
		"b2":     false,
		"b3":     true,
		"i":      int64(42),
		"neg":    int64(-7),
		"lead":   int64(10), // YAML 1.2: decimal, not octal
		"big":    json.Number("123456789012345678901234567890"),
		"hex":    "0x1F",
		"f":      json.Number("1.5"),
		"e":      json.Number("1e3"),
		"inf":    ".inf",
		"nul":    nil,
		"tilde":  nil,
		"empty":  nil,
		"list":   []any{"a", int64(1), true, nil},
		"block":  []any{"x", "y"},
		"nested": map[string]any{"k": "v", "n": int64(2)},
		"anchor": map[string]any{"p": int64(1)},
		"ref":    map[string]any{"p": int64(1)},
	}
	got := fm.Map()
	// "big" does not fit int64: YAML calls it an int, accept it either as a
	// json.Number or as the literal string.
	if s, ok := got["big"].(string); ok && s == "123456789012345678901234567890" {
		got["big"] = json.Number(s)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Map (-want +got):\n%s", diff)
	}
	for k, v := range want {
		if diff := cmp.Diff(v, fm.Value(k)); diff != "" && k != "big" {
			t.Errorf("Value(%q) (-want +got):\n%s", k, diff)
		}
	}
	if fm.Value("absent") != nil {
		t.Errorf("Value(absent) = %v", fm.Value("absent"))
	}
	// Strings
	if diff := cmp.Diff([]string{"x", "y"}, fm.Strings("block")); diff != "" {
		t.Errorf("Strings(block): %s", diff)
	}
	if diff := cmp.Diff([]string{"a", "1", "true"}, fm.Strings("list")); diff != "" {
		t.Errorf("Strings(list): %s", diff)
	}
	if diff := cmp.Diff([]string{"no"}, fm.Strings("name")); diff != "" {
		t.Errorf("Strings(name): %s", diff)
	}
	for _, k := range []string{"nul", "empty", "nested", "absent"} {
		if got := fm.Strings(k); got != nil {
			t.Errorf("Strings(%q) = %q, want nil", k, got)
		}
	}
	if !fm.IsList("list") || !fm.IsList("block") || fm.IsList("name") || fm.IsList("absent") {
		t.Error("IsList wrong")
	}
	if fm.String("nested") != "" || fm.String("list") != "" {
		t.Error("String of a non-scalar must be empty")
	}
	if fm.String("ref") != "" {
		t.Error("String of an alias to a mapping must be empty")
	}
	// JSON output is a sorted object.
	j := fm.JSON()
	var back map[string]any
	if err := json.Unmarshal([]byte(j), &back); err != nil {
		t.Fatalf("JSON() = %q: %v", j, err)
	}
	if back["name"] != "no" || back["date"] != "2026-06-20" || back["b1"] != true {
		t.Errorf("JSON() = %s", j)
	}
	if !strings.HasPrefix(j, `{"anchor":`) {
		t.Errorf("JSON keys not sorted: %s", j)
	}
}

func TestParseFrontmatterErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
		keys int
	}{
		{"empty", "", true, 0},
		{"blank", "  \n\n", true, 0},
		{"comment only", "# nothing here\n", true, 0},
		{"mapping", "a: 1\n", true, 1},
		{"list root", "- a\n- b\n", false, 0},
		{"scalar root", "just text\n", false, 0},
		{"null root", "null\n", false, 0},
		{"bad indent", "a: 1\n  b: 2\n", false, 0},
		{"unclosed quote", "a: \"x\n", false, 0},
		{"missing colon", "a: b\nc\n", false, 0},
		{"tab indent", "a:\n\t- x\n", false, 0},
		{"undefined alias", "a: *nope\n", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := ParseFrontmatter(tt.in)
			if !tt.ok {
				if !errors.Is(err, ErrFrontmatter) {
					t.Fatalf("ParseFrontmatter(%q) err = %v, want ErrFrontmatter", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFrontmatter(%q) = %v", tt.in, err)
			}
			if fm.Len() != tt.keys {
				t.Fatalf("Len = %d, want %d", fm.Len(), tt.keys)
			}
		})
	}
}

func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, c := range "bcdefghi" {
		name := string(c)
		b.WriteString(name + ": &" + name + " [")
		for i := 0; i < 9; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = name
	}
	b.WriteString("name: bomb\ndescription: laughs\n")
	return b.String()
}

// countValues counts the nodes of a converted value tree.
func countValues(v any) int {
	switch x := v.(type) {
	case []any:
		n := 1
		for _, c := range x {
			n += countValues(c)
		}
		return n
	case map[string]any:
		n := 1
		for _, c := range x {
			n += countValues(c)
		}
		return n
	}
	return 1
}

// TestFrontmatterAliasBomb: the expansion budget bounds what every reader
// of a "billion laughs" header produces (and so the work it does).
func TestFrontmatterAliasBomb(t *testing.T) {
	fm, err := ParseFrontmatter(billionLaughs())
	if err != nil {
		t.Fatal(err)
	}
	m := fm.Map()
	if n := countValues(m); n > 2*maxYAMLNodes {
		t.Fatalf("Map() expanded to %d values", n)
	}
	if n := countValues(fm.Value("i")); n > 2*maxYAMLNodes {
		t.Fatalf("Value() expanded to %d values", n)
	}
	if len(fm.JSON()) > 1<<20 {
		t.Fatalf("JSON() is %d bytes", len(fm.JSON()))
	}
	if fm.String("name") != "bomb" {
		t.Errorf("name = %q", fm.String("name"))
	}
	// The one-line rendering used by the day index must be bounded too.
	if s := FlatValue(fm.node("i")); len(s) > 1<<20 {
		t.Fatalf("FlatValue is %d bytes", len(s))
	}
	if s := DailyListLine(DailyNote{Path: "daily/2026-01-01/x.md", FM: fm}); len(s) > 1<<20 {
		t.Fatalf("DailyListLine is %d bytes", len(s))
	}
}

func TestFrontmatterSetKeepsLayout(t *testing.T) {
	src := "# head comment\nname: alpha   # the name\n# about the description\ndescription: old text\ncustom_key: keep me\ntags: [a, b]\nmemory_tags:\n  - x\n  - y\n"
	fm, err := ParseFrontmatter(src)
	if err != nil {
		t.Fatal(err)
	}
	if fm.Dirty() {
		t.Fatal("freshly parsed frontmatter is dirty")
	}
	if err := fm.Set("description", "new text"); err != nil {
		t.Fatal(err)
	}
	if err := fm.Set("name", "beta"); err != nil {
		t.Fatal(err)
	}
	if err := fm.Set("memory_tags", []string{"p", "q"}); err != nil {
		t.Fatal(err)
	}
	if !fm.Dirty() {
		t.Fatal("Set did not mark dirty")
	}
	got, err := fm.Render()
	if err != nil {
		t.Fatal(err)
	}
	want := "# head comment\nname: beta # the name\n# about the description\ndescription: new text\ncustom_key: keep me\ntags: [a, b]\nmemory_tags:\n  - p\n  - q\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Render (-want +got):\n%s", diff)
	}
}

func TestFrontmatterSetNewKeyAndQuoting(t *testing.T) {
	fm, err := ParseFrontmatter("name: x\n")
	if err != nil {
		t.Fatal(err)
	}
	sets := []struct {
		key string
		val any
	}{
		{"answer", "no"},
		{"yes_str", "yes"},
		{"on", "on"},
		{"date", "2026-06-20"},
		{"num", "010"},
		{"int", 7},
		{"flag", true},
		{"memory_tags", []string{"go", "sqlite"}},
		{"source_conversation", LinkTo("session/dialog/abc.jsonl")},
		{"multi", "line one\nline two"},
		{"colon", "a: b"},
		{"hash", "x # y"},
	}
	for _, s := range sets {
		if err := fm.Set(s.key, s.val); err != nil {
			t.Fatal(err)
		}
	}
	out, err := fm.Render()
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"name", "answer", "yes_str", "on", "date", "num", "int", "flag", "memory_tags", "source_conversation", "multi", "colon", "hash"}
	re, err := ParseFrontmatter(out)
	if err != nil {
		t.Fatalf("re-parse %q: %v", out, err)
	}
	if diff := cmp.Diff(wantKeys, re.Keys()); diff != "" {
		t.Fatalf("keys (-want +got):\n%s", diff)
	}
	for _, s := range sets {
		if str, ok := s.val.(string); ok && re.String(s.key) != str {
			t.Errorf("%s = %q after round trip, want %q", s.key, re.String(s.key), str)
		}
	}
	if !strings.Contains(out, "memory_tags: [go, sqlite]\n") {
		t.Errorf("short list not in flow style:\n%s", out)
	}
	if re.Value("int") != int64(7) || re.Value("flag") != true {
		t.Errorf("int/flag = %#v %#v", re.Value("int"), re.Value("flag"))
	}
	// A YAML 1.1 reader (PyYAML, yaml.v2-style) must still read strings.
	var v11 map[string]any
	if err := yaml11Unmarshal(out, &v11); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"answer", "yes_str", "on", "date", "num"} {
		if _, ok := v11[k].(string); !ok {
			t.Errorf("YAML 1.1 reads %s as %T (%v):\n%s", k, v11[k], v11[k], out)
		}
	}
}

func TestFrontmatterDeleteAndEmpty(t *testing.T) {
	fm, err := ParseFrontmatter("a: 1\nb: 2 # keep\nc: 3\n")
	if err != nil {
		t.Fatal(err)
	}
	if fm.Delete("missing") || fm.Dirty() {
		t.Fatal("Delete of a missing key reported true or dirtied")
	}
	if !fm.Delete("a") || !fm.Dirty() {
		t.Fatal("Delete(a) failed")
	}
	out, _ := fm.Render()
	if out != "b: 2 # keep\nc: 3\n" {
		t.Fatalf("after Delete(a): %q", out)
	}
	fm.Delete("b")
	fm.Delete("c")
	if fm.Len() != 0 {
		t.Fatalf("Len = %d", fm.Len())
	}
	out, err = fm.Render()
	if err != nil || out != "" {
		t.Fatalf("Render of empty mapping = %q, %v", out, err)
	}
	out, err = NewFrontmatter().Render()
	if err != nil || out != "" {
		t.Fatalf("Render of NewFrontmatter = %q, %v", out, err)
	}
}

func TestFrontmatterClone(t *testing.T) {
	fm, err := ParseFrontmatter("a: 1\nlist: [x]\n")
	if err != nil {
		t.Fatal(err)
	}
	c := fm.Clone()
	if err := c.Set("a", 2); err != nil {
		t.Fatal(err)
	}
	c.Delete("list")
	if fm.String("a") != "1" || !fm.Has("list") || fm.Dirty() {
		t.Fatalf("Clone shares state with the original: a=%q list=%v dirty=%v", fm.String("a"), fm.Has("list"), fm.Dirty())
	}
	if c.String("a") != "2" || c.Has("list") {
		t.Fatal("clone not edited")
	}
}

// yaml11Unmarshal decodes with YAML 1.1 boolean/timestamp rules, the way a
// PyYAML-based ReMe reads a header. yaml.v3 resolves plain yes/no/on/off as
// strings, so emulate 1.1 on plain scalars only.
func yaml11Unmarshal(s string, out *map[string]any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return err
	}
	m := map[string]any{}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		v := root.Content[i+1]
		var val any = v.Value
		if v.Kind == yaml.ScalarNode && v.Style == 0 {
			switch strings.ToLower(v.Value) {
			case "y", "yes", "n", "no", "true", "false", "on", "off":
				val = true
			}
			if IsDate(v.Value) {
				val = time.Time{}
			}
			if len(v.Value) > 1 && v.Value[0] == '0' && strings.Trim(v.Value, "01234567") == "" {
				val = 0 // octal int
			}
		}
		m[root.Content[i].Value] = val
	}
	*out = m
	return nil
}

func TestFrontmatterAliasLargeScalar(t *testing.T) {
	// One 64 KiB scalar repeated 729 times through aliases: ~46 MB if fully
	// expanded. Conversion must stay bounded.
	big := strings.Repeat("x", 64<<10)
	src := "a: &a " + big + "\n" +
		"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n" +
		"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
		"d: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
	fm, err := ParseFrontmatter(src)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fm.JSON()); n > 4<<20 {
		t.Fatalf("JSON() is %d bytes", n)
	}
	if n := len(FlatValue(fm.node("d"))); n > 4<<20 {
		t.Fatalf("FlatValue is %d bytes", n)
	}
	// The aliased scalar itself is still there.
	if fm.String("a") != big || fm.Value("a") != big {
		t.Fatal("plain scalar lost")
	}
}

func TestFrontmatterSetAwkwardStrings(t *testing.T) {
	values := []string{
		"a\nb",
		"a\n---\nb",         // literal block line would close the header
		"  ---  \nx",        // same, with blanks
		"\nleading newline", // yaml.v3 drops it from a literal block
		"\n0",
		"\t\n", // yaml.v3's Node.Encode fails on this one
		"trailing newline\n",
		"two\n\ntrailing\n\n",
		"x\r\ny",
		" leading space\nline",
		"...\n...",
		"---",
		"# not a comment",
		"key: value",
		"[[session/dialog/x.jsonl]]",
		"",
	}
	for i, v := range values {
		fm := NewFrontmatter()
		if i%2 == 1 {
			// Replacing existing values (a flow list keeps its style).
			var err error
			if fm, err = ParseFrontmatter("description: old\nlist: [x]\n"); err != nil {
				t.Fatal(err)
			}
		}
		if err := fm.Set("description", v); err != nil {
			t.Errorf("Set(%q): %v", v, err)
			continue
		}
		if err := fm.Set("list", []string{"ok", v, "\n" + v}); err != nil {
			t.Errorf("Set(list with %q): %v", v, err)
			continue
		}
		if err := fm.Set("after", "kept"); err != nil {
			t.Fatal(err)
		}
		n := NewNote("digest/x.md", fm, "body")
		text, err := n.Text()
		if err != nil {
			t.Errorf("Text with %q: %v", v, err)
			continue
		}
		back := ParseNote(n.Path, []byte(text))
		if back.FMErr != nil || back.Description() != v || back.FM.String("after") != "kept" || back.Content() != "body\n" {
			t.Errorf("value %q came back as %q (after=%q, content=%q, err=%v); text:\n%s", v, back.Description(), back.FM.String("after"), back.Content(), back.FMErr, text)
			continue
		}
		if diff := cmp.Diff([]string{"ok", v, "\n" + v}, back.FM.Strings("list")); diff != "" && v != "" {
			t.Errorf("list with %q (-want +got):\n%s", v, diff)
		}
	}
}

// A flow header's empty null key stays the key "" when another key is set
// (it was rewritten as "null", a key of that name).
func TestFrontmatterSetKeepsEmptyNullKey(t *testing.T) {
	for _, src := range []string{"{? }\n", "{? , a: }\n", "{? : x}\n"} {
		fm, err := ParseFrontmatter(src)
		if err != nil {
			t.Fatal(err)
		}
		before := fm.Map()
		if err := fm.Set("b", "1"); err != nil {
			t.Fatal(err)
		}
		out, err := fm.Render()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseFrontmatter(out)
		if err != nil {
			t.Fatalf("%q rewritten as %q: %v", src, out, err)
		}
		after := back.Map()
		delete(after, "b")
		if !reflect.DeepEqual(before, after) {
			t.Errorf("%q rewritten as %q: keys %v, want %v", src, out, after, before)
		}
	}
}
