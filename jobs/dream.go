package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
	"gopkg.in/yaml.v3"
)

// auto_dream consolidates recent daily cards into digest nodes
// (digest/{personal,procedure,wiki}/<slug>.md): extract units with one
// model call, integrate each with a confined agent (create, corroborate,
// refine or correct a node, with a ## Sources section of wikilinks in
// prose), then record the consumed cards in the dream catalog. Every node
// write is journaled with the model and prompt version.

// DreamPromptVersion names the prompts in the journal.
const DreamPromptVersion = "auto_dream/1"

// ErrDreamRunning is returned when another auto_dream holds the workspace.
var ErrDreamRunning = errors.New("auto_dream is already running in this workspace")

// Dream buckets.
var dreamBuckets = []string{"personal", "procedure", "wiki"}

var bucketShapes = map[string]string{
	"procedure": "a runbook: when it applies, the steps, inputs, failure modes.",
	"personal":  `a rule, then "Why:" and "How to apply:" lines.`,
	"wiki":      "a definition or principle and what follows from it.",
}

const (
	maxDreamFileChars = 60000
	dreamCatalogPath  = "dream/catalog.json"
)

// NodeHit is a digest node found by a search.
type NodeHit struct {
	Path        string
	Name        string
	Description string
}

// DreamIndex is what auto_dream needs from the index.
type DreamIndex interface {
	Locked(ctx context.Context, fn func() error) error
	UpdatePaths(ctx context.Context, paths ...string) error
	// SearchNodes runs a keyword search over digest/.
	SearchNodes(ctx context.Context, query string, limit int) ([]NodeHit, error)
	Journal() *store.Journal
}

// DreamOptions configure auto_dream.
type DreamOptions struct {
	Date     string // anchor day; default today
	Hint     string
	ScanDays int // window ending at Date; default 2
	MaxUnits int // default 5
	Trigger  string
	// Run, when set, journals the dream as part of a larger run (maintain).
	Run *store.Run
}

// DreamUnit is one abstraction to integrate.
type DreamUnit struct {
	Name    string   `json:"name" yaml:"name"`
	Bucket  string   `json:"bucket" yaml:"bucket"`
	Summary string   `json:"summary" yaml:"summary"`
	Paths   []string `json:"paths" yaml:"paths"`
}

// IntegrateResult is what became of one unit.
type IntegrateResult struct {
	Unit   string `json:"unit"`
	Action string `json:"action,omitempty"` // CREATE, CORROBORATE, REFINE, CORRECT
	Path   string `json:"target_path,omitempty"`
	Note   string `json:"note,omitempty"`
	Status string `json:"status"` // ok, skipped, failed
	Error  string `json:"error,omitempty"`
	// nodes are the nodes written (path: CREATE or REFINE) when no receipt
	// names one target: each is listed as created or updated.
	nodes map[string]string
}

// DreamResult is ReMe's DreamState, trimmed to what reme tracks.
type DreamResult struct {
	Run            string            `json:"run,omitempty"`
	Date           string            `json:"date"`
	Dates          []string          `json:"dates"`
	FilesScanned   int               `json:"files_scanned"`
	FilesChanged   int               `json:"files_changed"`
	FilesUnchanged int               `json:"files_unchanged"`
	FilesDeleted   int               `json:"files_deleted"`
	ChangedPaths   []string          `json:"changed_paths"`
	Units          []DreamUnit       `json:"units"`
	Integrated     []IntegrateResult `json:"integrate_results"`
	NodesCreated   []string          `json:"nodes_created"`
	NodesUpdated   []string          `json:"nodes_updated"`
	FailedPaths    []string          `json:"failed_paths"`
	Checkpointed   []string          `json:"checkpoint_paths"`
	Warnings       []string          `json:"warnings"`
	Errors         []string          `json:"errors"`
	Summary        string            `json:"summary"`
}

