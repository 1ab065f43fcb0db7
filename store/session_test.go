package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// sessNow is the clock given to ParseMessages in these tests.
var sessNow = time.Date(2026, 6, 20, 9, 8, 7, 123456789, time.FixedZone("UTC+8", 8*3600))

// sessNowStamp is sessNow as a message created_at: naive, microseconds.
const sessNowStamp = "2026-06-20T09:08:07.123456"

// agentScopeFields is the key order of AgentScope's Msg.model_dump_json.
var agentScopeFields = []string{"name", "content", "role", "id", "metadata", "created_at", "usage", "finished_at", "finished_reason", "structured_output", "error"}

// parseOne parses a single message object and fails the test on error.
func parseOne(t testing.TB, obj string) Message {
	t.Helper()
	msgs, err := ParseMessages([]byte("["+obj+"]"), sessNow)
	if err != nil {
		t.Fatalf("ParseMessages(%s): %v", obj, err)
	}
	if len(msgs) != 1 {
		t.Fatalf("ParseMessages(%s) = %d messages", obj, len(msgs))
	}
	return msgs[0]
}

// parseMsgs parses a message list and fails the test on error.
func parseMsgs(t testing.TB, list string) []Message {
	t.Helper()
	msgs, err := ParseMessages([]byte(list), sessNow)
	if err != nil {
		t.Fatalf("ParseMessages(%s): %v", list, err)
	}
	return msgs
}

// rawStrings turns content blocks into strings for comparison.
func rawStrings(c []json.RawMessage) []string {
	out := make([]string, len(c))
	for i, b := range c {
		out[i] = string(b)
	}
	return out
}

