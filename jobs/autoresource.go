package jobs

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
	"github.com/reme-dev/reme/vision"
)

// ResourceChange is one entry of auto_resource's changes list.
type ResourceChange struct {
	Path     string `json:"path"`
	FilePath string `json:"file_path"` // ReMe's other spelling
	Change   string `json:"change"`    // added, modified, deleted; empty = decide from what is known
}

// AutoResourceRequest is one auto_resource call.
type AutoResourceRequest struct {
	Changes       []ResourceChange
	IncludeImages bool
	Language      string
	MaxFileBytes  int64 // default 20 MiB
	MaxPixels     int64 // default vision.DefaultMaxPixels
	// MaxImageMemory bounds an image's decode; default vision.DefaultMaxDecodeBytes
	MaxImageMemory int64
}

// ResourceItem is the outcome for one change (ReMe's per-item result).
type ResourceItem struct {
	Success  bool         `json:"success"`
	Path     string       `json:"path"`
	Change   string       `json:"change"`
	Answer   string       `json:"answer"`
	Metadata ResourceMeta `json:"metadata"`
}

// ResourceMeta is a result's metadata.
type ResourceMeta struct {
	Path           *string               `json:"path"`
	Created        bool                  `json:"created"`
	Modified       bool                  `json:"modified"`
	SourceResource string                `json:"source_resource,omitempty"`
	Action         string                `json:"action,omitempty"`
	Kind           string                `json:"kind,omitempty"`
	MediaType      string                `json:"media_type,omitempty"`
	Skipped        string                `json:"skipped,omitempty"`
	Oversized      bool                  `json:"oversized,omitempty"`
	SizeBytes      int64                 `json:"size_bytes,omitempty"`
	MaxFileBytes   int64                 `json:"max_file_bytes,omitempty"`
	Distiller      string                `json:"distiller,omitempty"`
	Index          *store.DayIndexResult `json:"index,omitempty"`
}

// AutoResourceResult is ReMe's batch response.
type AutoResourceResult struct {
	Success   bool           `json:"success"`
	Answer    string         `json:"answer"`
	Processed int            `json:"processed"`
	Modified  bool           `json:"modified"`
	Results   []ResourceItem `json:"results"`
}

// SourceSHA256Key records in a card the hash of the resource it was made
// from, so that a watcher can tell, from the files alone, whether a
// resource changed since its card was written.
const SourceSHA256Key = "source_sha256"

// AutoResource turns resource files into daily cards: one card per file,
// found again later through its exact source_resource link. The resource
// file itself is never moved or changed. A failing item does not stop the
// others.
func AutoResource(ctx context.Context, env *Env, req AutoResourceRequest) (*AutoResourceResult, error) {
	if req.MaxFileBytes <= 0 {
		req.MaxFileBytes = 20 << 20
	}
	if len(req.Changes) == 0 {
		return nil, inputErr("AutoResourceStep requires changes: list[dict]")
	}
	if err := env.Index.Sync(ctx); err != nil {
		return nil, err
	}
	res := &AutoResourceResult{Success: true, Results: []ResourceItem{}}
	for _, c := range req.Changes {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		item := processResource(ctx, env, req, c)
		res.Results = append(res.Results, item)
		if !item.Success {
			res.Success = false
		}
		if item.Metadata.Modified {
			res.Modified = true
		}
	}
	res.Processed = len(res.Results)
	var answers []string
	ok := 0
	for _, it := range res.Results {
		if it.Success {
			ok++
		}
		if it.Answer != "" {
			answers = append(answers, it.Answer)
		}
	}
	switch {
	case len(answers) == 1:
		res.Answer = answers[0]
	case len(answers) > 1:
		for i, a := range answers {
			answers[i] = fmt.Sprintf("%d. %s", i+1, a)
		}
		res.Answer = strings.Join(answers, "\n\n")
	default:
		res.Answer = fmt.Sprintf("Processed %d/%d resource change(s)", ok, len(res.Results))
	}
	return res, nil
}

func failed(item ResourceItem, format string, a ...any) ResourceItem {
	item.Success = false
	item.Answer = fmt.Sprintf(format, a...)
	return item
}

