package extractive

import (
	"strings"
	"testing"
	"time"

	"github.com/reme-dev/reme/store"
)

// exTurn is one message of a fuzzed conversation.
type exTurn struct{ role, text string }

// FuzzConversation feeds random message texts and stamps: Extract never
// panics, the card keeps its shape with a valid name, two runs agree, and
// merging the card with its own conversation changes nothing.
func FuzzConversation(f *testing.F) {
	seeds := [][4]string{
		{"hi", "Hello!", "thanks", "2026-06-20T09:00:00Z"},
		{"I want rate limiting: 100 rps, burst 200.", "Use a token bucket.", "Use Retry-After.", "2023-01-19T08:00:00"},
		{"你好", "你好！", "把登录流程重构一下，改成 OAuth2。", "2026-08-19T16:30:00+02:00"},
		{"2026年6月20日的会议", "## x\n```\ncode\n```", "nul", "1781942400"},
		{"con", "- [2026-06-20 09:00] a", "## Source\n\n- b", "garbage"},
		{strings.Repeat("word ", 200), strings.Repeat("长句子没有标点", 100), "a.b.c...", ""},
		{"\x00\xff\xfe", "\u2028\u0085", "İSTANBUL ǅungla", "-1e309"},
		{"ログイン画面のデザイン", "안녕하세요", "...", "2026-06-20"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		sh = time.FixedZone("CST", 8*3600)
	}
	f.Fuzz(func(t *testing.T, u1, a1, u2, ts string) {
		msgs := []exTurn{{"user", u1}, {"assistant", a1}, {"user", u2}, {"assistant", u1}}
		conv := exConv(msgs, ts)
		c := Conversation(conv, exLink, sh)
		exCheckShape(t, c)
		if again := Conversation(exConv(msgs, ts), exLink, sh); again != c {
			t.Fatalf("two runs differ:\n%#v\n%#v", c, again)
		}
		if m := Merge(c.Body, conv, exLink, sh); m != c.Body {
			t.Fatalf("merge with its own conversation changed the body:\n%q\nwas:\n%q", m, c.Body)
		}
		if m := Merge("", conv, exLink, sh); m != c.Body {
			t.Fatalf("merge into an empty body differs from Extract:\n%q\n%q", m, c.Body)
		}
	})
}

// FuzzMerge feeds random existing bodies: the merge never
// panics, keeps every non-blank line it was given, and a second merge of
// the same conversation changes nothing.
func FuzzMerge(f *testing.F) {
	seeds := []string{
		"",
		exEnglishBody,
		"# Title\n\ntext\n",
		"## Key statements\n- [2026-06-20 09:00] a\n  b\n## Key statements\n- c\n",
		"## Source ##\r\n[[session/dialog/abc.jsonl]]\r\n## Assistant notes\n",
		"```\n## Key statements\n```\n- x\n",
		"##\n###\n## \t\n- \n* [2026-06-20 09:00]\n",
		"## Key statements\n\n" + extNoStatements + "\n" + extNoStatements + "\n",
		"0\r",
		"0\r\r\nx\ry\r",
	}
	for _, s := range seeds {
		f.Add(s, "Use Retry-After in the 429 response.", "2026-06-20T09:20:00Z")
	}
	f.Fuzz(func(t *testing.T, body, text, ts string) {
		conv := exConv([]exTurn{{"user", text}, {"assistant", text + " Noted."}, {"user", "Second point: " + text}}, ts)
		got := Merge(body, conv, exLink, time.UTC)
		if !strings.HasSuffix(got, "\n") {
			t.Fatalf("no final newline: %q", got)
		}
		if again := Merge(got, conv, exLink, time.UTC); again != got {
			t.Fatalf("second merge changed the body:\n%q\nfirst:\n%q", again, got)
		}
		if strings.TrimSpace(body) == "" {
			return
		}
		for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
			line = strings.TrimRight(line, " \t\r\n")
			if line == "" || line == extNoStatements || line == extNoNotes {
				continue
			}
			if !strings.Contains(got, line) {
				t.Fatalf("line %q lost:\n%q", line, got)
			}
		}
	})
}

func exConv(msgs []exTurn, ts string) []store.Message {
	out := make([]store.Message, len(msgs))
	for i, m := range msgs {
		out[i] = exMsg(m.role, m.text, ts)
	}
	return out
}

// FuzzRequests: explicit requests to remember never panic, and every one
// found makes a valid entry: a known type, a file name, one-line
// description, a feedback text with its Why and How to apply lines, a due
// date that is a date.
func FuzzRequests(f *testing.F) {
	for _, s := range []string{
		"Remember that I prefer bullet answers, because long paragraphs are hard to scan.",
		"记住：我是十年 Go 后端，前端新手", "以后回答用 bullet，不要长段落。", "别忘了：接口规范看团队 wiki /api 章节",
		"Don't forget: the Q2 launch deadline is 2026-06-30.", "remember", "remember that \x00\xff", "From now on, use tabs since 2026-02-30.",
		"Please remember: " + strings.Repeat("very long ", 300), "记住 [[x]] # / \\ : *",
	} {
		f.Add(s)
	}
	types := map[string]bool{"user": true, "feedback": true, "project": true, "reference": true}
	f.Fuzz(func(t *testing.T, text string) {
		for _, r := range Requests([]store.Message{exMsg("user", text, "2026-06-22T10:00:00+08:00")}, "2026-06-22") {
			if !types[r.Type] {
				t.Fatalf("type %q", r.Type)
			}
			if err := store.ValidateName(r.Name); err != nil {
				t.Fatalf("name %q: %v", r.Name, err)
			}
			if strings.ContainsAny(r.Description, "\n\r") {
				t.Fatalf("description %q", r.Description)
			}
			if r.Type == "feedback" && (!strings.Contains(r.Content, "\nWhy: ") || !strings.Contains(r.Content, "\nHow to apply: ")) {
				t.Fatalf("feedback %q", r.Content)
			}
			if r.Due != "" {
				if _, err := store.ParseDate(r.Due); err != nil {
					t.Fatalf("due %q", r.Due)
				}
			}
		}
	})
}
