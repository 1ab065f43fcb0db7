// Package store owns the workspace on disk: path validation, markdown notes
// with YAML frontmatter, wikilinks, atomic writes, locks and the day index.
// Every file reme writes goes through this package.
package store

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
)

var (
	// ErrInvalidPath is returned for a path that breaks the workspace path rules.
	ErrInvalidPath = errors.New("invalid path")
	// ErrOutsideWorkspace is returned for a path that leads out of the workspace.
	ErrOutsideWorkspace = errors.New("path is outside the workspace")
	// ErrNotFound is returned when a note or file does not exist.
	ErrNotFound = errors.New("not found")
)

// Standard workspace folders (ReMe layout).
const (
	DailyDir    = "daily"
	DigestDir   = "digest"
	ResourceDir = "resource"
	SessionDir  = "session"
	MetadataDir = "metadata"
	ArchiveDir  = "archive" // what maintain retired, restorable
)

// Workspace is a reme workspace rooted at an absolute, symlink-free directory.
type Workspace struct {
	Root string
	// RedactSessions masks secrets (RedactSecrets) in the messages
	// SaveDialog writes; off by default, so session files keep the raw
	// text (config redact.sessions).
	RedactSessions bool
}

// OpenWorkspace resolves dir to an absolute path. The directory need not
// exist yet; Init creates it.
func OpenWorkspace(dir string) (*Workspace, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: empty workspace directory", ErrInvalidPath)
	}
	if strings.HasPrefix(dir, "~") {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("expand %s: %w", dir, err)
		}
		dir = filepath.Join(home, strings.TrimPrefix(dir, "~"))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	// Resolve symlinks in the root itself so that escape checks compare
	// like with like; a missing root is resolved once it is created.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return &Workspace{Root: abs}, nil
}

// Init creates the workspace folders that ReMe creates at start.
func (w *Workspace) Init() error {
	for _, d := range []string{DailyDir, DigestDir, ResourceDir, path.Join(SessionDir, "dialog"), MetadataDir} {
		if err := os.MkdirAll(filepath.Join(w.Root, d), 0o755); err != nil {
			return fmt.Errorf("create workspace folder: %w", err)
		}
	}
	if real, err := filepath.EvalSymlinks(w.Root); err == nil {
		w.Root = real
	}
	return nil
}

// Abs returns the absolute path of a validated workspace-relative path.
func (w *Workspace) Abs(rel string) string {
	return filepath.Join(w.Root, filepath.FromSlash(rel))
}

// Rel validates a user- or model-supplied path and returns it as a clean
// workspace-relative POSIX path. Absolute paths are accepted only inside the
// workspace. Nothing on disk is changed; symlinks that lead out of the
// workspace are refused.
func (w *Workspace) Rel(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("%w: path is empty", ErrInvalidPath)
	}
	if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("%w: %q: home-relative paths are not allowed", ErrInvalidPath, p)
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
			if part == ".." { // refused anywhere, as in relative paths, even if it stays inside
				return "", fmt.Errorf("%w: %s", ErrOutsideWorkspace, p)
			}
		}
		rel, err := filepath.Rel(w.Root, filepath.Clean(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%w: %s", ErrOutsideWorkspace, p)
		}
		if rel == "." {
			return "", fmt.Errorf("%w: %q is the workspace itself", ErrInvalidPath, p)
		}
		p = filepath.ToSlash(rel)
	}
	p = strings.TrimPrefix(p, "./")
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: %s", ErrOutsideWorkspace, p)
		}
		if err := ValidateName(part); err != nil {
			return "", fmt.Errorf("%w: %q: %v", ErrInvalidPath, p, err)
		}
	}
	if err := w.checkSymlinks(p); err != nil {
		return "", err
	}
	return p, nil
}

// checkSymlinks refuses a path any of whose existing components is a
// symlink resolving outside the workspace.
func (w *Workspace) checkSymlinks(rel string) error {
	cur := w.Root
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil // the rest does not exist yet
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(cur)
		if err != nil {
			return fmt.Errorf("%w: %s: dangling symlink", ErrOutsideWorkspace, rel)
		}
		if !within(w.Root, target) {
			return fmt.Errorf("%w: %s: symlink leads to %s", ErrOutsideWorkspace, rel, target)
		}
	}
	return nil
}

func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// ValidateName checks one path component (also used for session ids and
// note names) against ReMe's filename rules.
func ValidateName(s string) error {
	switch {
	case s == "":
		return errors.New("empty path component")
	case s == "." || s == "..":
		return fmt.Errorf("%q is not a valid name", s)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("%q has leading or trailing whitespace", s)
	case strings.HasSuffix(s, "."):
		return fmt.Errorf("%q ends with '.'", s)
	}
	for _, r := range s {
		if strings.ContainsRune(`<>:"/\|?*`, r) {
			return fmt.Errorf("%q contains %q", s, r)
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("%q contains a control character", s)
		}
	}
	if isReservedName(s) {
		return fmt.Errorf("%q is a reserved name", s)
	}
	return nil
}

// isReservedName reports Windows device names, with or without extension,
// so that workspaces stay portable.
func isReservedName(s string) bool {
	base := strings.ToUpper(s)
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimRight(base, " ")
	switch base {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		return base[3] >= '1' && base[3] <= '9'
	}
	return false
}

// IsDate reports whether s is a strict YYYY-MM-DD calendar date.
func IsDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	_, err := parseDate(s)
	return err == nil
}

// DateFromPath returns the date of a dated path: the second segment must be
// YYYY-MM-DD or YYYY-MM-DD.md (daily/2026-05-18/x.md, daily/2026-05-18.md,
// resource/2026-06-06/r.pdf); other paths have no date.
func DateFromPath(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) < 2 {
		return ""
	}
	seg := parts[1]
	if len(parts) == 2 {
		seg = strings.TrimSuffix(seg, ".md")
	}
	if IsDate(seg) {
		return seg
	}
	return ""
}

// DayIndexPath is the day index page of a date.
func DayIndexPath(date string) string { return DailyDir + "/" + date + ".md" }

// DayDir is the folder of a date's cards.
func DayDir(date string) string { return DailyDir + "/" + date }