// processResource handles one change.
func processResource(ctx context.Context, env *Env, req AutoResourceRequest, c ResourceChange) ResourceItem {
	p := c.Path
	if p == "" {
		p = c.FilePath
	}
	item := ResourceItem{Path: p, Change: c.Change}
	if strings.TrimSpace(p) == "" {
		return failed(item, "Missing file_path")
	}
	switch c.Change {
	case "", "added", "modified", "deleted":
	default:
		return failed(item, "Invalid change type: %s", c.Change)
	}
	rel, err := env.WS.Rel(p)
	if err != nil {
		return failed(item, "%v", err)
	}
	item.Path = rel
	place, err := placeResource(rel)
	if err != nil {
		return failed(item, "%v", err)
	}
	link := store.LinkTo(rel)
	item.Metadata.SourceResource = link
	cards, err := env.Index.NotesWith(ctx, "source_resource", link)
	if err != nil {
		return failed(item, "%v", err)
	}
	card := ""
	if len(cards) > 0 {
		card = cards[0]
	}
	if place.loose {
		place.date = env.Today()
		if d := store.DateFromPath(card); d != "" {
			place.date = d // a loose file keeps its card across days
		}
	}
	fi, statErr := os.Lstat(env.WS.Abs(rel))
	exists := statErr == nil
	if item.Change == "" {
		switch {
		case !exists && card != "":
			item.Change = "deleted"
		case card != "":
			item.Change = "modified"
		default:
			item.Change = "added"
		}
	}
	isImage := imageResourceTypes[strings.ToLower(path.Ext(rel))]
	if item.Change == "deleted" {
		if isImage && !req.IncludeImages {
			item.Success, item.Answer = true, "Skipped image resource (include_images=false): "+rel
			item.Metadata.Skipped = "images disabled"
			return item
		}
		return deleteResourceCard(ctx, env, item, card, place.date)
	}
	item.Metadata.Action = item.Change
	switch {
	case statErr != nil && errors.Is(statErr, fs.ErrNotExist):
		return failed(item, "Resource file not found: %s", rel)
	case statErr != nil:
		return failed(item, "Failed to inspect resource file: %s: %v", rel, statErr)
	case !fi.Mode().IsRegular():
		return failed(item, "Resource is not a regular file: %s", rel)
	case fi.Size() > req.MaxFileBytes:
		item.Success = true
		item.Answer = fmt.Sprintf("Skipped oversized resource file: %s (%d > %d bytes)", rel, fi.Size(), req.MaxFileBytes)
		item.Metadata.Oversized, item.Metadata.SizeBytes, item.Metadata.MaxFileBytes = true, fi.Size(), req.MaxFileBytes
		item.Metadata.Skipped = "file_too_large"
		return item
	}
	raw, err := os.ReadFile(env.WS.Abs(rel))
	if err != nil {
		return failed(item, "Failed to read resource file: %s: %v", rel, err)
	}
	sum := sha256.Sum256(raw)
	job := resourceJob{place: place, link: link, card: card, raw: raw, sha: hex.EncodeToString(sum[:]), lang: req.Language}
	if job.lang == "" {
		job.lang = env.Language
	}
	mediaType, sniffErr := vision.Sniff(raw)
	switch {
	case sniffErr == nil:
		if !req.IncludeImages {
			item.Success, item.Answer = true, "Skipped image resource (include_images=false): "+rel
			item.Metadata.Skipped = "images disabled"
			return item
		}
		return imageResource(ctx, env, req, job, item, mediaType)
	case isImage:
		return failed(item, "Not a readable image: %s: %v", rel, sniffErr)
	case textResourceTypes[strings.ToLower(path.Ext(rel))]:
		return textResource(ctx, env, job, item)
	}
	return failed(item, "Unsupported resource type %q: %s (text: md txt json jsonl csv yaml html; images: png jpg webp gif bmp tiff)", path.Ext(rel), rel)
}

// resourceJob is one resource being turned into a card.
type resourceJob struct {
	place resourcePlace
	link  string
	card  string // existing card, or ""
	raw   []byte
	sha   string
	lang  string
}

func (j resourceJob) provenance() []keyValue {
	return []keyValue{{"source_resource", j.link}, {SourceSHA256Key, j.sha}}
}

