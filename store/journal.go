package store

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// The change journal: every automated change to a workspace file is one
// JSON line in metadata/journal/YYYY-MM.jsonl, written before the change,
// with the file's hash before and after and its old bytes stored
// content-addressed under metadata/journal/objects/. A run (one command
// invocation) opens with a begin line and closes with an end line; while it
// lives it holds a lock file under metadata/journal/open/, so that a run
// whose process died (kill -9) is recognised by the next command and
// finished or rolled back. Comparing a file's hash with the line's before
// and after hashes tells whether a change happened.

var (
	// ErrRunNotFound is returned for a run id the journal does not hold.
	ErrRunNotFound = errors.New("run not found in the journal")
	// ErrRunStopped is returned by a run that already failed to write: it
	// changes nothing further.
	ErrRunStopped = errors.New("run stopped after a failed write")
	// ErrChangedSince refuses an undo over a file changed after the run.
	ErrChangedSince = errors.New("changed since the run")
	// ErrPreimageMissing is returned when a file's old bytes are no longer
	// stored (pruned or lost).
	ErrPreimageMissing = errors.New("preimage not stored")
)

// Triggers say what started a command.
const (
	TriggerCLI   = "cli"
	TriggerHook  = "hook"
	TriggerCron  = "cron"
	TriggerWatch = "watch"
	TriggerMCP   = "mcp"
)

// Actions are the kinds of change a line records.
const (
	ActionCreate  = "create"
	ActionUpdate  = "update"
	ActionRename  = "rename"
	ActionDelete  = "delete"
	ActionArchive = "archive"
)

// Line kinds.
const (
	KindBegin  = "begin"
	KindChange = "change"
	KindEnd    = "end"
	// KindVoid withdraws the change line before it for the same path and
	// after-hash: the change was refused on the way (a name taken
	// meanwhile, a full disk) and did not happen.
	KindVoid = "void"
)

// Run end states.
const (
	StatusOK         = "ok"
	StatusFailed     = "failed"
	StatusRolledBack = "rolled_back"
	StatusFinished   = "finished"  // completed by recovery after a crash
	StatusAbandoned  = "abandoned" // could not be applied or rolled back; set aside
)

// JournalDir is the journal's folder under metadata/.
const JournalDir = "journal"