// dreamCatalog records which version of each card a dream consumed, and in
// which run (a run that was undone consumed nothing).
type dreamCatalog struct {
	Files map[string]catalogEntry `json:"files"`
}

type catalogEntry struct {
	SHA256 string `json:"sha256"`
	Run    string `json:"run"`
}

func loadDreamCatalog(ws *store.Workspace) (*dreamCatalog, error) {
	c := &dreamCatalog{Files: map[string]catalogEntry{}}
	b, err := os.ReadFile(ws.MetadataPath(dreamCatalogPath))
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read dream catalog: %w", err)
	}
	if err := json.Unmarshal(b, c); err != nil {
		// derived state: a damaged catalog means every card is new again
		return &dreamCatalog{Files: map[string]catalogEntry{}}, nil
	}
	for p := range c.Files {
		if rel, err := ws.Rel(p); err != nil || rel != p {
			delete(c.Files, p) // paths read back are checked like user input
		}
	}
	return c, nil
}

func (c *dreamCatalog) save(ws *store.Workspace) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteFileAbs(ws.MetadataPath(dreamCatalogPath), append(b, '\n'))
}

// dreamInput is one scanned file.
type dreamInput struct {
	path string
	sha  string
	text string
}

// AutoDream consolidates the cards of the window that no dream consumed yet.
func AutoDream(ctx context.Context, env *Env, ix DreamIndex, opt DreamOptions) (*DreamResult, error) {
	lock, ok, err := env.WS.TryLock("dream")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrDreamRunning
	}
	defer lock.Unlock()
	if opt.Date == "" {
		opt.Date = env.Today()
	}
	if _, err := store.ParseDate(opt.Date); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	if opt.ScanDays <= 0 {
		opt.ScanDays = 2
	}
	if opt.MaxUnits <= 0 {
		opt.MaxUnits = 5
	}
	res := &DreamResult{Date: opt.Date, Dates: []string{}, ChangedPaths: []string{}, Units: []DreamUnit{},
		Integrated: []IntegrateResult{}, NodesCreated: []string{}, NodesUpdated: []string{}, FailedPaths: []string{},
		Checkpointed: []string{}, Warnings: []string{}, Errors: []string{}}
	for i := opt.ScanDays - 1; i >= 0; i-- {
		res.Dates = append(res.Dates, addDays(opt.Date, -i))
	}
	cat, err := loadDreamCatalog(env.WS)
	if err != nil {
		return nil, err
	}
	undone, err := ix.Journal().Undone()
	if err != nil {
		return nil, err
	}
	changed, err := scanDream(env.WS, res, cat, undone)
	if err != nil {
		return nil, err
	}
	if len(changed) == 0 {
		res.Summary = "No changed dream input for " + strings.Join(res.Dates, ", ")
		return res, cat.save(env.WS)
	}
	if env.Model == nil {
		res.FailedPaths = append(res.FailedPaths, res.ChangedPaths...)
		return res, ErrNoModel
	}
	run := opt.Run
	if run == nil {
		if run, err = ix.Journal().Begin(store.RunInfo{Command: "auto_dream", Trigger: opt.Trigger, Model: env.ModelID, Prompt: DreamPromptVersion}); err != nil {
			return nil, fmt.Errorf("journal auto_dream: %w", err)
		}
	}
	res.Run = run.ID
	err = dream(ctx, env, ix, run, opt, changed, res, cat)
	if opt.Run == nil {
		if eerr := run.End(err); err == nil && eerr != nil {
			err = fmt.Errorf("journal auto_dream: %w", eerr)
		}
	}
	return res, err
}