// textResource creates or updates the card of a text resource.
func textResource(ctx context.Context, env *Env, job resourceJob, item ResourceItem) ResourceItem {
	item.Metadata.Kind = "text"
	text, cut := resourceText(job.place.rel, job.raw)
	before := snapshotCard(env, job.card)
	scope := &cardScope{ws: env.WS, path: job.card, date: job.place.date, fixed: job.provenance()}
	if job.card == "" {
		tmp, err := freeCardPath(env, job.place.date, job.place.stem, job.place.rel, "")
		if err != nil {
			return failed(item, "%v", err)
		}
		scope.path = tmp
	}
	var answer string
	var runErr error
	if env.Model == nil {
		if job.card != "" {
			if n, err := scope.readCard(); err != nil || n.FM.String("distiller") != "extractive" {
				// A card a model (or a person) wrote is not overwritten by
				// an extract: it waits for a model.
				item.Success, item.Metadata.Skipped = true, "no model configured"
				item.Answer = "Kept " + job.card + " (no model configured to update it)"
				item.Metadata.Path = &job.card
				return item
			}
		}
		item.Metadata.Distiller = "extractive"
		answer, runErr = extractiveResource(scope, job, text, job.card != "")
	} else {
		item.Metadata.Distiller = env.ModelID
		answer, runErr = runResourceAgent(ctx, env, job, scope, text, cut)
	}
	item.Answer = answer
	if !env.WS.Exists(scope.path) {
		if runErr != nil {
			return failed(item, "model: %v", runErr)
		}
		item.Success = true // the model judged the file not worth a card
		item.Metadata.Skipped = "model skipped"
		return item
	}
	final, err := finishResourceCard(ctx, env, job, scope, job.card == "", &item)
	if err != nil {
		return failed(item, "%v", err)
	}
	setCardResult(env, &item, before, final)
	if runErr != nil {
		// What the model wrote before failing is kept; the failure is reported.
		return failed(item, "model: %v (the card keeps what was written: %s)", runErr, final)
	}
	item.Success = true
	if item.Answer == "" {
		item.Answer = "Wrote " + final
	}
	return item
}

// runResourceAgent runs the create or update agent for a text resource.
func runResourceAgent(ctx context.Context, env *Env, job resourceJob, scope *cardScope, text string, cut bool) (string, error) {
	data := map[string]any{"Resource": job.place.rel, "Today": job.place.date, "NotePath": scope.path, "Content": text, "Cut": cut}
	system, err := renderPrompt("auto_resource", job.lang, "system", data)
	if err != nil {
		return "", err
	}
	part := "update"
	tools := []llm.AgentTool{scope.readTool(), scope.editTool(),
		scope.frontmatterTool("Merge keys into the card's frontmatter (name, description and other descriptive keys; provenance keys are refused)."),
		scope.writeTool()}
	if job.card == "" {
		part = "create"
		tools = []llm.AgentTool{scope.writeTool()}
	}
	user, err := renderPrompt("auto_resource", job.lang, part, data)
	if err != nil {
		return "", err
	}
	out, err := llm.RunAgent(ctx, env.Model, llm.AgentConfig{
		Model: env.ModelID, System: system, Tools: tools, Logger: env.Log,
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, user)},
	})
	if out != nil && err != nil {
		return out.Text, err
	}
	if err != nil {
		return "", err
	}
	return out.Text, nil
}

// extractiveResource writes a card without a model: the file's outline and
// opening, so that it is at least searchable.
func extractiveResource(scope *cardScope, job resourceJob, text string, update bool) (string, error) {
	var outline []string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") && len(outline) < 30 {
			outline = append(outline, "- "+strings.TrimSpace(strings.TrimLeft(t, "#")))
		}
	}
	excerpt := text
	if len(excerpt) > 1500 {
		excerpt = store.TruncateBytes(excerpt, 1500) + "…"
	}
	var b strings.Builder
	if len(outline) > 0 {
		b.WriteString("## Outline\n\n" + strings.Join(outline, "\n") + "\n\n")
	}
	b.WriteString("## Excerpt\n\n")
	for _, l := range strings.Split(strings.TrimSpace(excerpt), "\n") {
		b.WriteString("> " + l + "\n")
	}
	b.WriteString("\n## Source\n\nExtracted without a model from " + job.link + ".\n")
	desc := firstLine(text)
	if desc == "" {
		desc = "Resource " + job.place.rel
	}
	meta := map[string]any{"distiller": "extractive"}
	name := job.place.stem
	if update {
		if n, err := scope.readCard(); err == nil && n.Name() != "" {
			name = n.Name()
		}
	}
	return scope.writeCard(name, desc, b.String(), meta)
}

func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#>-*"))
		if t != "" {
			return store.TruncateRunes(t, 200, "…")
		}
	}
	return ""
}