// jsonKeys returns the top-level keys of a JSON object in file order.
func jsonKeys(t *testing.T, line []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("line %s does not start an object: %v %v", line, tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// fileLines splits a JSONL file into its lines (without the final newline).
func fileLines(t *testing.T, w *Workspace, rel string) []string {
	t.Helper()
	raw := readRaw(t, w, rel)
	if raw == "" {
		return nil
	}
	if !strings.HasSuffix(raw, "\n") {
		t.Fatalf("%s does not end with a newline: %q", rel, raw)
	}
	return strings.Split(strings.TrimSuffix(raw, "\n"), "\n")
}

// lineIDs decodes the id of every line of a session file.
func lineIDs(t *testing.T, w *Workspace, rel string) []string {
	t.Helper()
	var ids []string
	for _, l := range fileLines(t, w, rel) {
		var m struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

func statFile(t *testing.T, w *Workspace, rel string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(w.Abs(rel))
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// ageFile moves a file's mtime into the past so that any later write shows.
func ageFile(t *testing.T, w *Workspace, rel string) time.Time {
	t.Helper()
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(w.Abs(rel), old, old); err != nil {
		t.Fatal(err)
	}
	return statFile(t, w, rel).ModTime()
}

func TestParseMessagesContent(t *testing.T) {
	tests := []struct {
		name      string
		obj       string
		wantName  string
		wantRole  string
		wantBlock []string
		wantText  string
	}{
		{
			name:      "string content becomes one text block",
			obj:       `{"name":"alice","role":"user","content":"hello\nthere <b> & \"q\""}`,
			wantName:  "alice",
			wantRole:  "user",
			wantBlock: nil, // checked through Blocks below
			wantText:  "hello\nthere <b> & \"q\"",
		},
		{
			name:      "empty string content is still one text block",
			obj:       `{"role":"user","content":""}`,
			wantName:  "user",
			wantRole:  "user",
			wantBlock: nil,
			wantText:  "",
		},
		{
			name:     "block list kept and compacted",
			obj:      "{\"name\":\"bot\",\"role\":\"assistant\",\"content\":[ {\"type\" : \"text\",\n \"text\":\"a b\"} , {\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"search\",\"input\":{ \"q\" : [1, 2] }}, {\"type\":\"thinking\",\"thinking\":\"hm\"} ]}",
			wantName: "bot",
			wantRole: "assistant",
			wantBlock: []string{
				`{"type":"text","text":"a b"}`,
				`{"type":"tool_use","id":"t1","name":"search","input":{"q":[1,2]}}`,
				`{"type":"thinking","thinking":"hm"}`,
			},
			wantText: "a b",
		},
		{
			name:      "missing name defaults to the role",
			obj:       `{"role":"system","content":[]}`,
			wantName:  "system",
			wantRole:  "system",
			wantBlock: []string{},
		},
		{
			name:      "null name defaults to the role",
			obj:       `{"name":null,"role":"assistant","content":[{"type":"text","text":"x"}]}`,
			wantName:  "assistant",
			wantRole:  "assistant",
			wantBlock: []string{`{"type":"text","text":"x"}`},
			wantText:  "x",
		},
		{
			name:      "empty name defaults to the role",
			obj:       `{"name":"","role":"user","content":[{"type":"text","text":"x"}]}`,
			wantName:  "user",
			wantRole:  "user",
			wantBlock: []string{`{"type":"text","text":"x"}`},
			wantText:  "x",
		},
		{
			name:      "missing content is an empty list",
			obj:       `{"role":"user"}`,
			wantName:  "user",
			wantRole:  "user",
			wantBlock: []string{},
		},
		{
			name:      "null content is an empty list",
			obj:       `{"role":"user","content":null}`,
			wantName:  "user",
			wantRole:  "user",
			wantBlock: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := parseOne(t, tt.obj)
			if m.Name != tt.wantName || m.Role != tt.wantRole {
				t.Errorf("name, role = %q, %q; want %q, %q", m.Name, m.Role, tt.wantName, tt.wantRole)
			}
			if tt.wantBlock == nil {
				// String content: exactly one text block carrying the string.
				bl := m.Blocks()
				if len(m.Content) != 1 || len(bl) != 1 || bl[0].Type != "text" || bl[0].Text != tt.wantText {
					t.Fatalf("content = %q; want one text block %q", rawStrings(m.Content), tt.wantText)
				}
				var keys map[string]any
				if err := json.Unmarshal(m.Content[0], &keys); err != nil || len(keys) != 2 {
					t.Fatalf("text block %s has other keys: %v", m.Content[0], err)
				}
				return
			}
			if diff := cmp.Diff(tt.wantBlock, rawStrings(m.Content)); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			if got := m.Text(); got != tt.wantText {
				t.Errorf("Text() = %q, want %q", got, tt.wantText)
			}
			line, err := m.MarshalLine()
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.wantBlock) == 0 && !bytes.Contains(line, []byte(`"content":[]`)) {
				t.Errorf("empty content not written as []: %s", line)
			}
		})
	}
}

func TestParseMessagesKeepsFields(t *testing.T) {
	m := parseOne(t, `{"role":"assistant","content":"x","metadata":  { "k" : [1, "v"] },"usage":{"input_tokens":3},"finished_at":"2026-06-20T10:00:01","finished_reason":"stop","structured_output":{"a":1},"error":null,"created_at":"2026-06-20T10:00:00","id":"m1","extra":"dropped"}`)
	line, err := m.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"assistant","content":[{"text":"x","type":"text"}],"role":"assistant","id":"m1","metadata":{"k":[1,"v"]},"created_at":"2026-06-20T10:00:00","usage":{"input_tokens":3},"finished_at":"2026-06-20T10:00:01","finished_reason":"stop","structured_output":{"a":1},"error":null}`
	// The text block's key order is an encoding detail; compare it as JSON.
	var got, exp map[string]any
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(exp, got); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(agentScopeFields, jsonKeys(t, line)); diff != "" {
		t.Errorf("field order (-want +got):\n%s", diff)
	}
	// Missing optional fields become null / {} and keep their place.
	bare := parseOne(t, `{"role":"user","content":"y","created_at":"2026-06-20T10:00:00","id":"m2"}`)
	line, err = bare.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(agentScopeFields, jsonKeys(t, line)); diff != "" {
		t.Errorf("bare field order (-want +got):\n%s", diff)
	}
	if !bytes.Contains(line, []byte(`"metadata":{},"created_at":"2026-06-20T10:00:00","usage":null,"finished_at":null,"finished_reason":null,"structured_output":null,"error":null}`)) {
		t.Errorf("bare line = %s", line)
	}
}

func TestParseMessagesErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error
	}{
		{"empty", "", []string{"no messages given"}},
		{"blank", " \n\t ", []string{"no messages given"}},
		{"object not list", `{"role":"user","content":"x"}`, []string{"must be a JSON list"}},
		{"string not list", `"hello"`, []string{"must be a JSON list"}},
		{"number not list", `42`, []string{"must be a JSON list"}},
		{"syntax error offset", `[{"role":"user",}]`, []string{"not valid JSON", "at byte 17"}},
		{"bad token offset", `[{"role":"user","content":x}]`, []string{"not valid JSON", "at byte 27"}},
		{"truncated", `[{"role":"user","content":"a"}`, []string{"not valid JSON", "at byte"}},
		{"trailing garbage", `[] []`, []string{"not valid JSON", "at byte 4"}},
		{"element not object", `[1]`, []string{"message 0", "not a JSON object"}},
		{"null element", `[{"role":"user"},null]`, []string{"message 1", "not a JSON object"}},
		{"missing role", `[{"content":"x"}]`, []string{"message 0", "role is required"}},
		{"empty role", `[{"role":"","content":"x"}]`, []string{"message 0", "role is required"}},
		{"unknown role", `[{"role":"user","content":"a"},{"role":"bot","content":"b"}]`, []string{"message 1", `role "bot"`}},
		{"role case", `[{"role":"User","content":"a"}]`, []string{"message 0", `role "User"`}},
		{"tool role", `[{"role":"tool","content":"a"}]`, []string{"message 0", `role "tool"`}},
		{"role not string", `[{"role":1,"content":"a"}]`, []string{"message 0", "role must be a string"}},
		{"name not string", `[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","name":["x"],"content":"c"}]`, []string{"message 2", "name must be a string"}},
		{"content number", `[{"role":"user","content":5}]`, []string{"message 0", "content must be a string or a list of blocks"}},
		{"content object", `[{"role":"user","content":{"type":"text","text":"x"}}]`, []string{"message 0", "content must be a string or a list of blocks"}},
		{"content bool", `[{"role":"user","content":true}]`, []string{"message 0", "content must be"}},
		{"block not object", `[{"role":"user","content":["x"]}]`, []string{"message 0", "content block 0"}},
		{"block without type", `[{"role":"user","content":[{"type":"text","text":"a"},{"text":"b"}]}]`, []string{"message 0", "content block 1"}},
		{"block type not string", `[{"role":"user","content":[{"type":7}]}]`, []string{"message 0", "content block 0"}},
		{"metadata string", `[{"role":"user","content":"a","metadata":"x"}]`, []string{"message 0", "metadata must be an object"}},
		{"metadata list", `[{"role":"user","content":"a"},{"role":"user","content":"a","metadata":[]}]`, []string{"message 1", "metadata must be an object"}},
		{"metadata number", `[{"role":"user","content":"a","metadata":3}]`, []string{"message 0", "metadata must be an object"}},
		{"created_at object", `[{"role":"user","content":"a","created_at":{}}]`, []string{"message 0", "created_at must be a string or a Unix time"}},
		{"created_at bool", `[{"role":"user","content":"a","created_at":true}]`, []string{"message 0", "created_at must be"}},
		{"created_at negative", `[{"role":"user","content":"a","created_at":-5}]`, []string{"message 0", "created_at must be"}},
		{"created_at zero", `[{"role":"user","content":"a","created_at":0}]`, []string{"message 0", "created_at must be"}},
		{"created_at out of range", `[{"role":"user","content":"a","created_at":1e300}]`, []string{"message 0", "created_at must be"}},
		{"created_at seconds past year 9999", `[{"role":"user","content":"a","created_at":300000000000}]`, []string{"message 0", "created_at must be"}},
		{"id not string", `[{"role":"user","content":"a","id":12}]`, []string{"message 0", "id must be a string"}},
		{"impossible created_at", `[{"role":"user","content":"a","created_at":"2026-02-30T10:00:00"}]`, []string{"message 0", `created_at "2026-02-30T10:00:00" is not a date or time`}},
		{"created_at in words", `[{"role":"user","content":"a"},{"role":"user","content":"b","created_at":"yesterday"}]`, []string{"message 1", `created_at "yesterday"`}},
		{"impossible alias", `[{"role":"user","content":"a","timestamp":"2026-13-01"}]`, []string{"message 0", `timestamp "2026-13-01"`}},
		{"impossible alias in metadata", `[{"role":"user","content":"a","metadata":{"createdAt":"2026-06-31"}}]`, []string{"message 0", `createdAt "2026-06-31"`}},
		{"invalid utf-8", "[{\"role\":\"user\",\"content\":\"ok\"},{\"role\":\"user\",\"content\":\"ab\xff\"}]", []string{"message 1 is not UTF-8", "offset 60", "nothing was saved"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := ParseMessages([]byte(tt.in), sessNow)
			if err == nil {
				t.Fatalf("ParseMessages(%s) = %+v, want error", tt.in, msgs)
			}
			if !errors.Is(err, ErrMessages) {
				t.Errorf("error %v does not wrap ErrMessages", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if msgs != nil {
				t.Errorf("messages returned with an error: %+v", msgs)
			}
		})
	}
}

// TestParseMessagesNeverReplacesText: GBK (or any non-UTF-8) text is
// refused with a clear error instead of being saved as U+FFFD, and a text
// string keeps its escapes (even a lone surrogate) byte for byte.
func TestParseMessagesNeverReplacesText(t *testing.T) {
	gbkText, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte("登录流程重构"))
	if err != nil {
		t.Fatal(err)
	}
	in := append(append([]byte(`[{"role":"user","content":"`), gbkText...), `"}]`...)
	if msgs, err := ParseMessages(in, sessNow); err == nil || !errors.Is(err, ErrMessages) || !strings.Contains(err.Error(), "iconv -f GBK") {
		t.Fatalf("GBK messages: %v, %v", msgs, err)
	}
	w := newWorkspace(t)
	if _, err := w.SaveDialog(dialogRel, parseMsgs(t, `[{"role":"user","id":"e","content":"caf\u00e9 \ud83d cut emoji \u2028 <&>"}]`)); err != nil {
		t.Fatal(err)
	}
	raw := readRaw(t, w, dialogRel)
	if !strings.Contains(raw, `{"type":"text","text":"caf\u00e9 \ud83d cut emoji \u2028 <&>"}`) || strings.Contains(raw, "\uFFFD") || strings.ContainsRune(raw, utf8.RuneError) {
		t.Errorf("the text was not kept as written:\n%s", raw)
	}
}

func TestValidateSessionID(t *testing.T) {
	for _, sid := range []string{"", "  ", "a/b", "..", "NUL", "x\ny", " x"} {
		if err := ValidateSessionID(sid); err == nil || !errors.Is(err, ErrInput) {
			t.Errorf("ValidateSessionID(%q) = %v", sid, err)
		}
	}
	for _, sid := range []string{"abc", "4f9c2d1e-7b3a-4c5d-9e8f-0a1b2c3d4e5f", "会话-1"} {
		if err := ValidateSessionID(sid); err != nil {
			t.Errorf("ValidateSessionID(%q) = %v", sid, err)
		}
	}
}

func TestParseMessagesEmptyList(t *testing.T) {
	for _, in := range []string{"[]", " [ ] \n"} {
		msgs, err := ParseMessages([]byte(in), sessNow)
		if err != nil || len(msgs) != 0 {
			t.Errorf("ParseMessages(%q) = %v, %v; want no messages, no error", in, msgs, err)
		}
	}
}

func TestParseMessagesTimestamps(t *testing.T) {
	tests := []struct {
		name   string
		fields string // extra fields of a user message
		want   string
	}{
		{"created_at", `"created_at":"2026-06-01T08:00:00"`, "2026-06-01T08:00:00"},
		{"created_at trimmed", `"created_at":"  2026-06-01 08:00:00 "`, "2026-06-01 08:00:00"},
		{"created_at kept verbatim", `"created_at":"2026-06-01T08:00:00.5+08:00"`, "2026-06-01T08:00:00.5+08:00"},
		{"created_at beats every alias", `"time_created":"2026-01-01T00:00:01","timestamp":"2026-01-02T00:00:02","createdAt":"2026-01-03T00:00:03","timeCreated":"2026-01-04T00:00:04","created_time":"2026-01-05T00:00:05","created_at":"2026-01-09T09:09:09","metadata":{"time_created":"2026-02-01T00:00:00"}`, "2026-01-09T09:09:09"},
		{"created_at beats aliases listed first", `"created_time":"2026-01-05T00:00:05","timestamp":"2026-01-02T00:00:02","created_at":"2026-01-09T09:09:09"`, "2026-01-09T09:09:09"},
		{"empty created_at falls back", `"created_at":"","timestamp":"2026-01-02T00:00:02"`, "2026-01-02T00:00:02"},
		{"blank created_at falls back", `"created_at":"   ","createdAt":"2026-01-03T00:00:03"`, "2026-01-03T00:00:03"},
		{"null created_at falls back", `"created_at":null,"timeCreated":"2026-01-04T00:00:04"`, "2026-01-04T00:00:04"},
		{"time_created", `"time_created":"2026-01-01T00:00:01"`, "2026-01-01T00:00:01"},
		{"timestamp", `"timestamp":"2026-01-02T00:00:02"`, "2026-01-02T00:00:02"},
		{"createdAt", `"createdAt":"2026-01-03T00:00:03"`, "2026-01-03T00:00:03"},
		{"timeCreated", `"timeCreated":"2026-01-04T00:00:04"`, "2026-01-04T00:00:04"},
		{"created_time", `"created_time":"2026-01-05T00:00:05"`, "2026-01-05T00:00:05"},
		{"alias order not key order", `"created_time":"2026-01-05T00:00:05","timeCreated":"2026-01-04T00:00:04","createdAt":"2026-01-03T00:00:03","timestamp":"2026-01-02T00:00:02","time_created":"2026-01-01T00:00:01"`, "2026-01-01T00:00:01"},
		{"timestamp before createdAt", `"createdAt":"2026-01-03T00:00:03","timestamp":"2026-01-02T00:00:02"`, "2026-01-02T00:00:02"},
		{"createdAt before timeCreated", `"timeCreated":"2026-01-04T00:00:04","createdAt":"2026-01-03T00:00:03","created_time":"2026-01-05T00:00:05"`, "2026-01-03T00:00:03"},
		{"timeCreated before created_time", `"created_time":"2026-01-05T00:00:05","timeCreated":"2026-01-04T00:00:04"`, "2026-01-04T00:00:04"},
		{"empty alias skipped", `"time_created":"","timestamp":"2026-01-02T00:00:02"`, "2026-01-02T00:00:02"},
		{"metadata time_created", `"metadata":{"time_created":"2026-02-01T00:00:01"}`, "2026-02-01T00:00:01"},
		{"metadata created_time", `"metadata":{"created_time":"2026-02-05T00:00:05"}`, "2026-02-05T00:00:05"},
		{"metadata alias order", `"metadata":{"created_time":"2026-02-05T00:00:05","timestamp":"2026-02-02T00:00:02"}`, "2026-02-02T00:00:02"},
		{"top level before metadata", `"created_time":"2026-01-05T00:00:05","metadata":{"time_created":"2026-02-01T00:00:01"}`, "2026-01-05T00:00:05"},
		{"metadata used when top level empty", `"timestamp":"","metadata":{"timestamp":"2026-02-02T00:00:02"}`, "2026-02-02T00:00:02"},
		{"created_at beats metadata", `"created_at":"2026-01-09T09:09:09","metadata":{"time_created":"2026-02-01T00:00:01"}`, "2026-01-09T09:09:09"},
		{"unix seconds", `"created_at":1781921400`, "2026-06-20T02:10:00Z"},
		{"unix seconds fraction", `"created_at":1781921400.9`, "2026-06-20T02:10:00Z"},
		{"unix milliseconds", `"created_at":1781921400123`, "2026-06-20T02:10:00Z"},
		{"unix seconds alias", `"timestamp":1781921400`, "2026-06-20T02:10:00Z"},
		{"unix milliseconds in metadata", `"metadata":{"createdAt":1781921400999}`, "2026-06-20T02:10:00Z"},
		{"early unix seconds", `"created_at":86400`, "1970-01-02T00:00:00Z"},
		{"missing everything", ``, sessNowStamp},
		{"metadata without aliases", `"metadata":{"source":"x"}`, sessNowStamp},
		{"null metadata", `"metadata":null`, sessNowStamp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := `{"role":"user","content":"hi"`
			if tt.fields != "" {
				obj += "," + tt.fields
			}
			m := parseOne(t, obj+"}")
			if m.CreatedAt != tt.want {
				t.Errorf("created_at = %q, want %q", m.CreatedAt, tt.want)
			}
		})
	}
}

func TestParseMessagesNowIsNaive(t *testing.T) {
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("minus", -7*3600)} {
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, loc)
		msgs, err := ParseMessages([]byte(`[{"role":"user","content":"x"}]`), now)
		if err != nil {
			t.Fatal(err)
		}
		if got := msgs[0].CreatedAt; got != "2026-01-02T03:04:05.000000" {
			t.Errorf("now in %s: created_at = %q", loc, got)
		}
	}
}

