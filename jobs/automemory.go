package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// AutoMemoryRequest is one auto_memory call.
type AutoMemoryRequest struct {
	SessionID  string
	Messages   []byte // JSON list of messages
	Date       string // strict YYYY-MM-DD, or empty
	MemoryHint string
	Language   string // en or zh; empty uses Env.Language
	// Fallback "extractive" writes a card without the model when the model
	// fails; without it a model failure fails the call.
	Fallback string
	// IncludeImages saves the conversation's images and shows them to the
	// model; MaxImages bounds how many one call may carry.
	IncludeImages bool
	MaxImages     int
}

// AutoMemoryResult is ReMe's auto_memory metadata plus what reme adds.
type AutoMemoryResult struct {
	Date               string                `json:"date"`
	Path               *string               `json:"path"`
	Created            bool                  `json:"created"`
	Modified           bool                  `json:"modified"`
	NMessages          int                   `json:"n_messages"`
	SourceConversation string                `json:"source_conversation"`
	Index              *store.DayIndexResult `json:"index"`
	AutoTag            *AutoTagResult        `json:"auto_tag"`
	Answer             string                `json:"answer"`
	Distiller          string                `json:"distiller"`
	Skipped            string                `json:"skipped,omitempty"`
	Warnings           []string              `json:"warnings,omitempty"`
}

func inputErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, a...))
}

// ValidateSessionID applies ReMe's rule: a session id is a file name.
func ValidateSessionID(sid string) error {
	if strings.TrimSpace(sid) == "" {
		return inputErr("session_id is required")
	}
	if err := store.ValidateName(sid); err != nil {
		return inputErr("session_id: %v", err)
	}
	return nil
}

// checkCardRequest validates what auto_memory and auto_memory_cc share,
// before anything is written.
func checkCardRequest(sessionID, date, fallback string) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	if date != "" {
		if _, err := store.ParseDate(date); err != nil {
			return inputErr("date must be YYYY-MM-DD, not %q", date)
		}
	}
	if fallback != "" && fallback != "extractive" {
		return inputErr("fallback must be extractive, not %q", fallback)
	}
	return nil
}

