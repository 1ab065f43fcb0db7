package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// AutoTagResult reports tagging; a tagging failure never fails the write
// that triggered it.
type AutoTagResult struct {
	Processed int           `json:"processed"`
	Succeeded int           `json:"succeeded"`
	Failed    int           `json:"failed"`
	Skipped   string        `json:"skipped,omitempty"`
	Results   []AutoTagItem `json:"results"`
}

// AutoTagItem is the outcome for one card.
type AutoTagItem struct {
	Path  string   `json:"path"`
	Tags  []string `json:"tags"`
	Error string   `json:"error,omitempty"`
}

const autoTagMaxSteps = 8

// AutoTag has the model set memory_tags (at most three, normalised,
// preferring tags already in use) on one card. Only that key of that card
// can change.
func AutoTag(ctx context.Context, env *Env, card, lang string) *AutoTagResult {
	res := &AutoTagResult{Results: []AutoTagItem{}}
	if env.Model == nil {
		res.Skipped = "no model configured"
		return res
	}
	if down := env.ModelDown(); down != nil {
		res.Skipped = "model unavailable: " + down.Error()
		return res
	}
	// inside auto_memory the card's run goes on (its owner ends it); alone,
	// tagging is a run
	err := env.withRun("auto_tag", "auto_tag", func() error {
		res.Processed = 1
		tags, err := tagCard(ctx, env, card, lang)
		item := AutoTagItem{Path: card, Tags: tags}
		if err != nil {
			item.Error = err.Error()
			res.Failed = 1
			env.logger().Warn("auto_tag failed", "path", card, "err", err)
		} else {
			res.Succeeded = 1
		}
		if item.Tags == nil {
			item.Tags = []string{}
		}
		res.Results = append(res.Results, item)
		return nil
	})
	switch {
	case err != nil && res.Processed == 0:
		res.Skipped = err.Error() // no run to write through
	case err != nil && res.Failed == 0:
		// the tags are on disk but the run's end was not recorded
		res.Results[0].Error = err.Error()
		res.Succeeded, res.Failed = 0, 1
	}
	return res
}

func tagCard(ctx context.Context, env *Env, path, lang string) ([]string, error) {
	used, err := env.Index.Tags(ctx, 50)
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	existing := "(none yet)"
	if len(used) > 0 {
		parts := make([]string, len(used))
		for i, t := range used {
			parts[i] = fmt.Sprintf("%s (%d)", t.Tag, t.Count)
		}
		existing = strings.Join(parts, ", ")
	}
	card, err := OpenCard(env, CardSpec{Path: path, Dir: pathDir(path), OnlyKeys: []string{store.TagKey}})
	if err != nil {
		return nil, err
	}
	data := map[string]any{"Path": path, "Existing": existing}
	system, err := renderPrompt("auto_tag", lang, "system", data)
	if err != nil {
		return nil, err
	}
	user, err := renderPrompt("auto_tag", lang, "user", data)
	if err != nil {
		return nil, err
	}
	listTags := llm.AgentTool{
		Tool: llm.Tool{Name: "list_tags", Description: "List the tags already in use with their note counts.",
			Parameters: schema(`{"type":"object","properties":{},"additionalProperties":false}`)},
		Run: func(ctx context.Context, _ json.RawMessage) (string, error) { return existing, nil },
	}
	_, err = llm.RunAgent(ctx, env.model(), llm.AgentConfig{
		Model:    env.ModelID,
		System:   system,
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, user)},
		Tools:    []llm.AgentTool{card.ReadTool(), listTags, card.FrontmatterTool("Set memory_tags on the card; no other key may change.")},
		MaxSteps: autoTagMaxSteps,
		Logger:   env.Log,
	})
	if err != nil {
		return nil, err
	}
	if !card.Wrote() {
		return nil, errors.New("the model did not set memory_tags")
	}
	// The tool normalised what the model wrote; a value a person left in
	// another shape is made a list.
	n, err := card.Read()
	if err != nil {
		return nil, err
	}
	final := store.NormalizeTags(n.FM.Strings(store.TagKey), store.MaxTagsPerNote)
	if final == nil {
		final = []string{}
	}
	if !slices.Equal(final, n.FM.Strings(store.TagKey)) || !n.FM.IsList(store.TagKey) {
		if err := card.Update(func(n *store.Note) error { return n.FM.Set(store.TagKey, final) }); err != nil {
			return final, err
		}
	}
	_, err = card.Finish(ctx)
	return final, err
}

// pathDir is the folder of a workspace path.
func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}
