package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reme-dev/reme/jobs/llm"
)

func TestFakeCohereRejectsProtocolErrors(t *testing.T) {
	const good = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, method, path, auth, body string
		wantStatus                     int
		wantReport                     string
	}{
		{"wrong path", "POST", "/v1/chat", "Bearer " + FakeAPIKey, good, 404, `path "/v1/chat", want /v2/chat`},
		{"wrong method", "GET", "/v2/chat", "Bearer " + FakeAPIKey, "", 405, "method GET, want POST"},
		{"no auth", "POST", "/v2/chat", "", good, 401, "missing or wrong Authorization bearer token"},
		{"wrong key", "POST", "/v2/chat", "Bearer sk-real-key", good, 401, "missing or wrong Authorization bearer token"},
		{"not JSON", "POST", "/v2/chat", "Bearer " + FakeAPIKey, "{", 400, "request 1 is not a chat request"},
		{"no messages", "POST", "/v2/chat", "Bearer " + FakeAPIKey, `{"model":"m","messages":[]}`, 400, "request 1 is not a chat request"},
		{"script exhausted", "POST", "/v2/chat", "Bearer " + FakeAPIKey, good, 400, "no reply left for request 1 (script has 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFakeCohere()
			var reports []string
			f.errorf = func(format string, args ...any) { reports = append(reports, fmt.Sprintf(format, args...)) }
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			f.ServeHTTP(w, req)
			if w.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", w.Code, tt.wantStatus)
			}
			if len(reports) != 1 || !strings.Contains(reports[0], tt.wantReport) {
				t.Errorf("reports = %q, want one containing %q", reports, tt.wantReport)
			}
			if strings.Contains(w.Body.String()+strings.Join(reports, ""), "sk-real-key") {
				t.Error("the fake echoed the Authorization header")
			}
		})
	}
}
func TestFakeArguments(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{}`},
		{`{ "a" : [1, 2] }`, `{"a":[1,2]}`},
		{`"{oops"`, `{oops`},
		{`"\"quoted\""`, `"quoted"`},
		{`{not json`, `{not json`},
	}
	for _, tt := range tests {
		if got := fakeArguments(json.RawMessage(tt.in)); got != tt.want {
			t.Errorf("fakeArguments(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
func FuzzParseFakeScript(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "fake_script.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data))
	f.Add(`[{"status": 500, "body": "x", "delay": "1ms"}]`)
	f.Fuzz(func(t *testing.T, script string) {
		replies, err := parseFakeScript([]byte(script))
		if err != nil {
			return
		}
		for _, r := range replies {
			if r.validate() != nil {
				t.Errorf("accepted invalid reply %+v", r)
			}
			wireResponse(r, 1)
		}
	})
}

func TestFakeOpenAIRejectsProtocolErrors(t *testing.T) {
	const key = "Bearer " + FakeOpenAIKey
	tests := []struct {
		name, path, auth, body string
		wantStatus             int
		wantReport             string
	}{
		{"cohere path", "/v2/chat", key, `{}`, 404, `path "/v2/chat", want /v1/chat/completions`},
		{"cohere key", "/v1/chat/completions", "Bearer " + FakeAPIKey, `{}`, 401, "missing or wrong Authorization bearer token"},
		{"no model", "/v1/chat/completions", key, `{"messages":[{"role":"user","content":"hi"}]}`, 400, "no model or no messages"},
		{"streaming", "/v1/chat/completions", key, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, 400, "streaming was not asked for"},
		{"unknown role", "/v1/chat/completions", key, `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, 400, `role "robot"`},
		{"tool result without a call", "/v1/chat/completions", key, `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"a","content":"x"}]}`, 400, `answers tool call "a"`},
		{"malformed arguments in the history", "/v1/chat/completions", key,
			`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"t","arguments":"{oops"}}]}]}`, 400, "arguments of t are not JSON"},
		{"tool without parameters", "/v1/chat/completions", key, `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t"}}]}`, 400, "tool 0 is not a function"},
		{"embeddings with an unknown field", "/v1/embeddings", key, `{"model":"m","input":["a"],"input_type":"query"}`, 400, `unknown field "input_type"`},
		{"embeddings of nothing", "/v1/embeddings", key, `{"model":"m","input":[]}`, 400, "0 inputs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFakeOpenAI()
			var reports []string
			f.errorf = func(format string, args ...any) { reports = append(reports, fmt.Sprintf(format, args...)) }
			req := httptest.NewRequest("POST", tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", tt.auth)
			w := httptest.NewRecorder()
			f.ServeHTTP(w, req)
			if w.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", w.Code, tt.wantStatus)
			}
			if len(reports) != 1 || !strings.Contains(reports[0], tt.wantReport) {
				t.Errorf("reports = %q, want one containing %q", reports, tt.wantReport)
			}
			var body struct {
				Error struct{ Message string } `json:"error"`
			}
			if json.Unmarshal(w.Body.Bytes(), &body) != nil || !strings.Contains(body.Error.Message, tt.wantReport) {
				t.Errorf("error body = %s, want OpenAI's {\"error\": {\"message\": ...}}", w.Body)
			}
		})
	}
}

func TestWords(t *testing.T) {
	got := strings.Join(Words("We went with Postgres-16, the 登录流程!", map[string]string{"postgres": "database"}), " ")
	if want := "went database 16 登 录 流 程"; got != want {
		t.Errorf("Words = %q, want %q", got, want)
	}
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestHashEmbedderMeaning: shared words make vectors close, none make them
// far apart, and synonyms let a test give two words one meaning.
func TestHashEmbedderMeaning(t *testing.T) {
	h := &HashEmbedder{Dims: 512, Synonyms: map[string]string{"postgres": "database", "picked": "pick", "went": "pick"}}
	vecs, err := h.Embed(t.Context(), []string{"which database did we pick?", "We went with Postgres.", "Lunch is at noon."}, llm.InputDocument)
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(vecs[0], vecs[1]); c < 0.9 {
		t.Errorf("synonymous texts: cosine %.2f, want > 0.9", c)
	}
	if c := cosine(vecs[0], vecs[2]); c > 0.3 {
		t.Errorf("unrelated texts: cosine %.2f, want < 0.3", c)
	}
	plain := &HashEmbedder{Dims: 512}
	v, _ := plain.Embed(t.Context(), []string{"the", "THE"}, llm.InputQuery)
	if cosine(v[0], v[0]) < 0.999 || cosine(v[0], v[1]) < 0.999 {
		t.Error("a text of stop words only must still have a unit vector, the same for the same words")
	}
	if got := len(plain.Calls()); got != 1 {
		t.Errorf("recorded %d calls", got)
	}
	if _, err := plain.Embed(t.Context(), []string{""}, llm.InputQuery); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("empty text: %v", err)
	}
}

func TestOverlapReranker(t *testing.T) {
	r := &OverlapReranker{}
	got, err := r.Rerank(t.Context(), "postgres backup", []string{"lunch", "nightly backup", "postgres backup schedule"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Ranked{{Index: 2, Score: 1}, {Index: 1, Score: 0.5}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Rerank = %+v, want %+v", got, want)
	}
}
