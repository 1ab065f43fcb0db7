package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// The model is untrusted: the tools it gets act on one card, and only on
// the frontmatter keys the job allows. Every path is validated before
// anything is read or written.

// reservedKeys can never be set by a model: provenance is the job's, and
// status belongs to later processing.
var reservedKeys = map[string]bool{"status": true, "session_id": true, "source_conversation": true, "source_resource": true, "source_images": true}

const maxNameRunes = 100

// cardScope is the single card a model run may touch.
type cardScope struct {
	ws       *store.Workspace
	path     string          // the allowed card; empty until a create tool sets it
	date     string          // names must not repeat the date
	onlyKeys map[string]bool // when set, frontmatter_update may change only these
	wrote    bool            // the model changed the card
	fixed    []keyValue      // provenance written by the job on every write, in this order
}

type keyValue struct {
	key   string
	value any
}

var errNoCard = errors.New("there is no card yet")

// resolve validates a model-supplied path and checks it is the card.
func (s *cardScope) resolve(p string) (string, error) {
	rel, err := s.ws.Rel(p)
	if err != nil {
		return "", err
	}
	rel, _ = store.ResolveMarkdown(rel)
	if s.path == "" {
		return "", errNoCard
	}
	if rel != s.path {
		return "", fmt.Errorf("no permission: this run may only read and change %s", s.path)
	}
	return rel, nil
}

// checkName validates a card name chosen by the model.
func (s *cardScope) checkName(name string) (string, error) {
	name = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(name), ".md"))
	if name == "" {
		return "", errors.New("name is empty")
	}
	if err := store.ValidateName(name); err != nil {
		return "", fmt.Errorf("name %q is not a valid file name: %v", name, err)
	}
	if utf8.RuneCountInString(name) > maxNameRunes {
		return "", fmt.Errorf("name is longer than %d characters", maxNameRunes)
	}
	if s.date != "" && strings.Contains(name, s.date) {
		return "", fmt.Errorf("name must not contain the date %s (the folder already says it)", s.date)
	}
	return name, nil
}

func (s *cardScope) readCard() (*store.Note, error) {
	n, err := s.ws.ReadNote(s.path)
	if err != nil {
		return nil, err
	}
	if n.FMErr != nil {
		return nil, fmt.Errorf("the card's frontmatter does not parse (%v); it cannot be changed automatically", n.FMErr)
	}
	return n, nil
}

func (s *cardScope) save(n *store.Note) error {
	for _, kv := range s.fixed {
		if n.FM.Has(kv.key) && n.FM.Value(kv.key) == kv.value {
			continue // unchanged: keep the header as it is
		}
		if err := n.FM.Set(kv.key, kv.value); err != nil {
			return err
		}
	}
	if err := s.ws.WriteNote(n); err != nil {
		return err
	}
	s.wrote = true
	return nil
}

// setMetadata applies model-supplied frontmatter, refusing reserved keys.
func (s *cardScope) setMetadata(fm *store.Frontmatter, meta map[string]any) (int, error) {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.TrimSpace(k) == "" {
			return 0, errors.New("empty frontmatter key")
		}
		if reservedKeys[k] {
			return 0, fmt.Errorf("%s is reserved and cannot be set", k)
		}
		if s.onlyKeys != nil && !s.onlyKeys[k] {
			return 0, fmt.Errorf("only %s may be changed in this run", strings.Join(sortedSet(s.onlyKeys), ", "))
		}
	}
	for _, k := range keys {
		v := meta[k]
		if k == "name" {
			name, ok := v.(string)
			if !ok {
				return 0, errors.New("name must be a string")
			}
			var err error
			if v, err = s.checkName(name); err != nil {
				return 0, err
			}
		}
		if k == "description" {
			if _, ok := v.(string); !ok {
				return 0, errors.New("description must be a string")
			}
		}
		if v == nil {
			fm.Delete(k)
			continue
		}
		if err := fm.Set(k, v); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

func decode[T any](args json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(args, &v); err != nil {
		return v, fmt.Errorf("arguments: %v", err)
	}
	return v, nil
}

// readTool returns the card's full text.
func (s *cardScope) readTool() llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "read", Description: "Read the card (frontmatter and body).",
			Parameters: schema(`{"type":"object","properties":{"path":{"type":"string","description":"workspace path of the card"}},"required":["path"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := decode[struct{ Path string }](args)
			if err != nil {
				return "", err
			}
			if _, err := s.resolve(a.Path); err != nil {
				return "", err
			}
			res, err := s.ws.Read(s.path, 0, 0)
			if err != nil {
				return "", err
			}
			if res.Text == "" {
				return "(the card is empty)", nil
			}
			return res.Text, nil
		},
	}
}

// editTool replaces every occurrence of old in the body.
func (s *cardScope) editTool() llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "edit", Description: "Replace every occurrence of `old` in the card body with `new`. The frontmatter is not searched.",
			Parameters: schema(`{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string","description":"exact text to replace"},"new":{"type":"string","description":"replacement (empty deletes)"}},"required":["path","old"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := decode[struct{ Path, Old, New string }](args)
			if err != nil {
				return "", err
			}
			if _, err := s.resolve(a.Path); err != nil {
				return "", err
			}
			if a.Old == "" {
				return "", errors.New("old is empty")
			}
			n, err := s.readCard()
			if err != nil {
				return "", err
			}
			count := strings.Count(n.Body, a.Old)
			if count == 0 {
				return "", fmt.Errorf("old text not found in the body of %s; read the card and copy the text exactly", s.path)
			}
			n.Body = strings.ReplaceAll(n.Body, a.Old, a.New)
			if err := s.save(n); err != nil {
				return "", err
			}
			return fmt.Sprintf("Replaced %d occurrence(s) in %s", count, s.path), nil
		},
	}
}

