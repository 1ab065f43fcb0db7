package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/reme-dev/reme/store"
)

type setupCmd struct {
	Agent  string `arg:"" optional:"" enum:",claude-code,codex,cursor" default:"" help:"claude-code, codex or cursor."`
	Print  bool   `help:"Print the configuration instead of writing it."`
	Check  bool   `help:"Say what is configured and what is not (every agent when none is named); changes nothing."`
	Binary string `help:"The reme binary the configuration runs (default: this one)." placeholder:"PATH"`
}

func (setupCmd) Help() string {
	return `Writes what an agent needs to use this workspace, merged into its own
settings files: every other key is kept, in its order; a file that changes is
first copied to <file>.reme-backup-<time>; running it again changes nothing.
Paths are absolute: the binary (this one, or --binary) and the workspace.

  claude-code  ~/.claude.json: the MCP server "reme" (user scope, as
               "claude mcp add -s user" writes it); ~/.claude/settings.json:
               the Stop hook (auto_memory_cc), and UserPromptSubmit and
               SessionStart hooks (context --format claude-code)
  codex        ~/.codex/config.toml: [mcp_servers.reme]; ~/.codex/hooks.json:
               the Stop hook (auto_memory_codex)
  cursor       ~/.cursor/mcp.json: the MCP server "reme"

CLAUDE_CONFIG_DIR and CODEX_HOME move those folders as they move them for
the agents.`
}

// setupItem is one thing a file must hold, and whether it did.
type setupItem struct {
	name  string
	state string // "present", "added" or "updated"
}

// setupFile is one settings file of an agent and how reme's part is
// merged into it.
type setupFile struct {
	path  string
	merge func(old []byte) ([]byte, []setupItem, error)
	// snippet is what --print shows: the part reme adds
	snippet string
}

// setupAgents are the agents in the order --check reports them.
var setupAgents = []string{"claude-code", "codex", "cursor"}

