package store

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fileSet is a workspace listing for resolution tests.
type fileSet map[string]bool

func newFileSet(paths ...string) fileSet {
	fs := fileSet{}
	for _, p := range paths {
		fs[p] = true
	}
	return fs
}

func (fs fileSet) Exists(rel string) bool { return fs[rel] }

func (fs fileSet) Named(name string) []string {
	var out []string
	for p := range fs {
		if LinkName(p) == name {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

type mdl struct {
	Target, Anchor, Alias, Written string
	Embed, Angle                   bool
}

func TestParseNoteLinksMarkdown(t *testing.T) {
	tests := []struct {
		name, body string
		want       []mdl
	}{
		{"relative", "see [the note](../2026-06-19/x.md).", []mdl{{"../2026-06-19/x.md", "", "the note", "../2026-06-19/x.md", false, false}}},
		{"encoded space and anchor", "[a](my%20note.md#Big%20Heading)", []mdl{{"my note.md", "Big Heading", "a", "my%20note.md", false, false}}},
		{"angle brackets", "[a](<my note.md> \"title\")", []mdl{{"my note.md", "", "a", "my note.md", false, true}}},
		{"title forms", "[a](x.md 'single') [b](y.md (paren))", []mdl{{"x.md", "", "a", "x.md", false, false}, {"y.md", "", "b", "y.md", false, false}}},
		{"image", "![diagram](pics/a%20b.png)", []mdl{{"pics/a b.png", "", "diagram", "pics/a%20b.png", true, false}}},
		{"unicode", "[会议](会议记录.md) [x](%E7%99%BB%E5%BD%95.md)", []mdl{{"会议记录.md", "", "会议", "会议记录.md", false, false}, {"登录.md", "", "x", "%E7%99%BB%E5%BD%95.md", false, false}}},
		{"nested brackets in text", "[a [b] c](d.md)", []mdl{{"d.md", "", "a [b] c", "d.md", false, false}}},
		{"parentheses in path", "[a](x(1).md)", []mdl{{"x(1).md", "", "a", "x(1).md", false, false}}},
		{"no extension", "[a](folder/note)", []mdl{{"folder/note", "", "a", "folder/note", false, false}}},
		{"absolute", "[a](/digest/wiki/x.md)", []mdl{{"/digest/wiki/x.md", "", "a", "/digest/wiki/x.md", false, false}}},
		{"urls are not files", "[a](https://x.org/a.md) [b](mailto:a@b.c) [c](//host/x.md) [d](#heading) [e](obsidian://open?x)", nil},
		{"escaped bracket", `\[no](x.md) [yes](y.md)`, []mdl{{"y.md", "", "yes", "y.md", false, false}}},
		{"code span", "`[no](x.md)` [yes](y.md)", []mdl{{"y.md", "", "yes", "y.md", false, false}}},
		{"wikilink wins", "[[a]](b.md)", []mdl{{"a", "", "", "a", false, false}}},
		{"empty destination", "[a]() [b](<>)", nil},
		{"space in bare destination is no link", "[a](my note.md)", nil},
		{"reference links are not followed", "[a][ref]\n\n[ref]: x.md", nil},
		{"query dropped", "[a](x.md?v=1)", []mdl{{"x.md", "", "a", "x.md", false, false}}},
		{"bad percent stays", "[a](100%.md)", []mdl{{"100%.md", "", "a", "100%.md", false, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []mdl
			for _, l := range ParseNoteLinks(tt.body, 1) {
				got = append(got, mdl{l.Target, l.Anchor, l.Alias, tt.body[l.TargetStart:l.TargetEnd], l.Embed, l.Angle})
				if !l.Markdown && !strings.HasPrefix(tt.body[l.Start:], "[[") {
					t.Errorf("link %+v: not markdown but not a wikilink", l)
				}
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseNoteLinksOrder(t *testing.T) {
	body := "[a](x.md) [[y]] ![b](z.png)\n[[w]] [c](v.md)"
	var got []string
	for _, l := range ParseNoteLinks(body, 3) {
		got = append(got, l.Target+"@"+string(rune('0'+l.Line)))
	}
	if want := []string{"x.md@3", "y@3", "z.png@3", "w@4", "v.md@4"}; !cmp.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestResolveLink(t *testing.T) {
	files := newFileSet(
		"daily/2026-06-20/login.md", "daily/2026-06-20/Notes On Auth.md", "daily/2026-06-19/retro.md",
		"digest/wiki/solar.md", "digest/wiki/oidc.md", "digest/personal/oidc.md",
		"digest/wiki/people/Alice.md", "digest/team/people/alice.md",
		"MEMORY.md", "resource/2026-06-20/q2 report.pdf", "session/dialog/abc.jsonl", "assets/diagram.png",
		"daily/2026-06-20.md", "digest/2026-06-20.md",
	)
	const from = "daily/2026-06-20/login.md"
	tests := []struct {
		name     string
		target   string
		markdown bool
		want     Resolution
	}{
		{"literal path (ReMe)", "digest/wiki/solar.md", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkExact}},
		{"literal path without .md", "digest/wiki/solar", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkExact}},
		{"literal non-note", "session/dialog/abc.jsonl", false, Resolution{Path: "session/dialog/abc.jsonl", Status: LinkExact}},
		{"missing literal keeps its path", "digest/wiki/gone.md", false, Resolution{Path: "digest/wiki/gone.md", Status: LinkMissing}},
		{"short name", "solar", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkShort}},
		{"short name with .md", "solar.md", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkShort}},
		{"case does not matter", "SOLAR", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkShort}},
		{"name with spaces", "notes on auth", false, Resolution{Path: "daily/2026-06-20/Notes On Auth.md", Status: LinkShort}},
		{"ambiguous name", "oidc", false, Resolution{Path: "oidc", Status: LinkAmbiguous, Candidates: []string{"digest/personal/oidc.md", "digest/wiki/oidc.md"}}},
		{"folder/note disambiguates", "wiki/oidc", false, Resolution{Path: "digest/wiki/oidc.md", Status: LinkShort}},
		{"suffix matches whole segments only", "iki/oidc", false, Resolution{Path: "iki/oidc", Status: LinkMissing}},
		{"longer suffix", "wiki/people/alice", false, Resolution{Path: "digest/wiki/people/Alice.md", Status: LinkShort}},
		{"ambiguous suffix", "people/alice", false, Resolution{Path: "people/alice", Status: LinkAmbiguous, Candidates: []string{"digest/team/people/alice.md", "digest/wiki/people/Alice.md"}}},
		{"root file wins over the name search", "MEMORY", false, Resolution{Path: "MEMORY.md", Status: LinkExact}},
		{"attachment by name", "diagram.png", false, Resolution{Path: "assets/diagram.png", Status: LinkShort}},
		{"attachment name needs its extension", "diagram", false, Resolution{Path: "diagram", Status: LinkMissing}},
		{"relative ./", "./Notes On Auth", false, Resolution{Path: "daily/2026-06-20/Notes On Auth.md", Status: LinkExact}},
		{"relative ../", "../2026-06-19/retro", false, Resolution{Path: "daily/2026-06-19/retro.md", Status: LinkExact}},
		{"relative is not searched", "./solar", false, Resolution{Path: "daily/2026-06-20/solar", Status: LinkMissing}},
		{"absolute", "/digest/wiki/solar", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkExact}},
		{"absolute is not searched", "/solar", false, Resolution{Path: "solar", Status: LinkMissing}},
		{"escaping the workspace", "../../../etc/passwd", false, Resolution{Path: "../../../etc/passwd", Status: LinkMissing}},
		{"wikilink: workspace path first", "2026-06-20.md", false, Resolution{Path: "2026-06-20.md", Status: LinkAmbiguous, Candidates: []string{"daily/2026-06-20.md", "digest/2026-06-20.md"}}},
		{"markdown: relative first", "retro.md", true, Resolution{Path: "daily/2026-06-19/retro.md", Status: LinkShort}},
		{"markdown relative", "../2026-06-19/retro.md", true, Resolution{Path: "daily/2026-06-19/retro.md", Status: LinkExact}},
		{"markdown sibling", "Notes On Auth.md", true, Resolution{Path: "daily/2026-06-20/Notes On Auth.md", Status: LinkExact}},
		{"markdown from the root", "digest/wiki/solar.md", true, Resolution{Path: "digest/wiki/solar.md", Status: LinkExact}},
		{"markdown short", "solar", true, Resolution{Path: "digest/wiki/solar.md", Status: LinkShort}},
		{"markdown missing names a path by the note", "nope.md", true, Resolution{Path: "daily/2026-06-20/nope.md", Status: LinkMissing}},
		{"markdown to a resource", "../../resource/2026-06-20/q2 report.pdf", true, Resolution{Path: "resource/2026-06-20/q2 report.pdf", Status: LinkExact}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ResolveLink(from, Link{Target: tt.target, Markdown: tt.markdown}, files)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Resolution{}, "AsWritten")); diff != "" {
				t.Fatalf("ResolveLink(%q) (-want +got):\n%s", tt.target, diff)
			}
		})
	}
}

func TestLinkTextFor(t *testing.T) {
	// after the move of digest/wiki/solar.md to digest/energy/solar-power.md
	files := newFileSet("digest/energy/solar-power.md", "daily/2026-06-20/login.md", "daily/2026-06-19/retro.md",
		"digest/wiki/oidc.md", "digest/personal/oidc.md", "digest/energy/oidc.md")
	const from = "daily/2026-06-20/login.md"
	const dst = "digest/energy/solar-power.md"
	tests := []struct {
		name, target string
		markdown     bool
		orig         Resolution
		dst, want    string
	}{
		{"literal stays literal", "digest/wiki/solar.md", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkExact}, dst, dst},
		{"literal without .md", "digest/wiki/solar", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkExact}, dst, "digest/energy/solar-power"},
		{"short stays short", "solar", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkShort}, dst, "solar-power"},
		{"short with .md", "Solar.md", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkShort}, dst, "solar-power.md"},
		{"short grows when the name is taken", "wiki/oidc", false, Resolution{Path: "digest/wiki/oidc.md", Status: LinkShort}, "digest/energy/oidc.md", "energy/oidc"},
		{"relative stays relative", "../../digest/wiki/solar.md", true, Resolution{Path: "digest/wiki/solar.md", Status: LinkExact}, dst, "../../digest/energy/solar-power.md"},
		{"./ kept", "./solar", false, Resolution{Path: "daily/2026-06-20/solar.md", Status: LinkExact}, "daily/2026-06-20/sun.md", "./sun"},
		{"./ becomes ../", "./solar", false, Resolution{Path: "daily/2026-06-20/solar.md", Status: LinkExact}, "daily/2026-06-19/retro.md", "../2026-06-19/retro"},
		{"absolute stays absolute", "/digest/wiki/solar", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkExact}, dst, "/digest/energy/solar-power"},
		{"markdown sibling", "solar.md", true, Resolution{Path: "daily/2026-06-20/solar.md", Status: LinkExact}, "daily/2026-06-19/retro.md", "../2026-06-19/retro.md"},
		{"markdown from the root", "digest/wiki/solar.md", true, Resolution{Path: "digest/wiki/solar.md", Status: LinkExact}, dst, dst},
		{"to a file that is not a note: the extension is written", "solar", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkShort}, "resource/solar.pdf", "solar.pdf"},
		{"to a file named only .md: the extension is its name", "solar", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkShort}, "digest/.md", ".md"},
		{"to a name that ends in a space: the extension is kept", "solar", false, Resolution{Path: "digest/wiki/solar.md", Status: LinkShort}, "digest/energy/sun .md", "digest/energy/sun .md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFileSet(append(keys(files), tt.dst)...)
			got, ok := LinkTextFor(from, Link{Target: tt.target, Markdown: tt.markdown}, tt.orig, tt.dst, fs)
			if !ok || got != tt.want {
				t.Fatalf("LinkTextFor = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

func keys(fs fileSet) []string {
	var out []string
	for k := range fs {
		out = append(out, k)
	}
	return out
}

func TestEncodeMarkdownDest(t *testing.T) {
	tests := []struct {
		p     string
		angle bool
		like  string
		want  string
	}{
		{"daily/a b.md", false, "x.md", "daily/a%20b.md"},
		{"daily/a(1).md", false, "x.md", "daily/a%281%29.md"},
		{"登录.md", false, "会议.md", "登录.md"},
		{"登录.md", false, "%E4%BC%9A.md", "%E7%99%BB%E5%BD%95.md"},
		{"a b.md", true, "old.md", "a b.md"},
		{"100%.md", false, "x", "100%25.md"},
	}
	for _, tt := range tests {
		got := EncodeMarkdownDest(tt.p, tt.angle, tt.like)
		if got != tt.want {
			t.Errorf("EncodeMarkdownDest(%q) = %q, want %q", tt.p, got, tt.want)
		}
		if !tt.angle && decodeDest(got) != tt.p {
			t.Errorf("%q does not decode back: %q", got, decodeDest(got))
		}
	}
}

// AsWritten marks the links that only their file's removal can change.
func TestResolveLinkAsWritten(t *testing.T) {
	files := newFileSet("digest/wiki/solar.md", "daily/2026-06-20/a.md", "MEMORY.md")
	for target, want := range map[string]bool{
		"digest/wiki/solar.md": true,  // ReMe's literal links
		"digest/wiki/solar":    false, // "digest/wiki/solar" itself could appear
		"solar":                false,
		"MEMORY.md":            true,
		"./a.md":               true,
		"/MEMORY.md":           true,
		"missing.md":           false,
	} {
		if got := ResolveLink("daily/2026-06-20/a.md", Link{Target: target}, files); got.AsWritten != want {
			t.Errorf("%q: AsWritten = %v, want %v", target, got.AsWritten, want)
		}
	}
}