// scanDream lists the window's cards and day pages whose bytes differ from
// what the catalog says a dream consumed.
func scanDream(ws *store.Workspace, res *DreamResult, cat *dreamCatalog, undone map[string]bool) ([]dreamInput, error) {
	var changed []dreamInput
	seen := map[string]bool{}
	for _, d := range res.Dates {
		files, err := listMarkdown(ws, store.DayDir(d))
		if err != nil {
			return nil, err
		}
		if ws.Exists(store.DayIndexPath(d)) {
			files = append([]string{store.DayIndexPath(d)}, files...)
		}
		for _, p := range files {
			raw, err := os.ReadFile(ws.Abs(p))
			if err != nil {
				continue // removed meanwhile
			}
			seen[p] = true
			res.FilesScanned++
			sum := store.Sum(raw)
			if e, ok := cat.Files[p]; ok && e.SHA256 == sum && !undone[e.Run] {
				res.FilesUnchanged++
				continue
			}
			res.FilesChanged++
			res.ChangedPaths = append(res.ChangedPaths, p)
			text, _ := store.DecodeText(raw)
			changed = append(changed, dreamInput{path: p, sha: sum, text: store.TruncateRunes(text, maxDreamFileChars, "\n[truncated]")})
		}
	}
	for p := range cat.Files {
		for _, d := range res.Dates {
			if store.DateFromPath(p) == d && !seen[p] {
				delete(cat.Files, p)
				res.FilesDeleted++
			}
		}
	}
	return changed, nil
}

func dream(ctx context.Context, env *Env, ix DreamIndex, run *store.Run, opt DreamOptions, changed []dreamInput, res *DreamResult, cat *dreamCatalog) error {
	units, warn, err := extractUnits(ctx, env, opt, changed)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		res.FailedPaths = append(res.FailedPaths, res.ChangedPaths...)
		return err
	}
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	res.Units = units
	failed := map[string]bool{}
	for _, u := range units {
		ir := integrateUnit(ctx, env, ix, run, u)
		res.Integrated = append(res.Integrated, ir)
		switch ir.Status {
		case "ok":
			nodes := ir.nodes
			if len(nodes) == 0 {
				nodes = map[string]string{ir.Path: ir.Action}
			}
			for _, p := range slices.Sorted(maps.Keys(nodes)) {
				if nodes[p] == "CREATE" {
					res.NodesCreated = append(res.NodesCreated, p)
				} else {
					res.NodesUpdated = append(res.NodesUpdated, p)
				}
			}
		case "failed":
			res.Errors = append(res.Errors, ir.Unit+": "+ir.Error)
			for _, p := range u.Paths {
				failed[p] = true
			}
		}
		if run.Err() != nil {
			break // a failed write stops the run
		}
	}
	// Finish: checkpoint what was consumed (not the cards of failed units).
	for _, in := range changed {
		if failed[in.path] || run.Err() != nil {
			res.FailedPaths = append(res.FailedPaths, in.path)
			continue
		}
		cat.Files[in.path] = catalogEntry{SHA256: in.sha, Run: run.ID}
		res.Checkpointed = append(res.Checkpointed, in.path)
	}
	var saveErr error
	if err := cat.save(env.WS); err != nil {
		// nothing is checkpointed: the next dream consumes these again
		saveErr = fmt.Errorf("save the dream catalog: %w", err)
		res.Errors = append(res.Errors, saveErr.Error())
		res.FailedPaths = append(res.FailedPaths, res.Checkpointed...)
		res.Checkpointed = []string{}
	}
	res.Summary = dreamSummary(res)
	if run.Err() != nil {
		return run.Err()
	}
	return saveErr
}