// AutoMemory turns a conversation into the day's memory card for its
// session: the messages are saved first, then the model creates or updates
// the card, which is renamed to its name, listed on the day index and tagged.
func AutoMemory(ctx context.Context, env *Env, req AutoMemoryRequest) (*AutoMemoryResult, error) {
	if err := checkCardRequest(req.SessionID, req.Date, req.Fallback); err != nil {
		return nil, err
	}
	msgs, err := store.ParseMessages(req.Messages, env.now().In(env.loc()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	var imgs []convImage
	if req.IncludeImages {
		// every image is checked before anything is written
		if imgs, err = collectImages(env, req.SessionID, msgs, req.MaxImages); err != nil {
			return nil, err
		}
	}
	sourceFile := store.DialogPath(req.SessionID)
	date := req.Date
	if date == "" {
		date = latestDay(msgs, env)
	}
	res := &AutoMemoryResult{Date: date, NMessages: len(msgs), SourceConversation: store.LinkTo(sourceFile)}
	if len(msgs) == 0 {
		res.Skipped, res.Answer = "no messages", "Skipped: no messages"
		return res, nil
	}
	lock, err := env.WS.Lock(ctx, "session-"+req.SessionID)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	// The conversation is saved before any model call: nothing the user
	// gave is lost, whatever happens next.
	saved, err := env.WS.SaveDialog(sourceFile, msgs)
	if err != nil {
		return nil, err
	}
	if saved.SetAside != nil {
		res.Warnings = append(res.Warnings, saved.SetAside.String())
	}
	if err := saveImages(env, imgs); err != nil {
		return nil, err
	}
	job := cardJob{
		sessionID:  req.SessionID,
		date:       date,
		history:    msgs,
		sourceFile: sourceFile,
		hint:       req.MemoryHint,
		language:   req.Language,
		fallback:   req.Fallback,
		digest:     conversationDigest(saved.Messages),
		images:     imgs,
	}
	return runCard(ctx, env, job, res)
}

// latestDay is the latest message day in the workspace time zone, or today.
func latestDay(msgs []store.Message, env *Env) string {
	best := ""
	for _, m := range msgs {
		if d, ok := store.MessageDay(m.CreatedAt, env.loc()); ok && d > best {
			best = d
		}
	}
	if best == "" {
		return env.Today()
	}
	return best
}

func conversationDigest(msgs []store.Message) string {
	h := sha256.New()
	for _, m := range msgs {
		b, _ := m.MarshalLine()
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// cardJob is the part shared by auto_memory and auto_memory_cc: find or
// create the day's card of a session and have it written.
type cardJob struct {
	sessionID  string
	date       string
	history    []store.Message // what the model reads
	sourceFile string          // session/dialog/<sid>.jsonl or session/claude_code/<sid>.jsonl
	hint       string
	language   string
	fallback   string
	digest     string // of the whole conversation, to notice a repeated call
	images     []convImage
}

// processedState remembers the last conversation a session's card was
// brought up to date with, so that a hook firing twice costs nothing.
type processedState struct {
	Date   string `json:"date"`
	Digest string `json:"digest"`
	Path   string `json:"path,omitempty"`
}

func statePath(env *Env, sid, date string) string {
	return env.WS.MetadataPath("auto_memory", sid+"@"+date+".json")
}

func readState(env *Env, sid, date string) processedState {
	var st processedState
	b, err := os.ReadFile(statePath(env, sid, date))
	if err == nil {
		_ = json.Unmarshal(b, &st)
	}
	return st
}

func writeState(env *Env, sid string, st processedState) error {
	b, _ := json.Marshal(st)
	if err := os.MkdirAll(env.WS.MetadataPath("auto_memory"), 0o755); err != nil {
		return err
	}
	return store.WriteFileAbs(statePath(env, sid, st.Date), b)
}

// findCard looks up the session's card of the day: by session_id, then by
// source_conversation.
func findCard(env *Env, sid, date, sourceLink string) (string, error) {
	notes, err := env.WS.DailyNotes(date)
	if err != nil {
		return "", err
	}
	for _, n := range notes {
		if n.FM.String("session_id") == sid {
			return n.Path, nil
		}
	}
	for _, n := range notes {
		if n.FM.String("source_conversation") == sourceLink {
			return n.Path, nil
		}
	}
	return "", nil
}

func runCard(ctx context.Context, env *Env, job cardJob, res *AutoMemoryResult) (*AutoMemoryResult, error) {
	log := env.logger()
	sourceLink := store.LinkTo(job.sourceFile)
	card, err := findCard(env, job.sessionID, job.date, sourceLink)
	if err != nil {
		return nil, err
	}
	state := readState(env, job.sessionID, job.date)
	if state.Digest == job.digest && (card != "" || state.Path == "") {
		// Nothing new since the last successful run (a Stop hook firing twice).
		res.Skipped, res.Answer = "no new messages", "Skipped: no new messages since the last run"
		if card != "" {
			res.Path = &card
		}
		return res, nil
	}
	before := snapshotCard(env, card)
	scope := &cardScope{ws: env.WS, path: card, date: job.date, fixed: []keyValue{
		{"session_id", job.sessionID},
		{"source_conversation", sourceLink},
	}}
	lang := job.language
	if lang == "" {
		lang = env.Language
	}
	var modelErr error
	if env.Model != nil {
		res.Distiller = env.ModelID
		res.Answer, modelErr = runMemoryAgent(ctx, env, job, scope, lang)
		if modelErr != nil && (ctx.Err() != nil || job.fallback != "extractive" || scope.wrote) {
			// Keep what the model wrote: finish the bookkeeping, then fail.
			if scope.wrote {
				if _, err := finishCard(ctx, env, job, scope, before, res); err != nil {
					log.Warn("could not finish the card after a model error", "err", err)
				}
			}
			return res, fmt.Errorf("model: %w (the conversation is saved in %s)", modelErr, job.sourceFile)
		}
		if modelErr != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("model failed (%v); wrote an extractive card instead", modelErr))
		}
	}
	if env.Model == nil || modelErr != nil {
		res.Distiller = "extractive"
		if err := writeExtractive(env, job, scope); err != nil {
			return nil, err
		}
		res.Answer = "Wrote an extractive card (no model)."
	}
	if scope.path == "" || !env.WS.Exists(scope.path) {
		// The model judged the conversation not worth a card.
		res.Skipped = "model skipped"
		if err := writeState(env, job.sessionID, processedState{Date: job.date, Digest: job.digest}); err != nil {
			log.Warn("could not record the processed conversation", "err", err)
		}
		return res, nil
	}
	if _, err := finishCard(ctx, env, job, scope, before, res); err != nil {
		return nil, err
	}
	if res.Modified {
		res.AutoTag = AutoTag(ctx, env, *res.Path, lang)
	}
	if err := writeState(env, job.sessionID, processedState{Date: job.date, Digest: job.digest, Path: *res.Path}); err != nil {
		log.Warn("could not record the processed conversation", "err", err)
	}
	return res, nil
}

// runMemoryAgent runs the create or update agent and returns its answer.
func runMemoryAgent(ctx context.Context, env *Env, job cardJob, scope *cardScope, lang string) (string, error) {
	hint := strings.TrimSpace(job.hint)
	if hint == "" {
		hint = "(none)"
	}
	var notes map[string]string
	if len(job.images) > 0 {
		var err error
		if notes, err = describeImages(ctx, env, job.images, job.history, job.sourceFile, lang); err != nil {
			return "", fmt.Errorf("images: %w", err)
		}
	}
	data := map[string]any{
		"Today":       job.date,
		"SessionID":   job.sessionID,
		"SessionFile": job.sourceFile,
		"Hint":        hint,
		"NotePath":    scope.path,
		"History":     formatHistory(job.history, job.sourceFile, env.loc(), notes),
		"Images":      len(job.images) > 0,
	}
	system, err := renderPrompt("auto_memory", lang, "system", data)
	if err != nil {
		return "", err
	}
	var tools []llm.AgentTool
	part := "update"
	if scope.path == "" {
		part = "create"
		tools = []llm.AgentTool{scope.dailyWriteTool()}
	} else {
		tools = []llm.AgentTool{scope.readTool(), scope.editTool(),
			scope.frontmatterTool("Merge keys into the card's frontmatter (name, description and other descriptive keys; provenance keys are refused)."),
			scope.writeTool()}
	}
	user, err := renderPrompt("auto_memory", lang, part, data)
	if err != nil {
		return "", err
	}
	out, err := llm.RunAgent(ctx, env.Model, llm.AgentConfig{
		Model:    env.ModelID,
		System:   system,
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, user)},
		Tools:    tools,
		Logger:   env.Log,
	})
	if err != nil {
		return "", err
	}
	return out.Text, nil
}