func (c *setupCmd) Run(ctx context.Context, app *App) error {
	if c.Print && c.Check {
		return usageError{errors.New("--print and --check do not go together")}
	}
	if c.Agent == "" && !c.Check {
		return usageError{errors.New("name an agent: claude-code, codex or cursor (or --check)")}
	}
	bin, err := c.binary()
	if err != nil {
		return err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("home folder: %w", err)
	}
	s := setupEnv{bin: bin, ws: app.root, home: home, getenv: app.Getenv}
	agents := []string{c.Agent}
	if c.Agent == "" {
		agents = setupAgents
	}
	var b strings.Builder
	for _, agent := range agents {
		files, err := s.files(agent)
		if err != nil {
			return err
		}
		switch {
		case c.Print:
			for _, f := range files {
				fmt.Fprintf(&b, "# %s\n%s\n", s.display(f.path), f.snippet)
			}
		case c.Check:
			if err := s.check(&b, agent, files); err != nil {
				return err
			}
		default:
			if err := s.write(&b, files, app); err != nil {
				return err
			}
		}
	}
	_, err = fmt.Fprint(app.Stdout, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// binary is the absolute path of the reme the agents will run.
func (c *setupCmd) binary() (string, error) {
	p := c.Binary
	if p == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find this binary: %w (give --binary)", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		p = exe
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("--binary %s: %w", p, err)
	}
	return abs, nil
}

type setupEnv struct {
	bin, ws, home string
	getenv        func(string) string
}

func (s setupEnv) display(p string) string {
	if rel, err := filepath.Rel(s.home, p); err == nil && !strings.HasPrefix(rel, "..") {
		return "~/" + filepath.ToSlash(rel)
	}
	return p
}

func (s setupEnv) dir(env, def string) string {
	if d := strings.TrimSpace(s.getenv(env)); d != "" {
		return d
	}
	return filepath.Join(s.home, def)
}

// shellQuote quotes a path for the hook command line, which a shell runs.
func shellQuote(p string) string {
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

func (s setupEnv) command(args string) string {
	return shellQuote(s.bin) + " -w " + shellQuote(s.ws) + " " + args
}

func (s setupEnv) mcpArgs() []any { return []any{"-w", s.ws, "mcp"} }

// hookSpec is one hook reme installs: the event, the command, and how an
// earlier reme hook for the same purpose is recognised (to update it when
// the binary or the workspace moved, rather than adding a second one).
type hookSpec struct {
	event   string
	command string
	timeout int
	ours    *regexp.Regexp
}

func (s setupEnv) claudeHooks() []hookSpec {
	ctxCmd := regexp.MustCompile(`reme\S*['"]?\s.*\bcontext --format claude-code\b`)
	return []hookSpec{
		{"Stop", s.command("auto_memory_cc"), 30, regexp.MustCompile(`reme\S*['"]?\s.*\bauto_memory_cc\b`)},
		{"UserPromptSubmit", s.command("context --format claude-code"), 15, ctxCmd},
		{"SessionStart", s.command("context --format claude-code"), 15, ctxCmd},
	}
}

func (s setupEnv) codexHooks() []hookSpec {
	return []hookSpec{{"Stop", s.command("auto_memory_codex"), 30, regexp.MustCompile(`reme\S*['"]?\s.*\bauto_memory_codex\b`)}}
}

func (s setupEnv) files(agent string) ([]setupFile, error) {
	claude := s.dir("CLAUDE_CONFIG_DIR", ".claude")
	codex := s.dir("CODEX_HOME", ".codex")
	switch agent {
	case "claude-code":
		server := newJSONObject()
		server.set("type", "stdio")
		server.set("command", s.bin)
		server.set("args", s.mcpArgs())
		server.set("env", newJSONObject())
		// ~/.claude.json sits beside ~/.claude, or inside CLAUDE_CONFIG_DIR
		mcpFile := filepath.Join(s.home, ".claude.json")
		if d := strings.TrimSpace(s.getenv("CLAUDE_CONFIG_DIR")); d != "" {
			mcpFile = filepath.Join(d, ".claude.json")
		}
		hooks := s.claudeHooks()
		return []setupFile{
			{path: mcpFile, merge: mergeMCPServer(server), snippet: mcpSnippet(server)},
			{path: filepath.Join(claude, "settings.json"), merge: mergeHooks(hooks), snippet: hooksSnippet(hooks)},
		}, nil
	case "codex":
		hooks := s.codexHooks()
		return []setupFile{
			{path: filepath.Join(codex, "config.toml"), merge: s.mergeCodexTOML, snippet: s.codexTable()},
			{path: filepath.Join(codex, "hooks.json"), merge: mergeHooks(hooks), snippet: hooksSnippet(hooks)},
		}, nil
	case "cursor":
		server := newJSONObject()
		server.set("command", s.bin)
		server.set("args", s.mcpArgs())
		return []setupFile{{path: filepath.Join(s.home, ".cursor", "mcp.json"), merge: mergeMCPServer(server), snippet: mcpSnippet(server)}}, nil
	}
	return nil, usageError{fmt.Errorf("unknown agent %q: claude-code, codex or cursor", agent)}
}

func mcpSnippet(server *jsonObject) string {
	top := newJSONObject()
	servers := newJSONObject()
	servers.set("reme", server)
	top.set("mcpServers", servers)
	b, _ := encodeJSONFile(top)
	return string(b)
}

func hooksSnippet(hooks []hookSpec) string {
	top := newJSONObject()
	events := newJSONObject()
	for _, h := range hooks {
		events.set(h.event, []any{hookGroup(h)})
	}
	top.set("hooks", events)
	b, _ := encodeJSONFile(top)
	return string(b)
}

func hookObject(h hookSpec) *jsonObject {
	o := newJSONObject()
	o.set("type", "command")
	o.set("command", h.command)
	o.set("timeout", json.Number(fmt.Sprint(h.timeout)))
	return o
}

func hookGroup(h hookSpec) *jsonObject {
	g := newJSONObject()
	g.set("hooks", []any{hookObject(h)})
	return g
}

// mergeMCPServer puts reme's entry under mcpServers.reme.
func mergeMCPServer(server *jsonObject) func([]byte) ([]byte, []setupItem, error) {
	return func(old []byte) ([]byte, []setupItem, error) {
		top, err := decodeJSONObject(old)
		if err != nil {
			return nil, nil, err
		}
		servers, err := top.object("mcpServers")
		if err != nil {
			return nil, nil, err
		}
		item := setupItem{name: `MCP server "reme"`, state: "added"}
		if cur, ok := servers.get("reme"); ok {
			item.state = "updated"
			if sameJSON(cur, server) {
				item.state = "present"
			}
		}
		servers.set("reme", server)
		out, err := encodeJSONFile(top)
		return out, []setupItem{item}, err
	}
}

// mergeHooks adds each hook, or updates an earlier reme hook for the same
// purpose in place; other hooks are left as they are.
func mergeHooks(hooks []hookSpec) func([]byte) ([]byte, []setupItem, error) {
	return func(old []byte) ([]byte, []setupItem, error) {
		top, err := decodeJSONObject(old)
		if err != nil {
			return nil, nil, err
		}
		events, err := top.object("hooks")
		if err != nil {
			return nil, nil, err
		}
		var items []setupItem
		for _, h := range hooks {
			item := setupItem{name: h.event + " hook", state: "added"}
			var groups []any
			if v, ok := events.get(h.event); ok && v != nil {
				if groups, ok = v.([]any); !ok {
					return nil, nil, fmt.Errorf("hooks.%s is not a list", h.event)
				}
			}
			found := false
			for _, g := range groups {
				gobj, ok := g.(*jsonObject)
				if !ok {
					continue
				}
				list, _ := gobj.vals["hooks"].([]any)
				for _, hv := range list {
					hobj, ok := hv.(*jsonObject)
					if !ok {
						continue
					}
					cmd, _ := hobj.vals["command"].(string)
					if cmd != h.command && !h.ours.MatchString(cmd) {
						continue
					}
					found = true
					want := hookObject(h)
					if sameJSON(hobj.vals["command"], want.vals["command"]) && sameJSON(hobj.vals["timeout"], want.vals["timeout"]) && hobj.vals["type"] == "command" {
						item.state = "present"
						break
					}
					item.state = "updated"
					for _, k := range want.keys {
						hobj.set(k, want.vals[k])
					}
					break
				}
				if found {
					break
				}
			}
			if !found {
				groups = append(groups, hookGroup(h))
			}
			events.set(h.event, groups)
			items = append(items, item)
		}
		out, err := encodeJSONFile(top)
		return out, items, err
	}
}

func sameJSON(a, b any) bool {
	x, err1 := store.MarshalNoEscape(a)
	y, err2 := store.MarshalNoEscape(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// tomlString is a TOML basic string; its escapes are JSON's.
func tomlString(s string) string {
	b, _ := store.MarshalNoEscape(s)
	return string(b)
}

func (s setupEnv) codexTable() string {
	args := make([]string, 0, 3)
	for _, a := range s.mcpArgs() {
		args = append(args, tomlString(a.(string)))
	}
	return "[mcp_servers.reme]\ncommand = " + tomlString(s.bin) + "\nargs = [" + strings.Join(args, ", ") + "]\n"
}

var tomlHeader = store.LazyRegexp(`^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$`)

// mergeCodexTOML replaces the [mcp_servers.reme] table (up to the next
// table header) or appends it; every other line is kept byte for byte.
func (s setupEnv) mergeCodexTOML(old []byte) ([]byte, []setupItem, error) {
	table := s.codexTable()
	lines := strings.SplitAfter(string(old), "\n")
	start, end := -1, len(lines)
	for i, l := range lines {
		m := tomlHeader().FindStringSubmatch(strings.TrimRight(l, "\r\n"))
		if m == nil {
			continue
		}
		name := strings.ReplaceAll(strings.ReplaceAll(m[1], `"`, ""), " ", "")
		if start >= 0 {
			end = i
			break
		}
		if name == "mcp_servers.reme" {
			start = i
		}
	}
	item := setupItem{name: "[mcp_servers.reme]", state: "added"}
	var out string
	if start < 0 {
		out = string(old)
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		if out != "" {
			out += "\n"
		}
		out += table
	} else {
		cur := strings.Join(lines[start:end], "")
		body := strings.TrimRight(cur, "\n")
		tail := cur[len(body):] // the blank lines before the next table
		if tail == "" && end < len(lines) {
			tail = "\n"
		}
		item.state = "updated"
		if body+"\n" == table {
			item.state = "present"
		}
		if tail == "" {
			tail = "\n"
		}
		out = strings.Join(lines[:start], "") + strings.TrimSuffix(table, "\n") + tail + strings.Join(lines[end:], "")
	}
	return []byte(out), []setupItem{item}, nil
}

func readSetupFile(p string) ([]byte, bool, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// write merges reme's part into each file: a file that changes is backed
// up first and written atomically; one that holds it already is left alone.
func (s setupEnv) write(b *strings.Builder, files []setupFile, app *App) error {
	for _, f := range files {
		path, err := settingsTarget(f.path)
		if err != nil {
			return fmt.Errorf("%s: %w", s.display(f.path), err)
		}
		old, exists, err := readSetupFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", s.display(f.path), err)
		}
		out, items, err := f.merge(old)
		if err != nil {
			return fmt.Errorf("%s: %w; nothing was changed", s.display(f.path), err)
		}
		if exists && bytes.Equal(out, old) {
			fmt.Fprintf(b, "%s: already set up (%s)\n", s.display(f.path), itemNames(items))
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("%s: %w", s.display(f.path), err)
		}
		backup := ""
		if exists {
			fi, err := os.Stat(path)
			if err != nil {
				return err
			}
			mode := fi.Mode().Perm()
			backup, err = writeBackup(path+".reme-backup-"+app.Now().UTC().Format("20060102T150405Z"), old, mode)
			if err != nil {
				return fmt.Errorf("back up %s: %w", s.display(f.path), err)
			}
		}
		if err := store.WriteFileAbs(path, out); err != nil {
			return fmt.Errorf("%s: %w", s.display(f.path), err)
		}
		fmt.Fprintf(b, "%s: %s", s.display(f.path), itemStates(items))
		if backup != "" {
			fmt.Fprintf(b, " (backup: %s)", s.display(backup))
		}
		b.WriteString("\n")
	}
	return nil
}

// check says, per file, what is set up and what is missing or differs.
func (s setupEnv) check(b *strings.Builder, agent string, files []setupFile) error {
	fmt.Fprintf(b, "%s:\n", agent)
	for _, f := range files {
		old, _, err := readSetupFile(f.path)
		if err != nil {
			return fmt.Errorf("%s: %w", s.display(f.path), err)
		}
		_, items, err := f.merge(old)
		if err != nil {
			fmt.Fprintf(b, "  %s: unreadable: %v\n", s.display(f.path), err)
			continue
		}
		for _, it := range items {
			state := "configured"
			switch it.state {
			case "added":
				state = "not configured"
			case "updated":
				state = "differs (another binary, workspace or timeout)"
			}
			fmt.Fprintf(b, "  %s: %s: %s\n", s.display(f.path), it.name, state)
		}
	}
	return nil
}

func itemNames(items []setupItem) string {
	var names []string
	for _, it := range items {
		names = append(names, it.name)
	}
	return strings.Join(names, ", ")
}

func itemStates(items []setupItem) string {
	var parts []string
	for _, it := range items {
		parts = append(parts, it.state+" "+it.name)
	}
	return strings.Join(parts, ", ")
}

// settingsTarget is the file a settings path stands for. Dotfiles are
// often symbolic links into a repository: the file is read, backed up and
// replaced where the link points, so that the link stays a link. A link to
// a file not there yet names the file to create.
func settingsTarget(p string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		dst, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dst) {
			dst = filepath.Join(filepath.Dir(p), dst)
		}
		p = dst
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// writeBackup writes a backup named base, or base-2, base-3 … when a
// setup earlier in the same second took that name, and returns its path.
func writeBackup(base string, data []byte, mode os.FileMode) (string, error) {
	for i := 1; ; i++ {
		p := base
		if i > 1 {
			p = fmt.Sprintf("%s-%d", base, i)
		}
		err := writeNewFile(p, data, mode)
		if !errors.Is(err, fs.ErrExist) || i == 100 {
			return p, err
		}
	}
}

// writeNewFile writes a new file with the original's permissions from the
// start (settings files may hold tokens).
func writeNewFile(p string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
	}
	return err
}
