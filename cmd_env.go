package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reme-dev/reme/store"
)

// ReMe loads a .env file from the working folder or one of its five
// parents before anything else. reme reads the same file, but a variable
// set in the real environment always wins: a .env file holds defaults.

// dotEnvParents is how many parent folders are searched, as ReMe does.
const dotEnvParents = 5

// dotEnvMaxBytes bounds the .env file read.
const dotEnvMaxBytes = 1 << 20

type dotEnv struct {
	path     string            // the file read, or ""
	vars     map[string]string // its variables, in file order applied
	keys     []string          // the variables' names in file order
	warnings []string          // lines that could not be read
	lookup   func(string) (string, bool)
}

// loadDotEnv finds and reads the nearest .env; a missing file is no error.
func loadDotEnv() *dotEnv {
	e := &dotEnv{vars: map[string]string{}, lookup: os.LookupEnv}
	dir, err := os.Getwd()
	if err != nil {
		return e
	}
	for i := 0; i <= dotEnvParents; i++ {
		p := filepath.Join(dir, ".env")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			e.read(p)
			return e
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return e
}

func (e *dotEnv) read(p string) {
	e.path = p
	f, err := os.Open(p)
	if err != nil {
		e.warnings = append(e.warnings, fmt.Sprintf("ignored %s: %v", p, err))
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, dotEnvMaxBytes+1))
	if err != nil {
		e.warnings = append(e.warnings, fmt.Sprintf("ignored %s: %v", p, err))
		return
	}
	if len(data) > dotEnvMaxBytes {
		e.warnings = append(e.warnings, fmt.Sprintf("ignored %s: larger than 1 MiB", p))
		return
	}
	e.parse(p, data)
}

var dotEnvKey = store.LazyRegexp(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// parse reads KEY=VALUE lines the way python-dotenv does: blank lines and
// # comments are skipped, "export " is allowed, values may be single-quoted
// (literal), double-quoted (escapes, may span lines) or bare (a " #" starts
// a comment); ${VAR} is expanded in bare and double-quoted values.
func (e *dotEnv) parse(p string, data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), dotEnvMaxBytes)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !dotEnvKey().MatchString(key) {
			e.warnings = append(e.warnings, fmt.Sprintf("%s line %d is not KEY=VALUE; ignored", p, lineNo))
			continue
		}
		val = strings.TrimSpace(val)
		start := lineNo
		if val != "" && (val[0] == '\'' || val[0] == '"') {
			q := val[0]
			for closingQuote(val, q) < 0 && sc.Scan() {
				lineNo++
				val += "\n" + strings.TrimSuffix(sc.Text(), "\r")
			}
			end := closingQuote(val, q)
			if end < 0 {
				e.warnings = append(e.warnings, fmt.Sprintf("%s line %d: unclosed quote; ignored", p, start))
				continue
			}
			val = val[1:end]
			if q == '"' {
				val = e.expand(unescapeDouble(val))
			}
		} else {
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
			val = e.expand(val)
		}
		if _, seen := e.vars[key]; !seen {
			e.keys = append(e.keys, key)
		}
		e.vars[key] = val
	}
}

// closingQuote is the index of the quote that closes a value opened by q
// at index 0 (a double quote may be escaped inside), or -1.
func closingQuote(v string, q byte) int {
	for i := 1; i < len(v); i++ {
		switch {
		case q == '"' && v[i] == '\\':
			i++
		case v[i] == q:
			return i
		}
	}
	return -1
}

func unescapeDouble(s string) string {
	r := strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t", `\r`, "\r", `\"`, `"`, `\'`, `'`)
	return r.Replace(s)
}

var dotEnvVar = store.LazyRegexp(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// expand replaces ${VAR} (and ${VAR:-default}) with the environment's value,
// else the value of an earlier line of the file.
func (e *dotEnv) expand(s string) string {
	return dotEnvVar().ReplaceAllStringFunc(s, func(m string) string {
		sub := dotEnvVar().FindStringSubmatch(m)
		if v := e.getenv(sub[1]); v != "" {
			return v
		}
		return sub[2]
	})
}

// getenv is the environment, then the .env file.
func (e *dotEnv) getenv(k string) string {
	if v, ok := e.lookup(k); ok {
		return v
	}
	return e.vars[k]
}

// extra lists the .env variables the environment does not set, as
// KEY=VALUE, for a child process.
func (e *dotEnv) extra() []string {
	var out []string
	for _, k := range e.keys {
		if _, ok := e.lookup(k); !ok {
			out = append(out, k+"="+e.vars[k])
		}
	}
	return out
}