// extractUnits asks the model for units; one retry on an unusable answer,
// and a second unusable answer is a warning (no units), not a failure.
func extractUnits(ctx context.Context, env *Env, opt DreamOptions, changed []dreamInput) ([]DreamUnit, string, error) {
	system, err := renderPrompt("auto_dream", env.Language, "extract", map[string]any{"MaxUnits": opt.MaxUnits, "Hint": opt.Hint})
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	allowed := map[string]bool{}
	for _, in := range changed {
		allowed[in.path] = true
		fmt.Fprintf(&b, "### %s\n%s\n\n", in.path, in.text)
	}
	msgs := []llm.Message{llm.TextMessage(llm.RoleSystem, system), llm.TextMessage(llm.RoleUser, b.String())}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := env.model().Chat(ctx, llm.Request{Model: env.ModelID, Messages: msgs})
		if err != nil {
			return nil, "", fmt.Errorf("extract: model: %w", err)
		}
		units, perr := parseUnits(resp.Message.Text(), allowed, opt.MaxUnits)
		if perr == nil {
			return units, "", nil
		}
		lastErr = perr
		msgs = append(msgs, resp.Message, llm.TextMessage(llm.RoleUser,
			"That answer could not be used ("+perr.Error()+"). Answer with the JSON object only."))
	}
	return nil, "extract: unusable model answer, nothing integrated: " + lastErr.Error(), nil
}

// parseUnits reads the extract answer (JSON or YAML, fenced or not) and
// cleans it: paths must be among the changed files, an unknown bucket is
// wiki, at most max units.
func parseUnits(text string, allowed map[string]bool, max int) ([]DreamUnit, error) {
	var reply struct {
		Units []DreamUnit `yaml:"units" json:"units"`
	}
	s := strings.TrimSpace(text)
	if i := strings.Index(s, "```"); i >= 0 {
		s = s[i+3:]
		if nl := strings.IndexByte(s, '\n'); nl >= 0 {
			s = s[nl+1:]
		}
		if j := strings.Index(s, "```"); j >= 0 {
			s = s[:j]
		}
	}
	if err := yaml.Unmarshal([]byte(s), &reply); err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return nil, fmt.Errorf("not JSON or YAML: %v", msg)
	}
	if reply.Units == nil && !strings.Contains(s, "units") {
		return nil, errors.New("no units key")
	}
	var out []DreamUnit
	for _, u := range reply.Units {
		u.Name = strings.TrimSpace(u.Name)
		var paths []string
		for _, p := range u.Paths {
			if allowed[p] && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
		if u.Name == "" || len(paths) == 0 {
			continue
		}
		u.Paths = paths
		if !slices.Contains(dreamBuckets, u.Bucket) {
			u.Bucket = "wiki"
		}
		out = append(out, u)
		if len(out) == max {
			break
		}
	}
	return out, nil
}

// dreamScope confines one unit's agent: it reads digest nodes and the
// unit's cards, and writes only digest nodes (new ones only in the unit's
// bucket).
type dreamScope struct {
	env     *Env
	ix      DreamIndex
	run     *store.Run
	unit    DreamUnit
	today   string
	written map[string]string // node -> CREATE or UPDATE
}

func (s *dreamScope) checkPath(p string, write bool) (string, error) {
	rel, err := s.env.WS.Rel(p)
	if err != nil {
		return "", err
	}
	rel, _ = store.ResolveMarkdown(rel)
	if strings.HasPrefix(rel, store.DigestDir+"/") {
		parts := strings.Split(rel, "/")
		if len(parts) != 3 || !slices.Contains(dreamBuckets, parts[1]) {
			return "", fmt.Errorf("no permission: digest nodes are digest/{personal,procedure,wiki}/<slug>.md, not %s", rel)
		}
		if write && nameWithoutSecrets(parts[2]) != parts[2] {
			return "", fmt.Errorf("the file name %s holds a secret (an API key, token or password); choose a slug without it", parts[2])
		}
		return rel, nil
	}
	if !write && slices.Contains(s.unit.Paths, rel) {
		return rel, nil
	}
	return "", fmt.Errorf("no permission: this run may read digest nodes and its source cards, and write digest nodes, not %s", rel)
}

