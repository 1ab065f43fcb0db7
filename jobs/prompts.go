package jobs

import (
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/reme-dev/reme/store"
)

//go:embed prompts/*.tmpl
var promptFiles embed.FS

// prompts are parsed on first use, so that commands without a model do not
// pay for it at start-up.
var prompts = sync.OnceValues(loadPrompts)

// loadPrompts parses each file into its own namespace ("auto_memory.en"),
// so that both languages can define "system", "create", ...
func loadPrompts() (*template.Template, error) {
	root := template.New("prompts").Option("missingkey=error")
	entries, err := promptFiles.ReadDir("prompts")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := promptFiles.ReadFile("prompts/" + e.Name())
		if err != nil {
			return nil, err
		}
		ns := strings.TrimSuffix(e.Name(), ".tmpl")
		// prefix every define with the namespace
		text := strings.ReplaceAll(string(b), `{{define "`, `{{define "`+ns+`.`)
		if _, err := root.New(ns).Parse(text); err != nil {
			return nil, fmt.Errorf("prompt %s: %w", e.Name(), err)
		}
	}
	return root, nil
}

// renderPrompt renders template part of job in the language ("zh" selects
// the Chinese set; anything else English).
func renderPrompt(job, lang, part string, data any) (string, error) {
	if lang != "zh" {
		lang = "en"
	}
	var b strings.Builder
	t, err := prompts()
	if err != nil {
		return "", err
	}
	if err := t.ExecuteTemplate(&b, job+"."+lang+"."+part, data); err != nil {
		return "", fmt.Errorf("render prompt %s.%s.%s: %w", job, lang, part, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// maxHistoryBytes keeps a very long conversation within the model's
// context: the most recent part is kept and the prompt says so.
const maxHistoryBytes = 400 << 10

// formatHistory renders messages as "[speaker @ time]\ntext" blocks.
// imageNotes, keyed "messageID#block", describe the images that are part of
// the conversation; without them images are left out.
func formatHistory(msgs []store.Message, sessionFile string, loc *time.Location, imageNotes map[string]string) string {
	var blocks []string
	for _, m := range msgs {
		text := messagePromptText(m, imageNotes)
		if strings.TrimSpace(text) == "" {
			continue
		}
		who := m.Name
		if who == "" {
			who = m.Role
		}
		blocks = append(blocks, fmt.Sprintf("[%s @ %s]\n%s", who, m.CreatedAt, text))
	}
	if len(blocks) == 0 {
		return "(empty)"
	}
	total := 0
	start := len(blocks)
	for start > 0 && total+len(blocks[start-1]) < maxHistoryBytes {
		start--
		total += len(blocks[start]) + 2
	}
	if start == len(blocks) {
		start = len(blocks) - 1 // one huge message: keep it anyway
	}
	out := strings.Join(blocks[start:], "\n\n")
	if start > 0 {
		out = fmt.Sprintf("(%d earlier message(s) omitted for length; they are in %s)\n\n", start, sessionFile) + out
	}
	return out
}

// messagePromptText is what the model sees of a message: text blocks,
// tool uses as one-line summaries, described images beside their source.
func messagePromptText(m store.Message, imageNotes map[string]string) string {
	var parts []string
	for i, b := range m.Blocks() {
		switch b.Type {
		case "data", "image":
			if note, ok := imageNotes[fmt.Sprintf("%s#%d", m.ID, i)]; ok {
				parts = append(parts, note)
			}
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				parts = append(parts, b.Text)
			}
		case "tool_use", "tool_call":
			parts = append(parts, fmt.Sprintf("[tool %s]", b.Name))
		}
	}
	return strings.Join(parts, "\n")
}
