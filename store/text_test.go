package store

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
)

func gbk(t testing.TB, s string) []byte {
	t.Helper()
	b, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeText(t *testing.T) {
	gbkBytes := gbk(t, "登录流程")
	if bytes.Equal(gbkBytes, []byte("登录流程")) {
		t.Fatal("GBK fixture is identical to UTF-8")
	}
	tests := []struct {
		name string
		in   []byte
		want string
		enc  Encoding
	}{
		{"empty", nil, "", UTF8},
		{"ascii", []byte("hello\n"), "hello\n", UTF8},
		{"utf8 chinese", []byte("登录流程\n"), "登录流程\n", UTF8},
		{"bom", []byte("\xEF\xBB\xBF---\nname: x\n---\n"), "---\nname: x\n---\n", UTF8BOM},
		{"bom only", []byte("\xEF\xBB\xBF"), "", UTF8BOM},
		{"bom chinese", append([]byte("\xEF\xBB\xBF"), "登录"...), "登录", UTF8BOM},
		{"gbk", gbkBytes, "登录流程", GBK},
		{"gbk note", gbk(t, "---\nname: 登录\n---\n\n正文\n"), "---\nname: 登录\n---\n\n正文\n", GBK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, enc := DecodeText(tt.in)
			if got != tt.want || enc != tt.enc {
				t.Fatalf("DecodeText = %q, %v; want %q, %v", got, enc, tt.want, tt.enc)
			}
			back, err := EncodeText(got, enc)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, tt.in) {
				t.Fatalf("EncodeText round trip = %x, want %x", back, tt.in)
			}
		})
	}
}

// TestDecodeTextCutTail: a UTF-8 file cut in the middle of its last
// character is still UTF-8 (it used to decode as GBK mojibake), and bytes
// that are neither UTF-8 nor GBK are never passed off as GBK.
func TestDecodeTextCutTail(t *testing.T) {
	full := []byte(strings.Repeat("中文笔记的内容。", 40))
	for cut := 1; cut < 3; cut++ {
		b := full[:len(full)-cut]
		got, enc := DecodeText(b)
		if enc != UTF8 || got != string(full[:len(full)-3]) {
			t.Errorf("cut %d byte(s): %v %q…", cut, enc, TruncateRunes(got, 10, ""))
		}
	}
	// a bad byte in the middle is not a cut tail
	mid := append(append([]byte("中文"), 0xE4), "笔记"...)
	if got, enc := DecodeText(mid); enc == UTF8 && !strings.ContainsRune(got, utf8.RuneError) {
		t.Errorf("broken middle decoded as clean UTF-8: %q", got)
	}
	// neither UTF-8 nor GBK: shown with U+FFFD, not claimed as GBK
	if got, enc := DecodeText([]byte{'a', 0xFF, 0xFF, 'b'}); enc != UTF8 || got != "a\uFFFD\uFFFDb" && got != "a\uFFFDb" {
		t.Errorf("garbage = %q, %v", got, enc)
	}
}

func TestEncodeTextGBKUnencodable(t *testing.T) {
	// An emoji has no GBK code: the edit must fail, not corrupt the file.
	if _, err := EncodeText("登录 😀", GBK); err == nil {
		t.Fatal("EncodeText of an emoji as GBK succeeded")
	}
}

func TestEncodingString(t *testing.T) {
	for enc, want := range map[Encoding]string{UTF8: "utf-8", UTF8BOM: "utf-8-sig", GBK: "gbk"} {
		if enc.String() != want {
			t.Errorf("%d.String() = %q, want %q", enc, enc.String(), want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s          string
		n          int
		runes      string // TruncateRunes(s, n, "…")
		bytePrefix string // TruncateBytes(s, n)
	}{
		{"hello", 10, "hello", "hello"},
		{"hello", 5, "hello", "hello"},
		{"hello", 3, "hel…", "hel"},
		{"中文笔记", 2, "中文…", ""},
		{"中文笔记", 4, "中文笔记", "中"},
		{"中文笔记", 7, "中文笔记", "中文"},
		{"a中", 2, "a中", "a"},
		{"abc", 0, "…", ""},
		{"", 3, "", ""},
	}
	for _, tt := range tests {
		if got := TruncateRunes(tt.s, tt.n, "…"); got != tt.runes {
			t.Errorf("TruncateRunes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.runes)
		}
		got := TruncateBytes(tt.s, tt.n)
		if got != tt.bytePrefix {
			t.Errorf("TruncateBytes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.bytePrefix)
		}
		if !utf8.ValidString(got) {
			t.Errorf("TruncateBytes(%q, %d) split a character", tt.s, tt.n)
		}
	}
}

func TestIsCJK(t *testing.T) {
	for _, r := range "中文かなカナ한글" {
		if !IsCJK(r) {
			t.Errorf("IsCJK(%q) = false", r)
		}
	}
	for _, r := range "aZ9，。 é" {
		if IsCJK(r) {
			t.Errorf("IsCJK(%q) = true", r)
		}
	}
}