func (s *dreamScope) tools() []llm.AgentTool {
	return []llm.AgentTool{
		{Tool: llm.Tool{Name: "node_search", Description: "Keyword search over the digest nodes.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":50}},"required":["query"]}`)},
			Run: s.nodeSearch},
		{Tool: llm.Tool{Name: "read", Description: "Read a digest node or one of the unit's source cards.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			Run: s.read},
		{Tool: llm.Tool{Name: "write", Description: "Create or replace a digest node: its name, description, durability and markdown body (ending with a ## Sources section).",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"name":{"type":"string"},"description":{"type":"string"},"durability":{"type":"string","description":"evergreen, until: YYYY-MM-DD, or review_after: YYYY-MM-DD"},"content":{"type":"string"}},"required":["path","name","description","durability","content"]}`)},
			Run: s.write},
	}
}

func (s *dreamScope) nodeSearch(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", err
	}
	if a.Limit <= 0 {
		a.Limit = 20
	}
	hits, err := s.ix.SearchNodes(ctx, a.Query, a.Limit)
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		return "No digest node matches.", nil
	}
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "- %s — %s: %s\n", h.Path, h.Name, h.Description)
	}
	return b.String(), nil
}

func (s *dreamScope) read(_ context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", err
	}
	rel, err := s.checkPath(a.Path, false)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(s.env.WS.Abs(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s not found", rel)
		}
		return "", err
	}
	text, _ := store.DecodeText(b)
	return store.TruncateRunes(text, maxDreamFileChars, "\n[truncated]"), nil
}

// parseDurability reads "evergreen", "until: DATE" or "review_after: DATE".
func parseDurability(s string) (key, value string, err error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "evergreen") {
		return "durability", "evergreen", nil
	}
	k, v, ok := strings.Cut(s, ":")
	k, v = strings.TrimSpace(strings.ToLower(k)), strings.TrimSpace(v)
	if ok && (k == "until" || k == "review_after") {
		d, err := store.ParseDate(v)
		if err != nil {
			return "", "", fmt.Errorf("durability %q: the date must be YYYY-MM-DD", s)
		}
		return k, d, nil
	}
	return "", "", fmt.Errorf(`durability %q: use "evergreen", "until: YYYY-MM-DD" or "review_after: YYYY-MM-DD"`, s)
}