// frontmatterTool merges keys into the card's frontmatter.
func (s *cardScope) frontmatterTool(desc string) llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "frontmatter_update", Description: desc,
			Parameters: schema(`{"type":"object","properties":{"path":{"type":"string"},"metadata":{"type":"object","description":"keys to set; null removes a key"}},"required":["path","metadata"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := decode[struct {
				Path     string
				Metadata map[string]any
			}](args)
			if err != nil {
				return "", err
			}
			if _, err := s.resolve(a.Path); err != nil {
				return "", err
			}
			if len(a.Metadata) == 0 {
				return "", errors.New("no fields to update")
			}
			n, err := s.readCard()
			if err != nil {
				return "", err
			}
			count, err := s.setMetadata(n.FM, a.Metadata)
			if err != nil {
				return "", err
			}
			if err := s.save(n); err != nil {
				return "", err
			}
			return fmt.Sprintf("Updated %d key(s) on %s", count, s.path), nil
		},
	}
}

// writeTool rewrites the card: name, description and body; other keys kept.
func (s *cardScope) writeTool() llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "write", Description: "Rewrite the whole card: frontmatter name and description, and the markdown body. Other frontmatter keys are kept.",
			Parameters: schema(`{"type":"object","properties":{"path":{"type":"string"},"name":{"type":"string"},"description":{"type":"string"},"content":{"type":"string","description":"the markdown body"},"metadata":{"type":"object","description":"extra frontmatter keys"}},"required":["path","content"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := decode[struct {
				Path, Name, Description, Content string
				Metadata                         map[string]any
			}](args)
			if err != nil {
				return "", err
			}
			if _, err := s.resolve(a.Path); err != nil {
				return "", err
			}
			return s.writeCard(a.Name, a.Description, a.Content, a.Metadata)
		},
	}
}

// writeCard writes name, description and body onto the card path, keeping
// frontmatter keys the call does not mention.
func (s *cardScope) writeCard(name, description, content string, meta map[string]any) (string, error) {
	fm := store.NewFrontmatter()
	existed := false
	if old, err := s.ws.ReadNote(s.path); err == nil {
		if old.FMErr != nil {
			return "", fmt.Errorf("the card's frontmatter does not parse (%v); it cannot be changed automatically", old.FMErr)
		}
		fm, existed = old.FM, true
	} else if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	// name and description first (they lead a new card's header), then the rest
	for _, kv := range []struct {
		key, val string
	}{{"name", name}, {"description", strings.TrimSpace(description)}} {
		if strings.TrimSpace(kv.val) == "" {
			continue
		}
		if _, err := s.setMetadata(fm, map[string]any{kv.key: kv.val}); err != nil {
			return "", err
		}
	}
	rest := map[string]any{}
	for k, v := range meta {
		if k != "name" && k != "description" {
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		if _, err := s.setMetadata(fm, rest); err != nil {
			return "", err
		}
	}
	if strings.TrimSpace(content) == "" {
		return "", errors.New("content is empty")
	}
	n := store.NewNote(s.path, fm, content)
	if err := s.save(n); err != nil {
		return "", err
	}
	verb := "Wrote"
	if existed {
		verb = "Rewrote"
	}
	return fmt.Sprintf("%s %s", verb, s.path), nil
}
