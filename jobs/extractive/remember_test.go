package extractive

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/store"
)

func TestRequests(t *testing.T) {
	msg := func(role, text string) store.Message { return exMsg(role, text, "2026-06-22T10:00:00+08:00") }
	tests := []struct {
		name string
		msgs []store.Message
		want []Remembered
	}{
		{"preference with a reason", []store.Message{msg("user", "Hi! Remember that I prefer bullet answers, because long paragraphs are hard to scan.")},
			[]Remembered{{Type: "feedback", Name: "prefer-bullet-answers",
				Description: "I prefer bullet answers, because long paragraphs are hard to scan",
				Content:     "I prefer bullet answers\n\nWhy: Long paragraphs are hard to scan\nHow to apply: I prefer bullet answers\n"}}},
		{"chinese identity", []store.Message{msg("user", "记住：我是十年 Go 后端，前端新手")},
			[]Remembered{{Type: "user", Name: "我是十年-go-后端",
				Description: "我是十年 Go 后端，前端新手", Content: "我是十年 Go 后端，前端新手\n"}}},
		{"chinese from now on", []store.Message{msg("user", "以后回答用 bullet，不要长段落。")},
			[]Remembered{{Type: "feedback", Name: "以后回答用-bullet",
				Description: "以后回答用 bullet，不要长段落",
				Content:     "以后回答用 bullet，不要长段落\n\nWhy: The user asked to remember it (2026-06-22).\nHow to apply: 以后回答用 bullet，不要长段落\n"}}},
		{"milestone", []store.Message{msg("user", "Don't forget: the Q2 launch deadline is 2026-06-30.")},
			[]Remembered{{Type: "project", Name: "launch-deadline",
				Description: "the Q2 launch deadline is 2026-06-30", Content: "The Q2 launch deadline is 2026-06-30\n", Due: "2026-06-30"}}},
		{"where to look", []store.Message{msg("user", "别忘了：接口规范看团队 wiki /api 章节")},
			[]Remembered{{Type: "reference", Name: "接口规范看团队-wiki-api-章节",
				Description: "接口规范看团队 wiki /api 章节", Content: "接口规范看团队 wiki /api 章节\n"}}},
		{"not a request", []store.Message{
			msg("user", "Do you remember the deploy window?"),
			msg("user", "I remember that meeting."),
			msg("user", "我记得上次说过"),
			msg("assistant", "Remember that I am a bot."),
			msg("user", "remember"),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Requests(tt.msgs, "2026-06-22")
			for i := range got {
				got[i].MessageID = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