// checkSources enforces the node shape: a ## Sources section whose lines
// put each wikilink in a sentence, citing at least one source card.
func checkSources(content string, sources []string) error {
	i := strings.Index(content, "## Sources")
	if i < 0 {
		return errors.New(`the body must end with a "## Sources" section`)
	}
	section := content[i+len("## Sources"):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	cited := false
	for _, line := range strings.Split(section, "\n") {
		links := store.ParseLinks(line, 1)
		if len(links) == 0 {
			continue
		}
		rest := line
		for k := len(links) - 1; k >= 0; k-- {
			rest = rest[:links[k].Start] + " " + rest[links[k].End:]
		}
		rest = strings.Trim(rest, " \t-*:>")
		if len(strings.Fields(rest)) < 3 && len([]rune(rest)) < 6 {
			return fmt.Errorf("Sources line %q is a bare link: say in a sentence what the source supports", strings.TrimSpace(line))
		}
		if strings.HasPrefix(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-* ")), "related:") {
			return fmt.Errorf("Sources line %q is a relation field: write a sentence", strings.TrimSpace(line))
		}
		for _, l := range links {
			if slices.Contains(sources, l.Target) {
				cited = true
			}
		}
	}
	if !cited {
		return fmt.Errorf("the Sources section must cite at least one of this unit's cards: %s", strings.Join(sources, ", "))
	}
	return nil
}

func (s *dreamScope) write(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Path        string `json:"path"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Durability  string `json:"durability"`
		Content     string `json:"content"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", err
	}
	rel, err := s.checkPath(a.Path, true)
	if err != nil {
		return "", err
	}
	dkey, dval, err := parseDurability(a.Durability)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Name) == "" || strings.TrimSpace(a.Description) == "" {
		return "", errors.New("name and description are required")
	}
	if err := checkSources(a.Content, s.unit.Paths); err != nil {
		return "", err
	}
	old, err := os.ReadFile(s.env.WS.Abs(rel))
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	action := "UPDATE"
	var note *store.Note
	if exists {
		note = store.ParseNote(rel, old)
		if note.FMErr != nil {
			return "", fmt.Errorf("%s has frontmatter that does not parse; it cannot be updated", rel)
		}
		// additive: every link the node had stays
		for _, l := range store.ParseLinks(note.Body, 1) {
			if !strings.Contains(a.Content, "[["+l.Target) {
				return "", fmt.Errorf("updates are additive: the new body drops the link [[%s]]", l.Target)
			}
		}
		note.Body = "\n" + strings.TrimSpace(a.Content) + "\n"
		note.HasFM = true
	} else {
		if s.written[rel] == "" && strings.Split(rel, "/")[1] != s.unit.Bucket {
			return "", fmt.Errorf("a new node for this unit goes in digest/%s/", s.unit.Bucket)
		}
		action = "CREATE"
		note = store.NewNote(rel, nil, a.Content)
	}
	fm := note.FM
	for _, kv := range [][2]string{{"name", strings.TrimSpace(a.Name)}, {"description", strings.TrimSpace(a.Description)}} {
		if err := fm.Set(kv[0], kv[1]); err != nil {
			return "", err
		}
	}
	for _, k := range []string{"durability", "until", "review_after"} {
		if k != dkey {
			fm.Delete(k)
		}
	}
	if err := fm.Set(dkey, dval); err != nil {
		return "", err
	}
	s.env.maskSecrets(note, rel)
	out, err := note.Bytes()
	if err != nil {
		return "", err
	}
	why := store.Why{Reason: fmt.Sprintf("auto_dream %s from %q", strings.ToLower(action), s.unit.Name), Model: s.env.ModelID, Prompt: DreamPromptVersion}
	err = s.ix.Locked(ctx, func() error {
		if err := s.run.WriteFile(rel, out, why); err != nil {
			return err
		}
		return s.ix.UpdatePaths(ctx, rel)
	})
	if err != nil {
		return "", err
	}
	if s.written[rel] == "" {
		s.written[rel] = action
	}
	return "Wrote " + rel, nil
}

// integrateUnit runs the unit's agent and checks its receipt.
func integrateUnit(ctx context.Context, env *Env, ix DreamIndex, run *store.Run, u DreamUnit) IntegrateResult {
	ir := IntegrateResult{Unit: u.Name}
	scope := &dreamScope{env: env, ix: ix, run: run, unit: u, today: env.Today(), written: map[string]string{}}
	system, err := renderPrompt("auto_dream", env.Language, "integrate", map[string]any{"Bucket": u.Bucket, "Shape": bucketShapes[u.Bucket]})
	if err != nil {
		ir.Status, ir.Error = "failed", err.Error()
		return ir
	}
	user, err := renderPrompt("auto_dream", env.Language, "unit", map[string]any{"Today": scope.today, "Name": u.Name, "Bucket": u.Bucket, "Summary": u.Summary, "Paths": u.Paths})
	if err != nil {
		ir.Status, ir.Error = "failed", err.Error()
		return ir
	}
	cfg := llm.AgentConfig{Model: env.ModelID, System: system, Messages: []llm.Message{llm.TextMessage(llm.RoleUser, user)},
		Tools: scope.tools(), Logger: env.logger()}
	var receipt struct {
		Action string `json:"action"`
		Path   string `json:"target_path"`
		Note   string `json:"note"`
	}
	for attempt := 0; attempt < 2; attempt++ {
		res, err := llm.RunAgent(ctx, env.model(), cfg)
		if err != nil {
			ir.Status, ir.Error = "failed", err.Error()
			return ir
		}
		if run.Err() != nil {
			ir.Status, ir.Error = "failed", run.Err().Error()
			return ir
		}
		verr := decodeReply(res.Text, &receipt)
		if verr == nil {
			verr = checkReceipt(receipt.Action, receipt.Path, u, scope.written)
		}
		if verr == nil {
			ir.Action, ir.Path, ir.Note, ir.Status = strings.ToUpper(receipt.Action), receipt.Path, receipt.Note, "ok"
			return ir
		}
		if attempt == 0 {
			cfg.Messages = append(res.Transcript[1:], llm.TextMessage(llm.RoleUser,
				"The receipt is invalid ("+verr.Error()+"). Answer with the receipt JSON only."))
			continue
		}
		// Recover from the side effect when exactly one node was written.
		if len(scope.written) == 1 {
			for p, act := range scope.written {
				ir.Path, ir.Action, ir.Status = p, "REFINE", "ok"
				if act == "CREATE" {
					ir.Action = "CREATE"
				}
				ir.Note = "receipt invalid; recovered from the node written"
			}
			return ir
		}
		ir.Status, ir.Error = "skipped", "no valid receipt and no node written: "+verr.Error()
		if len(scope.written) > 1 {
			ir.Status, ir.nodes = "ok", maps.Clone(scope.written)
			ir.Note = "receipt invalid; several nodes written: " + strings.Join(slices.Sorted(maps.Keys(scope.written)), ", ")
		}
		return ir
	}
	return ir
}

