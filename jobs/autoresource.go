package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/reme-dev/reme/jobs/extractive"
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
	// Images bounds an image resource's decode (pixels, memory); zero
	// fields take vision's defaults.
	Images vision.Options
	// Fallback FallbackExtractive gives a text resource whose model run
	// failed the extractive card instead (never over a card a model or a
	// person wrote); empty or FallbackNone fails the item.
	Fallback string
}

// ResourceItem is the outcome for one change (ReMe's per-item result).
type ResourceItem struct {
	Success  bool         `json:"success"`
	Path     string       `json:"path"`
	Change   string       `json:"change"`
	Answer   string       `json:"answer"`
	Metadata ResourceMeta `json:"metadata"`
}

// Line is the item as one human-readable line: ok only when its card was
// written (or removed, for a delete), skipped with the reason, or failed.
func (it ResourceItem) Line() string {
	status := "ok"
	switch {
	case !it.Success:
		status = "failed"
	case it.Metadata.Skipped != "":
		status = "skipped"
	}
	change := it.Change
	if it.Metadata.Action != "" {
		change = it.Metadata.Action
	}
	if change != "" {
		status += " " + change
	}
	return fmt.Sprintf("%s %s: %s", status, it.Path, strings.ReplaceAll(it.Answer, "\n", " "))
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
	// Reply is the model's own last words; Answer is reme's account.
	Reply    string   `json:"reply,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
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
	switch req.Fallback {
	case "", FallbackExtractive, FallbackNone:
	default:
		return nil, inputErr("fallback must be extractive or none, not %q", req.Fallback)
	}
	if err := env.Index.Sync(ctx); err != nil {
		return nil, err
	}
	if err := env.beginRun("auto_resource", "auto_resource"); err != nil {
		return nil, err
	}
	res, err := processResources(ctx, env, req)
	if eerr := env.endRun(err); err == nil && eerr != nil {
		err = eerr
	}
	return res, err
}

// processResources handles every change of a request, in one journal run.
func processResources(ctx context.Context, env *Env, req AutoResourceRequest) (*AutoResourceResult, error) {
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
		return textResource(ctx, env, req, job, item)
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

// spec is the card of the resource: found by its source_resource link, or
// created under the model's name (the prompt announces the stem's path).
func (j resourceJob) spec() CardSpec {
	spec := CardSpec{
		Dir: store.DayDir(j.place.date), Date: j.place.date, Path: j.card,
		Kind: "resource", Stem: j.place.stem, ClashKey: j.place.rel,
		System: []KeyValue{{"source_resource", j.link}, {SourceSHA256Key, j.sha}},
	}
	if j.card == "" {
		spec.Announced = store.DayDir(j.place.date) + "/" + j.place.stem + ".md"
	}
	return spec
}

// textResource creates or updates the card of a text resource.
func textResource(ctx context.Context, env *Env, req AutoResourceRequest, job resourceJob, item ResourceItem) ResourceItem {
	item.Metadata.Kind = "text"
	text, cut := resourceText(job.place.rel, job.raw)
	card, err := OpenCard(env, job.spec())
	if err != nil {
		return failed(item, "%v", err)
	}
	extract := func(why string) ResourceItem {
		if job.card != "" && !isExtractiveCard(card) {
			// A card a model (or a person) wrote is not overwritten by an
			// extract: it waits for a model.
			item.Metadata.Path = &job.card
			if why == "" {
				item.Success, item.Metadata.Skipped = true, "no model configured"
				item.Answer = "Kept " + job.card + " (no model configured to update it)"
				return item
			}
			return failed(item, "%s; %s keeps its last version", why, job.card)
		}
		item.Metadata.Distiller = "extractive"
		if why != "" {
			item.Metadata.Warnings = append(item.Metadata.Warnings, why+"; wrote the extractive card instead")
		}
		masked, _ := store.RedactSecrets(text) // the excerpt and the name come from it
		c := extractive.Resource(job.place.rel, masked, job.link)
		name := c.Name
		if job.card != "" {
			name = "" // an update keeps the card's name
		}
		card.SetSystem("distiller", "extractive")
		if _, err := card.Write(ctx, name, c.Description, c.Body, nil); err != nil {
			return failed(item, "%v", err)
		}
		return finishResource(ctx, card, item, "extractive")
	}
	if env.Model == nil {
		return extract("")
	}
	item.Metadata.Distiller = env.ModelID
	out, runErr := runResourceAgent(ctx, env, job, card, text, cut)
	if out != nil {
		item.Metadata.Reply = out.Text
	}
	failure := card.judge(out, runErr)
	switch {
	case failure == nil && card.Skipped() != "":
		item.Success, item.Metadata.Skipped = true, card.Skipped()
		item.Answer = "Skipped: " + card.Skipped()
		if card.Exists() {
			p := card.Path()
			item.Metadata.Path = &p
		}
		return item
	case failure == nil:
		return finishResource(ctx, card, item, "")
	case card.Wrote():
		// What the model wrote before failing is kept; the failure is reported.
		item = finishResource(ctx, card, item, "")
		return failed(item, "%v (the card keeps what was written: %s)", failure, card.Path())
	case req.Fallback == FallbackExtractive && ctx.Err() == nil:
		return extract(failure.Error())
	}
	return failed(item, "%v", failure)
}

func isExtractiveCard(c *Card) bool {
	n, err := c.Read()
	return err == nil && n.FM.String("distiller") == "extractive"
}

// finishResource finishes a written card and says what became of it.
func finishResource(ctx context.Context, card *Card, item ResourceItem, how string) ResourceItem {
	fin, err := card.Finish(ctx)
	if err != nil {
		return failed(item, "%v", err)
	}
	item.Metadata.Path, item.Metadata.Created, item.Metadata.Modified, item.Metadata.Index = &fin.Path, fin.Created, fin.Modified, fin.Index
	item.Success = true
	switch {
	case fin.Created:
		item.Answer = "Wrote " + fin.Path
	case fin.Modified:
		item.Answer = "Updated " + fin.Path
	default:
		item.Answer = "Unchanged " + fin.Path
	}
	if how != "" {
		item.Answer += " (" + how + ")"
	}
	return item
}

// runResourceAgent runs the create or update agent for a text resource.
func runResourceAgent(ctx context.Context, env *Env, job resourceJob, card *Card, text string, cut bool) (*llm.AgentResult, error) {
	notePath := card.Path()
	if notePath == "" {
		notePath = card.spec.Announced
	}
	data := map[string]any{"Resource": job.place.rel, "Today": job.place.date, "NotePath": notePath, "Content": text, "Cut": cut, "Link": job.link}
	system, err := renderPrompt("auto_resource", job.lang, "system", data)
	if err != nil {
		return nil, err
	}
	part := "update"
	tools := []llm.AgentTool{card.ReadTool(), card.EditTool(),
		card.FrontmatterTool("Merge keys into the card's frontmatter (name, description and other descriptive keys; keys the system maintains keep its values)."),
		card.WriteTool(), card.SkipTool()}
	if job.card == "" {
		part = "create"
		tools = []llm.AgentTool{card.WriteTool(), card.SkipTool()}
	}
	user, err := renderPrompt("auto_resource", job.lang, part, data)
	if err != nil {
		return nil, err
	}
	return llm.RunAgent(ctx, env.model(), llm.AgentConfig{
		Model: env.ModelID, System: system, Tools: tools, Logger: env.Log,
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, user)},
	})
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
	img, err := vision.Prepare(job.raw, req.Images)
	if err != nil {
		return failed(item, "Image %s: %v", job.place.rel, err)
	}
	item.Metadata.MediaType = img.SourceType
	item.Metadata.Distiller = env.VisionModelID
	capt, err := captionImage(ctx, env, job, img)
	if err != nil {
		return failed(item, "model: %v", err)
	}
	spec := job.spec()
	spec.System = append(spec.System, KeyValue{"kind", "image"}, KeyValue{"media_type", img.SourceType})
	card, err := OpenCard(env, spec)
	if err != nil {
		return failed(item, "%v", err)
	}
	name := capt.Name
	if job.card != "" {
		name = "" // an update keeps the card's name and path
	}
	body := "![[" + job.place.rel + "]]\n\n## Caption\n\n" + strings.TrimSpace(capt.Caption) + "\n"
	if t := strings.TrimSpace(capt.Text); t != "" {
		body += "\n## Text in the image\n\n" + t + "\n"
	}
	if _, err := card.Write(ctx, name, capt.Description, body, nil); err != nil {
		return failed(item, "%v", err)
	}
	if err := checkCaptionCard(env, card.Path(), job.place.rel); err != nil {
		return failed(item, "%v (the card is kept: %s)", err, card.Path())
	}
	item = finishResource(ctx, card, item, "")
	if item.Success {
		item.Answer = strings.Replace(item.Answer, "Wrote ", "Wrote caption card ", 1)
	}
	return item
}

// caption is the vision model's reply.
type caption struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Caption     string `json:"caption"`
	Text        string `json:"text"`
}

var fencedJSON = store.LazyRegexp("(?s)```(?:json)?\\s*(\\{.*\\})\\s*```")

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
	resp, err := env.model().Chat(ctx, llm.Request{Model: env.VisionModelID, Messages: []llm.Message{
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
	if m := fencedJSON().FindStringSubmatch(s); m != nil {
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

// deleteResourceCard removes the card explicitly linked to a deleted
// resource; any other note is left alone.
func deleteResourceCard(ctx context.Context, env *Env, item ResourceItem, card, date string) ResourceItem {
	item.Metadata.Action = "deleted"
	if card == "" {
		item.Success = true
		item.Answer = "No card links to " + item.Path
		return item
	}
	c, err := OpenCard(env, CardSpec{Path: card, Date: store.DateFromPath(card)})
	if err != nil {
		return failed(item, "%v", err)
	}
	idx, err := c.Remove(ctx)
	if err != nil {
		return failed(item, "%v", err)
	}
	item.Metadata.Index = idx
	item.Success, item.Metadata.Modified = true, true
	item.Metadata.Path = &card
	item.Answer = "Deleted resource note: " + card
	return item
}
