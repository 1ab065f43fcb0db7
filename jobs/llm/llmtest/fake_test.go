package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
