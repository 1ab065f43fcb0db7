package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
)

// ReMe's CLI takes every argument as key=value (`reme search query="login
// flow" limit=3`). remeArgs rewrites such arguments into the Kong grammar so
// both spellings work: keys may use underscores or hyphens, may name a flag
// or a positional argument, and values are converted the way ReMe does
// (null drops the argument, true/false set booleans, a JSON list repeats a
// repeatable flag, a JSON string is unquoted).

var keyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// globalValueFlags take a separate value argument.
var globalValueFlags = map[string]bool{"--workspace": true, "-w": true}

// remeKeyAliases are ReMe's parameter names where reme's flag is named
// otherwise (keys normalised to hyphens).
var remeKeyAliases = map[string]map[string]string{
	"search": {"tags": "tag", "strict-date-filter": "strict-date"},
}

func remeArgs(app *kong.Application, args []string) ([]string, error) {
	var out []string
	i := 0
	var node *kong.Node
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		// ReMe strips leading dashes from the job name: reme --search query=x
		if name := strings.TrimLeft(a, "-"); name != "help" && !strings.Contains(name, "=") {
			if node = findCommand(app.Node, name); node != nil {
				break
			}
		}
		out = append(out, a)
		if globalValueFlags[a] && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	if i >= len(args) {
		return out, nil
	}
	if node == nil && args[i] == "start" {
		job, rest, err := startJob(args[i+1:])
		if err != nil {
			return nil, err
		}
		args = append(append(append([]string{}, args[:i]...), job), rest...)
	}
	if node == nil {
		node = findCommand(app.Node, args[i])
	}
	if node == nil {
		return args, nil // let Kong report the unknown command
	}
	out = append(out, node.Name)
	flags := map[string]*kong.Flag{}
	shorts := map[rune]*kong.Flag{}
	for _, group := range node.AllFlags(false) {
		for _, f := range group {
			flags[f.Name] = f
			for _, al := range f.Aliases {
				flags[al] = f
			}
			if f.Short != 0 {
				shorts[f.Short] = f
			}
		}
	}
	positional := map[string]int{}
	wordsTakeDashes := false // a list of words such as search's query takes -excluded words
	for i, p := range node.Positional {
		positional[strings.ReplaceAll(p.Name, "_", "-")] = i
		wordsTakeDashes = wordsTakeDashes || p.IsSlice()
	}
	aliases := remeKeyAliases[node.Name]
	normKey := func(key string) string {
		norm := strings.ReplaceAll(key, "_", "-")
		if a, ok := aliases[norm]; ok {
			return a
		}
		return norm
	}
	kvPos := map[int]string{}
	remeStyle := map[string]bool{} // positionals given as key=value
	var bare []string
	rest := args[i+1:]
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		if a == "--" {
			bare = append(bare, rest[k+1:]...)
			break
		}
		if strings.HasPrefix(a, "--") {
			key, val, hasVal := strings.Cut(a[2:], "=")
			norm := normKey(key)
			if idx, ok := positional[norm]; ok && hasVal {
				kvPos[idx] = unquoteJSONString(val)
				remeStyle[norm] = true
				continue
			}
			f := flags[norm]
			switch {
			case f == nil:
				out = append(out, a) // Kong reports the unknown flag
			case hasVal && f.IsSlice():
				// ReMe strips the dashes: --tags='["a","b"]' is a list too
				out = append(out, convertList(f, val)...)
			case hasVal:
				out = append(out, "--"+f.Name+"="+val)
			default:
				out = append(out, "--"+f.Name)
				if !f.IsBool() && !f.IsCounter() && k+1 < len(rest) {
					k++
					out = append(out, rest[k])
				}
			}
			continue
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 && !isNumber(a) {
			if wordsTakeDashes && !allShortFlags(a[1:], shorts) {
				bare = append(bare, a) // search rate -burst: an excluded word
				continue
			}
			out = append(out, a)
			// -w DIR: a short flag that takes a value keeps it next to it
			if f := shorts[rune(a[len(a)-1])]; len(a) == 2 && f != nil && !f.IsBool() && !f.IsCounter() && k+1 < len(rest) {
				k++
				out = append(out, rest[k])
			}
			continue
		}
		key, val, ok := strings.Cut(a, "=")
		if !ok || !keyRE.MatchString(key) {
			bare = append(bare, a)
			continue
		}
		norm := normKey(key)
		if idx, ok := positional[norm]; ok {
			kvPos[idx] = unquoteJSONString(val)
			remeStyle[norm] = true
			continue
		}
		if f := flags[norm]; f != nil {
			out = append(out, convertFlag(f, val)...)
			continue
		}
		return nil, usageError{fmt.Errorf("unknown argument %q for %s (known: %s)", key, node.Name, knownKeys(node, flags))}
	}
	// ReMe's delete removes a folder given as path=… with everything in it;
	// reme's own form asks for --recursive.
	if node.Name == "delete" && remeStyle["path"] {
		out = append(out, "--recursive")
	}
	var pos []string
	for idx := 0; idx < len(node.Positional); idx++ {
		if v, ok := kvPos[idx]; ok {
			pos = append(pos, v)
			continue
		}
		if len(bare) == 0 {
			break
		}
		if node.Positional[idx].IsSlice() {
			pos = append(pos, bare...)
			bare = nil
			break
		}
		pos = append(pos, bare[0])
		bare = bare[1:]
	}
	pos = append(pos, bare...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out, nil
}

// startJob turns ReMe's one-shot form, `reme start job=NAME key=value…`,
// into the job's own arguments; workspace_dir= becomes --workspace. reme
// runs no server of its own to start: agents are served by reme mcp.
func startJob(args []string) (job string, rest []string, err error) {
	for _, a := range args {
		key, val, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case ok && key == "job":
			job = unquoteJSONString(val)
		case ok && (key == "workspace_dir" || key == "workspace-dir"):
			rest = append([]string{"--workspace", unquoteJSONString(val)}, rest...)
		case ok && key == "config":
			return "", nil, usageError{fmt.Errorf("start: config=%s names a ReMe server configuration; reme reads its settings from the workspace's config.yaml and the environment (see reme config)", val)}
		default:
			rest = append(rest, a)
		}
	}
	if job == "" {
		return "", nil, usageError{errors.New("start: reme has no server to start; run a job with `reme start job=NAME key=value…` (or `reme NAME …`), or serve agents with `reme mcp` (--http ADDR for HTTP)")}
	}
	return job, rest, nil
}

