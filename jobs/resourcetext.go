package jobs

import (
	"fmt"
	"path"
	"strings"
	"unicode"

	"golang.org/x/net/html"

	"github.com/reme-dev/reme/store"
)

// textResourceTypes are the resource extensions read as text.
var textResourceTypes = map[string]bool{".md": true, ".markdown": true, ".txt": true, ".json": true, ".jsonl": true,
	".csv": true, ".yaml": true, ".yml": true, ".html": true, ".htm": true}

// imageResourceTypes are the resource extensions read as images (the bytes
// decide the actual format).
var imageResourceTypes = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".webp": true, ".gif": true,
	".bmp": true, ".tif": true, ".tiff": true, ".heic": true, ".heif": true}

// maxPromptContentBytes keeps a large resource within the model's context;
// the prompt says when the content was cut.
const maxPromptContentBytes = 200 << 10

// resourceText decodes a text resource for the prompt: UTF-8 (or GBK), HTML
// reduced to readable text, cut to maxPromptContentBytes.
func resourceText(rel string, raw []byte) (text string, cut bool) {
	text, _ = store.DecodeText(raw)
	switch strings.ToLower(path.Ext(rel)) {
	case ".html", ".htm":
		text = htmlText(text)
	}
	if len(text) > maxPromptContentBytes {
		return store.TruncateBytes(text, maxPromptContentBytes), true
	}
	return text, false
}

// skippedHTML are elements whose text a reader never sees.
var skippedHTML = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "svg": true}

// blockHTML end a line of text.
var blockHTML = map[string]bool{"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "section": true, "article": true, "header": true, "footer": true, "table": true,
	"ul": true, "ol": true, "pre": true, "blockquote": true, "hr": true, "title": true, "dt": true, "dd": true}

// htmlText reduces HTML to readable text: scripts and styles dropped,
// entities decoded, block elements on their own lines, headings marked with
// "#", list items with "-", table cells separated by " | ".
func htmlText(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	skip := 0
	line := func() {
		s := b.String()
		if s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidyLines(b.String())
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if skippedHTML[tag] && tt == html.StartTagToken {
				skip++
				continue
			}
			if blockHTML[tag] {
				line()
			}
			switch {
			case len(tag) == 2 && tag[0] == 'h' && tag[1] >= '1' && tag[1] <= '6':
				b.WriteString(strings.Repeat("#", int(tag[1]-'0')) + " ")
			case tag == "li":
				b.WriteString("- ")
			case tag == "td" || tag == "th":
				b.WriteString(" | ")
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if skippedHTML[tag] {
				if skip > 0 {
					skip--
				}
				continue
			}
			if blockHTML[tag] {
				line()
			}
		case html.TextToken:
			if skip == 0 {
				// whitespace runs become one space; none is added between
				// inline elements that had none ("<b>Friday</b>.")
				t := string(z.Text())
				words := strings.Join(strings.Fields(t), " ")
				if words == "" {
					if t != "" {
						b.WriteByte(' ')
					}
					continue
				}
				if unicode.IsSpace(rune(t[0])) {
					b.WriteByte(' ')
				}
				b.WriteString(words)
				if unicode.IsSpace(rune(t[len(t)-1])) {
					b.WriteByte(' ')
				}
			}
		}
	}
}

// tidyLines trims lines and collapses runs of blank lines.
func tidyLines(s string) string {
	var out []string
	blank := false
	for _, l := range strings.Split(s, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// resourcePlace is where a resource's card lives: the date from
// resource/YYYY-MM-DD/..., or today for a loose resource/<file>.
type resourcePlace struct {
	rel   string // resource/…
	date  string // empty for a loose file not yet dated
	stem  string
	loose bool
}

func placeResource(rel string) (resourcePlace, error) {
	parts := strings.Split(rel, "/")
	if len(parts) < 2 || parts[0] != store.ResourceDir {
		return resourcePlace{}, fmt.Errorf("Cannot parse date/filename from: %s", rel)
	}
	p := resourcePlace{rel: rel, stem: strings.TrimSuffix(path.Base(rel), path.Ext(rel))}
	switch {
	case len(parts) == 2:
		p.loose = true
	case store.IsDate(parts[1]) && len(parts) >= 3:
		p.date = parts[1]
	default:
		return resourcePlace{}, fmt.Errorf("Cannot parse date/filename from: %s", rel)
	}
	if p.stem == "" {
		p.stem = "resource"
	}
	return p, nil
}
