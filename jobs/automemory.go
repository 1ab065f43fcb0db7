package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reme-dev/reme/jobs/claudecode"
	"github.com/reme-dev/reme/jobs/codex"
	"github.com/reme-dev/reme/jobs/extractive"
	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
	"github.com/reme-dev/reme/vision"
)

// Fallbacks: what a job does when the model fails.
const (
	// FallbackExtractive writes the extractive card (distiller: extractive).
	FallbackExtractive = "extractive"
	// FallbackNone fails the call; the messages stay pending.
	FallbackNone = "none"
)

// DefaultSessionWait is how long a call waits for another run of the same
// session to finish distilling before it gives up (its messages are saved
// by then).
const DefaultSessionWait = 10 * time.Minute

// AutoMemoryRequest is one auto_memory call.
type AutoMemoryRequest struct {
	SessionID string
	Messages  []byte // JSON list of messages
	// MessagesReader, when Messages is nil, is read for the list instead,
	// one message at a time (a long conversation is not held twice).
	MessagesReader io.Reader
	Date           string // strict YYYY-MM-DD, or empty
	MemoryHint     string
	Language       string // en or zh; empty uses Env.Language
	// Fallback is FallbackExtractive (a model failure writes an extractive
	// card) or FallbackNone (it fails the call); empty means none.
	Fallback string
	// IncludeImages saves the conversation's images and shows them to the
	// model; MaxImages bounds how many one call may carry.
	IncludeImages bool
	MaxImages     int
	// Images bounds each image's decode (pixels, memory), as for image
	// resources; zero fields take vision's defaults.
	Images vision.Options
	// Wait bounds the wait for another run of this session (0 means
	// DefaultSessionWait).
	Wait time.Duration
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
	// Skipped is why no card was written or changed: "no messages", "no
	// new messages", or the model's (or the extractive distiller's) reason.
	Skipped  string   `json:"skipped,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// LongTerm is the long-term pass, when it ran (memory.extract).
	LongTerm *LongTermResult `json:"long_term,omitempty"`
}

func inputErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, a...))
}

// ValidateSessionID applies ReMe's rule: a session id is a file name.
func ValidateSessionID(sid string) error { return store.ValidateSessionID(sid) }

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
	switch fallback {
	case "", FallbackExtractive, FallbackNone:
	default:
		return inputErr("fallback must be extractive or none, not %q", fallback)
	}
	return nil
}

// AutoMemory turns a conversation into the day's memory card for its
// session. The messages are saved first, under a short lock of their own;
// then, under the session's lock (waited for at most req.Wait), the model
// creates or updates the card from the messages not distilled yet, and the
// card is renamed to its name, listed on the day index and tagged. Only a
// written card or an explicit skip marks the messages distilled; after a
// failure they stay pending for the next call.
func AutoMemory(ctx context.Context, env *Env, req AutoMemoryRequest) (*AutoMemoryResult, error) {
	if err := checkCardRequest(req.SessionID, req.Date, req.Fallback); err != nil {
		return nil, err
	}
	var msgs []store.Message
	var err error
	if req.Messages == nil && req.MessagesReader != nil {
		msgs, err = store.ReadMessages(req.MessagesReader, env.now().In(env.loc()))
	} else {
		msgs, err = store.ParseMessages(req.Messages, env.now().In(env.loc()))
	}
	if errors.Is(err, store.ErrMessages) {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	if err != nil {
		return nil, err
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
	// The conversation is saved before any model call and before waiting
	// for another run: nothing the user gave is lost, whatever happens next.
	var saved *store.SaveResult
	err = withLock(ctx, env, "session-"+req.SessionID+".save", 0, func() error {
		var err error
		if saved, err = env.WS.SaveDialog(sourceFile, msgs); err != nil {
			return err
		}
		return saveImages(env, imgs)
	})
	if err != nil {
		return nil, err
	}
	if saved.SetAside != nil {
		res.Warnings = append(res.Warnings, saved.SetAside.String())
	}
	if err := env.connect(ctx); err != nil {
		return res, fmt.Errorf("%w (the messages are saved in %s; the next call distils them)", err, sourceFile)
	}
	job := cardJob{
		kind:        "dialog",
		sessionID:   req.SessionID,
		date:        date,
		sourceFile:  sourceFile,
		hint:        req.MemoryHint,
		language:    req.Language,
		fallback:    req.Fallback,
		images:      imgs,
		imageLimits: req.Images,
	}
	return res, withSessionLock(ctx, env, req.SessionID, req.Wait, sourceFile, func() error {
		state, err := readSessionState(env, job.kind, job.sessionID)
		if err != nil {
			return err
		}
		job.state = state
		job.pending, job.day = pendingDialog(env, saved.Messages, msgs, state, date)
		if err := runCard(ctx, env, job, res); err != nil {
			return err
		}
		runLongTerm(ctx, env, job, res)
		return nil
	})
}

// pendingDialog picks what the model is shown: the call's messages and the
// session's messages of that day from earlier calls, minus those already
// distilled into a card (the whole day, distilled or not, is returned as
// well). A message this call carries is shown as sent (its images
// included); an older one as saved.
func pendingDialog(env *Env, session, incoming []store.Message, state *sessionState, date string) (pending, day messageSet) {
	sent := map[string]store.Message{}
	for _, m := range incoming {
		sent[m.ID] = m
	}
	for _, m := range session {
		in, ok := sent[m.ID]
		if !ok {
			if d, dated := store.MessageDay(m.CreatedAt, env.loc()); dated && d != date {
				continue // another day's; a call for that day distils it
			}
		}
		k := messageKey(m)
		if ok {
			m = in
		}
		day.add(m, k)
		if !state.Distilled[k] {
			pending.add(m, k)
		}
	}
	return pending, day
}

// messageSet is messages with their distillation keys.
type messageSet struct {
	msgs []store.Message
	keys []string
}

func (s *messageSet) add(m store.Message, key string) {
	s.msgs = append(s.msgs, m)
	s.keys = append(s.keys, key)
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

// withLock runs fn under a workspace lock, waiting at most wait for it (0:
// as long as ctx allows). A wait that ran out is ErrBusy.
func withLock(ctx context.Context, env *Env, name string, wait time.Duration, fn func() error) error {
	lctx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	lock, err := env.WS.Lock(lctx, name)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: %v", ErrBusy, err)
		}
		return err
	}
	defer lock.Unlock()
	return fn()
}

// withSessionLock runs fn while holding the session's lock, which a run
// holds while it distils. A call that waited too long says so, and that
// its messages are safe.
func withSessionLock(ctx context.Context, env *Env, sid string, wait time.Duration, sourceFile string, fn func() error) error {
	if wait <= 0 {
		wait = DefaultSessionWait
	}
	err := withLock(ctx, env, "session-"+sid, wait, fn)
	if errors.Is(err, ErrBusy) {
		return fmt.Errorf("%w: another run has been distilling session %s for more than %s; the messages are saved in %s and the next call distils them",
			ErrBusy, sid, wait, sourceFile)
	}
	return err
}

// cardJob is the part shared by auto_memory and auto_memory_cc: find or
// create the day's card of a session and have it written.
type cardJob struct {
	kind       string // dialog or claude_code: the session folder
	sessionID  string
	date       string
	pending    messageSet // not distilled yet: what the model reads
	day        messageSet // the day's messages, distilled or not
	sourceFile string     // session/dialog/<sid>.jsonl or session/claude_code/<sid>.jsonl
	hint       string
	language   string
	fallback   string
	images     []convImage
	// imageLimits bound each image's decode for the model
	imageLimits vision.Options
	state       *sessionState
}

// command is the command a job's journal runs are named after.
func (j cardJob) command() string {
	switch j.kind {
	case "claude_code":
		return "auto_memory_cc"
	case "codex":
		return "auto_memory_codex"
	}
	return "auto_memory"
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

func runCard(ctx context.Context, env *Env, job cardJob, res *AutoMemoryResult) (err error) {
	log := env.logger()
	command := job.command()
	promptLang := job.language
	if promptLang == "" {
		promptLang = env.Language
	}
	if promptLang != "zh" {
		promptLang = "en"
	}
	if err := env.beginRun(command, "auto_memory."+promptLang); err != nil {
		return err
	}
	defer func() {
		if eerr := env.endRun(err); err == nil {
			err = eerr
		}
	}()
	link := store.LinkTo(job.sourceFile)
	existing, err := findCard(env, job.sessionID, job.date, link)
	if err != nil {
		return err
	}
	if existing == "" {
		if prev := job.state.Cards[job.date]; prev != "" && !env.WS.Exists(prev) {
			// The day's card was deleted or moved away: write it again
			// from the whole day, not only what is new.
			job.pending = job.day
		}
	}
	if len(job.pending.msgs) == 0 {
		res.Skipped, res.Answer = "no new messages", "Skipped: no new messages since the last run"
		if existing != "" {
			res.Path = &existing
		}
		return nil
	}
	system := []KeyValue{{"session_id", job.sessionID}, {"source_conversation", link}}
	if len(job.images) > 0 {
		sources, err := sourceImages(env, existing, job.images)
		if err != nil {
			return err
		}
		system = append(system, KeyValue{"source_images", sources})
	}
	card, err := OpenCard(env, CardSpec{
		Dir: store.DayDir(job.date), Date: job.date, Path: existing,
		Kind: "conversation", Stem: "conversation", ClashKey: job.sessionID, System: system, OwnTags: true,
	})
	if err != nil {
		return err
	}
	lang := job.language
	if lang == "" {
		lang = env.Language
	}
	var failure error
	if env.Model != nil {
		res.Distiller = env.ModelID
		out, runErr := runMemoryAgent(ctx, env, job, card, lang)
		if out != nil {
			res.Answer = out.Text
		}
		failure = card.judge(out, runErr)
	}
	switch {
	case env.Model == nil:
		res.Distiller = "extractive"
		if err := writeExtractive(ctx, env, job, card); err != nil {
			return err
		}
		if card.Wrote() {
			res.Answer = "Wrote an extractive card (no model)."
		}
	case failure != nil && job.fallback == FallbackExtractive && ctx.Err() == nil && !card.Wrote():
		res.Distiller = "extractive"
		if err := writeExtractive(ctx, env, job, card); err != nil {
			return err
		}
		res.Answer = ""
		what := "the extractive distiller found nothing to add"
		if card.Wrote() {
			res.Answer = "Wrote an extractive card (the model failed)."
			what = "wrote an extractive card instead"
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("model failed (%v); %s", failure, what))
	case failure != nil:
		// Keep what the model wrote: finish the bookkeeping, then fail. The
		// messages stay pending, so the next call distils them again.
		if card.Wrote() {
			if fin, err := card.Finish(ctx); err != nil {
				log.Warn("could not finish the card after a model error", "err", err)
			} else {
				res.Path = &fin.Path
			}
		}
		return fmt.Errorf("%w (the conversation is saved in %s; its new messages stay pending for the next call)", failure, job.sourceFile)
	}
	if reason := card.Skipped(); reason != "" {
		res.Skipped = reason
		if res.Answer == "" {
			res.Answer = "Skipped: " + reason
		}
		if card.Exists() {
			p := card.Path()
			res.Path = &p
		}
		// the run ends before the messages count as distilled: a crash in
		// between leaves them pending, never distilled without their card
		if err := env.endRun(nil); err != nil {
			return err
		}
		job.state.distilled(job.pending.keys, job.date, "")
		return writeSessionState(env, job.kind, job.sessionID, job.state)
	}
	fin, err := card.Finish(ctx)
	if err != nil {
		return err
	}
	res.Path, res.Created, res.Modified, res.Index = &fin.Path, fin.Created, fin.Modified, fin.Index
	if res.Modified {
		res.AutoTag = AutoTag(ctx, env, fin.Path, lang)
	}
	if err := env.endRun(nil); err != nil {
		return err
	}
	job.state.distilled(job.pending.keys, job.date, fin.Path)
	if err := writeSessionState(env, job.kind, job.sessionID, job.state); err != nil {
		// the card is written; the worst case is a repeated distillation
		log.Warn("could not record the distilled messages", "err", err)
	}
	return nil
}

// runMemoryAgent runs the create or update agent on the card.
func runMemoryAgent(ctx context.Context, env *Env, job cardJob, card *Card, lang string) (*llm.AgentResult, error) {
	hint := strings.TrimSpace(job.hint)
	if hint == "" {
		hint = "(none)"
	}
	var notes map[string]string
	if len(job.images) > 0 {
		var err error
		if notes, err = describeImages(ctx, env, job.images, job.imageLimits, job.pending.msgs, job.sourceFile, lang); err != nil {
			return nil, fmt.Errorf("images: %w", err)
		}
	}
	data := map[string]any{
		"Today":       job.date,
		"SessionID":   job.sessionID,
		"SessionFile": job.sourceFile,
		"Hint":        hint,
		"NotePath":    card.Path(),
		"History":     formatHistory(job.pending.msgs, job.sourceFile, env.loc(), notes),
		"Images":      len(job.images) > 0,
	}
	system, err := renderPrompt("auto_memory", lang, "system", data)
	if err != nil {
		return nil, err
	}
	part := "update"
	tools := []llm.AgentTool{card.ReadTool(), card.EditTool(),
		card.FrontmatterTool("Merge keys into the card's frontmatter (name, description and other descriptive keys; keys the system maintains keep its values)."),
		card.WriteTool(), card.SkipTool()}
	if card.Path() == "" {
		part = "create"
		tools = []llm.AgentTool{card.CreateTool(), card.SkipTool()}
	}
	user, err := renderPrompt("auto_memory", lang, part, data)
	if err != nil {
		return nil, err
	}
	return llm.RunAgent(ctx, env.model(), llm.AgentConfig{
		Model:    env.ModelID,
		System:   system,
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, user)},
		Tools:    tools,
		Logger:   env.Log,
	})
}

// writeExtractive writes or extends the card without a model. A new card
// for a conversation with nothing but small talk is not written: the
// distiller says so as its skip reason.
func writeExtractive(ctx context.Context, env *Env, job cardJob, card *Card) error {
	link := store.LinkTo(job.sourceFile)
	msgs := maskMessages(job.pending.msgs)
	if card.Exists() {
		n, err := card.Read()
		if err != nil {
			return err
		}
		body := extractive.Merge(n.Content(), msgs, link, env.loc())
		if strings.TrimSpace(body) == strings.TrimSpace(n.Content()) {
			return nil
		}
		return card.Update(func(n *store.Note) error {
			enc := n.Encoding
			*n = *store.NewNote(n.Path, n.FM, body)
			n.Encoding = enc
			return nil
		})
	}
	if !extractive.Substantive(msgs) {
		card.skip = "only small talk: no statement worth a card (extractive distiller)"
		return nil
	}
	c := extractive.Conversation(msgs, link, env.loc())
	card.SetSystem("distiller", "extractive")
	_, err := card.Write(ctx, c.Name, c.Description, c.Body, nil)
	return err
}

// AutoMemoryCCRequest is one auto_memory_cc call: a Claude Code session.
type AutoMemoryCCRequest struct {
	SessionID      string
	TranscriptPath string // the Claude Code transcript to import
	Date           string
	MemoryHint     string
	Language       string
	// Fallback is as in AutoMemoryRequest, but empty means extractive: a
	// Stop hook must not lose a day to a model outage.
	Fallback string
	// MaxTranscriptBytes bounds the transcript (0 means
	// claudecode.DefaultMaxTranscriptBytes).
	MaxTranscriptBytes int64
	// Wait is as in AutoMemoryRequest.
	Wait time.Duration
}

// SaveClaudeSession copies the new entries of a Claude Code transcript into
// session/claude_code/<sid>.jsonl (SaveNewClaudeEntries) and returns every
// entry of the copy: the first half of AutoMemoryCC.
func SaveClaudeSession(ctx context.Context, env *Env, req AutoMemoryCCRequest) (*claudecode.Copy, error) {
	ap, err := SaveNewClaudeEntries(ctx, env, req)
	if err != nil {
		return nil, err
	}
	// Read back outside the save lock: a Stop hook saving meanwhile only
	// appends after what this call saved.
	cp, err := claudecode.ReadCopy(env.WS, req.SessionID, ap.Size)
	if err != nil {
		return nil, err
	}
	cp.New, cp.SkippedLines, cp.SetAside = ap.New, ap.SkippedLines, ap.SetAside
	return cp, nil
}

// SaveNewClaudeEntries saves what a Claude Code transcript gained since the
// last call under the session's short save lock, reading only that part of
// the transcript when the files are as the last call left them
// (claudecode.Append): all a Stop hook does before it returns.
func SaveNewClaudeEntries(ctx context.Context, env *Env, req AutoMemoryCCRequest) (*claudecode.Appended, error) {
	var ap *claudecode.Appended
	err := saveImported(ctx, env, req, func() (err error) {
		ap, err = claudecode.Append(env.WS, req.SessionID, req.TranscriptPath, req.MaxTranscriptBytes)
		return err
	})
	if err != nil {
		return nil, err
	}
	if ap.SkippedLines > 0 {
		env.logger().Info("skipped transcript lines that are not JSON", "count", ap.SkippedLines)
	}
	if ap.SetAside != nil {
		env.logger().Warn(ap.SetAside.String() + "; its entry is copied again from the transcript")
	}
	return ap, nil
}

// SaveCodexSession copies what a Codex rollout gained into the workspace,
// under the session's save lock.
func SaveCodexSession(ctx context.Context, env *Env, req AutoMemoryCCRequest) (*codex.Copy, error) {
	var cp *codex.Copy
	err := saveImported(ctx, env, req, func() (err error) {
		cp, err = codex.Save(env.WS, req.SessionID, req.TranscriptPath, req.MaxTranscriptBytes)
		return err
	})
	if err != nil {
		return nil, err
	}
	if cp.SetAside != nil {
		env.logger().Warn(cp.SetAside.String() + "; its line is copied again from the rollout")
	}
	return cp, nil
}

// saveImported checks an agent session's request and runs save under the
// session's short save lock.
func saveImported(ctx context.Context, env *Env, req AutoMemoryCCRequest, save func() error) error {
	if err := checkCardRequest(req.SessionID, req.Date, req.Fallback); err != nil {
		return err
	}
	return withLock(ctx, env, "session-"+req.SessionID+".save", 0, save)
}

// AutoMemoryCC imports the new entries of a Claude Code transcript into
// session/claude_code/<sid>.jsonl and brings the session's card of the day
// up to date, as auto_memory does for a conversation: saved first, then
// distilled under the session's lock from what is not distilled yet.
func AutoMemoryCC(ctx context.Context, env *Env, req AutoMemoryCCRequest) (*AutoMemoryResult, error) {
	return autoMemoryImported(ctx, env, req, "claude_code", func() (importedCopy, error) {
		cp, err := SaveClaudeSession(ctx, env, req)
		if err != nil {
			return importedCopy{}, err
		}
		// the copy as it is now, other calls' entries included
		return importedCopy{claudecode.CopyPath(req.SessionID), cp.SetAside, func() []store.Message { return claudecode.RenderMessages(cp.Entries) }}, nil
	})
}

// AutoMemoryCodex does for a Codex CLI session what AutoMemoryCC does for
// a Claude Code one: the rollout's new lines are copied into
// session/codex/<sid>.jsonl first, then the card of the day is brought up
// to date from what is not distilled yet.
func AutoMemoryCodex(ctx context.Context, env *Env, req AutoMemoryCCRequest) (*AutoMemoryResult, error) {
	return autoMemoryImported(ctx, env, req, "codex", func() (importedCopy, error) {
		cp, err := SaveCodexSession(ctx, env, req)
		if err != nil {
			return importedCopy{}, err
		}
		return importedCopy{cp.Path, cp.SetAside, func() []store.Message { return codex.RenderMessages(cp.Lines) }}, nil
	})
}

// importedCopy is an agent session's copy after a save: where it is, the
// torn tail a save set aside, and its messages.
type importedCopy struct {
	path     string
	setAside *store.SetAside
	render   func() []store.Message
}

// autoMemoryImported saves an agent session (kind names its folders), and
// only then opens what distilling needs and distils it; a hook's failure
// falls back to the extractive card unless told otherwise.
func autoMemoryImported(ctx context.Context, env *Env, req AutoMemoryCCRequest, kind string, save func() (importedCopy, error)) (*AutoMemoryResult, error) {
	if req.Fallback == "" {
		req.Fallback = FallbackExtractive
	}
	cp, err := save()
	if err != nil {
		return nil, err
	}
	if err := env.connect(ctx); err != nil {
		return nil, fmt.Errorf("%w (the session is saved in %s; the next call distils it)", err, cp.path)
	}
	return importedCard(ctx, env, kind, cp.path, req, cp.setAside, cp.render)
}

// importedCard distils an imported agent session (kind names its state
// folder) into the card of the day, under the session's lock.
func importedCard(ctx context.Context, env *Env, kind, sourceFile string, req AutoMemoryCCRequest, aside *store.SetAside, render func() []store.Message) (*AutoMemoryResult, error) {
	res := &AutoMemoryResult{Date: req.Date, SourceConversation: store.LinkTo(sourceFile)}
	if aside != nil {
		res.Warnings = append(res.Warnings, aside.String())
	}
	return res, withSessionLock(ctx, env, req.SessionID, req.Wait, sourceFile, func() error {
		all := render()
		if res.Date == "" {
			res.Date = latestDay(all, env)
		}
		if len(all) == 0 {
			res.Skipped, res.Answer = "no messages", "Skipped: no messages"
			return nil
		}
		state, err := readSessionState(env, kind, req.SessionID)
		if err != nil {
			return err
		}
		job := cardJob{
			kind:       kind,
			sessionID:  req.SessionID,
			date:       res.Date,
			sourceFile: sourceFile,
			hint:       req.MemoryHint,
			language:   req.Language,
			fallback:   req.Fallback,
			state:      state,
		}
		for _, m := range all {
			if d, ok := store.MessageDay(m.CreatedAt, env.loc()); ok && d != res.Date {
				continue
			}
			k := messageKey(m)
			job.day.add(m, k)
			if !state.Distilled[k] {
				job.pending.add(m, k)
			}
		}
		res.NMessages = len(job.pending.msgs)
		if len(job.day.msgs) == 0 {
			res.Skipped = "no messages on " + res.Date
			res.Answer = "Skipped: the session has no messages on " + res.Date
			return nil
		}
		if err := runCard(ctx, env, job, res); err != nil {
			return err
		}
		runLongTerm(ctx, env, job, res)
		return nil
	})
}
