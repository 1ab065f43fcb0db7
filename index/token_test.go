package index

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPorterStem(t *testing.T) {
	// From Porter's paper and the reference vocabulary.
	tests := map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor", "sing": "sing",
		"conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop", "tanned": "tan",
		"falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file",
		"happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit", "rational": "ration",
		"valenci": "valenc", "hesitanci": "hesit", "digitizer": "digit", "conformabli": "conform",
		"radicalli": "radic", "differentli": "differ", "vileli": "vile", "analogousli": "analog",
		"vietnamization": "vietnam", "predication": "predic", "operator": "oper", "feudalism": "feudal",
		"decisiveness": "decis", "hopefulness": "hope", "callousness": "callous", "formaliti": "formal",
		"sensitiviti": "sensit", "sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form",
		"formalize": "formal", "electriciti": "electr", "electrical": "electr", "hopeful": "hope",
		"goodness": "good", "revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
		"gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens", "irritant": "irrit",
		"replacement": "replac", "adjustment": "adjust", "dependent": "depend", "adoption": "adopt",
		"homologou": "homolog", "communism": "commun", "activate": "activ", "angulariti": "angular",
		"homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler", "probate": "probat",
		"rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll", "generalizations": "gener",
		"oscillators": "oscil", "decided": "decid", "decision": "decis", "deployment": "deploy",
		"adopted": "adopt", "adopting": "adopt", "is": "is", "as": "as", "a": "a",
	}
	for in, want := range tests {
		if got := string(porterStem([]byte(in))); got != want {
			t.Errorf("porterStem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokenizerFTSText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain ascii", "plain ascii"},
		{"登录流程", "登录 录流 流程 程"},
		{"使用OAuth登录", "使用 用 oauth 登录 录"},
		{"カタカナ", "カタ タカ カナ ナ"},
		{"한국어 텍스트", "한국 국어 어 텍스 스트 트"},
		{"流程。时间", "流程 程 时间 间"},
		{"naïve café ÉCOLE", "naiv cafe ecol"},
		{"The Caroline's dogs don't run; it’s o'Brien's", "carolin dog run obrien"},
		{"rotate_chunk.sql recall@10 p99 v1.2", "rotat chunk sql recal 10 p99 v1 2"},
		{"x " + strings.Repeat("a", 80) + " y", "x y"},
		{"Привет МИР", "привет мир"},
	}
	var tk tokenizer
	for _, tt := range tests {
		got, n := tk.ftsText(nil, tt.in)
		if string(got) != tt.want {
			t.Errorf("ftsText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if want := len(strings.Fields(tt.want)); n != want {
			t.Errorf("ftsText(%q) counted %d tokens, want %d", tt.in, n, want)
		}
	}
}

// FTS5's ascii tokenizer splits on ASCII punctuation and spaces only: a
// token with either would become two in the index.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"login flow", "don't o'brien’s", "登录流程", "ÉCOLE naïve", "a\x00b", "\xff\xfe", "x' 'y", "ß ǅ ﬁ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var tk tokenizer
		tk.each(s, func(tok []byte, _, _ bool) {
			if len(tok) == 0 || len(tok) > maxTokenBytes {
				t.Fatalf("%q: token %q", s, tok)
			}
			for _, c := range tok {
				if c < utf8.RuneSelf && !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
					t.Fatalf("%q: token %q has %q", s, tok, c)
				}
			}
		})
	})
}
