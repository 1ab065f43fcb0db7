package extractive

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reme-dev/reme/store"
)

// exMsg builds a message with one text block.
func exMsg(role, text, at string) store.Message {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return store.Message{Name: role, Role: role, CreatedAt: at, Content: []json.RawMessage{b}}
}

func exShanghai(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skipf("no zone data: %v", err)
	}
	return loc
}

const exLink = "[[session/dialog/abc.jsonl]]"

// exEnglish is a rate-limit conversation, stamps in UTC.
func exEnglish() []store.Message {
	return []store.Message{
		exMsg("user", "hi", "2026-06-20T09:13:00Z"),
		exMsg("user", "I want rate limiting on the public API:\n100 requests per second per key, burst of 200.", "2026-06-20T09:14:00Z"),
		exMsg("assistant", "Sure! A token bucket per API key fits this: refill 100 tokens per second with a capacity of 200. "+
			"Requests that find the bucket empty get HTTP 429. Tokens are kept in memory.\n\n```go\nlimiter := rate.NewLimiter(100, 200)\n```", "2026-06-20T09:15:00Z"),
		exMsg("user", "Use Retry-After in the 429 response.", "2026-06-20T09:20:00Z"),
		exMsg("assistant", "## Plan\n\nGood call. I'll set Retry-After to the seconds until a token is available.", "2026-06-20T09:21:00Z"),
		exMsg("user", "thanks!", "2026-06-20T09:22:00Z"),
		exMsg("assistant", "You're welcome!", "2026-06-20T09:22:30Z"),
	}
}

const exEnglishBody = `## Key statements

- [2026-06-20 09:14] I want rate limiting on the public API: 100 requests per second per key, burst of 200.
- [2026-06-20 09:20] Use Retry-After in the 429 response.

## Assistant notes

- [2026-06-20 09:15] A token bucket per API key fits this: refill 100 tokens per second with a capacity of 200. Requests that find the bucket empty get HTTP 429.
- [2026-06-20 09:21] Good call. I'll set Retry-After to the seconds until a token is available.

## Source

Extracted without a model from [[session/dialog/abc.jsonl]].
`

