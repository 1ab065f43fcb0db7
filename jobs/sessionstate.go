package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/reme-dev/reme/store"
)

// sessionState is how far a session has been distilled: the messages that
// went into a card or that the model explicitly skipped, and the card of
// each day. Only a written card or an explicit skip adds to it, so a failed
// run leaves its messages pending for the next call. It is kept under
// metadata/sessions/<dialog|claude_code>/<session_id>.json.
type sessionState struct {
	Distilled map[string]bool
	Cards     map[string]string // day → card last written for it
	// Extracted are the messages the long-term pass went through.
	Extracted map[string]bool
}

type sessionStateFile struct {
	Version   int               `json:"version"`
	Distilled []string          `json:"distilled"`
	Cards     map[string]string `json:"cards,omitempty"`
	Extracted []string          `json:"extracted,omitempty"`
}

// messageKey identifies a message and its content, so that a message sent
// again with other content is distilled again.
func messageKey(m store.Message) string {
	line, _ := m.MarshalLine()
	sum := sha256.Sum256(line)
	return m.ID + "@" + hex.EncodeToString(sum[:6])
}

func sessionStatePath(env *Env, kind, sid string) string {
	return env.WS.MetadataPath("sessions", kind, sid+".json")
}

// readSessionState loads a session's state; a missing file is a session
// with nothing distilled, and so is a damaged one (after a warning): the
// worst that costs is distilling messages again.
func readSessionState(env *Env, kind, sid string) (*sessionState, error) {
	st := &sessionState{Distilled: map[string]bool{}, Cards: map[string]string{}, Extracted: map[string]bool{}}
	b, err := os.ReadFile(sessionStatePath(env, kind, sid))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read session state: %w", err)
	}
	var f sessionStateFile
	if err := json.Unmarshal(b, &f); err != nil {
		env.logger().Warn("session state does not parse; every message of the session counts as new", "path", sessionStatePath(env, kind, sid), "err", err)
		return st, nil
	}
	for _, k := range f.Distilled {
		st.Distilled[k] = true
	}
	for _, k := range f.Extracted {
		st.Extracted[k] = true
	}
	for day, card := range f.Cards {
		// a path read back from state passes the same rules as user input
		if rel, err := env.WS.Rel(card); err == nil && store.IsDate(day) {
			st.Cards[day] = rel
		}
	}
	return st, nil
}

// distilled records keys as distilled, and the day's card when there is one.
func (st *sessionState) distilled(keys []string, day, card string) {
	for _, k := range keys {
		st.Distilled[k] = true
	}
	if card != "" {
		st.Cards[day] = card
	}
}

// extracted records keys as gone through the long-term pass.
func (st *sessionState) extracted(keys []string) {
	for _, k := range keys {
		st.Extracted[k] = true
	}
}

func writeSessionState(env *Env, kind, sid string, st *sessionState) error {
	f := sessionStateFile{Version: 1, Distilled: make([]string, 0, len(st.Distilled)), Cards: st.Cards}
	for k := range st.Distilled {
		f.Distilled = append(f.Distilled, k)
	}
	sort.Strings(f.Distilled)
	for k := range st.Extracted {
		f.Extracted = append(f.Extracted, k)
	}
	sort.Strings(f.Extracted)
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return store.WriteFileAbs(sessionStatePath(env, kind, sid), b)
}
