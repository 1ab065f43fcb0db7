package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reme-dev/reme/jobs/extractive"
	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// The long-term pass: after auto_memory (or auto_memory_cc) has brought
// the daily card up to date, a second run with only the memory tools
// decides whether the new messages hold anything for long-term memory.
// Without a model only explicit requests ("remember that …", "记住…")
// become entries, in the user's words. Messages go through this pass once:
// the session state keeps which ones did (apart from the card's), so a
// failed pass is tried again with the next call.

// LongTermResult reports the long-term pass of an auto_memory call.
type LongTermResult struct {
	// Distiller is the model that ran the pass, or "extractive".
	Distiller string         `json:"distiller"`
	Messages  int            `json:"n_messages"`
	Changes   []MemoryChange `json:"changes"`
	Answer    string         `json:"answer,omitempty"`
	// Error is why the pass failed; its messages stay pending for it.
	Error string `json:"error,omitempty"`
}

// runLongTerm runs the pass over the day's messages it has not seen yet.
// Its failures are reported in the result and as a warning: the card is
// written by then, and the messages stay pending for the next call.
func runLongTerm(ctx context.Context, env *Env, job cardJob, res *AutoMemoryResult) {
	if !env.Memory.Extract || ctx.Err() != nil {
		return
	}
	// messages the card pass just skipped as not worth a card (small
	// talk) hold nothing for long-term memory either: they count as gone
	// through the pass without a model call
	skipped := map[string]bool{}
	if res.Skipped != "" && len(job.pending.keys) > 0 && res.Skipped != "no new messages" {
		for _, k := range job.pending.keys {
			skipped[k] = true
		}
	}
	var pending messageSet
	for i, m := range job.day.msgs {
		if k := job.day.keys[i]; !job.state.Extracted[k] && !skipped[k] {
			pending.add(m, k)
		}
	}
	if len(skipped) > 0 {
		job.state.extracted(job.pending.keys)
		if len(pending.msgs) == 0 {
			if err := writeSessionState(env, job.kind, job.sessionID, job.state); err != nil {
				env.logger().Warn("could not record the messages of the long-term pass", "err", err)
			}
			return
		}
	}
	if len(pending.msgs) == 0 {
		return
	}
	source := store.LinkTo(job.sourceFile)
	if res.Path != nil && *res.Path != "" {
		source = store.LinkTo(*res.Path)
	}
	lang := job.language
	if lang == "" {
		lang = env.Language
	}
	promptLang := lang
	if promptLang != "zh" {
		promptLang = "en"
	}
	command := job.command()
	// the pass's writes are one journal run (the card's has ended), begun
	// at its first write: undone apart from the card, and none when
	// nothing is written
	mem := NewMemory(env, MemorySessionOptions{Agent: true, Source: source, Prompt: "long_term." + promptLang, Run: command})
	out := &LongTermResult{Messages: len(pending.msgs), Changes: []MemoryChange{}}
	res.LongTerm = out
	err := func() error {
		extract := env.Model == nil
		if env.Model != nil {
			out.Distiller = env.ModelID
			answer, err := runLongTermAgent(ctx, env, pending, mem, source, lang)
			out.Answer = answer
			switch {
			case err == nil:
			case job.fallback == FallbackExtractive && ctx.Err() == nil:
				res.Warnings = append(res.Warnings, fmt.Sprintf("long-term pass: model failed (%v); only explicit requests to remember were taken", err))
				extract = true
			default:
				return err
			}
		}
		if !extract {
			return nil
		}
		out.Distiller = "extractive"
		for _, r := range extractive.Requests(pending.msgs, env.Today()) {
			_, err := mem.Write(ctx, MemoryWriteRequest{Type: r.Type, Name: r.Name, Description: r.Description, Content: r.Content, Due: r.Due})
			if errors.Is(err, ErrStale) || errors.Is(err, ErrInput) {
				// a hand-edited entry or an odd request: reported, not forced
				res.Warnings = append(res.Warnings, fmt.Sprintf("long-term pass: %q was not written: %v", r.Name, err))
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	}()
	if eerr := env.endRun(err); err == nil {
		err = eerr
	}
	if err != nil {
		out.Error = err.Error()
		out.Changes = append(out.Changes, mem.Changes...)
		res.Warnings = append(res.Warnings, fmt.Sprintf("long-term pass failed (%v); its messages stay pending for the next call", err))
		return
	}
	out.Changes = append(out.Changes, mem.Changes...)
	job.state.extracted(pending.keys)
	if err := writeSessionState(env, job.kind, job.sessionID, job.state); err != nil {
		env.logger().Warn("could not record the messages of the long-term pass", "err", err)
	}
}

// runLongTermAgent runs the model with the memory tools only. Writing
// nothing is a valid outcome (most conversations hold nothing durable);
// a failure is the model's error or an unfinished run.
func runLongTermAgent(ctx context.Context, env *Env, pending messageSet, mem *Memory, source, lang string) (string, error) {
	if err := env.Index.SyncScope(ctx, store.MemoryDir); err != nil {
		return "", err
	}
	index, err := IndexText(env.WS)
	if err != nil {
		return "", err
	}
	profile := ""
	if env.Memory.ProfileAuto {
		if n, err := env.WS.ReadNote(store.ProfilePath); err == nil {
			profile = strings.TrimSpace(n.Content())
		}
		if profile == "" {
			profile = "(empty)"
		}
	}
	data := map[string]any{
		"Today":       env.Today(),
		"Source":      source,
		"Index":       index,
		"Profile":     profile,
		"ProfilePath": store.ProfilePath,
		"History":     formatHistory(pending.msgs, strings.Trim(source, "[]"), env.loc(), nil),
	}
	system, err := renderPrompt("long_term", lang, "system", data)
	if err != nil {
		return "", err
	}
	user, err := renderPrompt("long_term", lang, "user", data)
	if err != nil {
		return "", err
	}
	out, err := llm.RunAgent(ctx, env.model(), llm.AgentConfig{
		Model:    env.ModelID,
		System:   system,
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, user)},
		Tools:    mem.Tools(),
		Logger:   env.Log,
	})
	answer := ""
	if out != nil {
		answer = strings.TrimSpace(out.Text)
	}
	if err != nil {
		return answer, fmt.Errorf("model: %w", err)
	}
	// a change the model tried and gave up on is not "nothing to remember"
	for i := len(out.ToolCalls) - 1; i >= 0; i-- {
		tc := out.ToolCalls[i]
		if tc.Name != "memory_write" && tc.Name != "memory_delete" {
			continue
		}
		if tc.Error != "" {
			return answer, fmt.Errorf("the model gave up after %s failed: %s", tc.Name, tc.Error)
		}
		break
	}
	return answer, nil
}
