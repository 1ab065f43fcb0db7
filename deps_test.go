package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules keeps the package graph a DAG with store and jobs/llm at
// the bottom: index and vision build on store, the extractive distiller and
// the Claude Code import on store alone, jobs on all of these (the index
// only through an interface), and only main wires it all.
func TestImportRules(t *testing.T) {
	const mod = "github.com/reme-dev/reme"
	allowed := map[string][]string{
		"store":           {},
		"jobs/llm":        {},
		"vision":          {},
		"index":           {"store"},
		"jobs/extractive": {"store"},
		"jobs/claudecode": {"store"},
		"jobs/codex":      {"store"},
		"jobs":            {"store", "jobs/llm", "vision", "jobs/extractive", "jobs/claudecode", "jobs/codex"},
	}
	for pkg, ok := range allowed {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			rel, ours := strings.CutPrefix(dep, mod+"/")
			if dep == mod {
				t.Errorf("%s imports main", pkg)
			}
			if !ours || rel == pkg {
				continue
			}
			if !contains(ok, rel) {
				t.Errorf("%s must not import %s (allowed: %v)", pkg, rel, ok)
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestBinaryHasNoTestCode keeps fakes and test helpers out of the binary.
func TestBinaryHasNoTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "testing", dep == "net/http/httptest", strings.HasSuffix(dep, "/llmtest"):
			t.Errorf("the reme binary links %s", dep)
		}
	}
}