func findCommand(root *kong.Node, name string) *kong.Node {
	for _, c := range root.Children {
		if c.Name == name {
			return c
		}
		for _, al := range c.Aliases {
			if al == name {
				return c
			}
		}
	}
	return nil
}

func knownKeys(node *kong.Node, flags map[string]*kong.Flag) string {
	seen := map[string]bool{}
	var keys []string
	for _, p := range node.Positional {
		keys = append(keys, strings.ReplaceAll(p.Name, "-", "_"))
	}
	for _, f := range flags {
		if f.Hidden || seen[f.Name] || f.Name == "help" {
			continue
		}
		seen[f.Name] = true
		keys = append(keys, strings.ReplaceAll(f.Name, "-", "_"))
	}
	sort.Strings(keys[len(node.Positional):])
	return strings.Join(keys, ", ")
}

// convertFlag applies ReMe's value conversion for one key=value flag.
func convertFlag(f *kong.Flag, raw string) []string {
	switch strings.ToLower(raw) {
	case "none", "null":
		return nil
	}
	if f.IsBool() {
		return []string{"--" + f.Name + "=" + strings.ToLower(raw)}
	}
	if f.IsSlice() {
		return convertList(f, raw)
	}
	return []string{"--" + f.Name + "=" + unquoteJSONString(raw)}
}

// convertList repeats a repeatable flag for each item of a JSON list; any
// other value is one item.
func convertList(f *kong.Flag, raw string) []string {
	if strings.HasPrefix(strings.TrimSpace(raw), "[") {
		var items []any
		if json.Unmarshal([]byte(raw), &items) == nil {
			out := make([]string, 0, len(items))
			for _, it := range items {
				s, ok := it.(string)
				if !ok {
					b, _ := json.Marshal(it)
					s = string(b)
				}
				out = append(out, "--"+f.Name+"="+s)
			}
			return out
		}
	}
	return []string{"--" + f.Name + "=" + unquoteJSONString(raw)}
}

func unquoteJSONString(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var v string
		if json.Unmarshal([]byte(s), &v) == nil {
			return v
		}
	}
	return s
}

// allShortFlags reports whether every letter of a -xyz argument is a
// short flag (as in -vv).
func allShortFlags(letters string, shorts map[rune]*kong.Flag) bool {
	for _, r := range letters {
		if shorts[r] == nil {
			return false
		}
	}
	return letters != ""
}

func isNumber(s string) bool {
	var f float64
	_, err := fmt.Sscanf(s, "%g", &f)
	return err == nil
}