// dailyWriteTool creates the session's card at daily/<date>/<name>.md.
// Later calls in the same run rewrite that card; a name change is applied
// by the rename after the run.
func (s *cardScope) dailyWriteTool() llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "daily_write", Description: "Create today's memory card for this conversation.",
			Parameters: schema(`{"type":"object","properties":{"name":{"type":"string","description":"file-name stem: short stable topic, no date"},"description":{"type":"string","description":"thorough one-paragraph summary"},"content":{"type":"string","description":"markdown body"}},"required":["name","description","content"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := decode[struct{ Name, Description, Content string }](args)
			if err != nil {
				return "", err
			}
			name, err := s.checkName(a.Name)
			if err != nil {
				return "", err
			}
			if strings.TrimSpace(a.Description) == "" {
				return "", errors.New("description is empty")
			}
			if s.path == "" {
				p := store.DayDir(s.date) + "/" + name + ".md"
				if s.ws.Exists(p) {
					return "", fmt.Errorf("a card named %q already exists on %s and belongs to another conversation; choose another name", name, s.date)
				}
				s.path = p
			}
			return s.writeCard(name, a.Description, a.Content, nil)
		},
	}
}

// cardSnapshot is a card before the run, to tell whether it changed.
type cardSnapshot struct {
	path  string
	bytes []byte
}

func snapshotCard(env *Env, card string) cardSnapshot {
	if card == "" {
		return cardSnapshot{}
	}
	b, _ := os.ReadFile(env.WS.Abs(card))
	return cardSnapshot{path: card, bytes: b}
}

// finishCard makes sure the provenance keys are there, renames the card to
// its frontmatter name, refreshes the day index and the search index.
func finishCard(ctx context.Context, env *Env, job cardJob, scope *cardScope, before cardSnapshot, res *AutoMemoryResult) (string, error) {
	n, err := env.WS.ReadNote(scope.path)
	if err != nil {
		return "", err
	}
	if n.FMErr == nil && (n.FM.String("session_id") != job.sessionID || n.FM.String("source_conversation") != store.LinkTo(job.sourceFile)) {
		if err := scope.save(n); err != nil {
			return "", err
		}
	}
	if err := mergeSourceImages(env, scope.path, job.images); err != nil {
		return "", err
	}
	final := scope.path
	if name := n.Name(); name != "" {
		if stem := strings.TrimSuffix(path.Base(final), ".md"); name != stem {
			if _, err := scope.checkName(name); err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("kept the file name: frontmatter name %q is not usable: %v", name, err))
			} else {
				dst := path.Dir(final) + "/" + name + ".md"
				if env.WS.Exists(dst) {
					res.Warnings = append(res.Warnings, fmt.Sprintf("kept the file name: %s already exists", dst))
				} else if err := env.Index.Rename(ctx, final, dst); err != nil {
					return "", fmt.Errorf("rename %s to %s: %w", final, dst, err)
				} else {
					final = dst
				}
			}
		}
	}
	scope.path = final
	if res.Index, err = indexCard(ctx, env, final, job.date); err != nil {
		return "", err
	}
	after, _ := os.ReadFile(env.WS.Abs(final))
	res.Path = &final
	res.Created = before.path == ""
	res.Modified = before.path != final || !bytes.Equal(before.bytes, after)
	return final, nil
}

// writeExtractive writes or extends the card without a model.
func writeExtractive(env *Env, job cardJob, scope *cardScope) error {
	link := store.LinkTo(job.sourceFile)
	if scope.path != "" {
		n, err := env.WS.ReadNote(scope.path)
		if err != nil {
			return err
		}
		if n.FMErr != nil {
			return fmt.Errorf("%s: frontmatter does not parse (%v); not changing it", scope.path, n.FMErr)
		}
		body := MergeExtractive(n.Content(), job.history, link, env.loc())
		if strings.TrimSpace(body) == strings.TrimSpace(n.Content()) {
			return nil
		}
		return scope.save(store.NewNote(scope.path, n.FM, body))
	}
	c := Extract(job.history, link, env.loc())
	name := c.Name
	for i := 2; env.WS.Exists(store.DayDir(job.date) + "/" + name + ".md"); i++ {
		name = fmt.Sprintf("%s-%d", c.Name, i)
	}
	scope.path = store.DayDir(job.date) + "/" + name + ".md"
	fm := store.NewFrontmatter()
	for _, kv := range [][2]string{{"name", name}, {"description", c.Description},
		{"session_id", job.sessionID}, {"source_conversation", link}, {"distiller", "extractive"}} {
		if err := fm.Set(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return scope.save(store.NewNote(scope.path, fm, c.Body))
}

// AutoMemoryCCRequest is one auto_memory_cc call: a Claude Code session.
type AutoMemoryCCRequest struct {
	SessionID      string
	TranscriptPath string // the Claude Code transcript to import
	Date           string
	MemoryHint     string
	Language       string
	Fallback       string
}

// AutoMemoryCC imports the new entries of a Claude Code transcript into
// session/claude_code/<sid>.jsonl and brings the session's card of the day
// up to date, as auto_memory does for a conversation.
func AutoMemoryCC(ctx context.Context, env *Env, req AutoMemoryCCRequest) (*AutoMemoryResult, error) {
	if err := checkCardRequest(req.SessionID, req.Date, req.Fallback); err != nil {
		return nil, err
	}
	lock, err := env.WS.Lock(ctx, "session-"+req.SessionID)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	cp, err := CopyClaudeTranscript(env.WS, req.SessionID, req.TranscriptPath)
	if err != nil {
		return nil, err
	}
	if cp.SkippedLines > 0 {
		env.logger().Info("skipped transcript lines that are not JSON", "count", cp.SkippedLines)
	}
	all := RenderClaudeMessages(cp.Entries)
	date := req.Date
	if date == "" {
		date = latestDay(all, env)
	}
	sourceFile := ClaudeCopyPath(req.SessionID)
	res := &AutoMemoryResult{Date: date, SourceConversation: store.LinkTo(sourceFile)}
	card, err := findCard(env, req.SessionID, date, store.LinkTo(sourceFile))
	if err != nil {
		return nil, err
	}
	// An existing card only needs what this Stop added; a new card gets the
	// day's part of the session.
	var history []store.Message
	if card != "" {
		history = RenderClaudeMessages(cp.NewEntries())
	}
	if len(history) == 0 {
		// a new card, or a retry after a failed run whose entries were copied
		for _, m := range all {
			if d, ok := store.MessageDay(m.CreatedAt, env.loc()); !ok || d == date {
				history = append(history, m)
			}
		}
	}
	res.NMessages = len(history)
	if len(all) == 0 {
		res.Skipped, res.Answer = "no messages", "Skipped: no messages"
		return res, nil
	}
	h := sha256.New()
	for _, e := range cp.Entries {
		h.Write([]byte(e.UUID + "\n"))
	}
	job := cardJob{
		sessionID:  req.SessionID,
		date:       date,
		history:    history,
		sourceFile: sourceFile,
		hint:       req.MemoryHint,
		language:   req.Language,
		fallback:   req.Fallback,
		digest:     hex.EncodeToString(h.Sum(nil)),
	}
	return runCard(ctx, env, job, res)
}
