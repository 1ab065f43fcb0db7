package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// The tools a model gets act on one card only, and only on the frontmatter
// keys the job allows; every path is validated before anything is read or
// written.

// resolve validates a model-supplied path and checks that it is the card
// (or the path a create prompt announced for it).
func (c *Card) resolve(p string) (string, error) {
	rel, err := c.env.WS.Rel(p)
	if err != nil {
		return "", err
	}
	rel, _ = store.ResolveMarkdown(rel)
	switch {
	case c.path != "" && rel == c.path:
		return rel, nil
	case c.spec.Announced != "" && rel == c.spec.Announced:
		if c.path == "" {
			return rel, errNoCardYet
		}
		return c.path, nil
	case c.path == "" && c.spec.Announced == "":
		return "", errNoCardYet
	}
	allowed := c.path
	if allowed == "" {
		allowed = c.spec.Announced
	}
	return "", fmt.Errorf("no permission: this run may only read and change %s", allowed)
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

func decode[T any](args json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(args, &v); err != nil {
		return v, fmt.Errorf("arguments: %v", err)
	}
	return v, nil
}

// pathArg is the path argument every card tool takes.
type pathArg struct{ Path string }

func (p pathArg) path() string { return p.Path }

// cardArgs decodes a tool's arguments and checks that their path is the card.
func cardArgs[T interface{ path() string }](c *Card, args json.RawMessage) (T, error) {
	a, err := decode[T](args)
	if err != nil {
		return a, err
	}
	_, err = c.resolve(a.path())
	return a, err
}

// ReadTool returns the card's full text.
func (c *Card) ReadTool() llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "read", Description: "Read the card (frontmatter and body).",
			Parameters: schema(`{"type":"object","properties":{"path":{"type":"string","description":"workspace path of the card"}},"required":["path"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			if _, err := cardArgs[pathArg](c, args); err != nil {
				return "", err
			}
			res, err := c.env.WS.Read(c.path, 0, 0)
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

// EditTool replaces every occurrence of old in the body.
func (c *Card) EditTool() llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "edit", Description: "Replace every occurrence of `old` in the card body with `new`. The frontmatter is not searched.",
			Parameters: schema(`{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string","description":"exact text to replace"},"new":{"type":"string","description":"replacement (empty deletes)"}},"required":["path","old"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := cardArgs[struct {
				pathArg
				Old, New string
			}](c, args)
			if err != nil {
				return "", err
			}
			if a.Old == "" {
				return "", errors.New("old is empty")
			}
			count := 0
			err = c.Update(func(n *store.Note) error {
				if count = strings.Count(n.Body, a.Old); count == 0 {
					return fmt.Errorf("old text not found in the body of %s; read the card and copy the text exactly", c.path)
				}
				n.Body = strings.ReplaceAll(n.Body, a.Old, a.New)
				return nil
			})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Replaced %d occurrence(s) in %s", count, c.path), nil
		},
	}
}

// FrontmatterTool merges keys into the card's frontmatter.
func (c *Card) FrontmatterTool(desc string) llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "frontmatter_update", Description: desc,
			Parameters: schema(`{"type":"object","properties":{"path":{"type":"string"},"metadata":{"type":"object","description":"keys to set; null removes a key"}},"required":["path","metadata"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := cardArgs[struct {
				pathArg
				Metadata map[string]any
			}](c, args)
			if err != nil {
				return "", err
			}
			if len(a.Metadata) == 0 {
				return "", errors.New("no fields to update")
			}
			var notes []string
			err = c.Update(func(n *store.Note) error {
				var err error
				notes, err = c.setMetadata(n.FM, a.Metadata)
				return err
			})
			if err != nil {
				return "", err
			}
			return withNotes(fmt.Sprintf("Updated %d key(s) on %s", len(a.Metadata), c.path), notes), nil
		},
	}
}

// WriteTool writes the whole card: name, description and body; other keys
// are kept. On a new card it creates the card under its name.
func (c *Card) WriteTool() llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "write", Description: "Write the whole card: frontmatter name and description, and the markdown body. Other frontmatter keys are kept; keys the system maintains are set by the system.",
			Parameters: schema(`{"type":"object","properties":{"path":{"type":"string"},"name":{"type":"string"},"description":{"type":"string"},"content":{"type":"string","description":"the markdown body"},"metadata":{"type":"object","description":"extra frontmatter keys"}},"required":["path","content"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := cardArgs[struct {
				pathArg
				Name, Description, Content string
				Metadata                   map[string]any
			}](c, args)
			if err != nil && !(errors.Is(err, errNoCardYet) && c.spec.Announced != "") {
				return "", err
			}
			return c.Write(ctx, a.Name, a.Description, a.Content, a.Metadata)
		},
	}
}

// CreateTool (daily_write) creates the day's card of a conversation under
// the name the model chooses; later calls in the run rewrite that card.
func (c *Card) CreateTool() llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "daily_write", Description: "Create the day's memory card for this conversation.",
			Parameters: schema(`{"type":"object","properties":{"name":{"type":"string","description":"file-name stem: short stable topic, no date"},"description":{"type":"string","description":"thorough one-paragraph summary"},"content":{"type":"string","description":"markdown body"}},"required":["name","description","content"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := decode[struct{ Name, Description, Content string }](args)
			if err != nil {
				return "", err
			}
			if strings.TrimSpace(a.Description) == "" {
				return "", errors.New("description is empty")
			}
			return c.Write(ctx, a.Name, a.Description, a.Content, nil)
		},
	}
}

// SkipTool lets the model say that the input is not worth a card; the
// reason is kept in the job's result.
func (c *Card) SkipTool() llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: "skip", Description: "Write no card because the input is empty, only small talk, or meaningless; say why.",
			Parameters: schema(`{"type":"object","properties":{"reason":{"type":"string","description":"one sentence: why nothing is worth remembering"}},"required":["reason"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := decode[struct{ Reason string }](args)
			if err != nil {
				return "", err
			}
			if strings.TrimSpace(a.Reason) == "" {
				return "", errors.New("reason is empty")
			}
			if c.wrote {
				return "", fmt.Errorf("the card %s is already written in this run; nothing to skip", c.path)
			}
			c.skip = strings.TrimSpace(a.Reason)
			return "Skipped. Nothing more to do: answer with one short sentence.", nil
		},
	}
}
