package jobs

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
	"github.com/reme-dev/reme/store"
)

var pathInPrompt = regexp.MustCompile(`(?:write|read)\(path="([^"]+)"`)

// resourceModel plays the model for auto_resource: it writes the card it
// is pointed at under the given name, and captions images.
func resourceModel(name string) *llmtest.Scripted {
	return &llmtest.Scripted{Func: func(req llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == llm.RoleTool {
			return llmtest.TextReply("done"), nil
		}
		if len(req.Tools) == 0 { // a caption request
			return llmtest.TextReply("```json\n" + `{"name":"` + name + `","description":"A test picture with a red square.","caption":"A red square on white.","text":"HELLO"}` + "\n```"), nil
		}
		var prompt strings.Builder
		for _, m := range req.Messages {
			prompt.WriteString(m.Text())
		}
		m := pathInPrompt.FindStringSubmatch(prompt.String())
		if m == nil {
			return llmtest.TextReply("no path"), nil
		}
		return llmtest.ToolCallReply(call("write", map[string]string{"path": m[1], "name": name,
			"description": "Summary of the resource.", "content": "## Summary\n\n" + lastLine(prompt.String()) + "\n"})), nil
	}}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func writeWS(t *testing.T, env *Env, rel, content string) {
	t.Helper()
	if err := env.WS.WriteFile(rel, []byte(content)); err != nil {
		t.Fatal(err)
	}
}

func runResource(t *testing.T, env *Env, changes ...ResourceChange) *AutoResourceResult {
	t.Helper()
	res, err := AutoResource(context.Background(), env, AutoResourceRequest{Changes: changes, IncludeImages: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestAutoResourceTextLifecycle(t *testing.T) {
	env, ix := newEnv(t, resourceModel("market-report-summary"))
	writeWS(t, env, "resource/2026-06-20/market-report.md", "# Market\n\nSpending is $6.2 billion.\n")
	res := runResource(t, env, ResourceChange{Path: "resource/2026-06-20/market-report.md", Change: "added"})
	it := res.Results[0]
	card := "daily/2026-06-20/market-report-summary.md"
	if !res.Success || it.Metadata.Path == nil || *it.Metadata.Path != card || !it.Metadata.Created || !it.Metadata.Modified {
		t.Fatalf("create: %+v", it)
	}
	if len(ix.renames) != 0 || env.WS.Exists("daily/2026-06-20/market-report.md") {
		t.Errorf("the card is written under its name at once: renames %v", ix.renames)
	}
	n, _ := env.WS.ReadNote(card)
	if n.FM.String("source_resource") != "[[resource/2026-06-20/market-report.md]]" || len(n.FM.String(SourceSHA256Key)) != 64 {
		t.Errorf("provenance %s", n.FM.JSON())
	}
	// the resource changes: the renamed card is found through source_resource and updated in place
	writeWS(t, env, "resource/2026-06-20/market-report.md", "# Market\n\nSpending is $6.5 billion.\n")
	res = runResource(t, env, ResourceChange{Path: "resource/2026-06-20/market-report.md", Change: "modified"})
	it = res.Results[0]
	if !it.Success || *it.Metadata.Path != card || it.Metadata.Created || !it.Metadata.Modified {
		t.Fatalf("update: %+v", it)
	}
	if b, _ := os.ReadFile(env.WS.Abs(card)); !strings.Contains(string(b), "$6.5 billion") {
		t.Errorf("card not updated:\n%s", b)
	}
	// the resource file itself is never touched
	if b, _ := os.ReadFile(env.WS.Abs("resource/2026-06-20/market-report.md")); string(b) != "# Market\n\nSpending is $6.5 billion.\n" {
		t.Error("the resource changed")
	}
	// deleted: the linked card goes, a same-stem user note stays
	writeWS(t, env, "daily/2026-06-20/market-report.md", "my own note\n")
	if err := os.Remove(env.WS.Abs("resource/2026-06-20/market-report.md")); err != nil {
		t.Fatal(err)
	}
	res = runResource(t, env, ResourceChange{Path: "resource/2026-06-20/market-report.md", Change: "deleted"})
	if it := res.Results[0]; !it.Success || it.Answer != "Deleted resource note: "+card {
		t.Fatalf("delete: %+v", it)
	}
	if env.WS.Exists(card) || !env.WS.Exists("daily/2026-06-20/market-report.md") {
		t.Error("delete removed the wrong note")
	}
}

func TestAutoResourceNameClashAndUserNotes(t *testing.T) {
	env, _ := newEnv(t, resourceModel("notes"))
	writeWS(t, env, "daily/2026-06-20/notes.md", "---\nname: notes\n---\n\nthe user's own notes\n")
	writeWS(t, env, "daily/2026-06-20/meeting.md", "a user note with the resource's stem\n")
	writeWS(t, env, "resource/2026-06-20/meeting.txt", "Meeting minutes: ship on Friday.")
	res := runResource(t, env, ResourceChange{Path: "resource/2026-06-20/meeting.txt"})
	it := res.Results[0]
	want := "daily/2026-06-20/notes--" // name taken: <name>--<sha1[:8]>
	if !it.Success || it.Change != "added" || !strings.HasPrefix(*it.Metadata.Path, want) {
		t.Fatalf("result %+v", it)
	}
	for p, c := range map[string]string{"daily/2026-06-20/notes.md": "---\nname: notes\n---\n\nthe user's own notes\n", "daily/2026-06-20/meeting.md": "a user note with the resource's stem\n"} {
		if b, _ := os.ReadFile(env.WS.Abs(p)); string(b) != c {
			t.Errorf("%s was changed", p)
		}
	}
}

func TestAutoResourceLooseFileKeepsItsCardAcrossDays(t *testing.T) {
	env, _ := newEnv(t, resourceModel("quick-note"))
	writeWS(t, env, "resource/quick-note.txt", "first version")
	res := runResource(t, env, ResourceChange{Path: "resource/quick-note.txt"})
	if p := *res.Results[0].Metadata.Path; p != "daily/2026-06-22/quick-note.md" {
		t.Fatalf("first day: %s", p)
	}
	env.Now = func() time.Time { return time.Date(2026, 6, 25, 9, 0, 0, 0, shanghai) }
	writeWS(t, env, "resource/quick-note.txt", "second version")
	res = runResource(t, env, ResourceChange{Path: "resource/quick-note.txt"})
	it := res.Results[0]
	if it.Change != "modified" || *it.Metadata.Path != "daily/2026-06-22/quick-note.md" || env.WS.Exists("daily/2026-06-25/quick-note.md") {
		t.Fatalf("later day: %+v", it)
	}
	if !env.WS.Exists("resource/quick-note.txt") {
		t.Error("the loose resource was moved")
	}
}

func TestAutoResourceSkipsAndFailures(t *testing.T) {
	model := resourceModel("x")
	env, _ := newEnv(t, model)
	writeWS(t, env, "resource/2026-06-20/big.txt", strings.Repeat("x", 2048))
	writeWS(t, env, "resource/2026-06-20/doc.pdf", "%PDF-1.7")
	writeWS(t, env, "resource/2026-06-20/fake.png", "not a png at all")
	res, err := AutoResource(context.Background(), env, AutoResourceRequest{MaxFileBytes: 1024, Changes: []ResourceChange{
		{Path: "resource/2026-06-20/big.txt"},
		{Path: "resource/2026-06-20/doc.pdf"},
		{Path: "resource/2026-06-20/fake.png"},
		{Path: "resource/2026-06-20/missing.md", Change: "added"},
		{Path: "notes/x.md"},
		{Path: "resource/2026-06-20/a.md", Change: "renamed"},
		{},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range res.Results {
		got = append(got, strings.SplitN(it.Answer, ":", 2)[0]+" "+map[bool]string{true: "ok", false: "failed"}[it.Success])
	}
	want := []string{"Skipped oversized resource file ok", "Unsupported resource type \".pdf\" failed", "Not a readable image failed",
		"Resource file not found failed", "Cannot parse date/filename from failed", "Invalid change type failed", "Missing file_path failed"}
	if !cmp.Equal(got, want) {
		t.Errorf("answers:\n%v\nwant\n%v", got, want)
	}
	if res.Success || res.Modified || len(model.Requests()) != 0 {
		t.Errorf("batch %+v, %d model calls", res, len(model.Requests()))
	}
}

func testImage() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for y := 0; y < 20; y++ {
		for x := 0; x < 40; x++ {
			img.Set(x, y, color.RGBA{255, uint8(x * 6), uint8(y * 12), 255})
		}
	}
	return img
}

func encodeImage(t *testing.T, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, testImage())
	case "jpg":
		err = jpeg.Encode(&b, testImage(), nil)
	case "gif":
		err = gif.Encode(&b, testImage(), nil)
	case "bmp":
		err = bmp.Encode(&b, testImage())
	case "tiff":
		err = tiff.Encode(&b, testImage(), nil)
	case "webp":
		raw, err := os.ReadFile("../vision/testdata/marked.webp") // a real lossless WebP
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withOrientation inserts an EXIF APP1 segment with the given orientation
// right after a JPEG's SOI marker.
func withOrientation(jpg []byte, orientation uint16) []byte {
	tiffData := []byte{'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, byte(orientation), 0, 0, 0, 0, 0, 0, 0}
	payload := append([]byte("Exif\x00\x00"), tiffData...)
	seg := []byte{0xFF, 0xE1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	out = append(out, payload...)
	return append(out, jpg[2:]...)
}

func TestAutoResourceCaptionCardsForEveryFormat(t *testing.T) {
	for _, f := range []string{"png", "jpg", "gif", "bmp", "tiff", "webp"} {
		t.Run(f, func(t *testing.T) {
			model := resourceModel("red-square")
			env, _ := newEnv(t, model)
			env.VisionModelID = "vision-test"
			rel := "resource/2026-06-20/picture." + f
			if err := env.WS.WriteFile(rel, encodeImage(t, f)); err != nil {
				t.Fatal(err)
			}
			res := runResource(t, env, ResourceChange{Path: rel})
			it := res.Results[0]
			if !it.Success || it.Metadata.Kind != "image" || *it.Metadata.Path != "daily/2026-06-20/red-square.md" {
				t.Fatalf("result %+v", it)
			}
			n, _ := env.WS.ReadNote(*it.Metadata.Path)
			wantBody := "\n![[" + rel + "]]\n\n## Caption\n\nA red square on white.\n\n## Text in the image\n\nHELLO\n"
			if n.Body != wantBody || n.FM.String("kind") != "image" || !strings.HasPrefix(n.FM.String("media_type"), "image/") {
				t.Errorf("card %s\n%s", n.FM.JSON(), n.Body)
			}
			reqs := model.Requests()
			if len(reqs) != 1 || reqs[0].Model != "vision-test" || len(reqs[0].Tools) != 0 {
				t.Fatalf("one vision call expected, got %d", len(reqs))
			}
			img := reqs[0].Messages[1].Parts[1].ImageURL
			if !strings.HasPrefix(img, "data:image/") {
				t.Errorf("image part %.40s", img)
			}
		})
	}
}

func TestAutoResourceAppliesEXIFOrientation(t *testing.T) {
	model := resourceModel("rotated")
	env, _ := newEnv(t, model)
	env.VisionModelID = "v"
	writeWS(t, env, "resource/2026-06-20/photo.jpg", string(withOrientation(encodeImage(t, "jpg"), 6)))
	res := runResource(t, env, ResourceChange{Path: "resource/2026-06-20/photo.jpg"})
	if !res.Success {
		t.Fatalf("%+v", res.Results[0])
	}
	url := model.Requests()[0].Messages[1].Parts[1].ImageURL
	data, err := base64.StdEncoding.DecodeString(url[strings.IndexByte(url, ',')+1:])
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 20 || cfg.Height != 40 {
		t.Errorf("the model got %dx%d, want the 40x20 picture turned upright (20x40)", cfg.Width, cfg.Height)
	}
	if b, _ := os.ReadFile(env.WS.Abs("resource/2026-06-20/photo.jpg")); !bytes.Equal(b, withOrientation(encodeImage(t, "jpg"), 6)) {
		t.Error("the image file was changed")
	}
}

// hugePNG is a PNG header claiming 60000x60000 pixels, with no pixel data.
func hugePNG() []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 60000)
	binary.BigEndian.PutUint32(ihdr[4:], 60000)
	ihdr[8], ihdr[9] = 8, 2
	chunk := append([]byte("IHDR"), ihdr...)
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

func TestAutoResourceRefusesTooManyPixels(t *testing.T) {
	model := resourceModel("huge")
	env, _ := newEnv(t, model)
	writeWS(t, env, "resource/2026-06-20/huge.png", string(hugePNG()))
	writeWS(t, env, "resource/2026-06-20/ok.txt", "fine")
	res := runResource(t, env, ResourceChange{Path: "resource/2026-06-20/huge.png"}, ResourceChange{Path: "resource/2026-06-20/ok.txt"})
	if res.Results[0].Success || !strings.Contains(res.Results[0].Answer, "pixel limit") {
		t.Errorf("huge image: %+v", res.Results[0])
	}
	if !res.Results[1].Success {
		t.Errorf("the other resource must still be processed: %+v", res.Results[1])
	}
	for _, r := range model.Requests() {
		if len(r.Tools) == 0 {
			t.Error("the oversized image reached the model")
		}
	}
}

func TestAutoResourceImagesCanBeTurnedOff(t *testing.T) {
	model := resourceModel("x")
	env, _ := newEnv(t, model)
	writeWS(t, env, "resource/2026-06-20/p.png", string(encodeImage(t, "png")))
	res, err := AutoResource(context.Background(), env, AutoResourceRequest{IncludeImages: false, Changes: []ResourceChange{{Path: "resource/2026-06-20/p.png"}}})
	if err != nil || !res.Success || res.Results[0].Metadata.Skipped != "images disabled" || len(model.Requests()) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestCardNames: one naming rule for every card (ReMe §6.3 and the date
// rule of daily cards): cleaned, never refused.
func TestCardNames(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Market: Report?", "Market- Report-"},
		{"  spaced   out  ", "spaced out"},
		{"...dots...", "dots"},
		{"a/b\\c", "a-b-c"},
		{"notes.md", "notes"},
		{"link [[breaker]] #1 | `x`", "link -breaker- -1 - -x-"},
		{"", "stem"},
		{"2026-06-20", "stem"},
		{"2026-06-20-standup", "standup"},
		{"q3-2026-06-20-report", "q3-report"},
		{"standup 2026-06-20", "standup"},
		{"CON", "resource-"},
		{"line\nbreak", "line-break"},
		{strings.Repeat("長", 150), strings.Repeat("長", 100)},
	}
	c := &Card{spec: CardSpec{Kind: "resource", Stem: "stem", Date: "2026-06-20"}}
	for _, tt := range tests {
		got := c.cleanName(tt.in)
		if got != tt.want && !(strings.HasSuffix(tt.want, "-") && strings.HasPrefix(got, tt.want) && len(got) == len(tt.want)+8) {
			t.Errorf("cleanName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if store.ValidateName(got) != nil || store.ValidateLinkTarget(got) != nil {
			t.Errorf("cleanName(%q) = %q is not a valid name", tt.in, got)
		}
	}
}

func TestHTMLText(t *testing.T) {
	in := `<html><head><title>T</title><style>p{}</style><script>var x = "<p>";</script></head><body><h2>Plan &amp; budget</h2><p>Ship   by <b>Friday</b>.</p><ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr></table></body></html>`
	want := "T\n## Plan & budget\nShip by Friday.\n- one\n- two\n| a | b"
	if got := htmlText(in); got != want {
		t.Errorf("htmlText =\n%q\nwant\n%q", got, want)
	}
}

// FuzzCleanName: whatever a model sends, the name is a valid file name and
// link target, without the card's date, at most 100 characters.
func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"", "CON", "a/b", "2026-06-20", "x 2026-06-20 y", "[[x]]", " . ", "名字", "\x00\n", strings.Repeat("ab", 80)} {
		f.Add(s)
	}
	c := &Card{spec: CardSpec{Kind: "resource", Stem: "stem", Date: "2026-06-20"}}
	f.Fuzz(func(t *testing.T, s string) {
		got := c.cleanName(s)
		if err := store.ValidateName(got); err != nil {
			t.Fatalf("cleanName(%q) = %q: %v", s, got, err)
		}
		if err := store.ValidateLinkTarget(got); err != nil {
			t.Fatalf("cleanName(%q) = %q: %v", s, got, err)
		}
		if strings.Contains(got, "2026-06-20") || utf8.RuneCountInString(got) > maxNameRunes {
			t.Fatalf("cleanName(%q) = %q", s, got)
		}
		if again := c.cleanName(got); again != got {
			t.Fatalf("not stable: %q -> %q -> %q", s, got, again)
		}
	})
}