// imageResource writes or updates the caption card of an image with one
// call to the vision model.
func imageResource(ctx context.Context, env *Env, req AutoResourceRequest, job resourceJob, item ResourceItem, mediaType string) ResourceItem {
	item.Metadata.Kind, item.Metadata.MediaType = "image", mediaType
	if env.Model == nil {
		item.Success = true
		item.Answer = "Skipped image resource (no model configured; images need a vision model): " + job.place.rel
		item.Metadata.Skipped = "no model configured"
		return item
	}
	img, err := vision.Prepare(job.raw, vision.Options{MaxPixels: req.MaxPixels, MaxDecodeBytes: req.MaxImageMemory})
	if err != nil {
		return failed(item, "Image %s: %v", job.place.rel, err)
	}
	item.Metadata.MediaType = img.SourceType
	item.Metadata.Distiller = env.VisionModelID
	capt, err := captionImage(ctx, env, job, img)
	if err != nil {
		return failed(item, "model: %v", err)
	}
	before := snapshotCard(env, job.card)
	scope := &cardScope{ws: env.WS, path: job.card, date: job.place.date, fixed: job.provenance()}
	create := job.card == ""
	name := sanitizeName(capt.Name, job.place.stem, job.place.rel)
	if create {
		if scope.path, err = freeCardPath(env, job.place.date, name, job.place.rel, ""); err != nil {
			return failed(item, "%v", err)
		}
	} else if n, err := scope.readCard(); err == nil && n.Name() != "" {
		name = n.Name() // an update keeps the card's name and path
	}
	body := "![[" + job.place.rel + "]]\n\n## Caption\n\n" + strings.TrimSpace(capt.Caption) + "\n"
	if t := strings.TrimSpace(capt.Text); t != "" {
		body += "\n## Text in the image\n\n" + t + "\n"
	}
	meta := map[string]any{"kind": "image", "media_type": img.SourceType}
	if _, err := scope.writeCard(name, capt.Description, body, meta); err != nil {
		return failed(item, "%v", err)
	}
	if err := checkCaptionCard(env, scope.path, job.place.rel); err != nil {
		return failed(item, "%v (the card is kept: %s)", err, scope.path)
	}
	final, err := finishResourceCard(ctx, env, job, scope, false, &item)
	if err != nil {
		return failed(item, "%v", err)
	}
	setCardResult(env, &item, before, final)
	item.Success = true
	item.Answer = "Wrote caption card " + final
	return item
}

// caption is the vision model's reply.
type caption struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Caption     string `json:"caption"`
	Text        string `json:"text"`
}

var fencedJSON = regexp.MustCompile("(?s)```(?:json)?\\s*(\\{.*\\})\\s*```")

// captionImage asks the vision model for a caption as a JSON object.
func captionImage(ctx context.Context, env *Env, job resourceJob, img *vision.Image) (*caption, error) {
	data := map[string]any{"Resource": job.place.rel, "MediaType": img.SourceType, "Width": img.SourceWidth, "Height": img.SourceHeight}
	system, err := renderPrompt("image_caption", job.lang, "system", data)
	if err != nil {
		return nil, err
	}
	user, err := renderPrompt("image_caption", job.lang, "user", data)
	if err != nil {
		return nil, err
	}
	resp, err := env.Model.Chat(ctx, llm.Request{Model: env.VisionModelID, Messages: []llm.Message{
		llm.TextMessage(llm.RoleSystem, system),
		{Role: llm.RoleUser, Parts: []llm.Part{{Text: user}, {ImageURL: img.DataURL()}}},
	}})
	if err != nil {
		return nil, err
	}
	var c caption
	if err := decodeJSONReply(resp.Message.Text(), &c); err != nil {
		return nil, fmt.Errorf("the reply is not a usable caption: %v", err)
	}
	if strings.TrimSpace(c.Caption) == "" || strings.TrimSpace(c.Description) == "" {
		return nil, errors.New("the reply is not a usable caption: caption or description is empty")
	}
	return &c, nil
}

// decodeJSONReply reads one JSON object from a model reply, fenced or bare.
func decodeJSONReply(reply string, v any) error {
	s := strings.TrimSpace(reply)
	if m := fencedJSON.FindStringSubmatch(s); m != nil {
		s = m[1]
	} else if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i {
		s = s[i : j+1]
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("%v (reply starts %q)", err, store.TruncateRunes(reply, 80, "…"))
	}
	return nil
}

// checkCaptionCard verifies a caption card's shape: an embed of the image
// first, then a Caption section, and the image frontmatter.
func checkCaptionCard(env *Env, card, resource string) error {
	n, err := env.WS.ReadNote(card)
	if err != nil {
		return err
	}
	body := strings.TrimLeft(n.Body, "\n")
	if !strings.HasPrefix(body, "![["+resource+"]]") {
		return fmt.Errorf("caption card %s does not start with ![[%s]]", card, resource)
	}
	if !strings.Contains(body, "\n## Caption\n") {
		return fmt.Errorf("caption card %s has no ## Caption section", card)
	}
	if n.FM.String("kind") != "image" || n.FM.String("media_type") == "" {
		return fmt.Errorf("caption card %s lacks kind: image or media_type", card)
	}
	return nil
}