func TestParseMessagesIDs(t *testing.T) {
	hexID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	base := `{"role":"user","name":"u","content":"hello","created_at":"2026-06-20T10:00:00"}`
	m := parseOne(t, base)
	if !hexID.MatchString(m.ID) {
		t.Fatalf("derived id %q is not 32 hex digits", m.ID)
	}
	// Stable across calls and across clocks, and equal for twins in one call.
	again, err := ParseMessages([]byte("["+base+","+base+"]"), sessNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if again[0].ID != m.ID || again[1].ID != m.ID {
		t.Errorf("ids %q, %q differ from %q for identical messages", again[0].ID, again[1].ID, m.ID)
	}
	// The same content written as a string or as a compacted/spaced list of
	// the same block bytes.
	if id := parseOne(t, `{"role":"user","name":"u","content":"hello","created_at":"2026-06-20T10:00:00","metadata":{"x":1}}`).ID; id != m.ID {
		t.Errorf("metadata changed the derived id: %q vs %q", id, m.ID)
	}
	list := `{"role":"user","content":[{"type":"text","text":"a"}],"created_at":"2026-06-20T10:00:00"}`
	spaced := `{"role":"user","content":[ { "type" : "text" , "text" : "a" } ],"created_at":"2026-06-20T10:00:00"}`
	if a, b := parseOne(t, list).ID, parseOne(t, spaced).ID; a != b {
		t.Errorf("whitespace in blocks changed the id: %q vs %q", a, b)
	}

	differ := map[string]string{
		"content":    `{"role":"user","name":"u","content":"hello!","created_at":"2026-06-20T10:00:00"}`,
		"role":       `{"role":"assistant","name":"u","content":"hello","created_at":"2026-06-20T10:00:00"}`,
		"name":       `{"role":"user","name":"v","content":"hello","created_at":"2026-06-20T10:00:00"}`,
		"created_at": `{"role":"user","name":"u","content":"hello","created_at":"2026-06-20T10:00:01"}`,
		"alias time": `{"role":"user","name":"u","content":"hello","timestamp":"2026-06-20T10:00:02"}`,
		"extra block": `{"role":"user","name":"u","content":[{"type":"text","text":"hello"},{"type":"text","text":""}],` +
			`"created_at":"2026-06-20T10:00:00"}`,
	}
	seen := map[string]string{m.ID: "base"}
	for what, obj := range differ {
		id := parseOne(t, obj).ID
		if !hexID.MatchString(id) {
			t.Errorf("%s: id %q is not 32 hex digits", what, id)
		}
		if prev, dup := seen[id]; dup {
			t.Errorf("%s: id %q equals the id of %s", what, id, prev)
		}
		seen[id] = what
	}

	// Explicit ids are kept as given, even for identical messages.
	for _, id := range []string{"abc", "0f8e7b6c5d4a39281706f5e4d3c2b1a0", "msg 1 / ü"} {
		obj := fmt.Sprintf(`{"role":"user","content":"hello","created_at":"2026-06-20T10:00:00","id":%q}`, id)
		if got := parseOne(t, obj).ID; got != id {
			t.Errorf("explicit id %q became %q", id, got)
		}
	}
	if got := parseOne(t, `{"role":"user","content":"hello","created_at":"2026-06-20T10:00:00","id":""}`).ID; !hexID.MatchString(got) {
		t.Errorf("empty id not derived: %q", got)
	}
	if got := parseOne(t, `{"role":"user","content":"hello","created_at":"2026-06-20T10:00:00","id":null}`).ID; !hexID.MatchString(got) {
		t.Errorf("null id not derived: %q", got)
	}
}

func TestSanitizeForSave(t *testing.T) {
	const (
		text     = `{"type":"text","text":"keep me"}`
		toolUse  = `{"type":"tool_use","id":"t1","name":"search","input":{"q":"x"}}`
		toolRes  = `{"type":"tool_result","id":"t1","name":"search","output":[{"type":"text","text":"RECALLED"}]}`
		toolRes2 = `{"type":"tool_result","id":"t2","name":["odd"],"output":"RECALLED"}`
		data64   = `{"type":"data","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`
		image64  = `{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQ"}}`
		audio64  = `{"type":"audio","source":{"type":"base64","media_type":"audio/wav","data":"UklGRg=="}}`
		odd64    = `{"type":"data","text":5,"source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`
		dataURL  = `{"type":"data","source":{"type":"url","media_type":"image/png","url":"https://example.com/a.png"}}`
		imageURL = `{"type":"image","source":{"type":"url","url":"https://example.com/b.jpg"}}`
		thinking = `{"type":"thinking","thinking":"hmm"}`
		unknown  = `{"type":"video","source":"https://example.com/v.mp4"}`
		document = `{"type":"document","source":{"type":"text","data":"x"}}`
		toolCall = `{"type":"tool_call","id":"t1","name":"search","input":"{\"q\":\"x\"}"}`
		callObj  = `{"type":"tool_call","id":"t3","name":"run","input":{"cmd":"ls"}}`
		callNoID = `{"type":"tool_use","name":"run"}`
		hint     = `{"type":"hint","hint":"think"}`
		redacted = `{"type":"redacted_thinking","data":"xx"}`
		// what AgentScope's message model accepts instead
		imageData = `{"type":"data","source":{"type":"url","url":"https://example.com/b.jpg","media_type":"image/*"}}`
		callMap   = `{"type":"tool_call","id":"t3","name":"run","input":"{\"cmd\":\"ls\"}"}`
		callNoMap = `{"type":"tool_call","id":"call-m1-0","name":"run","input":"{}"}`
	)
	tests := []struct {
		name string
		role string // default assistant
		in   []string
		want []string
	}{
		{"text only", "", []string{text}, []string{text}},
		{"drops tool results, maps tool_use", "", []string{text, toolRes, toolUse, toolRes2}, []string{text, toolCall}},
		{"tool_call input becomes a JSON string", "", []string{callObj, toolCall}, []string{callMap, toolCall}},
		{"tool call without id or input", "", []string{callNoID}, []string{callNoMap}},
		{"tool calls only from the assistant", "user", []string{toolUse, toolCall, text}, []string{text}},
		{"drops base64 data and image", "", []string{data64, text, image64, audio64}, []string{text}},
		{"drops base64 with odd fields", "", []string{odd64, text}, []string{text}},
		{"keeps url sources, image becomes data", "user", []string{dataURL, imageURL, text}, []string{dataURL, imageData, text}},
		{"system keeps text only", "system", []string{dataURL, thinking, text}, []string{text}},
		{"thinking and hints are the assistant's", "", []string{thinking, hint, redacted}, []string{thinking, hint}},
		{"no thinking in user messages", "user", []string{thinking, hint, text}, []string{text}},
		{"drops blocks AgentScope does not know", "", []string{unknown, document, text}, []string{text}},
		{"empty message keeps envelope", "", []string{toolRes, data64}, []string{}},
		{"no content", "", nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			role := tt.role
			if role == "" {
				role = "assistant"
			}
			in := Message{
				Name: "bot", Role: role, ID: "m1", CreatedAt: "2026-06-20T10:00:00",
				Metadata: json.RawMessage(`{"k":"v"}`), Usage: json.RawMessage(`{"n":1}`),
			}
			for _, b := range tt.in {
				in.Content = append(in.Content, json.RawMessage(b))
			}
			before := append([]json.RawMessage(nil), in.Content...)
			out := SanitizeForSave(in)
			got := rawStrings(out.Content)
			if out.Content == nil {
				t.Errorf("content is nil, want an empty list")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			if out.Name != in.Name || out.Role != in.Role || out.ID != in.ID || out.CreatedAt != in.CreatedAt ||
				string(out.Metadata) != string(in.Metadata) || string(out.Usage) != string(in.Usage) {
				t.Errorf("envelope changed: %+v", out)
			}
			if diff := cmp.Diff(rawStrings(before), rawStrings(in.Content)); diff != "" {
				t.Errorf("input modified (-before +after):\n%s", diff)
			}
			line, err := out.MarshalLine()
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{"RECALLED", "iVBORw0KGgo", "/9j/4AAQ", "UklGRg"} {
				if bytes.Contains(line, []byte(secret)) {
					t.Errorf("line keeps %q: %s", secret, line)
				}
			}
		})
	}
}

const dialogRel = "session/dialog/s1.jsonl"

func TestSaveDialogNewFile(t *testing.T) {
	w := newWorkspace(t)
	msgs := parseMsgs(t, `[
		{"role":"user","name":"alice","content":"first","created_at":"2026-06-20T10:00:00","id":"a"},
		{"role":"assistant","content":[{"type":"text","text":"second"}],"created_at":"2026-06-20T10:00:05","id":"b","usage":{"t":1}},
		{"role":"user","content":"third","created_at":"2026-06-20T10:01:00"}
	]`)
	res, err := w.SaveDialog(dialogRel, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != dialogRel || res.New != 3 || res.Replaced != 0 || !res.Written || len(res.Messages) != 3 {
		t.Fatalf("SaveDialog = %+v", res)
	}
	noTempFiles(t, w.Root)
	lines := fileLines(t, w, dialogRel)
	if len(lines) != 3 {
		t.Fatalf("file has %d lines: %q", len(lines), lines)
	}
	for i, l := range lines {
		if diff := cmp.Diff(agentScopeFields, jsonKeys(t, []byte(l))); diff != "" {
			t.Errorf("line %d field order (-want +got):\n%s", i+1, diff)
		}
		want, err := msgs[i].MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		if l != string(want) {
			t.Errorf("line %d = %s\nwant %s", i+1, l, want)
		}
	}
	if !strings.HasPrefix(lines[0], `{"name":"alice","content":[{"type":"text","text":"first"}],"role":"user","id":"a","metadata":{},"created_at":"2026-06-20T10:00:00","usage":null,`) {
		t.Errorf("line 1 = %s", lines[0])
	}
	if !strings.Contains(lines[1], `"usage":{"t":1}`) {
		t.Errorf("line 2 lost usage: %s", lines[1])
	}
	// What was written reads back as the same messages.
	back, raw, err := w.ReadDialog(dialogRel)
	if err != nil || raw == nil {
		t.Fatalf("ReadDialog: %v", err)
	}
	if len(back) != 3 || back[0].ID != "a" || back[1].ID != "b" || back[2].ID != msgs[2].ID || back[2].Text() != "third" {
		t.Errorf("read back %+v", back)
	}
	// DialogPath is where a session's file lives.
	if got := DialogPath("s1"); got != dialogRel {
		t.Errorf("DialogPath = %q", got)
	}
}

func TestSaveDialogAppendsNewLines(t *testing.T) {
	w := newWorkspace(t)
	first := parseMsgs(t, `[
		{"role":"user","content":"one","created_at":"2026-06-20T10:00:00"},
		{"role":"assistant","content":"two","created_at":"2026-06-20T10:00:05"}
	]`)
	if _, err := w.SaveDialog(dialogRel, first); err != nil {
		t.Fatal(err)
	}
	oldBytes := readRaw(t, w, dialogRel)
	before := statFile(t, w, dialogRel)

	// The client resends the whole conversation plus two later messages.
	second := parseMsgs(t, `[
		{"role":"user","content":"one","created_at":"2026-06-20T10:00:00"},
		{"role":"assistant","content":"two","created_at":"2026-06-20T10:00:05"},
		{"role":"user","content":"three","created_at":"2026-06-20T10:02:00"},
		{"role":"assistant","content":"four","created_at":"2026-06-20T10:02:00"}
	]`)
	res, err := w.SaveDialog(dialogRel, second)
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 2 || res.Replaced != 0 || !res.Written || len(res.Messages) != 4 {
		t.Fatalf("SaveDialog = %+v", res)
	}
	newBytes := readRaw(t, w, dialogRel)
	if !strings.HasPrefix(newBytes, oldBytes) {
		t.Fatalf("old file is not a prefix of the new one:\nold %q\nnew %q", oldBytes, newBytes)
	}
	added := strings.Split(strings.TrimSuffix(newBytes[len(oldBytes):], "\n"), "\n")
	if len(added) != 2 {
		t.Fatalf("appended %d lines: %q", len(added), added)
	}
	for i, m := range second[2:] {
		want, _ := m.MarshalLine()
		if added[i] != string(want) {
			t.Errorf("appended line %d = %s\nwant %s", i+1, added[i], want)
		}
	}
	if after := statFile(t, w, dialogRel); !os.SameFile(before, after) {
		t.Errorf("append replaced the file instead of appending to it")
	}
	noTempFiles(t, w.Root)

	// Only the new message this time, no resend.
	third := parseMsgs(t, `[{"role":"user","content":"five","created_at":"2026-06-20T10:03:00"}]`)
	before = statFile(t, w, dialogRel)
	if res, err = w.SaveDialog(dialogRel, third); err != nil || res.New != 1 || len(res.Messages) != 5 {
		t.Fatalf("SaveDialog = %+v, %v", res, err)
	}
	if !strings.HasPrefix(readRaw(t, w, dialogRel), newBytes) || !os.SameFile(before, statFile(t, w, dialogRel)) {
		t.Errorf("third save did not append")
	}
	if n := len(fileLines(t, w, dialogRel)); n != 5 {
		t.Errorf("file has %d lines, want 5", n)
	}
}

func TestSaveDialogEarlierMessageRewrites(t *testing.T) {
	w := newWorkspace(t)
	late := parseMsgs(t, `[
		{"role":"user","content":"b","created_at":"2026-06-20T10:00:00","id":"b"},
		{"role":"assistant","content":"c","created_at":"2026-06-20T10:05:00","id":"c"}
	]`)
	if _, err := w.SaveDialog(dialogRel, late); err != nil {
		t.Fatal(err)
	}
	oldBytes := readRaw(t, w, dialogRel)
	before := statFile(t, w, dialogRel)
	early := parseMsgs(t, `[
		{"role":"user","content":"a","created_at":"2026-06-20T09:00:00","id":"a"},
		{"role":"user","content":"bc","created_at":"2026-06-20T10:01:00","id":"bc"}
	]`)
	res, err := w.SaveDialog(dialogRel, early)
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 2 || res.Replaced != 0 || !res.Written {
		t.Fatalf("SaveDialog = %+v", res)
	}
	if diff := cmp.Diff([]string{"a", "b", "bc", "c"}, lineIDs(t, w, dialogRel)); diff != "" {
		t.Errorf("file order (-want +got):\n%s", diff)
	}
	var gotIDs []string
	for _, m := range res.Messages {
		gotIDs = append(gotIDs, m.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "bc", "c"}, gotIDs); diff != "" {
		t.Errorf("result order (-want +got):\n%s", diff)
	}
	if strings.HasPrefix(readRaw(t, w, dialogRel), oldBytes) {
		t.Errorf("old bytes still a prefix after an earlier message")
	}
	if os.SameFile(before, statFile(t, w, dialogRel)) {
		t.Errorf("rewrite was not atomic (same inode as before)")
	}
	noTempFiles(t, w.Root)
}

func TestSaveDialogReplacesByID(t *testing.T) {
	w := newWorkspace(t)
	if _, err := w.SaveDialog(dialogRel, parseMsgs(t, `[
		{"role":"user","content":"q","created_at":"2026-06-20T10:00:00","id":"q"},
		{"role":"assistant","content":"draft answer","created_at":"2026-06-20T10:00:05","id":"r"},
		{"role":"user","content":"thanks","created_at":"2026-06-20T10:01:00","id":"t"}
	]`)); err != nil {
		t.Fatal(err)
	}
	res, err := w.SaveDialog(dialogRel, parseMsgs(t, `[
		{"role":"user","content":"q","created_at":"2026-06-20T10:00:00","id":"q"},
		{"role":"assistant","content":"final answer","created_at":"2026-06-20T10:00:05","id":"r"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 0 || res.Replaced != 1 || !res.Written || len(res.Messages) != 3 {
		t.Fatalf("SaveDialog = %+v", res)
	}
	raw := readRaw(t, w, dialogRel)
	if strings.Contains(raw, "draft answer") || strings.Count(raw, "final answer") != 1 {
		t.Errorf("file after replace:\n%s", raw)
	}
	if diff := cmp.Diff([]string{"q", "r", "t"}, lineIDs(t, w, dialogRel)); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}

	// A replacement with a later time moves to its new place.
	res, err = w.SaveDialog(dialogRel, parseMsgs(t, `[{"role":"user","content":"q edited","created_at":"2026-06-20T10:02:00","id":"q"}]`))
	if err != nil || res.Replaced != 1 || res.New != 0 {
		t.Fatalf("SaveDialog = %+v, %v", res, err)
	}
	if diff := cmp.Diff([]string{"r", "t", "q"}, lineIDs(t, w, dialogRel)); diff != "" {
		t.Errorf("ids after move (-want +got):\n%s", diff)
	}
	if n := strings.Count(readRaw(t, w, dialogRel), `"id":"q"`); n != 1 {
		t.Errorf("id q appears %d times", n)
	}
}

func TestSaveDialogIdenticalRepeatWritesNothing(t *testing.T) {
	w := newWorkspace(t)
	list := `[
		{"role":"user","content":"one","created_at":"2026-06-20T10:00:00"},
		{"role":"assistant","content":[{"type":"text","text":"two"},{"type":"tool_result","id":"x","name":"s","output":"r"}],"created_at":"2026-06-20T10:00:05","id":"two"}
	]`
	if _, err := w.SaveDialog(dialogRel, parseMsgs(t, list)); err != nil {
		t.Fatal(err)
	}
	oldBytes := readRaw(t, w, dialogRel)
	mtime := ageFile(t, w, dialogRel)
	before := statFile(t, w, dialogRel)

	repeats := map[string]string{
		"same list": list,
		"subset":    `[{"role":"user","content":"one","created_at":"2026-06-20T10:00:00"}]`,
		// Differs only in what sanitising removes anyway.
		"sanitised twin": `[{"role":"assistant","content":[{"type":"text","text":"two"},{"type":"data","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}],"created_at":"2026-06-20T10:00:05","id":"two"}]`,
		"empty":          `[]`,
	}
	for name, l := range repeats {
		t.Run(name, func(t *testing.T) {
			res, err := w.SaveDialog(dialogRel, parseMsgs(t, l))
			if err != nil {
				t.Fatal(err)
			}
			if res.Written || res.New != 0 || res.Replaced != 0 || len(res.Messages) != 2 {
				t.Errorf("SaveDialog = %+v", res)
			}
			after := statFile(t, w, dialogRel)
			if !after.ModTime().Equal(mtime) || !os.SameFile(before, after) {
				t.Errorf("file touched: mtime %v -> %v", mtime, after.ModTime())
			}
			if got := readRaw(t, w, dialogRel); got != oldBytes {
				t.Errorf("file changed:\n%s", got)
			}
		})
	}
}

func TestSaveDialogNeverStoresBase64(t *testing.T) {
	w := newWorkspace(t)
	const payload = "U0VDUkVULUlNQUdFLUJZVEVT"
	msgs := parseMsgs(t, `[
		{"role":"user","content":[
			{"type":"text","text":"look at this"},
			{"type":"data","source":{"type":"base64","media_type":"image/png","data":"`+payload+`"}},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+payload+`"}},
			{"type":"data","source":{"type":"url","media_type":"image/png","url":"https://example.com/x.png"}}
		],"created_at":"2026-06-20T10:00:00","id":"u"},
		{"role":"assistant","content":[
			{"type":"tool_use","id":"t1","name":"search","input":{"q":"x"}},
			{"type":"tool_result","id":"t1","name":"search","output":"RECALLED-OUTPUT"}
		],"created_at":"2026-06-20T10:00:01","id":"a"},
		{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+payload+`"}}],"created_at":"2026-06-20T10:00:02","id":"only-image"}
	]`)
	res, err := w.SaveDialog(dialogRel, msgs)
	if err != nil {
		t.Fatal(err)
	}
	raw := readRaw(t, w, dialogRel)
	for _, bad := range []string{payload, "RECALLED-OUTPUT", "tool_result", `"base64"`} {
		if strings.Contains(raw, bad) {
			t.Errorf("file contains %q:\n%s", bad, raw)
		}
		for _, m := range res.Messages {
			if line, _ := m.MarshalLine(); bytes.Contains(line, []byte(bad)) {
				t.Errorf("result message keeps %q: %s", bad, line)
			}
		}
	}
	for _, good := range []string{"look at this", "https://example.com/x.png", `{"type":"tool_call","id":"t1","name":"search","input":"{\"q\":\"x\"}"}`} {
		if !strings.Contains(raw, good) {
			t.Errorf("file lost %q:\n%s", good, raw)
		}
	}
	lines := fileLines(t, w, dialogRel)
	if len(lines) != 3 || !strings.Contains(lines[2], `"content":[],"role":"user","id":"only-image"`) {
		t.Errorf("emptied message lost its envelope: %q", lines)
	}
	// The caller's messages are not modified.
	if len(msgs[0].Content) != 4 || len(msgs[1].Content) != 2 {
		t.Errorf("input messages modified: %d, %d blocks", len(msgs[0].Content), len(msgs[1].Content))
	}
}

func TestSaveDialogRefusesBrokenFile(t *testing.T) {
	good := `{"name":"user","content":[{"type":"text","text":"hi"}],"role":"user","id":"a","metadata":{},"created_at":"2026-06-20T10:00:00","usage":null,"finished_at":null,"finished_reason":null,"structured_output":null,"error":null}`
	tests := []struct {
		name    string
		content string
		line    int
	}{
		{"not json", good + "\nnot json\n", 2},
		{"no id", `{"name":"user","role":"user","content":[]}` + "\n" + good + "\n", 1},
		{"empty id", good + "\n\n" + strings.Replace(good, `"id":"a"`, `"id":""`, 1) + "\n", 3},
		{"list line", good + "\n[1,2]\n", 2},
		{"string content", `{"id":"x","role":"user","content":"plain"}` + "\n", 1},
		{"numeric id", `{"id":7,"role":"user","content":[]}` + "\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			writeRaw(t, w, dialogRel, tt.content)
			mtime := ageFile(t, w, dialogRel)
			before := statFile(t, w, dialogRel)
			msgs := parseMsgs(t, `[{"role":"user","content":"new","created_at":"2026-06-20T11:00:00"},{"role":"user","content":"older","created_at":"2026-06-20T09:00:00"}]`)
			res, err := w.SaveDialog(dialogRel, msgs)
			if err == nil {
				t.Fatalf("SaveDialog = %+v, want error", res)
			}
			if want := fmt.Sprintf("%s line %d is not a message", dialogRel, tt.line); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
			if got := readRaw(t, w, dialogRel); got != tt.content {
				t.Errorf("file changed:\n%s", got)
			}
			after := statFile(t, w, dialogRel)
			if !os.SameFile(before, after) || !after.ModTime().Equal(mtime) {
				t.Errorf("file touched")
			}
			noTempFiles(t, w.Root)
		})
	}
}

// TestSaveDialogSetsAsideTornTail: a crash or a full disk in the middle of
// an append leaves an incomplete last line; the next save moves it to
// <file>.corrupt, says so, and goes on.
func TestSaveDialogSetsAsideTornTail(t *testing.T) {
	good := `{"name":"user","content":[{"type":"text","text":"hi"}],"role":"user","id":"a","metadata":{},"created_at":"2026-06-20T10:00:00","usage":null,"finished_at":null,"finished_reason":null,"structured_output":null,"error":null}`
	tests := []struct {
		name, content, tail string
		line                int
	}{
		{"half a record", good + "\n" + good[:40], good[:40], 2},
		{"only a torn record", good[:7], good[:7], 1},
		{"a record with its id cut", good + "\n" + strings.Replace(good, `"id":"a"`, `"id":"`, 1), strings.Replace(good, `"id":"a"`, `"id":"`, 1), 2},
		{"zeros after a power cut", good + "\n\x00\x00\x00\x00", "\x00\x00\x00\x00", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			writeRaw(t, w, dialogRel, tt.content)
			// an earlier repair's leftovers are kept
			writeRaw(t, w, dialogRel+CorruptSuffix, "earlier\n")
			msgs := parseMsgs(t, `[{"role":"user","content":"new","created_at":"2026-06-20T11:00:00","id":"n"}]`)
			res, err := w.SaveDialog(dialogRel, msgs)
			if err != nil {
				t.Fatalf("SaveDialog: %v", err)
			}
			want := &SetAside{Path: dialogRel, To: dialogRel + CorruptSuffix, Line: tt.line, Bytes: len(tt.tail)}
			if diff := cmp.Diff(want, res.SetAside); diff != "" {
				t.Errorf("SetAside (-want +got):\n%s", diff)
			}
			if !strings.Contains(res.SetAside.String(), dialogRel+CorruptSuffix) {
				t.Errorf("warning %q does not name the .corrupt file", res.SetAside)
			}
			if got := readRaw(t, w, dialogRel+CorruptSuffix); got != "earlier\n"+tt.tail+"\n" {
				t.Errorf(".corrupt = %q", got)
			}
			wantIDs := []string{"n"}
			if tt.line == 2 {
				wantIDs = []string{"a", "n"}
			}
			if diff := cmp.Diff(wantIDs, lineIDs(t, w, dialogRel)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			// Repaired once: the next call has nothing to set aside.
			res, err = w.SaveDialog(dialogRel, parseMsgs(t, `[{"role":"user","content":"more","created_at":"2026-06-20T12:00:00","id":"m"}]`))
			if err != nil || res.SetAside != nil || res.New != 1 {
				t.Fatalf("second SaveDialog = %+v, %v", res, err)
			}
			noTempFiles(t, w.Root)
		})
	}
}

// TestSaveDialogKeepsRecordWithoutNewline: a complete last record that only
// lacks its newline (written by another tool) is a message, not damage.
func TestSaveDialogKeepsRecordWithoutNewline(t *testing.T) {
	good := `{"name":"user","content":[],"role":"user","id":"a","metadata":{},"created_at":"2026-06-20T10:00:00","usage":null,"finished_at":null,"finished_reason":null,"structured_output":null,"error":null}`
	for _, content := range []string{good, good + "\n  "} {
		w := newWorkspace(t)
		writeRaw(t, w, dialogRel, content)
		res, err := w.SaveDialog(dialogRel, parseMsgs(t, `[{"role":"user","content":"b","created_at":"2026-06-20T10:01:00","id":"b"}]`))
		if err != nil || res.SetAside != nil {
			t.Fatalf("SaveDialog = %+v, %v", res, err)
		}
		if diff := cmp.Diff([]string{"a", "b"}, lineIDs(t, w, dialogRel)); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
		if w.Exists(dialogRel + CorruptSuffix) {
			t.Error("a .corrupt file was written for a complete record")
		}
	}
}

func TestRepairTail(t *testing.T) {
	w := newWorkspace(t)
	isObj := func(l []byte) bool { return json.Valid(l) && l[0] == '{' }
	if s, err := w.RepairTail("session/x/none.jsonl", isObj); s != nil || err != nil {
		t.Fatalf("missing file: %v, %v", s, err)
	}
	writeRaw(t, w, "session/x/a.jsonl", "{}\n{\"u\":")
	s, err := w.RepairTail("session/x/a.jsonl", isObj)
	if err != nil || s == nil || s.Line != 2 || s.Bytes != 5 {
		t.Fatalf("RepairTail = %+v, %v", s, err)
	}
	if got := readRaw(t, w, "session/x/a.jsonl"); got != "{}\n" {
		t.Errorf("file = %q", got)
	}
	if s, err := w.RepairTail("session/x/a.jsonl", isObj); s != nil || err != nil {
		t.Fatalf("second repair: %v, %v", s, err)
	}
	if _, err := w.RepairTail("../outside.jsonl", isObj); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("path outside: %v", err)
	}
}

func TestReadDialogMissingAndBlankLines(t *testing.T) {
	w := newWorkspace(t)
	msgs, raw, err := w.ReadDialog("session/dialog/none.jsonl")
	if err != nil || msgs != nil || raw != nil {
		t.Fatalf("missing file = %v, %q, %v", msgs, raw, err)
	}
	line := `{"name":"user","content":[],"role":"user","id":"a","metadata":{},"created_at":"2026-06-20T10:00:00","usage":null,"finished_at":null,"finished_reason":null,"structured_output":null,"error":null}`
	writeRaw(t, w, dialogRel, "\n"+line+"\n  \n")
	msgs, raw, err = w.ReadDialog(dialogRel)
	if err != nil || len(msgs) != 1 || msgs[0].ID != "a" || string(raw) != "\n"+line+"\n  \n" {
		t.Fatalf("ReadDialog = %+v, %q, %v", msgs, raw, err)
	}
	// A file not in canonical form is rewritten rather than appended to, and
	// nothing in it is lost.
	res, err := w.SaveDialog(dialogRel, parseMsgs(t, `[{"role":"user","content":"b","created_at":"2026-06-20T10:01:00","id":"b"}]`))
	if err != nil || res.New != 1 || !res.Written {
		t.Fatalf("SaveDialog = %+v, %v", res, err)
	}
	if diff := cmp.Diff([]string{line, fileLines(t, w, dialogRel)[1]}, fileLines(t, w, dialogRel)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, lineIDs(t, w, dialogRel)); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}

func TestMessageDay(t *testing.T) {
	load := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Skipf("time zone %s not available: %v", name, err)
		}
		return loc
	}
	sh := load("Asia/Shanghai")
	ny := load("America/New_York")
	tests := []struct {
		ts   string
		loc  *time.Location
		want string
		ok   bool
	}{
		// Naive stamps: the first ten characters, whatever the zone.
		{"2026-08-19T23:30:00", sh, "2026-08-19", true},
		{"2026-08-19T23:30:00.123456", ny, "2026-08-19", true},
		{"2026-08-19 23:30:00", sh, "2026-08-19", true},
		{"2026-08-19", ny, "2026-08-19", true},
		{"  2026-08-19T01:00:00  ", sh, "2026-08-19", true},
		// Aware stamps are converted.
		{"2026-08-19T16:30:00Z", sh, "2026-08-20", true},
		{"2026-08-19T15:59:59Z", sh, "2026-08-19", true},
		{"2026-08-19T16:30:00+00:00", sh, "2026-08-20", true},
		{"2026-08-19T16:30:00.123456+00:00", sh, "2026-08-20", true},
		{"2026-08-19T16:30:00+0000", sh, "2026-08-20", true},
		{"2026-08-20T01:00:00+08:00", time.UTC, "2026-08-19", true},
		{"2026-08-20T01:00:00-03:00", sh, "2026-08-20", true},
		{"2026-08-19 16:30:00Z", sh, "2026-08-20", true},
		{"2026-08-19 16:30:00+00:00", sh, "2026-08-20", true},
		{"2026-08-19 16:30:00.5+0000", sh, "2026-08-20", true},
		// New York: the offset of the target date (EST in winter, EDT in summer).
		{"2026-03-08T04:30:00Z", ny, "2026-03-07", true},      // EST: 23:30 on the 7th (EDT would give the 8th)
		{"2026-03-08T07:30:00Z", ny, "2026-03-08", true},      // after the switch
		{"2026-07-01T03:30:00Z", ny, "2026-06-30", true},      // EDT: 23:30 on June 30
		{"2026-07-01T04:30:00Z", ny, "2026-07-01", true},      // EDT: 00:30 (EST would give June 30)
		{"2026-11-01T04:30:00Z", ny, "2026-11-01", true},      // still EDT on the morning DST ends
		{"2026-11-02T04:30:00Z", ny, "2026-11-01", true},      // EST again: 23:30 on the 1st
		{"2026-01-15T04:59:59Z", ny, "2026-01-14", true},      // EST
		{"2026-01-15T05:00:00Z", ny, "2026-01-15", true},      // EST
		{"2026-03-08T03:30:00-05:00", sh, "2026-03-08", true}, // explicit offset wins over any zone rule
		// Unix times written as strings.
		{"1781921400", time.UTC, "2026-06-20", true},
		{"1781921400", ny, "2026-06-19", true},
		{"1781921400123", time.UTC, "2026-06-20", true},
		{"1781921400.5", sh, "2026-06-20", true},
		{"1787157000", sh, "2026-08-20", true}, // 2026-08-19T16:30:00Z
		// Not dates.
		{"", sh, "", false},
		{"   ", sh, "", false},
		{"yesterday", sh, "", false},
		{"2026-13-45T10:00:00", sh, "", false},
		{"2026-02-30", sh, "", false},
		{"26-08-19", sh, "", false},
		{"2026/08/19 10:00", sh, "", false},
		{"0", sh, "", false},
		{"-1781921400", sh, "", false},
		{"NaN", sh, "", false},
		{"Inf", sh, "", false},
		{"+Inf", sh, "", false},
		{"1e300", sh, "", false},
		{"300000000000", sh, "", false}, // seconds past year 9999
	}
	for _, tt := range tests {
		t.Run(tt.ts+"_"+tt.loc.String(), func(t *testing.T) {
			got, ok := MessageDay(tt.ts, tt.loc)
			if got != tt.want || ok != tt.ok {
				t.Errorf("MessageDay(%q, %s) = %q, %v; want %q, %v", tt.ts, tt.loc, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestMessageDayOfParsedNumbers checks that a numeric created_at, which
// ParseMessages stores as a UTC stamp, lands on the right local day.
func TestMessageDayOfParsedNumbers(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip(err)
	}
	m := parseOne(t, `{"role":"user","content":"x","created_at":1787157000000}`) // 2026-08-19T16:30:00Z
	if d, ok := MessageDay(m.CreatedAt, sh); !ok || d != "2026-08-20" {
		t.Errorf("MessageDay(%q) = %q, %v", m.CreatedAt, d, ok)
	}
}

func TestRenderSavedDialog(t *testing.T) {
	w := newWorkspace(t)
	msgs := parseMsgs(t, `[
		{"role":"user","name":"Alice","content":"line one\nline two","created_at":"2026-06-20T10:00:00"},
		{"role":"assistant","content":[{"type":"text","text":"see"},{"type":"tool_use","id":"t","name":"search","input":{}},{"type":"text","text":"done\n\nok"}],"created_at":"2026-06-20T10:00:05"},
		{"role":"user","content":[{"type":"data","source":{"type":"url","url":"https://example.com/a.png"}},{"type":"data","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}],"created_at":1781921400},
		{"role":"system","content":[{"type":"tool_result","id":"t","name":"search","output":"hidden"}],"created_at":"2026-06-20T10:00:06"}
	]`)
	if _, err := w.SaveDialog(dialogRel, msgs); err != nil {
		t.Fatal(err)
	}
	got := RenderDialog(readRaw(t, w, dialogRel))
	want := "[user @ 2026-06-20T02:10:00Z] [image]\n" +
		"[Alice @ 2026-06-20T10:00:00] line one line two\n" +
		"[assistant @ 2026-06-20T10:00:05] see [tool search] done  ok\n" +
		"[system @ 2026-06-20T10:00:06] \n"
	if got != want {
		t.Errorf("RenderDialog =\n%s\nwant\n%s", got, want)
	}
	res, err := w.Read(dialogRel, 2, 2)
	if err != nil || res.Text != "[Alice @ 2026-06-20T10:00:00] line one line two" || res.TotalLines != 4 {
		t.Errorf("Read line 2 = %+v, %v", res, err)
	}
}

// FuzzParseMessages checks that parsing never panics, that every message
// has an id, a role and a time, and that a saved line parses back to the
// same message.
func FuzzParseMessages(f *testing.F) {
	for _, s := range []string{
		``,
		`[]`,
		`null`,
		`{}`,
		`[{"role":"user","content":"hi"}]`,
		`[{"role":"assistant","name":"bot","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"s","input":{"q":1}}],"id":"x1"}]`,
		`[{"role":"user","content":"a","created_at":"2026-06-20T10:00:00","metadata":{"k":1}}]`,
		`[{"role":"user","content":"a","timestamp":1781921400,"metadata":{"time_created":"2026-01-01"}}]`,
		`[{"role":"user","content":"a","created_at":1781921400123}]`,
		`[{"role":"user","content":"a","created_at":"  "}]`,
		`[{"role":"system","content":null,"metadata":null,"id":null,"name":null}]`,
		`[{"role":"user","content":[{"type":"data","source":{"type":"base64","data":"AAAA"}}],"usage":{"n":1},"error":"e"}]`,
		`[{"role":"user","content":"<&>\u2028 \ud800 é 登录"}]`,
		"[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]",
		`[{"role":"user","content":"a","created_at":1e308}]`,
		`[{"role":"user","content":"a","created_at":-1}]`,
		`[{"role":"bot"}]`,
		`[{"role":"user",}]`,
		`[1, "x", null]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		msgs, err := ParseMessages(raw, sessNow)
		if err != nil {
			if !errors.Is(err, ErrMessages) {
				t.Fatalf("error %v does not wrap ErrMessages", err)
			}
			if msgs != nil {
				t.Fatalf("messages with an error: %+v", msgs)
			}
			return
		}
		for i, m := range msgs {
			if m.ID == "" || m.Role == "" || m.CreatedAt == "" || m.Name == "" {
				t.Fatalf("message %d incomplete: %+v", i, m)
			}
			line, err := m.MarshalLine()
			if err != nil {
				t.Fatalf("MarshalLine(%+v): %v", m, err)
			}
			if bytes.ContainsAny(line, "\n\r") {
				t.Fatalf("line has a line break: %q", line)
			}
			back, err := ParseMessages(append(append([]byte("["), line...), ']'), sessNow.Add(time.Hour))
			if err != nil {
				t.Fatalf("line %s does not parse back: %v", line, err)
			}
			if len(back) != 1 || back[0].ID != m.ID || back[0].Role != m.Role || back[0].Name != m.Name || back[0].CreatedAt != m.CreatedAt {
				t.Fatalf("line %s parsed back as %+v", line, back)
			}
			again, err := back[0].MarshalLine()
			if err != nil || !bytes.Equal(again, line) {
				t.Fatalf("line not stable:\n%s\n%s (%v)", line, again, err)
			}
			// What SaveDialog writes is what ReadDialog reads.
			var stored Message
			if err := json.Unmarshal(line, &stored); err != nil || stored.ID != m.ID {
				t.Fatalf("line %s does not read as a stored message: %v", line, err)
			}
			clean, err := SanitizeForSave(m).MarshalLine()
			if err != nil {
				t.Fatalf("sanitised MarshalLine: %v", err)
			}
			if _, err := ParseMessages(append(append([]byte("["), clean...), ']'), sessNow); err != nil {
				t.Fatalf("sanitised line %s does not parse: %v", clean, err)
			}
		}
	})
}
