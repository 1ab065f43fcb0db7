package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// The memory tools as a model gets them: the commands' names and
// arguments, results as JSON. They act only on memory/entries/ and
// the profile (Memory checks every path), so a long-term pass given only
// these tools cannot touch anything else.

// Tool parameter schemas; the MCP server offers the same ones.
var (
	MemorySearchSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"keywords or a question"},` +
		`"types":{"type":"array","items":{"type":"string","enum":["user","feedback","project","reference","entry","profile","memory_index","card","digest"]},"description":"narrow the search (default: entries and the profile)"},` +
		`"limit":{"type":"integer","description":"most results (default 5)"}},` +
		`"required":["query"],"additionalProperties":false}`)
	MemoryGetSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"memory/entries/<name>.md or memory/profile.md"},` +
		`"name":{"type":"string","description":"the entry's name, instead of path"}},` +
		`"additionalProperties":false}`)
	MemoryWriteSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"the entry to update (from memory_get or the index); leave out to create, or to update the one entry with this name"},` +
		`"type":{"type":"string","enum":["user","feedback","project","reference"],"description":"user: who the user is; feedback: a preference or correction (content needs Why: and How to apply: lines); project: a decision or dated milestone; reference: where to look something up"},` +
		`"name":{"type":"string","description":"short stable name, also the file name"},` +
		`"description":{"type":"string","description":"one sentence for the index"},` +
		`"content":{"type":"string","description":"the entry's markdown text: the durable fact, not the conversation"},` +
		`"due":{"type":"string","description":"YYYY-MM-DD deadline of a project milestone"},` +
		`"expires":{"type":"string","description":"YYYY-MM-DD after which the entry no longer holds"},` +
		`"hash":{"type":"string","description":"hash memory_get returned, when updating an entry changed since"}},` +
		`"additionalProperties":false}`)
	MemoryDeleteSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"memory/entries/<name>.md"},` +
		`"name":{"type":"string","description":"the entry's name, instead of path"},` +
		`"hash":{"type":"string","description":"hash memory_get returned: delete only that version"},` +
		`"reason":{"type":"string","description":"why, in a few words (kept with the archived entry)"}},` +
		`"additionalProperties":false}`)
)

// Tools returns the four memory tools bound to this session.
func (m *Memory) Tools() []llm.AgentTool {
	return []llm.AgentTool{
		memoryTool("memory_search", "Search long-term memory (entries and the profile) by keywords; returns paths, names, descriptions and the matching lines.", MemorySearchSchema,
			func(ctx context.Context, a MemorySearchRequest) (any, error) {
				hits, err := m.Search(ctx, a)
				if err != nil || len(hits) > 0 {
					return hits, err
				}
				return "No entry matches.", nil
			}),
		memoryTool("memory_get", "Read one entry (or memory/profile.md) with its frontmatter and hash.", MemoryGetSchema,
			func(ctx context.Context, a MemoryRef) (any, error) { return m.Get(ctx, a) }),
		memoryTool("memory_write", "Create a long-term entry, or update one (give its path, or the name of an existing entry). Empty fields of an update keep their value.", MemoryWriteSchema,
			func(ctx context.Context, a MemoryWriteRequest) (any, error) {
				a.Source = "" // the session's source, never the model's
				res, err := m.Write(ctx, a)
				if res != nil {
					res.Index = nil
				}
				return res, err
			}),
		memoryTool("memory_delete", "Delete an entry that is wrong or that the user asked to forget (it goes to the trash, from where it can be restored).", MemoryDeleteSchema,
			func(ctx context.Context, a MemoryDeleteRequest) (any, error) {
				res, err := m.Delete(ctx, a)
				if res != nil {
					res.Index = nil
				}
				return res, err
			}),
	}
}

// memoryTool binds a memory operation as a tool: arguments decoded into
// T, the result as JSON (a plain string as is).
func memoryTool[T any](name, desc string, params json.RawMessage, fn func(context.Context, T) (any, error)) llm.AgentTool {
	return llm.AgentTool{
		Tool: llm.Tool{Name: name, Description: desc, Parameters: params},
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			a, err := decode[T](args)
			if err != nil {
				return "", err
			}
			out, err := fn(ctx, a)
			if err != nil {
				return "", err
			}
			if s, ok := out.(string); ok {
				return s, nil
			}
			return toJSON(out)
		},
	}
}

func toJSON(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// IndexText is what a model is shown of MEMORY.md: the entries it lists
// (the generated block without its markers), or a line saying there are
// none.
func IndexText(ws *store.Workspace) (string, error) {
	n, err := ws.ReadNote(store.MemoryIndexPath)
	if errors.Is(err, store.ErrNotFound) {
		return "(no entries yet)", nil
	}
	if err != nil {
		return "", err
	}
	body := n.Content()
	end := strings.Index(body, store.MemoryIndexEnd)
	if end < 0 {
		return strings.TrimSpace(body), nil
	}
	start := strings.LastIndex(body[:end], store.MemoryIndexStart)
	if start < 0 {
		return strings.TrimSpace(body), nil
	}
	return strings.TrimSpace(body[start+len(store.MemoryIndexStart) : end]), nil
}
