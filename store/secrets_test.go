package store

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var placeholderRE = regexp.MustCompile(`\[redacted:([a-z0-9-]+)\]`)

// checkFindings verifies that out is in with each finding replaced by its
// placeholder and nothing else changed.
func checkFindings(t *testing.T, in, out string, fs []SecretFinding) {
	t.Helper()
	var b strings.Builder
	last := 0
	for i, f := range fs {
		if f.Start < last || f.End <= f.Start || f.End > len(in) {
			t.Fatalf("finding %d %+v out of order or range (input %d bytes)", i, f, len(in))
		}
		b.WriteString(in[last:f.Start])
		b.WriteString(Placeholder(f.Kind))
		last = f.End
	}
	b.WriteString(in[last:])
	if b.String() != out {
		t.Fatalf("output is not the input with the findings replaced:\n%q\n%q", out, b.String())
	}
}

func TestRedactSecretsCorpus(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/secrets/secrets.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var names []string
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
		if name, ok := strings.CutSuffix(f.Name, ".in"); ok {
			names = append(names, name)
		}
	}
	if len(names) < 30 {
		t.Fatalf("only %d cases in the corpus", len(names))
	}
	kinds := map[string]bool{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			in, want := files[name+".in"], files[name+".out"]
			got, fs := RedactSecrets(in)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			checkFindings(t, in, got, fs)
			wantKinds := placeholderRE.FindAllStringSubmatch(want, -1)
			if len(fs) != len(wantKinds) {
				t.Fatalf("%d findings, want %d", len(fs), len(wantKinds))
			}
			for i, f := range fs {
				if f.Kind != wantKinds[i][1] {
					t.Errorf("finding %d kind %q, want %q", i, f.Kind, wantKinds[i][1])
				}
				kinds[f.Kind] = true
			}
			if again, fs := RedactSecrets(got); again != got || len(fs) != 0 {
				t.Errorf("redacting twice changed the text: %q, %+v", again, fs)
			}
		})
	}
	// Every kind the README lists has a case.
	for _, k := range []string{"aws-access-key", "aws-secret-key", "gcp-api-key", "gcp-oauth-secret", "gcp-access-token",
		"azure-storage-key", "azure-sas-signature", "azure-client-secret", "openai-api-key", "anthropic-api-key", "api-key",
		"github-token", "gitlab-token", "slack-token", "slack-webhook", "stripe-key", "huggingface-token", "npm-token",
		"sendgrid-key", "pypi-token", "jwt", "private-key", "url-password", "bearer-token", "basic-auth", "password", "secret"} {
		if !kinds[k] {
			t.Errorf("no corpus case finds a %s", k)
		}
	}
}

// TestRedactSecretsLookalikes: hashes, ids, images, code and prose about
// passwords stay as they are.
func TestRedactSecretsLookalikes(t *testing.T) {
	f, err := os.Open("testdata/secrets/lookalikes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		if got, fs := RedactSecrets(line); got != line || len(fs) != 0 {
			t.Errorf("masked a look-alike:\n in: %s\nout: %s", line, got)
		}
		all.WriteString(line + "\n")
	}
	if n < 50 {
		t.Fatalf("only %d look-alikes", n)
	}
	if got, fs := RedactSecrets(all.String()); len(fs) != 0 {
		t.Errorf("the look-alikes together: %d findings\n%s", len(fs), got)
	}
}

func TestRedactSecretsOffsets(t *testing.T) {
	in := "a AKIAIOSFODNN7EXAMPLE b password=hunter22 c"
	got, fs := RedactSecrets(in)
	want := []SecretFinding{{"aws-access-key", 2, 22}, {"password", 34, 42}}
	if diff := cmp.Diff(want, fs); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	if got != "a [redacted:aws-access-key] b password=[redacted:password] c" {
		t.Fatalf("got %q", got)
	}
	if got, fs := RedactSecrets(""); got != "" || fs != nil {
		t.Fatalf("empty: %q %v", got, fs)
	}
}