// finishResourceCard renames a new card to its sanitised name (clashes get
// --<sha1[:8]>, then -2, -3…), refreshes the day index and the search index.
func finishResourceCard(ctx context.Context, env *Env, job resourceJob, scope *cardScope, rename bool, item *ResourceItem) (string, error) {
	n, err := env.WS.ReadNote(scope.path)
	if err != nil {
		return "", err
	}
	if n.FMErr == nil && (n.FM.String("source_resource") != job.link || n.FM.String(SourceSHA256Key) != job.sha) {
		if err := scope.save(n); err != nil {
			return "", err
		}
	}
	final := scope.path
	if rename {
		name := sanitizeName(n.Name(), job.place.stem, job.place.rel)
		if want := store.DayDir(job.place.date) + "/" + name + ".md"; want != final {
			dst, err := freeCardPath(env, job.place.date, name, job.place.rel, final)
			if err != nil {
				return "", err
			}
			if dst != final {
				if err := env.Index.Rename(ctx, final, dst); err != nil {
					return "", fmt.Errorf("rename %s to %s: %w", final, dst, err)
				}
				final = dst
			}
		}
	}
	scope.path = final
	item.Metadata.Index, err = indexCard(ctx, env, final, job.place.date)
	return final, err
}

func setCardResult(env *Env, item *ResourceItem, before cardSnapshot, final string) {
	after, _ := os.ReadFile(env.WS.Abs(final))
	item.Metadata.Path = &final
	item.Metadata.Created = before.path == ""
	item.Metadata.Modified = before.path != final || string(before.bytes) != string(after)
}

// deleteResourceCard removes the card explicitly linked to a deleted
// resource; any other note is left alone.
func deleteResourceCard(ctx context.Context, env *Env, item ResourceItem, card, date string) ResourceItem {
	item.Metadata.Action = "deleted"
	if card == "" {
		item.Success = true
		item.Answer = "No card links to " + item.Path
		return item
	}
	if err := env.WS.Remove(card); err != nil && !errors.Is(err, store.ErrNotFound) {
		return failed(item, "%v", err)
	}
	idx, err := indexCard(ctx, env, card, store.DateFromPath(card))
	if err != nil {
		return failed(item, "%v", err)
	}
	item.Metadata.Index = idx
	item.Success, item.Metadata.Modified = true, true
	item.Metadata.Path = &card
	item.Answer = "Deleted resource note: " + card
	return item
}

var unsafeNameChars = regexp.MustCompile(`[<>:"/\\|?*\x00-\x1f\x7f]+`)

// sanitizeName makes a model-chosen name a file name as ReMe does: runs of
// forbidden characters become "-", whitespace collapses, spaces and dots
// are trimmed at both ends; empty falls back to the stem, and a name that
// still fails becomes resource-<sha1[:8]>.
func sanitizeName(name, stem, resource string) string {
	clean := func(s string) string {
		s = unsafeNameChars.ReplaceAllString(s, "-")
		s = strings.Join(strings.Fields(s), " ")
		s = strings.Trim(s, " .")
		if r := []rune(s); len(r) > maxNameRunes {
			s = strings.Trim(string(r[:maxNameRunes]), " .-")
		}
		return s
	}
	s := clean(strings.TrimSuffix(strings.TrimSpace(name), ".md"))
	if s == "" {
		s = clean(stem)
	}
	if store.ValidateName(s) != nil {
		h := sha1.Sum([]byte(stem))
		s = "resource-" + hex.EncodeToString(h[:])[:8]
	}
	return s
}

// freeCardPath picks daily/<date>/<name>.md, or on a clash with another
// file <name>--<sha1(resource)[:8]>.md, then -2, -3 … keep is a path that
// counts as free (the card being renamed).
func freeCardPath(env *Env, date, name, resource, keep string) (string, error) {
	dir := store.DayDir(date)
	try := func(n string) (string, bool) {
		p := dir + "/" + n + ".md"
		return p, p == keep || !env.WS.Exists(p)
	}
	if p, ok := try(name); ok {
		return p, nil
	}
	h := sha1.Sum([]byte(resource))
	base := name + "--" + hex.EncodeToString(h[:])[:8]
	if p, ok := try(base); ok {
		return p, nil
	}
	for i := 2; i < 100; i++ {
		if p, ok := try(fmt.Sprintf("%s-%d", base, i)); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("no free card name for %s in %s", resource, dir)
}
