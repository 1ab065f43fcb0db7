package store

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// Encoding is how a text file was stored, so that edits can keep it.
type Encoding int

const (
	UTF8 Encoding = iota
	UTF8BOM
	GBK
)

func (e Encoding) String() string {
	switch e {
	case UTF8BOM:
		return "utf-8-sig"
	case GBK:
		return "gbk"
	}
	return "utf-8"
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// DecodeText decodes file bytes as ReMe does: UTF-8 (a BOM is stripped),
// else GBK, which is what Chinese Windows tools write.
func DecodeText(b []byte) (string, Encoding) {
	if bytes.HasPrefix(b, bom) {
		return string(b[len(bom):]), UTF8BOM
	}
	if utf8.Valid(b) {
		return string(b), UTF8
	}
	out, err := simplifiedchinese.GBK.NewDecoder().Bytes(b)
	if err != nil {
		// Not GBK either: keep what UTF-8 can make of it rather than fail.
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), UTF8
	}
	return string(out), GBK
}

// EncodeText encodes s back into the file's original encoding.
func EncodeText(s string, enc Encoding) ([]byte, error) {
	switch enc {
	case UTF8BOM:
		return append(append([]byte{}, bom...), s...), nil
	case GBK:
		out, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("encode as gbk: %w", err)
		}
		return out, nil
	}
	return []byte(s), nil
}