func checkReceipt(action, target string, u DreamUnit, written map[string]string) error {
	action = strings.ToUpper(strings.TrimSpace(action))
	switch action {
	case "CREATE", "CORROBORATE", "REFINE", "CORRECT":
	default:
		return fmt.Errorf("action %q is not CREATE, CORROBORATE, REFINE or CORRECT", action)
	}
	w, ok := written[target]
	if !ok {
		return fmt.Errorf("no node was written at %q", target)
	}
	if action == "CREATE" && (w != "CREATE" || strings.Split(target, "/")[1] != u.Bucket) {
		return fmt.Errorf("CREATE must make a new node in digest/%s/", u.Bucket)
	}
	return nil
}

func dreamSummary(r *DreamResult) string {
	var b strings.Builder
	head := "AutoDream completed"
	if len(r.Warnings) > 0 || len(r.Errors) > 0 {
		head += " with warnings"
	}
	ok, sk, fl := 0, 0, 0
	for _, ir := range r.Integrated {
		switch ir.Status {
		case "ok":
			ok++
		case "skipped":
			sk++
		default:
			fl++
		}
	}
	fmt.Fprintf(&b, "%s\n\n- Date: %s\n- Scan window: %s\n- Files: %d scanned, %d changed, %d unchanged, %d deleted\n",
		head, r.Date, strings.Join(r.Dates, ", "), r.FilesScanned, r.FilesChanged, r.FilesUnchanged, r.FilesDeleted)
	fmt.Fprintf(&b, "- Extracted: %d unit(s)\n- Integrated: %d ok, %d skipped, %d failed\n- Catalog: checkpointed %d changed path(s)\n",
		len(r.Units), ok, sk, fl, len(r.Checkpointed))
	if len(r.NodesCreated) > 0 {
		fmt.Fprintf(&b, "- Created: %s\n", strings.Join(r.NodesCreated, ", "))
	}
	if len(r.NodesUpdated) > 0 {
		fmt.Fprintf(&b, "- Updated: %s\n", strings.Join(r.NodesUpdated, ", "))
	}
	if len(r.Integrated) > 0 {
		b.WriteString("Changes:\n")
		for _, ir := range r.Integrated {
			line := fmt.Sprintf("- %s: %s", ir.Unit, ir.Status)
			if ir.Action != "" {
				line += " " + ir.Action + " " + ir.Path
			}
			if ir.Note != "" {
				line += " (" + ir.Note + ")"
			}
			if ir.Error != "" {
				line += " (" + ir.Error + ")"
			}
			b.WriteString(line + "\n")
		}
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return strings.TrimRight(b.String(), "\n")
}