func TestConversation(t *testing.T) {
	sh := exShanghai(t)
	long := strings.Repeat("The cache must survive a restart of the worker pool. ", 8) +
		strings.Repeat("Keep the eviction order stable across nodes ", 10) + "END"
	tests := []struct {
		name     string
		msgs     []store.Message
		loc      *time.Location
		wantName string // "" checks the hash fallback
		wantDesc string
		wantBody string // "" skips the comparison
		contains []string
		absent   []string
	}{
		{
			name:     "english",
			msgs:     exEnglish(),
			loc:      time.UTC,
			wantName: "rate-limiting-public-api",
			wantDesc: "I want rate limiting on the public API: 100 requests per second per key, burst of 200.",
			wantBody: exEnglishBody,
		},
		{
			name: "chinese",
			msgs: []store.Message{
				exMsg("user", "你好", "2026-06-20T10:00:00+08:00"),
				exMsg("assistant", "你好！有什么可以帮你？", "2026-06-20T10:00:05+08:00"),
				exMsg("user", "我们需要把登录流程重构一下，改成 OAuth2 + PKCE。旧的 session cookie 方案保留到 7 月底。", "2026-06-20T10:01:00+08:00"),
				exMsg("assistant", "好的。建议先把授权码流程抽成独立的服务，再逐步迁移现有客户端。", "2026-06-20T10:02:00+08:00"),
				exMsg("user", "好的，谢谢", "2026-06-20T10:03:00+08:00"),
			},
			loc:      sh,
			wantName: "登录流程重构",
			wantDesc: "我们需要把登录流程重构一下，改成 OAuth2 + PKCE。旧的 session cookie 方案保留到 7 月底。",
			wantBody: "## Key statements\n\n" +
				"- [2026-06-20 10:01] 我们需要把登录流程重构一下，改成 OAuth2 + PKCE。旧的 session cookie 方案保留到 7 月底。\n\n" +
				"## Assistant notes\n\n" +
				"- [2026-06-20 10:02] 建议先把授权码流程抽成独立的服务，再逐步迁移现有客户端。\n\n" +
				"## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl]].\n",
		},
		{
			name: "small talk only",
			msgs: []store.Message{
				exMsg("user", "hi", "2026-06-20T09:00:00Z"),
				exMsg("assistant", "Hello! How can I help you today?", "2026-06-20T09:00:01Z"),
				exMsg("user", "ok thanks, bye 👋", "2026-06-20T09:01:00Z"),
				exMsg("user", "谢谢！", "2026-06-20T09:01:30Z"),
			},
			loc:      time.UTC,
			wantDesc: "hi",
			wantBody: "## Key statements\n\n" + extNoStatements + "\n\n## Assistant notes\n\n" + extNoNotes +
				"\n\n## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl]].\n",
		},
		{
			name: "historical import, naive times as given",
			msgs: []store.Message{
				exMsg("user", "Jon lost his job today.", "2023-01-19T08:00:00"),
				exMsg("assistant", "I am sorry to hear that.", "2023-01-19T08:01:00"),
				exMsg("user", "He starts at the bakery on Monday.", "2023-01-19 08:05:30.123456"),
			},
			loc:      sh,
			wantName: "jon-lost-job-starts",
			wantDesc: "Jon lost his job today.",
			wantBody: "## Key statements\n\n" +
				"- [2023-01-19 08:00] Jon lost his job today.\n" +
				"- [2023-01-19 08:05] He starts at the bakery on Monday.\n\n" +
				"## Assistant notes\n\n- [2023-01-19 08:01] I am sorry to hear that.\n\n" +
				"## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl]].\n",
		},
		{
			name: "zone-aware times converted to Asia/Shanghai",
			msgs: []store.Message{
				exMsg("user", "Deploy the billing service behind the new gateway.", "2026-08-19T16:30:00Z"),
				exMsg("user", "Billing needs two replicas.", "2026-08-19T20:15:00+02:00"),
				exMsg("user", "Gateway timeout is 30s.", "whenever"),
				exMsg("user", "Billing alerts go to #payments.", "2026-08-20"),
			},
			loc:      sh,
			wantName: "billing-gateway",
			contains: []string{
				"- [2026-08-20 00:30] Deploy the billing service behind the new gateway.\n",
				"- [2026-08-20 02:15] Billing needs two replicas.\n",
				"- Gateway timeout is 30s.\n",
				"- [2026-08-20] Billing alerts go to #payments.\n",
			},
		},
		{
			name:     "very long message cut at a sentence",
			msgs:     []store.Message{exMsg("user", long, "2026-06-20T09:00:00Z")},
			loc:      time.UTC,
			wantName: "eviction-order-stable-nodes",
			wantDesc: extCutWords(long, extMaxDescription),
			contains: []string{"- [2026-06-20 09:00] " + strings.Repeat("The cache must survive a restart of the worker pool. ", 8) + "…\n"},
			absent:   []string{"END"},
		},
		{
			name: "greeting clause dropped from the description, kept in the statement",
			msgs: []store.Message{
				exMsg("user", "Hello! Please pin the Postgres image to 16.3 in staging.", "2026-06-20T09:00:00Z"),
				exMsg("user", "Postgres backups run at 02:00.", "2026-06-20T09:05:00Z"),
			},
			loc:      time.UTC,
			wantName: "postgres-pin-image-staging",
			wantDesc: "Please pin the Postgres image to 16.3 in staging.",
			contains: []string{"- [2026-06-20 09:00] Hello! Please pin the Postgres image to 16.3 in staging.\n"},
		},
		{
			name: "repeated statement kept once, system and tool text ignored",
			msgs: []store.Message{
				exMsg("system", "You are a helpful assistant.", "2026-06-20T09:00:00Z"),
				exMsg("user", "Rotate the signing keys every 90 days.", "2026-06-20T09:01:00Z"),
				exMsg("user", "rotate the signing keys every 90 days", "2026-06-20T09:02:00Z"),
				{Role: "user", CreatedAt: "2026-06-20T09:03:00Z", Content: []json.RawMessage{
					json.RawMessage(`{"type":"tool_result","text":"secret output"}`),
					json.RawMessage(`{"type":"text","text":"Store them in Vault."}`),
				}},
			},
			loc:      time.UTC,
			wantName: "rotate-signing-keys-store",
			wantBody: "## Key statements\n\n" +
				"- [2026-06-20 09:01] Rotate the signing keys every 90 days.\n" +
				"- [2026-06-20 09:03] Store them in Vault.\n\n" +
				"## Assistant notes\n\n" + extNoNotes + "\n\n" +
				"## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl]].\n",
		},
	}
	hashName := regexp.MustCompile(`^conversation-[0-9a-f]{8}$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Conversation(tt.msgs, exLink, tt.loc)
			if tt.wantName == "" {
				if !hashName.MatchString(c.Name) {
					t.Errorf("Name = %q, want the conversation-<hash> fallback", c.Name)
				}
			} else if c.Name != tt.wantName {
				t.Errorf("Name = %q, want %q", c.Name, tt.wantName)
			}
			if err := store.ValidateName(c.Name); err != nil {
				t.Errorf("Name %q: %v", c.Name, err)
			}
			if tt.wantDesc != "" && c.Description != tt.wantDesc {
				t.Errorf("Description = %q, want %q", c.Description, tt.wantDesc)
			}
			if tt.wantBody != "" && c.Body != tt.wantBody {
				t.Errorf("Body:\n%s\nwant:\n%s", c.Body, tt.wantBody)
			}
			for _, s := range tt.contains {
				if !strings.Contains(c.Body, s) {
					t.Errorf("Body lacks %q:\n%s", s, c.Body)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(c.Body, s) {
					t.Errorf("Body has %q:\n%s", s, c.Body)
				}
			}
			exCheckShape(t, c)
			if got, want := Substantive(tt.msgs), tt.name != "small talk only"; got != want {
				t.Errorf("Substantive = %v, want %v", got, want)
			}
		})
	}
}

// exCheckShape checks what every card must satisfy.
func exCheckShape(t *testing.T, c Card) {
	t.Helper()
	if err := store.ValidateName(c.Name); err != nil || c.Name == "" {
		t.Errorf("invalid name %q: %v", c.Name, err)
	}
	if n := utf8.RuneCountInString(c.Name); n > extMaxName {
		t.Errorf("name %q has %d runes", c.Name, n)
	}
	if regexp.MustCompile(`\d{4}-\d{2}-\d{2}`).MatchString(c.Name) {
		t.Errorf("name %q holds a date", c.Name)
	}
	if c.Description == "" || strings.ContainsAny(c.Description, "\n\r") || utf8.RuneCountInString(c.Description) > extMaxDescription {
		t.Errorf("bad description %q", c.Description)
	}
	i1 := strings.Index(c.Body, "## Key statements\n\n")
	i2 := strings.Index(c.Body, "\n\n## Assistant notes\n\n")
	i3 := strings.Index(c.Body, "\n\n## Source\n\nExtracted without a model")
	if i1 != 0 || i2 < 0 || i3 < i2 || !strings.HasSuffix(c.Body, ".\n") || strings.HasSuffix(c.Body, "\n\n") {
		t.Errorf("body out of shape:\n%s", c.Body)
	}
	if strings.Count(c.Body, "\n## ") != 2 {
		t.Errorf("body has extra headings:\n%s", c.Body)
	}
}

func TestExtractLongStatement(t *testing.T) {
	sentence := "Partition the events table by month and keep 13 partitions online. "
	long := strings.Repeat(sentence, 12)
	c := Conversation([]store.Message{exMsg("user", long, "2026-06-20T09:00:00Z")}, exLink, time.UTC)
	var stmt string
	for _, l := range strings.Split(c.Body, "\n") {
		if s, ok := strings.CutPrefix(l, "- [2026-06-20 09:00] "); ok {
			stmt = s
		}
	}
	if n := utf8.RuneCountInString(stmt); n > extMaxStatement || n < extMaxStatement/2 {
		t.Fatalf("statement has %d runes: %q", n, stmt)
	}
	head, ok := strings.CutSuffix(stmt, " …")
	if !ok || !strings.HasPrefix(long, head) || !strings.HasSuffix(head, "online.") {
		t.Errorf("statement not cut after a sentence with \" …\": %q", stmt)
	}
	// CJK text without spaces is cut after 。 and gets a bare "…".
	zh := strings.Repeat("把每个月的事件表单独分区并保留十三个分区在线。", 30)
	c = Conversation([]store.Message{exMsg("user", zh, "")}, exLink, time.UTC)
	line := strings.SplitN(c.Body, "\n", 4)[2]
	if !strings.HasPrefix(line, "- 把每个月") || !strings.HasSuffix(line, "在线。…") || utf8.RuneCountInString(line) > extMaxStatement+2 {
		t.Errorf("CJK statement: %q", line)
	}
	if !strings.HasSuffix(c.Description, "…") || utf8.RuneCountInString(c.Description) > extMaxDescription {
		t.Errorf("CJK description: %q", c.Description)
	}
}

func TestExtractDeterministic(t *testing.T) {
	sh := exShanghai(t)
	for _, msgs := range [][]store.Message{exEnglish(), nil, {exMsg("user", "你好", "")}} {
		a := Conversation(msgs, exLink, sh)
		cp := append([]store.Message(nil), msgs...)
		b := Conversation(cp, exLink, sh)
		if a != b {
			t.Errorf("two runs differ:\n%#v\n%#v", a, b)
		}
		if m := Merge(a.Body, msgs, exLink, sh); m != a.Body {
			t.Errorf("merging a card with its own conversation changed it:\n%s\nwas:\n%s", m, a.Body)
		}
	}
	// The fallback name depends on the messages.
	x := Conversation([]store.Message{exMsg("user", "hi", "2026-06-20T09:00:00Z")}, exLink, time.UTC)
	y := Conversation([]store.Message{exMsg("user", "hello", "2026-06-20T09:00:00Z")}, exLink, time.UTC)
	if x.Name == y.Name {
		t.Errorf("different conversations share the fallback name %q", x.Name)
	}
}

func TestExtractNoLink(t *testing.T) {
	c := Conversation(nil, "", nil)
	if !strings.HasSuffix(c.Body, "## Source\n\nExtracted without a model.\n") {
		t.Errorf("body without a link:\n%s", c.Body)
	}
	if c.Description != "Conversation without text." {
		t.Errorf("Description = %q", c.Description)
	}
	exCheckShape(t, c)
}

func TestExtractName(t *testing.T) {
	tests := []struct {
		name  string
		texts []string
		want  string
	}{
		{"frequency beats first appearance", []string{"Add a cache in front of the search service.", "The cache needs a TTL; cache misses go to search."}, "cache-search"},
		{"minor terms dropped", []string{"Redis redis REDIS cluster cluster failover.", "Redis sentinel?"}, "redis-cluster"},
		{"plurals counted together", []string{"Webhook retries.", "Each webhook fails twice, webhooks retry."}, "webhook-retries"},
		{"numbers and stop words dropped", []string{"Is it 2026-06-20 or 2026-06-21 for the 3.2 release?"}, "release"},
		{"reserved device name falls back", []string{"nul"}, ""},
		{"CJK date units dropped", []string{"2026年6月20日的发布会议纪要整理一下"}, "发布会议纪要整理"},
		{"CJK fillers and particles", []string{"请帮我把数据库迁移脚本检查一下吧"}, "数据库迁移脚本检查"},
		{"CJK with latin words", []string{"给 API 加限流，每个 key 每秒 100 个请求"}, "api-加限流"},
		{"long CJK run cut before a particle", []string{"部署新版本网关服务并且回滚旧的配置文件和证书"}, "部署新版本网关服务"},
		{"CJK question words dropped", []string{"如何配置 nginx 反向代理？"}, "配置-nginx-反向代理"},
		{"japanese", []string{"ログイン画面のデザインを変更してください"}, "ログイン画面のデザイン"},
		{"mostly English with a CJK word", []string{"Translate the onboarding guide, keep 登录 as is."}, "translate-onboarding-guide"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msgs []store.Message
			for _, s := range tt.texts {
				msgs = append(msgs, exMsg("user", s, "2026-06-20T09:00:00Z"))
			}
			got := extName(msgs)
			want := tt.want
			if want == "" {
				want = extFallbackName(msgs)
			}
			if got != want {
				t.Errorf("extName = %q, want %q", got, want)
			}
			if err := store.ValidateName(got); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestSmallTalk(t *testing.T) {
	for _, s := range []string{"hi", "Hello!", "Thanks a lot :)", "ok", "OK, got it.", "thank you so much!", "👍", "...",
		"你好", "好的", "谢谢！", "好的，谢谢", "嗯嗯", "Sure, happy to help.", "You’re welcome!", "Good morning everyone"} {
		if !extIsSmallTalk(s) {
			t.Errorf("%q is small talk", s)
		}
	}
	for _, s := range []string{"hi, the build is red", "42", "ok use Redis", "你好，登录失败了", "好的，用 Redis", "thanks for the k8s fix", "No cache"} {
		if extIsSmallTalk(s) {
			t.Errorf("%q is not small talk", s)
		}
	}
}

func TestStamp(t *testing.T) {
	sh := exShanghai(t)
	tests := []struct{ in, want string }{
		{"2026-08-19T16:30:00Z", "2026-08-20 00:30"},
		{"2026-08-19T16:30:00.123456+00:00", "2026-08-20 00:30"},
		{"2026-08-19 16:30:00+0000", "2026-08-20 00:30"},
		{"2026-06-20T09:14:00+08:00", "2026-06-20 09:14"},
		{"2023-01-19T08:00:00", "2023-01-19 08:00"},
		{"2023-01-19T08:00:00.000000", "2023-01-19 08:00"},
		{"2023-01-19 23:59", "2023-01-19 23:59"},
		{"2023-01-19", "2023-01-19"},
		{"1781942400", "2026-06-20 16:00"},
		{"1781942400000", "2026-06-20 16:00"},
		{"", ""},
		{"yesterday", ""},
		{"2023-13-40T00:00:00", ""},
		{"-5", ""},
	}
	for _, tt := range tests {
		if got := extStamp(tt.in, sh); got != tt.want {
			t.Errorf("extStamp(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMerge(t *testing.T) {
	existing := `## Key statements

- [2026-06-20 09:14] I want rate limiting on the public API: 100 requests per second per key, burst of 200.
- [2026-06-20 09:30] Log every rejected request with the key id.

## Decisions (by hand)

We chose token buckets over sliding windows.
- not a statement

## Assistant notes

- [2026-06-20 09:15] A token bucket per API key fits this: refill 100 tokens per second with a capacity of 200. Requests that find the bucket empty get HTTP 429.

## Source

Extracted without a model from [[session/dialog/abc.jsonl]].
`
	msgs := append(exEnglish(),
		exMsg("user", "Exempt internal services from the limit.", "2026-06-20T09:40:00Z"),
		exMsg("user", "i want rate limiting on the public API: 100 requests per second per key, burst of 200", "2026-06-20T09:41:00Z"),
	)
	want := `## Key statements

- [2026-06-20 09:14] I want rate limiting on the public API: 100 requests per second per key, burst of 200.
- [2026-06-20 09:20] Use Retry-After in the 429 response.
- [2026-06-20 09:30] Log every rejected request with the key id.
- [2026-06-20 09:40] Exempt internal services from the limit.

## Decisions (by hand)

We chose token buckets over sliding windows.
- not a statement

## Assistant notes

- [2026-06-20 09:15] A token bucket per API key fits this: refill 100 tokens per second with a capacity of 200. Requests that find the bucket empty get HTTP 429.
- [2026-06-20 09:21] Good call. I'll set Retry-After to the seconds until a token is available.

## Source

Extracted without a model from [[session/dialog/abc.jsonl]].
`
	got := Merge(existing, msgs, exLink, time.UTC)
	if got != want {
		t.Fatalf("merged body:\n%s\nwant:\n%s", got, want)
	}
	if again := Merge(got, msgs, exLink, time.UTC); again != got {
		t.Errorf("second merge changed the body:\n%s", again)
	}
}

func TestMergeCases(t *testing.T) {
	one := []store.Message{exMsg("user", "Ship the CLI as one static binary.", "2026-06-20T10:00:00Z")}
	tests := []struct {
		name     string
		existing string
		msgs     []store.Message
		link     string
		want     string
	}{
		{
			name:     "empty body becomes a fresh card",
			existing: " \n",
			msgs:     exEnglish(),
			link:     exLink,
			want:     exEnglishBody,
		},
		{
			name:     "sections missing from a hand-written body are appended in order",
			existing: "# Release\n\nNotes written by hand.\n",
			msgs:     one,
			link:     exLink,
			want: "# Release\n\nNotes written by hand.\n\n## Key statements\n\n- [2026-06-20 10:00] Ship the CLI as one static binary.\n\n" +
				"## Assistant notes\n\n" + extNoNotes + "\n\n## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl]].\n",
		},
		{
			name:     "missing key statements go before the notes",
			existing: "Preamble.\n\n## Assistant notes\n\n- Use it.\n\n## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl|the chat]].\n",
			msgs:     one,
			link:     exLink,
			want: "Preamble.\n\n## Key statements\n\n- [2026-06-20 10:00] Ship the CLI as one static binary.\n\n" +
				"## Assistant notes\n\n- Use it.\n\n## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl|the chat]].\n",
		},
		{
			name: "placeholder replaced by the first statement",
			existing: "## Key statements\n\n" + extNoStatements + "\n\n## Assistant notes\n\n" + extNoNotes +
				"\n\n## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl]].\n",
			msgs: one,
			link: exLink,
			want: Conversation(one, exLink, time.UTC).Body,
		},
		{
			name: "hand edits: CRLF, untimed and starred bullets, continuation lines, another link",
			existing: "Intro line.\r\n\r\n## key statements ##\r\n\r\n* [2026-06-20 11:00] Use SQLite\r\n  with WAL.\r\n- untimed note by hand\r\n" +
				"- [2026-06-20 08:00T] odd stamp\r\n\r\n## Source\r\n\r\nfrom the old chat\r\n",
			msgs: []store.Message{
				exMsg("user", "Use SQLite with WAL.", "2026-06-20T09:00:00Z"),
				exMsg("user", "Start with the schema.", "2026-06-20T09:30:00Z"),
				exMsg("user", "Then benchmark it.", "2026-06-20T12:00:00Z"),
			},
			link: "[[session/dialog/new.jsonl]]",
			want: "Intro line.\n\n## key statements ##\n\n- [2026-06-20 09:30] Start with the schema.\n* [2026-06-20 11:00] Use SQLite\n  with WAL.\n" +
				"- untimed note by hand\n- [2026-06-20 08:00T] odd stamp\n- [2026-06-20 12:00] Then benchmark it.\n\n## Assistant notes\n\n" + extNoNotes + "\n\n" +
				"## Source\n\nfrom the old chat\n\nExtracted without a model from [[session/dialog/new.jsonl]].\n",
		},
		{
			name:     "assistant notes topped up to three",
			existing: "## Key statements\n\n- Build it.\n\n## Assistant notes\n\n- One.\n- Two.\n\n## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl]].\n",
			msgs: []store.Message{
				exMsg("assistant", "Three is a fine number.", ""),
				exMsg("assistant", "Four is one too many.", ""),
			},
			link: exLink,
			want: "## Key statements\n\n- Build it.\n\n## Assistant notes\n\n- One.\n- Two.\n- Three is a fine number.\n\n## Source\n\nExtracted without a model from [[session/dialog/abc.jsonl]].\n",
		},
		{
			name:     "nothing new leaves hand formatting alone",
			existing: "## Key statements\n- Ship the CLI as one static binary.\n## Assistant notes\n## Source\nExtracted without a model from [[session/dialog/abc.jsonl]].",
			msgs:     one,
			link:     exLink,
			want:     "## Key statements\n- Ship the CLI as one static binary.\n## Assistant notes\n## Source\nExtracted without a model from [[session/dialog/abc.jsonl]].\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(tt.existing, tt.msgs, tt.link, time.UTC)
			if got != tt.want {
				t.Fatalf("merged:\n%q\nwant:\n%q", got, tt.want)
			}
			if again := Merge(got, tt.msgs, tt.link, time.UTC); again != got {
				t.Errorf("second merge changed the body:\n%q", again)
			}
		})
	}
}
