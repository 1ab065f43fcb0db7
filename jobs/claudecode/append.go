package claudecode

// The Stop hook's fast path: Claude Code appends to its transcript, so a
// hook only needs to read what was added since the last call. Where that
// call left off is kept as a hint: whenever the transcript or the copy is
// not as recorded, the whole transcript is compared with the copy again
// (CopyTranscript), so a hint never loses or doubles an entry.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reme-dev/reme/store"
)

// tailBytes is how much of the transcript before the recorded offset must
// be unchanged for the offset to be trusted.
const tailBytes = 64

// importState records how far the transcript has been copied.
type importState struct {
	Transcript string `json:"transcript"` // absolute path
	Offset     int64  `json:"offset"`     // transcript bytes taken in
	Tail       []byte `json:"tail"`       // the last bytes before Offset
	CopySize   int64  `json:"copy_size"`  // the copy's size after that
}

// Appended reports what Append did.
type Appended struct {
	Path         string          // workspace-relative path of the copy
	New          int             // entries appended by this call
	SkippedLines int             // transcript lines that are not entries (a line being written, or damage)
	SetAside     *store.SetAside // as in Copy
	Whole        bool            // the whole transcript was compared with the copy
	Size         int64           // the copy's size after this call
}

func importStatePath(ws *store.Workspace, sessionID string) string {
	return ws.MetadataPath("sessions", "claude_code_import", sessionID+".json")
}

// Append copies the transcript's new entries to the session's copy like
// CopyTranscript, reading only what the transcript gained since the last
// Append when the files are as that call left them. The caller holds the
// session's save lock.
func Append(ws *store.Workspace, sessionID, transcriptPath string, maxBytes int64) (*Appended, error) {
	if err := store.ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	rel, err := ws.Rel(CopyPath(sessionID))
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(transcriptPath)
	if err != nil {
		return nil, fmt.Errorf("read claude code transcript: %w", err)
	}
	res := &Appended{Path: rel}
	var st importState
	if b, err := os.ReadFile(importStatePath(ws, sessionID)); err == nil && json.Unmarshal(b, &st) == nil && st.Transcript == abs {
		ok, err := st.appendNew(ws, rel, abs, maxBytes, res)
		if err != nil {
			return nil, err
		}
		if ok {
			st.save(ws, sessionID, ws.Abs(rel))
			res.Size = st.CopySize
			return res, nil
		}
	}
	cp, err := CopyTranscript(ws, sessionID, abs, maxBytes)
	if err != nil {
		return nil, err
	}
	res.New, res.SkippedLines, res.SetAside, res.Whole = cp.New, cp.SkippedLines, cp.SetAside, true
	st = importState{Transcript: abs, Offset: cp.Consumed}
	if f, err := os.Open(abs); err == nil {
		st.Tail = make([]byte, min(int64(tailBytes), st.Offset))
		if _, err := f.ReadAt(st.Tail, st.Offset-int64(len(st.Tail))); err != nil {
			st.Tail = nil
		}
		f.Close()
	}
	st.save(ws, sessionID, ws.Abs(rel))
	res.Size = st.CopySize
	return res, nil
}

// ReadCopy returns every entry among the first size bytes of the
// session's copy (what an Append left, Appended.Size), as CopyTranscript
// would: the caller need not hold the save lock while it reads, so that a
// Stop hook saving meanwhile never waits for this read.
func ReadCopy(ws *store.Workspace, sessionID string, size int64) (*Copy, error) {
	rel, err := ws.Rel(CopyPath(sessionID))
	if err != nil {
		return nil, err
	}
	res := &Copy{Path: rel}
	if _, _, err := readCopyUpTo(ws.Abs(rel), rel, size, res, map[string]bool{}); err != nil {
		return nil, err
	}
	return res, nil
}

// appendNew copies the entries after the recorded offset. ok is false when
// the state does not describe the files as they are (the copy changed since,
// the transcript was rewritten or cut): then nothing was copied.
func (st *importState) appendNew(ws *store.Workspace, rel, transcript string, maxBytes int64, res *Appended) (bool, error) {
	if st.Offset <= 0 || st.CopySize <= 0 || len(st.Tail) == 0 || int64(len(st.Tail)) > st.Offset || st.Tail[len(st.Tail)-1] != '\n' {
		return false, nil
	}
	if !endsWithNewline(ws.Abs(rel), st.CopySize) {
		return false, nil
	}
	f, err := os.Open(transcript)
	if err != nil {
		return false, nil // the whole comparison reports it
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < st.Offset || fi.Size() > maxOr(maxBytes) {
		return false, nil
	}
	tail := make([]byte, len(st.Tail))
	if _, err := f.ReadAt(tail, st.Offset-int64(len(tail))); err != nil || !bytes.Equal(tail, st.Tail) {
		return false, nil
	}
	src := make([]byte, fi.Size()-st.Offset)
	if _, err := io.ReadFull(io.NewSectionReader(f, st.Offset, int64(len(src))), src); err != nil {
		return false, nil
	}
	nl := newLines{seen: map[string]bool{}, ws: ws}
	if err := eachLine(bytes.NewReader(src), func(line []byte, complete bool) error {
		nl.take(line, complete)
		return nil
	}); err != nil {
		return false, err
	}
	res.New, res.SkippedLines = len(nl.entries), nl.skipped
	if res.New > 0 {
		if err := ws.AppendFile(rel, nl.add.Bytes()); err != nil {
			return false, err
		}
	}
	consumed := nl.consumed
	st.Tail = lastBytes(append(st.Tail, src[:consumed]...))
	st.Offset += consumed
	return true, nil
}

// endsWithNewline reports whether the file has the given size and ends in
// a newline, so that lines can be appended as they are.
func endsWithNewline(abs string, size int64) bool {
	f, err := os.Open(abs)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() != size {
		return false
	}
	var last [1]byte
	_, err = f.ReadAt(last[:], size-1)
	return err == nil && last[0] == '\n'
}

func maxOr(maxBytes int64) int64 {
	if maxBytes <= 0 {
		return DefaultMaxTranscriptBytes
	}
	return maxBytes
}

func lastBytes(b []byte) []byte {
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
	}
	return append([]byte(nil), b...)
}

// save records the state with the copy's size now. It does not wait for
// the disk: losing it only means that the next call compares the whole
// transcript again.
func (st *importState) save(ws *store.Workspace, sessionID, copyAbs string) {
	st.CopySize = 0
	if fi, err := os.Stat(copyAbs); err == nil {
		st.CopySize = fi.Size()
	}
	p := importStatePath(ws, sessionID)
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	b, _ := json.Marshal(st)
	tmp := p + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, p)
	}
}