// TestRedactSecretsHostile runs inputs built to make a careless scanner
// quadratic or to confuse it; each must come back sane.
func TestRedactSecretsHostile(t *testing.T) {
	for name, in := range hostileSecretInputs(1 << 16) {
		t.Run(name, func(t *testing.T) {
			got, fs := RedactSecrets(in)
			checkFindings(t, in, got, fs)
			if again, fs2 := RedactSecrets(got); again != got || len(fs2) != 0 {
				t.Fatalf("not idempotent: %d more findings", len(fs2))
			}
		})
	}
}

func hostileSecretInputs(n int) map[string]string {
	rep := func(s string) string { return strings.Repeat(s, n/len(s)+1)[:n] }
	return map[string]string{
		"begin without end":   rep("-----BEGIN RSA PRIVATE KEY-----"),
		"begins then a dot":   rep("-----BEGIN A PRIVATE KEY-----\n") + ".-----END A PRIVATE KEY-----",
		"one long token":      rep("eyJ"),
		"tokens":              rep("ghp_aaaa "),
		"assignments":         rep("password="),
		"colons":              rep("secret:"),
		"schemes":             rep("a://b:c"),
		"bearers":             rep("Bearer "),
		"quotes":              rep(`password="`),
		"identifiers":         rep("a"),
		"separators":          rep("="),
		"jwt-ish":             rep("eyJhbGciOiJub25lIn0.eyJ"),
		"authority run":       "x://" + rep("u:p") + "@h",
		"escaped key newline": "-----BEGIN PRIVATE KEY-----" + rep(`\nAAAA`),
	}
}

func BenchmarkRedactSecrets(b *testing.B) {
	ar, err := txtar.ParseFile("testdata/secrets/secrets.txtar")
	if err != nil {
		b.Fatal(err)
	}
	look, err := os.ReadFile("testdata/secrets/lookalikes.txt")
	if err != nil {
		b.Fatal(err)
	}
	// A conversation-like mix: mostly ordinary text, some secrets.
	var mixed strings.Builder
	for mixed.Len() < 1<<20 {
		mixed.Write(look)
		mixed.Write(ar.Files[mixed.Len()%len(ar.Files)].Data)
	}
	inputs := map[string]string{"mixed": mixed.String()}
	for name, in := range hostileSecretInputs(1 << 20) {
		inputs["hostile/"+name] = in
	}
	for _, name := range sortedKeys(inputs) {
		in := inputs[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				RedactSecrets(in)
			}
		})
	}
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

func FuzzRedactSecrets(f *testing.F) {
	ar, err := txtar.ParseFile("testdata/secrets/secrets.txtar")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range ar.Files {
		f.Add(string(file.Data))
	}
	for _, s := range []string{"", "password=", "-----BEGIN X PRIVATE KEY-----\n", "a://:@", "Bearer ", "eyJ.eyJ.", "\xff\xfe=\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, fs := RedactSecrets(in)
		checkFindings(t, in, out, fs)
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("valid UTF-8 became invalid: %q", out)
		}
		if again, fs2 := RedactSecrets(out); again != out || len(fs2) != 0 {
			t.Fatalf("not idempotent:\n%q\n%q (%v)", out, again, fs2)
		}
		if len(fs) > 0 && !strings.Contains(out, RedactPrefix) {
			t.Fatal(fmt.Sprint("findings without placeholders: ", fs))
		}
	})
}

func TestRedactJSONStrings(t *testing.T) {
	in := `{"type":"text","text":"key AKIAIOSFODNN7EXAMPLE <ok> & \"q\" \n","password":"x","n":[1,"password=hunter22"]}`
	got, fs := RedactJSONStrings([]byte(in))
	want := `{"type":"text","text":"key [redacted:aws-access-key] <ok> & \"q\" \n","password":"x","n":[1,"password=[redacted:password]"]}`
	if string(got) != want || len(fs) != 2 {
		t.Fatalf("got %s (%d findings)\nwant %s", got, len(fs), want)
	}
	for _, s := range []string{`{"a":1}`, `not json AKIAIOSFODNN7EXAMPLE`, `{"AKIAIOSFODNN7EXAMPLE": 1}`} {
		if got, fs := RedactJSONStrings([]byte(s)); string(got) != s || fs != nil {
			t.Errorf("RedactJSONStrings(%s) = %s, %v", s, got, fs)
		}
	}
}