// Entry is one journal line.
type Entry struct {
	Run     string    `json:"run"`
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Command string    `json:"command,omitempty"`
	Trigger string    `json:"trigger,omitempty"`
	// change lines
	Action    string `json:"action,omitempty"`
	Path      string `json:"path,omitempty"`
	Before    string `json:"sha256_before,omitempty"` // "" = did not exist
	After     string `json:"sha256_after,omitempty"`  // "" = removed
	Preimage  string `json:"preimage,omitempty"`      // object holding Path's old bytes
	From      string `json:"from,omitempty"`          // rename and archive: the old path
	FromSHA   string `json:"from_sha256,omitempty"`
	FromImage string `json:"from_preimage,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Model     string `json:"model,omitempty"`
	Prompt    string `json:"prompt,omitempty"`
	// begin lines
	Undoes string          `json:"undoes,omitempty"`
	Plan   json.RawMessage `json:"plan,omitempty"`
	// end lines
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// RunInfo describes a run at its start.
type RunInfo struct {
	Command string
	Trigger string
	Model   string // default model for the run's model-driven changes
	Prompt  string // default prompt version
	Undoes  string // run id an undo reverses
	// Plan is what recovery needs to finish the run after a crash (a
	// move's source, destination and inbound notes); nil for runs that a
	// crash rolls back.
	Plan json.RawMessage
}

// Why explains one change.
type Why struct {
	Reason string
	Model  string
	Prompt string
}

// JournalOptions configure a journal.
type JournalOptions struct {
	Now func() time.Time
	Log *slog.Logger
	// Fault, when set, is called at each step of a run; a non-nil result
	// stops the run there as a kill -9 would (no end line, lock released).
	// Tests only.
	Fault func(step string) error
}

// Journal appends and reads the change journal of a workspace.
type Journal struct {
	ws  *Workspace
	opt JournalOptions
}

// NewJournal returns the workspace's journal.
func NewJournal(ws *Workspace, opt JournalOptions) *Journal {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Journal{ws: ws, opt: opt}
}

func (j *Journal) dir(parts ...string) string {
	return j.ws.MetadataPath(append([]string{JournalDir}, parts...)...)
}

// ObjectPath is where the bytes with this hash are stored.
func (j *Journal) ObjectPath(sum string) string { return j.dir("objects", sum[:2], sum[2:]) }

// Run is one command's series of journaled changes.
type Run struct {
	ID      string
	Info    RunInfo
	j       *Journal
	mu      sync.Mutex // one change at a time, whichever goroutine makes it
	lock    *os.File
	lockAt  string
	err     error // first failed write: nothing further is changed
	crashed bool
	ended   bool
	touched []string
	changes int
}

// NewRunID makes a sortable run id: UTC time plus random hex.
func NewRunID(t time.Time) string {
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(rnd[:])
}

// validRunID checks an id read from a file name or a line.
func validRunID(id string) bool {
	if len(id) != 23 || id[15] != 'Z' || id[16] != '-' {
		return false
	}
	if _, err := time.Parse("20060102T150405Z", id[:16]); err != nil {
		return false
	}
	_, err := hex.DecodeString(id[17:])
	return err == nil
}

// monthOf is the journal file a run writes to: the month of its start.
func monthOf(id string) string { return id[:4] + "-" + id[4:6] }

// Begin starts a run: it takes the run's lock and writes the begin line.
func (j *Journal) Begin(info RunInfo) (*Run, error) {
	if info.Command == "" {
		return nil, errors.New("journal run without a command")
	}
	if info.Trigger == "" {
		info.Trigger = TriggerCLI
	}
	r := &Run{ID: NewRunID(j.opt.Now()), Info: info, j: j}
	if err := r.takeLock(true); err != nil {
		return nil, err
	}
	e := Entry{Run: r.ID, Kind: KindBegin, Command: info.Command, Trigger: info.Trigger,
		Model: info.Model, Prompt: info.Prompt, Undoes: info.Undoes, Plan: info.Plan}
	if err := r.append(&e); err != nil {
		r.release(true)
		return nil, err
	}
	return r, nil
}

// takeLock creates and locks open/<id>.lock. The file is locked under a
// temporary name and then renamed, so that no other process ever sees the
// marker of a live run unlocked.
func (r *Run) takeLock(create bool) error {
	dir := r.j.dir("open")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create journal folder: %w", err)
	}
	final := filepath.Join(dir, r.ID+".lock")
	if !create {
		f, err := os.OpenFile(final, os.O_RDWR, 0o644)
		if err != nil {
			return fmt.Errorf("open run lock: %w", err)
		}
		ok, err := tryLock(f)
		if err != nil || !ok {
			f.Close()
			if err == nil {
				err = errRunAlive
			}
			return err
		}
		r.lock, r.lockAt = f, final
		return nil
	}
	tmp := filepath.Join(dir, "."+r.ID+".tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create run lock: %w", err)
	}
	if ok, err := tryLock(f); err != nil || !ok {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("lock run %s: %v", r.ID, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("create run lock: %w", err)
	}
	r.lock, r.lockAt = f, final
	return syncDir(dir)
}

var errRunAlive = errors.New("run is still going on")

// release drops the lock; with remove the marker goes too (the run ended).
func (r *Run) release(remove bool) {
	if r.lock == nil {
		return
	}
	if remove {
		os.Remove(r.lockAt)
	}
	unlockFile(r.lock)
	r.lock.Close()
	r.lock = nil
}

func (r *Run) fault(step string) error {
	if r.j.opt.Fault == nil {
		return nil
	}
	if err := r.j.opt.Fault(step); err != nil {
		r.crashed = true
		return err
	}
	return nil
}

// Fault lets the code that drives a run mark its own steps for crash tests.
func (r *Run) Fault(step string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fault(step)
}

// append writes one line to the run's month file, all or nothing: a torn
// tail left by a crash is ended first, and a failed write is cut back.
func (r *Run) append(e *Entry) error {
	e.Run = r.ID
	if e.Time.IsZero() {
		e.Time = r.j.opt.Now().UTC()
	}
	if e.Kind == KindChange && e.Model == "" && e.Action != "" {
		e.Model, e.Prompt = r.Info.Model, firstNonEmpty(e.Prompt, r.Info.Prompt)
	}
	b, err := marshalLine(e)
	if err != nil {
		return err
	}
	return r.j.appendLine(monthOf(r.ID), b)
}

func marshalLine(e *Entry) ([]byte, error) {
	b, err := MarshalNoEscape(e)
	if err != nil {
		return nil, fmt.Errorf("encode journal line: %w", err)
	}
	return append(b, '\n'), nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (j *Journal) appendLine(month string, line []byte) error {
	dir := j.dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create journal folder: %w", err)
	}
	p := filepath.Join(dir, month+".jsonl")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open journal %s: %w", p, err)
	}
	defer f.Close()
	// Lines of concurrent runs must not interleave: the file's own lock
	// serialises appends across processes.
	for {
		ok, err := tryLock(f)
		if err != nil {
			return fmt.Errorf("lock journal %s: %w", p, err)
		}
		if ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	defer unlockFile(f)
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("journal %s: %w", p, err)
	}
	size := fi.Size()
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...) // end a torn line first
		}
	}
	if err := appendOrCut(f, size, line); err != nil {
		return fmt.Errorf("append to journal %s: %w", p, err)
	}
	return nil
}

// storeObject keeps bytes under their hash (once). Bytes already stored
// get a new modification time: the line that now needs them may not be
// written yet, and a concurrent Prune keeps only objects whose line it
// reads or that are newer than its cutoff.
func (j *Journal) storeObject(sum string, data []byte) error {
	p := j.ObjectPath(sum)
	if _, err := os.Stat(p); err == nil {
		now := time.Now()
		if err := os.Chtimes(p, now, now); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		// pruned since the Stat: store it again
	}
	if err := writeAtomic(p, data); err != nil {
		return fmt.Errorf("store preimage: %w", err)
	}
	return nil
}

// Object reads stored bytes and checks their hash.
func (j *Journal) Object(sum string) ([]byte, error) {
	if !validSum(sum) {
		return nil, fmt.Errorf("%w: bad object name %q", ErrInvalidPath, sum)
	}
	b, err := os.ReadFile(j.ObjectPath(sum))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", sum[:12], ErrPreimageMissing)
		}
		return nil, fmt.Errorf("read preimage: %w", err)
	}
	if Sum(b) != sum {
		return nil, fmt.Errorf("preimage %s is damaged", sum[:12])
	}
	return b, nil
}

// Sum is the hex sha256 of data.
func Sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func validSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// fileState reads a workspace file: its bytes and hash, "" when missing.
func (w *Workspace) fileState(rel string) ([]byte, string, error) {
	p := w.Abs(rel)
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, "", fmt.Errorf("%s: not a regular file", rel)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", rel, err)
	}
	return b, Sum(b), nil
}

// checkJournaled validates a path a run may change: the workspace rules
// for user input, and never derived state under metadata/.
func (w *Workspace) checkJournaled(p string) (string, error) {
	rel, err := w.Rel(p)
	if err != nil {
		return "", err
	}
	if rel != p {
		return "", fmt.Errorf("%w: %q is not a clean workspace path", ErrInvalidPath, p)
	}
	if top, _, _ := strings.Cut(rel, "/"); top == MetadataDir {
		return "", fmt.Errorf("%w: %s is derived state", ErrInvalidPath, rel)
	}
	return rel, nil
}

func (r *Run) stopped() error {
	if r.ended {
		return fmt.Errorf("run %s already ended", r.ID)
	}
	if r.err != nil {
		return fmt.Errorf("%w: %v", ErrRunStopped, r.err)
	}
	return nil
}

func (r *Run) fail(err error) error {
	if r.err == nil && !r.crashed {
		r.err = err
	}
	return err
}

func (r *Run) touch(paths ...string) {
	for _, p := range paths {
		if !slices.Contains(r.touched, p) {
			r.touched = append(r.touched, p)
		}
	}
}

// Touched lists the workspace paths the run changed, in order.
func (r *Run) Touched() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.touched...)
}

// Changes counts the change lines the run wrote.
func (r *Run) Changes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changes
}

// Err is the write failure that stopped the run, if any.
func (r *Run) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// prepare checks that the run may still write and that rel is a path it
// may change, and reads the file's current bytes and hash.
func (r *Run) prepare(rel string) (clean string, old []byte, sum string, err error) {
	if err := r.stopped(); err != nil {
		return "", nil, "", err
	}
	if clean, err = r.j.ws.checkJournaled(rel); err != nil {
		return "", nil, "", err
	}
	if old, sum, err = r.j.ws.fileState(clean); err != nil {
		return "", nil, "", r.fail(err)
	}
	return clean, old, sum, nil
}

// WriteFile creates or replaces a workspace file through the journal.
// Writing the bytes a file already holds records nothing.
func (r *Run) WriteFile(rel string, data []byte, why Why) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writeFile(rel, data, why)
}

func (r *Run) writeFile(rel string, data []byte, why Why) error {
	rel, old, before, err := r.prepare(rel)
	if err != nil {
		return err
	}
	after := Sum(data)
	if before == after {
		return nil
	}
	e := Entry{Kind: KindChange, Action: ActionUpdate, Path: rel, Before: before, After: after,
		Reason: why.Reason, Model: why.Model, Prompt: why.Prompt}
	if before == "" {
		e.Action = ActionCreate
	} else {
		if err := r.j.storeObject(before, old); err != nil {
			return r.fail(err)
		}
		e.Preimage = before
	}
	if err := r.record(&e); err != nil {
		return err
	}
	if err := r.j.ws.WriteFile(rel, data); err != nil {
		r.void(&e, err)
		return r.fail(err)
	}
	r.touch(rel)
	return r.fault("applied " + rel)
}

// CreateFile creates a workspace file that must not exist yet, through
// the journal; a file that appears meanwhile (another writer won the
// name) is fs.ErrExist and the journal withdraws the change.
func (r *Run) CreateFile(rel string, data []byte, why Why) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rel, _, before, err := r.prepare(rel)
	if err != nil {
		return err
	}
	if before != "" {
		return fmt.Errorf("create %s: %w", rel, fs.ErrExist)
	}
	e := Entry{Kind: KindChange, Action: ActionCreate, Path: rel, After: Sum(data),
		Reason: why.Reason, Model: why.Model, Prompt: why.Prompt}
	if err := r.record(&e); err != nil {
		return err
	}
	if err := r.j.ws.CreateFile(rel, data); err != nil {
		r.void(&e, err)
		if errors.Is(err, fs.ErrExist) {
			return err // not a failed write: the caller picks another name
		}
		return r.fail(err)
	}
	r.touch(rel)
	return r.fault("applied " + rel)
}

// void records that the change e, journaled before, did not happen.
func (r *Run) void(e *Entry, cause error) {
	v := Entry{Kind: KindVoid, Action: e.Action, Path: e.Path, After: e.After, Reason: "not applied: " + cause.Error()}
	if r.append(&v) == nil {
		r.changes--
	}
}

// Remove deletes a workspace file through the journal (its bytes are kept
// as the preimage). A missing file is ErrNotFound.
func (r *Run) Remove(rel string, why Why) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.remove(rel, why)
}

func (r *Run) remove(rel string, why Why) error {
	rel, old, before, err := r.prepare(rel)
	if err != nil {
		return err
	}
	if before == "" {
		return fmt.Errorf("%s: %w", rel, ErrNotFound)
	}
	if err := r.j.storeObject(before, old); err != nil {
		return r.fail(err)
	}
	e := Entry{Kind: KindChange, Action: ActionDelete, Path: rel, Before: before, Preimage: before,
		Reason: why.Reason, Model: why.Model, Prompt: why.Prompt}
	if err := r.record(&e); err != nil {
		return err
	}
	if err := r.j.ws.Remove(rel); err != nil {
		r.void(&e, err)
		return r.fail(err)
	}
	r.touch(rel)
	return r.fault("applied " + rel)
}

// Rename moves src to dst through the journal; data, when not nil,
// replaces the bytes written at dst (a moved note's links to itself). The
// action is ActionRename or ActionArchive. An existing dst is replaced
// only when overwrite is set, and its bytes are kept as the preimage.
func (r *Run) Rename(src, dst string, data []byte, action string, overwrite bool, why Why) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rename(src, dst, data, action, overwrite, why)
}

func (r *Run) rename(src, dst string, data []byte, action string, overwrite bool, why Why) error {
	if err := r.stopped(); err != nil {
		return err
	}
	if action != ActionRename && action != ActionArchive {
		return fmt.Errorf("rename action %q", action)
	}
	src, err := r.j.ws.checkJournaled(src)
	if err != nil {
		return err
	}
	dst, err = r.j.ws.checkJournaled(dst)
	if err != nil {
		return err
	}
	if src == dst {
		return fmt.Errorf("rename %s onto itself", src)
	}
	srcData, srcSum, err := r.j.ws.fileState(src)
	if err != nil {
		return r.fail(err)
	}
	if srcSum == "" {
		return fmt.Errorf("%s: %w", src, ErrNotFound)
	}
	old, before, err := r.j.ws.fileState(dst)
	if err != nil {
		return r.fail(err)
	}
	if before != "" && !overwrite {
		return fmt.Errorf("%s: destination exists", dst)
	}
	if data == nil {
		data = srcData
	}
	if err := r.j.storeObject(srcSum, srcData); err != nil {
		return r.fail(err)
	}
	e := Entry{Kind: KindChange, Action: action, Path: dst, From: src, FromSHA: srcSum, FromImage: srcSum,
		Before: before, After: Sum(data), Reason: why.Reason, Model: why.Model, Prompt: why.Prompt}
	if before != "" {
		if err := r.j.storeObject(before, old); err != nil {
			return r.fail(err)
		}
		e.Preimage = before
	}
	if err := r.record(&e); err != nil {
		return err
	}
	// Write the new copy first, then remove the old one: a crash between
	// the two leaves both, which recovery recognises by their hashes.
	if err := r.j.ws.WriteFile(dst, data); err != nil {
		r.void(&e, err)
		return r.fail(err)
	}
	r.touch(dst)
	if err := r.fault("copied " + dst); err != nil {
		return err
	}
	if err := r.j.ws.Remove(src); err != nil && !errors.Is(err, ErrNotFound) {
		return r.fail(err)
	}
	r.touch(src)
	return r.fault("applied " + dst)
}

// record appends a change line before the change is made.
func (r *Run) record(e *Entry) error {
	if err := r.append(e); err != nil {
		return r.fail(err)
	}
	r.changes++
	return r.fault("journaled " + e.Path)
}

// End closes the run: an end line (ok, or failed with the error) and the
// lock released. After a simulated crash it only releases the lock, as a
// killed process would.
func (r *Run) End(runErr error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return nil
	}
	r.ended = true
	if r.crashed {
		r.release(false)
		return nil
	}
	e := Entry{Kind: KindEnd, Status: StatusOK}
	if runErr == nil {
		runErr = r.err
	}
	if runErr != nil {
		e.Status, e.Error = StatusFailed, runErr.Error()
	}
	err := r.append(&e)
	// Without its end line the run would look crashed to the next command;
	// keep the marker then, so that recovery settles it.
	r.release(err == nil)
	return err
}

// endAs closes a recovered run with a given status.
func (r *Run) endAs(status string, cause error) error {
	r.ended = true
	e := Entry{Kind: KindEnd, Status: status}
	if cause != nil {
		e.Error = cause.Error()
	}
	err := r.append(&e)
	r.release(err == nil)
	return err
}

// ReadAll reads every journal line, oldest file first. A line that does
// not parse or whose paths break the workspace rules is skipped with a
// warning (it never blocks the others); the count of skipped lines per run
// id, where one could be read, is returned too.
func (j *Journal) ReadAll() ([]Entry, map[string]int, error) {
	ents, err := os.ReadDir(j.dir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read journal: %w", err)
	}
	var months []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".jsonl") && len(n) == len("2006-01.jsonl") {
			months = append(months, strings.TrimSuffix(n, ".jsonl"))
		}
	}
	sort.Strings(months)
	var out []Entry
	bad := map[string]int{}
	for _, m := range months {
		es, err := j.readMonth(m, bad)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, es...)
	}
	return out, bad, nil
}

func (j *Journal) readMonth(month string, bad map[string]int) ([]Entry, error) {
	p := j.dir(month + ".jsonl")
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal %s: %w", p, err)
	}
	defer f.Close()
	return j.parseLines(f, p, bad)
}

// parseLines reads journal lines; see ReadAll.
func (j *Journal) parseLines(r io.Reader, name string, bad map[string]int) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Entry
		err := json.Unmarshal(line, &e)
		if err == nil {
			err = j.checkEntry(&e)
		}
		if err != nil {
			j.opt.Log.Warn("skipping a journal line", "file", name, "line", n, "error", err)
			var probe struct {
				Run string `json:"run"`
			}
			if json.Unmarshal(line, &probe) == nil && validRunID(probe.Run) {
				bad[probe.Run]++
			}
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read journal %s: %w", name, err)
	}
	return out, nil
}

// checkEntry applies the workspace path rules to everything a line names:
// a journal is input like any other.
func (j *Journal) checkEntry(e *Entry) error {
	if !validRunID(e.Run) {
		return fmt.Errorf("bad run id %q", e.Run)
	}
	switch e.Kind {
	case KindBegin, KindEnd:
		return nil
	case KindVoid:
		_, err := j.ws.checkJournaled(e.Path)
		return err
	case KindChange:
	default:
		return fmt.Errorf("unknown line kind %q", e.Kind)
	}
	switch e.Action {
	case ActionCreate, ActionUpdate, ActionDelete, ActionRename, ActionArchive:
	default:
		return fmt.Errorf("unknown action %q", e.Action)
	}
	if _, err := j.ws.checkJournaled(e.Path); err != nil {
		return err
	}
	for _, s := range []string{e.Before, e.After, e.Preimage, e.FromSHA, e.FromImage} {
		if s != "" && !validSum(s) {
			return fmt.Errorf("bad hash %q", s)
		}
	}
	if e.Preimage != "" && e.Preimage != e.Before {
		return errors.New("preimage does not match sha256_before")
	}
	if e.Action == ActionRename || e.Action == ActionArchive {
		if _, err := j.ws.checkJournaled(e.From); err != nil {
			return err
		}
		if e.FromSHA == "" || e.FromImage != e.FromSHA {
			return errors.New("rename without the source's hash")
		}
	} else if e.From != "" {
		return errors.New("from on a change that is not a rename")
	}
	return nil
}

// RunSummary is one run as history shows it.
type RunSummary struct {
	ID       string    `json:"run"`
	Time     time.Time `json:"time"`
	Command  string    `json:"command"`
	Trigger  string    `json:"trigger"`
	Model    string    `json:"model,omitempty"`
	Undoes   string    `json:"undoes,omitempty"`
	Status   string    `json:"status"` // ok, failed, rolled_back, finished, abandoned, open
	Error    string    `json:"error,omitempty"`
	Changes  []Entry   `json:"changes"`
	Skipped  int       `json:"skipped_lines,omitempty"`
	Plan     []byte    `json:"-"`
	Finished time.Time `json:"-"`
}

// Runs groups the journal by run, in the order they started. Runs with no change lines
// are kept (an undo that found nothing, a failed write).
func (j *Journal) Runs() ([]*RunSummary, error) {
	es, bad, err := j.ReadAll()
	if err != nil {
		return nil, err
	}
	return groupRuns(es, bad), nil
}

func groupRuns(es []Entry, bad map[string]int) []*RunSummary {
	byID := map[string]*RunSummary{}
	var order []*RunSummary
	get := func(e *Entry) *RunSummary {
		s := byID[e.Run]
		if s == nil {
			s = &RunSummary{ID: e.Run, Time: e.Time, Status: "open", Skipped: bad[e.Run]}
			byID[e.Run] = s
			order = append(order, s)
		}
		return s
	}
	for i := range es {
		e := es[i]
		s := get(&e)
		switch e.Kind {
		case KindBegin:
			if s.Command == "" {
				s.Time, s.Command, s.Trigger, s.Model, s.Undoes, s.Plan = e.Time, e.Command, e.Trigger, e.Model, e.Undoes, e.Plan
			}
		case KindChange:
			s.Changes = append(s.Changes, e)
		case KindVoid:
			for k := len(s.Changes) - 1; k >= 0; k-- {
				if c := s.Changes[k]; c.Path == e.Path && c.After == e.After && c.Action == e.Action {
					s.Changes = append(s.Changes[:k], s.Changes[k+1:]...)
					break
				}
			}
		case KindEnd:
			s.Status, s.Error, s.Finished = e.Status, e.Error, e.Time
		}
	}
	ids := make([]string, 0, len(bad))
	for id := range bad {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if byID[id] == nil {
			byID[id] = &RunSummary{ID: id, Status: "unreadable", Skipped: bad[id]}
			order = append(order, byID[id])
		}
	}
	// Journal order (begin lines are appended as runs start), not id
	// order: ids made within one second do not sort by time.
	return order
}

// FindRun returns one run.
func (j *Journal) FindRun(id string) (*RunSummary, error) {
	if !validRunID(id) {
		return nil, fmt.Errorf("%q: %w", id, ErrRunNotFound)
	}
	bad := map[string]int{}
	es, err := j.readMonth(monthOf(id), bad)
	if err != nil {
		return nil, err
	}
	var mine []Entry
	for _, e := range es {
		if e.Run == id {
			mine = append(mine, e)
		}
	}
	if len(mine) == 0 && bad[id] == 0 {
		return nil, fmt.Errorf("%s: %w", id, ErrRunNotFound)
	}
	runs := groupRuns(mine, map[string]int{id: bad[id]})
	return runs[0], nil
}

// Orphan is a run whose process died before its end line.
type Orphan struct {
	Run     *Run
	Summary *RunSummary
}

// Orphans finds runs whose process died (their lock is free) and takes
// them over: each returned run holds its lock and must be settled with
// Finish, Rollback or Abandon. Live runs of other processes are left alone.
// When nothing crashed this costs one folder read.
func (j *Journal) Orphans() ([]*Orphan, error) {
	ents, err := os.ReadDir(j.dir("open"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	var out []*Orphan
	for _, e := range ents {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".lock")
		if !ok || !validRunID(id) {
			if strings.HasPrefix(name, ".") {
				j.removeStaleTemp(name)
			}
			continue
		}
		r := &Run{ID: id, j: j}
		if err := r.takeLock(false); err != nil {
			continue // alive in another process, or settled meanwhile
		}
		sum, err := j.FindRun(id)
		if errors.Is(err, ErrRunNotFound) {
			// Died before its begin line: nothing was changed.
			r.release(true)
			continue
		}
		if err != nil {
			r.release(false)
			return out, err
		}
		if sum.Status != "open" {
			r.release(true) // ended; only the marker was left behind
			continue
		}
		r.Info = RunInfo{Command: sum.Command, Trigger: sum.Trigger, Model: sum.Model, Undoes: sum.Undoes, Plan: sum.Plan}
		out = append(out, &Orphan{Run: r, Summary: sum})
	}
	return out, nil
}

// removeStaleTemp removes a lock that a process died creating. A young
// one may be a lock being created right now (opened, not yet locked), so
// only one older than a minute, on the wall clock, goes.
func (j *Journal) removeStaleTemp(name string) {
	p := j.dir("open", name)
	if fi, err := os.Stat(p); err != nil || time.Since(fi.ModTime()) < time.Minute {
		return
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if ok, _ := tryLock(f); ok {
		os.Remove(p)
		unlockFile(f)
	}
}

// Release gives up an orphan without settling it (another command will).
func (o *Orphan) Release() { o.Run.release(false) }

// Finish closes an orphan that its owner completed during recovery.
func (o *Orphan) Finish() error { return o.Run.endAs(StatusFinished, nil) }

// Abandon sets an orphan aside with the reason; its lines stay for undo.
func (o *Orphan) Abandon(cause error) error { return o.Run.endAs(StatusAbandoned, cause) }

// Rollback undoes what an orphan changed, newest first, and closes it as
// rolled back. A file changed by someone else since is left alone and
// reported; the run is then set aside as abandoned. It returns the paths
// restored.
func (o *Orphan) Rollback() ([]string, error) {
	plan, conflicts, err := o.Run.j.planUndo(o.Summary)
	if err != nil {
		o.Abandon(err)
		return nil, err
	}
	if len(conflicts) > 0 {
		err := fmt.Errorf("%w: %s", ErrChangedSince, strings.Join(conflicts, ", "))
		o.Abandon(err)
		return nil, err
	}
	if err := o.Run.applyUndo(plan, "rollback of an interrupted "+o.Summary.Command); err != nil {
		o.Run.endAs(StatusAbandoned, err)
		return o.Run.Touched(), err
	}
	return o.Run.Touched(), o.Run.endAs(StatusRolledBack, nil)
}

// undoStep is one inverse change.
type undoStep struct {
	e     Entry
	force bool // the file no longer holds what the run wrote
}

// planUndo works out, newest change first, how to bring every file the run
// touched back to its state before the run; conflicts name files changed
// since (their current bytes are neither what the run wrote nor what it
// found).
func (j *Journal) planUndo(s *RunSummary) ([]undoStep, []string, error) {
	state := map[string]string{}
	cur := func(p string) (string, error) {
		if h, ok := state[p]; ok {
			return h, nil
		}
		_, h, err := j.ws.fileState(p)
		if err != nil {
			return "", err
		}
		state[p] = h
		return h, nil
	}
	var steps []undoStep
	var conflicts []string
	for i := len(s.Changes) - 1; i >= 0; i-- {
		e := s.Changes[i]
		h, err := cur(e.Path)
		if err != nil {
			return nil, nil, err
		}
		rename := e.Action == ActionRename || e.Action == ActionArchive
		var fromHash string
		if rename {
			if fromHash, err = cur(e.From); err != nil {
				return nil, nil, err
			}
		}
		switch {
		case rename && h == e.After && fromHash == "":
			steps = append(steps, undoStep{e: e})
			state[e.Path], state[e.From] = e.Before, e.FromSHA
		case rename && h == e.After && fromHash == e.FromSHA:
			// crashed between the copy and the removal: only the copy goes
			steps = append(steps, undoStep{e: Entry{Kind: KindChange, Action: ActionCreate, Path: e.Path, Before: e.Before, After: e.After, Preimage: e.Preimage}})
			state[e.Path] = e.Before
		case rename && h == e.Before && fromHash == e.FromSHA:
			// never applied
		case !rename && h == e.After:
			steps = append(steps, undoStep{e: e})
			state[e.Path] = e.Before
		case !rename && h == e.Before:
			// never applied (the write failed or the crash came first)
		default:
			conflicts = append(conflicts, e.Path)
			steps = append(steps, undoStep{e: e, force: true})
			state[e.Path] = e.Before
			if rename {
				state[e.From] = e.FromSHA
			}
		}
	}
	sort.Strings(conflicts)
	return steps, slices.Compact(conflicts), nil
}

// applyUndo writes the inverse changes through r, so that they are
// journaled (and can themselves be undone).
func (r *Run) applyUndo(steps []undoStep, reason string) error {
	why := Why{Reason: reason}
	for _, st := range steps {
		e := st.e
		rename := e.Action == ActionRename || e.Action == ActionArchive
		// Preimages first: a pruned one stops the undo before it writes.
		var old, fromOld []byte
		var err error
		if e.Before != "" {
			if old, err = r.j.Object(e.Preimage); err != nil {
				return r.fail(fmt.Errorf("restore %s: %w", e.Path, err))
			}
		}
		if rename {
			if fromOld, err = r.j.Object(e.FromImage); err != nil {
				return r.fail(fmt.Errorf("restore %s: %w", e.From, err))
			}
		}
		if rename {
			// Move it back (with its original bytes), then restore what the
			// destination held before, if anything.
			if _, h, _ := r.j.ws.fileState(e.Path); h != "" {
				if err := r.Rename(e.Path, e.From, fromOld, ActionRename, true, why); err != nil {
					return err
				}
			} else if err := r.WriteFile(e.From, fromOld, why); err != nil {
				return err
			}
			if e.Before != "" {
				if err := r.WriteFile(e.Path, old, why); err != nil {
					return err
				}
			}
			continue
		}
		if e.Before == "" {
			if err := r.Remove(e.Path, why); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			continue
		}
		if err := r.WriteFile(e.Path, old, why); err != nil {
			return err
		}
	}
	return nil
}

// UndoResult reports an undo.
type UndoResult struct {
	Run       string   `json:"run"`    // the undo's own run id
	Undone    string   `json:"undone"` // the run reversed
	Restored  []string `json:"restored"`
	Conflicts []string `json:"conflicts,omitempty"` // overwritten with --force
}

// Undo reverses a run: every file it touched gets back the bytes it had
// before, newest change first. Files changed since are named and refused
// unless force. The undo is itself a run (command "undo").
func (j *Journal) Undo(id string, force bool, trigger string) (*UndoResult, error) {
	s, err := j.FindRun(id)
	if err != nil {
		return nil, err
	}
	switch s.Status {
	case "open":
		return nil, fmt.Errorf("run %s is still going on (or crashed and awaits recovery by the next command)", id)
	case StatusRolledBack:
		return nil, fmt.Errorf("run %s was rolled back after a crash: nothing to undo", id)
	case "unreadable":
		return nil, fmt.Errorf("run %s: none of its journal lines can be read", id)
	}
	if s.Skipped > 0 && !force {
		return nil, fmt.Errorf("run %s: %d of its journal line(s) cannot be read, so it cannot be undone completely; pass --force to undo the rest", id, s.Skipped)
	}
	steps, conflicts, err := j.planUndo(s)
	if err != nil {
		return nil, err
	}
	if len(conflicts) > 0 && !force {
		return nil, fmt.Errorf("undo %s: %w: %s (pass --force to restore anyway; the current bytes are kept in the journal)", id, ErrChangedSince, strings.Join(conflicts, ", "))
	}
	res := &UndoResult{Undone: id, Conflicts: conflicts}
	r, err := j.Begin(RunInfo{Command: "undo", Trigger: trigger, Undoes: id})
	if err != nil {
		return nil, err
	}
	res.Run = r.ID
	err = r.applyUndo(steps, "undo of "+id)
	res.Restored = r.Touched()
	if eerr := r.End(err); err == nil {
		err = eerr
	}
	return res, err
}

// LastRun is the newest run that can be undone (ended, not rolled back).
func (j *Journal) LastRun() (string, error) {
	runs, err := j.Runs()
	if err != nil {
		return "", err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		s := runs[i]
		if s.Status == "open" || s.Status == StatusRolledBack || s.Status == "unreadable" || len(s.Changes) == 0 {
			continue
		}
		return s.ID, nil
	}
	return "", fmt.Errorf("no run to undo: %w", ErrRunNotFound)
}

// PruneResult reports a prune.
type PruneResult struct {
	Objects int   `json:"objects_removed"`
	Bytes   int64 `json:"bytes_freed"`
}

// Prune removes preimages that no line newer than cutoff refers to. Their
// lines stay (history keeps working); undoing such a run says the preimage
// is gone.
func (j *Journal) Prune(cutoff time.Time, dryRun bool) (*PruneResult, error) {
	es, _, err := j.ReadAll()
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, e := range es {
		if e.Kind != KindChange || e.Time.Before(cutoff) {
			continue
		}
		for _, s := range []string{e.Preimage, e.FromImage} {
			if s != "" {
				keep[s] = true
			}
		}
	}
	res := &PruneResult{}
	root := j.dir("objects")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		sum := filepath.Base(filepath.Dir(p)) + d.Name()
		if !validSum(sum) || keep[sum] {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if info.ModTime().After(cutoff) {
			return nil // stored by a run that may still be writing its line
		}
		res.Objects++
		res.Bytes += info.Size()
		if !dryRun {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("prune preimage: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("prune journal: %w", err)
	}
	return res, nil
}

// RefreshDayIndex rewrites daily/<date>.md through the run.
func (r *Run) RefreshDayIndex(date string) (*DayIndexResult, error) {
	return r.j.ws.refreshDayIndex(date, func(rel string, data []byte) error {
		return r.WriteFile(rel, data, Why{Reason: "day index of " + date})
	})
}

// RefreshMemoryIndex rewrites the entry list of MEMORY.md through the run.
func (r *Run) RefreshMemoryIndex(bounds MemoryIndexBounds) (*MemoryIndexResult, error) {
	entries, err := r.j.ws.ListEntries()
	if err != nil {
		return nil, err
	}
	return r.WriteMemoryIndex(entries, bounds)
}

// WriteMemoryIndex rewrites the entry list of MEMORY.md from entries the
// caller listed already, through the run.
func (r *Run) WriteMemoryIndex(entries []EntryInfo, bounds MemoryIndexBounds) (*MemoryIndexResult, error) {
	return r.j.ws.WriteMemoryIndex(entries, bounds, func(rel string, data []byte) error {
		return r.WriteFile(rel, data, Why{Reason: "index of the long-term entries"})
	})
}

// Workspace is the run's workspace.
func (r *Run) Workspace() *Workspace { return r.j.ws }

// Undone lists the runs whose changes are currently reversed: undone by an
// undo that is not itself undone (an undo of an undo redoes). Runs rolled
// back after a crash count as undone too.
func (j *Journal) Undone() (map[string]bool, error) {
	runs, err := j.Runs()
	if err != nil {
		return nil, err
	}
	undoneBy := map[string]string{} // run -> the undo reversing it
	out := map[string]bool{}
	for _, s := range runs {
		if s.Status == StatusRolledBack {
			out[s.ID] = true
		}
	}
	// Newest first: an undo counts only if it is not undone itself.
	for i := len(runs) - 1; i >= 0; i-- {
		s := runs[i]
		if s.Command != "undo" || s.Undoes == "" || s.Status == "open" || s.Status == StatusRolledBack || out[s.ID] {
			continue
		}
		if _, done := undoneBy[s.Undoes]; !done {
			undoneBy[s.Undoes] = s.ID
			out[s.Undoes] = true
		}
	}
	return out, nil
}
