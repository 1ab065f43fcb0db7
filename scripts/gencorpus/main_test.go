package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// wikilinkRE follows the reference grammar: optional !, target without [ ] | #
// or newline, optional #anchor, optional |alias.
var wikilinkRE = regexp.MustCompile(`!?\[\[([^\[\]|#\n]+)(#[^\[\]|\n]*)?(\|[^\[\]\n]*)?\]\]`)

var cardPathRE = regexp.MustCompile(`^daily/\d{4}-\d{2}-\d{2}/[^/]+\.md$`)

func testOptions(out string) options {
	return options{n: 50, out: out, seed: 1, days: 10, start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// readTree maps workspace-relative slash paths to file contents.
func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func splitCard(t *testing.T, p string, data []byte) (frontmatter, body string) {
	t.Helper()
	s := string(data)
	end := strings.Index(s, "\n---\n")
	if !strings.HasPrefix(s, "---\n") || end < 0 {
		t.Fatalf("%s: no frontmatter fence", p)
	}
	return s[4 : end+1], s[end+len("\n---\n"):]
}

func field(frontmatter, key string) string {
	for line := range strings.Lines(frontmatter) {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func hasHan(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) })
}

func TestGenerate(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	st, err := generate(testOptions(dirA))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generate(testOptions(dirB)); err != nil {
		t.Fatal(err)
	}
	files, again := readTree(t, dirA), readTree(t, dirB)

	t.Run("same seed writes the same bytes", func(t *testing.T) {
		if len(files) != len(again) {
			t.Fatalf("runs wrote %d and %d files", len(files), len(again))
		}
		for p, data := range files {
			if !bytes.Equal(data, again[p]) {
				t.Fatalf("%s differs between runs", p)
			}
		}
	})

	cards := map[string][]byte{}
	perDay := map[string]int{}
	for p, data := range files {
		if cardPathRE.MatchString(p) {
			cards[p] = data
			perDay[path.Base(path.Dir(p))]++
		}
	}

	t.Run("writes n cards", func(t *testing.T) {
		if len(cards) != 50 || st.cards != 50 {
			t.Fatalf("got %d card files, stats say %d, want 50", len(cards), st.cards)
		}
	})

	t.Run("cards have the frontmatter of real cards", func(t *testing.T) {
		for p, data := range cards {
			fm, _ := splitCard(t, p, data)
			if got, want := field(fm, "name"), strings.TrimSuffix(path.Base(p), ".md"); got != want {
				t.Errorf("%s: name %q, want the file stem %q", p, got, want)
			}
			sid := field(fm, "session_id")
			if want := `"[[session/dialog/` + sid + `.jsonl]]"`; sid == "" || field(fm, "source_conversation") != want {
				t.Errorf("%s: session_id %q and source_conversation %q disagree", p, sid, field(fm, "source_conversation"))
			}
			desc := strings.Trim(field(fm, "description"), `"`)
			if n := len([]rune(desc)); n < descMinRunes || n > descMaxRunes {
				t.Errorf("%s: description has %d characters, want %d to %d", p, n, descMinRunes, descMaxRunes)
			}
			if tags := field(fm, "memory_tags"); strings.Count(tags, ",") != 1 {
				t.Errorf("%s: memory_tags %s, want two tags", p, tags)
			}
		}
	})

	t.Run("sizes are 2 KB within 25 percent", func(t *testing.T) {
		for p, data := range cards {
			if n := len(data); n < sizeMin || n > sizeMax {
				t.Errorf("%s: %d bytes, want %d to %d", p, n, sizeMin, sizeMax)
			}
		}
	})

	t.Run("every wikilink points to another existing card", func(t *testing.T) {
		for p, data := range cards {
			_, body := splitCard(t, p, data)
			ms := wikilinkRE.FindAllStringSubmatch(body, -1)
			if len(ms) != linksPerCard {
				t.Errorf("%s: %d wikilinks, want %d", p, len(ms), linksPerCard)
			}
			for _, m := range ms {
				if _, ok := cards[m[1]]; !ok || m[1] == p {
					t.Errorf("%s: link %s does not point to another card", p, m[0])
				}
			}
		}
	})

	t.Run("about a fifth of paragraphs contain Chinese", func(t *testing.T) {
		var paras, cjk int
		for p, data := range cards {
			_, body := splitCard(t, p, data)
			// Link targets may be Chinese file names; only the prose counts.
			body = wikilinkRE.ReplaceAllString(body, "")
			for blk := range strings.SplitSeq(body, "\n\n") {
				blk = strings.TrimSpace(blk)
				if blk == "" || strings.HasPrefix(blk, "#") {
					continue
				}
				paras++
				if hasHan(blk) {
					cjk++
				}
			}
		}
		if share := float64(cjk) / float64(paras); share < 0.10 || share > 0.30 {
			t.Errorf("%d of %d paragraphs contain Chinese (%.2f), want about 0.20", cjk, paras, share)
		}
	})

	t.Run("day pages list their cards", func(t *testing.T) {
		if st.dayPages != len(perDay) {
			t.Errorf("stats say %d day pages, cards span %d days", st.dayPages, len(perDay))
		}
		for day, n := range perDay {
			page, ok := files["daily/"+day+".md"]
			if !ok {
				t.Errorf("daily/%s.md missing", day)
				continue
			}
			want := "---\nname: '" + day + "'\ndescription: " + strconv.Itoa(n) + " note(s) today.\n---\n\n<!-- notes:auto -->\n"
			if !strings.HasPrefix(string(page), want) || !strings.HasSuffix(string(page), "<!-- /notes:auto -->\n") {
				t.Errorf("daily/%s.md does not have the day index layout:\n%s", day, page)
			}
			var prev string
			lines := 0
			for line := range strings.Lines(string(page)) {
				if !strings.HasPrefix(line, "- [[") {
					continue
				}
				lines++
				target := line[len("- [["):strings.Index(line, "]]")]
				if _, ok := cards[target]; !ok {
					t.Errorf("daily/%s.md lists %s, which is not a card", day, target)
				}
				if target <= prev {
					t.Errorf("daily/%s.md is not sorted by path at %s", day, target)
				}
				if strings.Contains(line, "session_id") || strings.Contains(line, "source_conversation") {
					t.Errorf("daily/%s.md shows a hidden key: %s", day, line)
				}
				prev = target
			}
			if lines != n {
				t.Errorf("daily/%s.md lists %d cards, want %d", day, lines, n)
			}
		}
	})
}

func TestGenerateRefusesNonEmptyWorkspace(t *testing.T) {
	dir := t.TempDir()
	if _, err := generate(testOptions(dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := generate(testOptions(dir)); err == nil {
		t.Fatal("second run into the same directory succeeded, want an error")
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-out", "x", "-n", "0"},
		{"-out", "x", "-days", "0"},
		{"-out", "x", "-start", "2025-13-01"},
		{"-out", "x", "extra"},
	} {
		var stderr bytes.Buffer
		if code := run(args, &stderr); code != 2 {
			t.Errorf("run(%q) = %d, want 2; stderr: %s", args, code, stderr.String())
		}
	}
}

// The synthetic conversations shipped for reme eval are exactly what the
// generator writes with its defaults.
func TestLocomoGolden(t *testing.T) {
	var b bytes.Buffer
	if _, err := generateLocomo(&b, locomoOptions{conversations: 10, seed: 1}); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "eval", "locomo-synthetic.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatal("testdata/eval/locomo-synthetic.json differs from the generator's output; regenerate it with go run ./scripts/gencorpus -locomo testdata/eval/locomo-synthetic.json")
	}
}

func TestLocomoShape(t *testing.T) {
	var b bytes.Buffer
	n, err := generateLocomo(&b, locomoOptions{conversations: 2, seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var samples []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string   `json:"question"`
			Evidence []string `json:"evidence"`
			Category int      `json:"category"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(b.Bytes(), &samples); err != nil {
		t.Fatal(err)
	}
	if len(samples) != 2 || n < 60 {
		t.Fatalf("%d samples, %d questions", len(samples), n)
	}
	for _, s := range samples {
		ids := map[string]bool{}
		for k, v := range s.Conversation {
			if !strings.HasPrefix(k, "session_") || strings.HasSuffix(k, "_date_time") {
				continue
			}
			var turns []struct {
				DiaID string `json:"dia_id"`
				Text  string `json:"text"`
			}
			if err := json.Unmarshal(v, &turns); err != nil {
				t.Fatal(err)
			}
			for _, tr := range turns {
				ids[tr.DiaID] = true
				if tr.Text == "" || strings.Contains(tr.Text, "{") {
					t.Errorf("turn %s: %q", tr.DiaID, tr.Text)
				}
			}
		}
		cats := map[int]int{}
		for _, q := range s.QA {
			cats[q.Category]++
			if strings.Contains(q.Question, "{") || len(q.Evidence) == 0 {
				t.Errorf("question %+v", q)
			}
			for _, e := range q.Evidence {
				if !ids[e] {
					t.Errorf("%q: evidence %s is no turn", q.Question, e)
				}
			}
		}
		for c := 1; c <= 5; c++ {
			if cats[c] == 0 {
				t.Errorf("no question of category %d", c)
			}
		}
	}
}