func TestSaveDialogRedactsWhenAsked(t *testing.T) {
	conv := `[{"role":"user","id":"m1","created_at":"2026-06-20T10:00:00","content":"my token ghp_Zq3k9LmN2pX7vB4tR8sW1yC6dF0hJ5gK2aE9 works"}]`
	for _, redact := range []bool{false, true} {
		w := newWorkspace(t)
		w.RedactSessions = redact
		if _, err := w.SaveDialog(dialogRel, parseMsgs(t, conv)); err != nil {
			t.Fatal(err)
		}
		raw := readRaw(t, w, dialogRel)
		if masked := strings.Contains(raw, "my token [redacted:github-token] works"); masked != redact || strings.Contains(raw, "ghp_") == redact {
			t.Errorf("RedactSessions=%v: %s", redact, raw)
		}
		res, err := w.SaveDialog(dialogRel, parseMsgs(t, conv))
		if err != nil || res.Written || res.New+res.Replaced != 0 {
			t.Errorf("RedactSessions=%v: repeated save = %+v, %v", redact, res, err)
		}
	}
}

// TestRedactNote: secrets in a note's body and frontmatter values (read
// with their key, at any depth) are masked; the keys kept, look-alikes and
// untouched keys stay byte for byte, and the header still parses.
func TestRedactNote(t *testing.T) {
	const (
		aws    = "AKIAIOSFODNN7EXAMPLE"
		openai = "sk-proj-Zq3k9LmN2pX7vB4tR8sW1yC6dF0hJ5gK2aE9uV3"
		github = "ghp_Zq3k9LmN2pX7vB4tR8sW1yC6dF0hJ5gK2aE9"
	)
	raw := "---\n" +
		"name: deploy-notes\n" +
		"description: 'the key " + openai + " is for staging'\n" +
		"password: hunter2hunter2\n" +
		"commit: 9fceb02d0ae598e95dc970b74767f19372d61af8  # a git SHA\n" +
		"session_id: " + aws + "\n" +
		"links:\n" +
		"  - id: 3f2504e0-4f89-41d3-9a0c-0305e82c3301\n" +
		"    token: " + github + "\n" +
		"folded: >-\n" +
		"  a folded\n" +
		"  value\n" +
		"---\n\n" +
		"Use " + aws + " with sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.\n"
	n := ParseNote("daily/2026-06-20/x.md", []byte(raw))
	kinds := RedactNote(n, "session_id")
	if want := []string{"openai-api-key", "password", "github-token", "aws-access-key"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %q, want %q", kinds, want)
	}
	out, err := n.Text()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{openai, "hunter2", github} {
		if strings.Contains(out, secret) {
			t.Errorf("%s is still in:\n%s", secret, out)
		}
	}
	for _, keep := range []string{
		"name: deploy-notes\n",
		"commit: 9fceb02d0ae598e95dc970b74767f19372d61af8  # a git SHA\n",
		"session_id: " + aws + "\n",
		"folded: >-\n  a folded\n  value\n",
		"Use [redacted:aws-access-key] with sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.",
		"3f2504e0-4f89-41d3-9a0c-0305e82c3301",
	} {
		if !strings.Contains(out, keep) {
			t.Errorf("lacks %q:\n%s", keep, out)
		}
	}
	back := ParseNote(n.Path, []byte(out))
	if back.FMErr != nil {
		t.Fatalf("the header no longer parses: %v\n%s", back.FMErr, out)
	}
	if got := back.FM.String("description"); got != "the key [redacted:openai-api-key] is for staging" {
		t.Errorf("description %q", got)
	}
	if got := back.FM.String("password"); got != "[redacted:password]" {
		t.Errorf("password %q", got)
	}
	if again := RedactNote(back, "session_id"); len(again) != 0 {
		t.Errorf("a second pass found %q", again)
	}
	clean := ParseNote("x.md", []byte("---\nname: a\nsha: 9fceb02d0ae598e95dc970b74767f19372d61af8\n---\n\nno secret here\n"))
	if kinds := RedactNote(clean); kinds != nil || clean.FM.Dirty() {
		t.Errorf("a note without secrets changed: %q", kinds)
	}
}
