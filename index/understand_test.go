package index

import (
	"testing"
	"time"
)

func TestUnderstandDates(t *testing.T) {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	// Wednesday 2026-06-24, 01:30 in Shanghai (still the 23rd in UTC).
	now := time.Date(2026, 6, 23, 17, 30, 0, 0, time.UTC).In(loc)
	tests := []struct {
		q, rest, start, end string
	}{
		{"what did we decide yesterday about the login flow", "what did we decide about the login flow", "2026-06-23", "2026-06-23"},
		{"today", "", "2026-06-24", "2026-06-24"},
		{"the day before yesterday", "", "2026-06-22", "2026-06-22"},
		{"deploy last week", "deploy", "2026-06-15", "2026-06-21"},
		{"this week's incidents", "'s incidents", "2026-06-22", "2026-06-24"},
		{"in the last 3 days", "", "2026-06-22", "2026-06-24"},
		{"the past week", "", "2026-06-18", "2026-06-24"},
		{"2 weeks ago", "", "2026-06-08", "2026-06-14"},
		{"three days ago", "", "2026-06-21", "2026-06-21"},
		{"last month", "", "2026-05-01", "2026-05-31"},
		{"this month", "", "2026-06-01", "2026-06-24"},
		{"last year", "", "2025-01-01", "2025-12-31"},
		{"in May 2026 the gateway", "the gateway", "2026-05-01", "2026-05-31"},
		{"what happened in May", "what happened", "2026-05-01", "2026-05-31"},
		{"in December", "", "2025-12-01", "2025-12-31"},
		{"May 3rd, 2025 release", "release", "2025-05-03", "2025-05-03"},
		{"3 May deploy", "deploy", "2026-05-03", "2026-05-03"},
		{"on 2026-02-28", "on", "2026-02-28", "2026-02-28"},
		{"2026-02", "", "2026-02-01", "2026-02-28"},
		{"on Monday", "", "2026-06-22", "2026-06-22"},
		{"last Wednesday", "", "2026-06-17", "2026-06-17"},
		{"昨天的会议", "的会议", "2026-06-23", "2026-06-23"},
		{"前天", "", "2026-06-22", "2026-06-22"},
		{"上周部署", "部署", "2026-06-15", "2026-06-21"},
		{"上周五", "", "2026-06-19", "2026-06-19"},
		{"本周", "", "2026-06-22", "2026-06-24"},
		{"三天前", "", "2026-06-21", "2026-06-21"},
		{"两周前", "", "2026-06-08", "2026-06-14"},
		{"上个月", "", "2026-05-01", "2026-05-31"},
		{"2026年5月3日", "", "2026-05-03", "2026-05-03"},
		{"2025年12月", "", "2025-12-01", "2025-12-31"},
		{"5月的周报", "的周报", "2026-05-01", "2026-05-31"},
		{"周一的会", "的会", "2026-06-22", "2026-06-22"},
		{"去年", "", "2025-01-01", "2025-12-31"},
	}
	for _, tt := range tests {
		rest, dr := understandDates(tt.q, now)
		if dr == nil {
			t.Errorf("%q: no date understood", tt.q)
			continue
		}
		if dr.Start != tt.start || dr.End != tt.end || rest != tt.rest {
			t.Errorf("%q: got %q %s..%s, want %q %s..%s", tt.q, rest, dr.Start, dr.End, tt.rest, tt.start, tt.end)
		}
	}
	for _, q := range []string{"may I see the login notes", "march of progress", "2026-13-01", "rate limit", "Sunday brunch ideas", "2月30日"} {
		if rest, dr := understandDates(q, now); dr != nil {
			t.Errorf("%q: understood %+v (rest %q), want no date", q, dr, rest)
		}
	}
}

func FuzzUnderstandDates(f *testing.F) {
	for _, s := range []string{"last week", "上周五", "in May 2026", "99 days ago", "2026-99-99", "十二天前"} {
		f.Add(s)
	}
	now := time.Date(2026, 6, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, q string) {
		rest, dr := understandDates(q, now)
		if dr == nil {
			if rest != q {
				t.Fatalf("%q: changed to %q without a date", q, rest)
			}
			return
		}
		if dr.Start > dr.End {
			t.Fatalf("%q: start %s after end %s", q, dr.Start, dr.End)
		}
		if _, err := time.Parse(time.DateOnly, dr.Start); err != nil {
			t.Fatalf("%q: start %q", q, dr.Start)
		}
	})
}
