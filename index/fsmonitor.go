package index

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reme-dev/reme/store"
)

// A freshness check normally stats every note. While `reme watch` runs,
// its watcher can vouch for the index instead, the way git's fsmonitor
// does. A search asks the watcher over a socket; the watcher writes a
// cookie file under metadata/watch/ and waits until its own file events
// reach the cookie: every change made before the question has then been
// seen. It indexes the notes of that batch (or, after an overflow,
// reconciles everything) and only then answers "ok". A watcher that is
// dead, busy, behind a lost event, or on a file system whose events it
// cannot trust gives no "ok", and the search scans as before.

// watchStateFile names the watcher's socket, under metadata/watch/.
const watchStateFile = "state.json"

// watcherWait bounds how long a search waits for the watcher before it
// scans by itself.
const watcherWait = 250 * time.Millisecond

// cookieWait bounds how long the watcher waits for its own cookie event.
const cookieWait = 3 * time.Second

type watchState struct {
	PID     int    `json:"pid"`
	Socket  string `json:"socket"`
	Started string `json:"started"`
	FS      string `json:"fs"`
}

// WatchServer answers the searches of other reme processes while this
// process's watcher keeps the index in step. Ack must be called with the
// cookies of every batch the watcher has handled.
type WatchServer struct {
	ws      *store.Workspace
	log     *slog.Logger
	ln      net.Listener
	lock    *store.Lock
	state   string
	seq     atomic.Uint64
	mu      sync.Mutex
	waiting map[string]chan bool
	done    chan struct{}
	wg      sync.WaitGroup
}

// ErrWatchUnsupported is returned by ServeWatch where a watcher cannot
// vouch for the index; searches then keep scanning.
var ErrWatchUnsupported = errors.New("the watcher cannot vouch for freshness here")

// ErrOtherWatcher is returned by ServeWatch when another process (reme
// watch, or reme mcp) already answers the searches of the workspace.
var ErrOtherWatcher = errors.New("another process (reme watch or reme mcp) answers searches for this workspace")

// ServeWatch starts answering freshness questions for ws. It fails (and
// searches keep scanning) where file events cannot be trusted or another
// watcher already answers.
func ServeWatch(ctx context.Context, ws *store.Workspace, log *slog.Logger) (*WatchServer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fsName, err := trustedFS(ws.Root)
	if err != nil {
		return nil, err
	}
	dir := ws.Abs(store.WatchCookieDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("watch state: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	lock, err := ws.Lock(lctx, "watch")
	cancel()
	if err != nil {
		return nil, ErrOtherWatcher
	}
	sum := sha256.Sum256([]byte(ws.Root))
	sock, err := socketName(ws, hex.EncodeToString(sum[:8]))
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("watch socket: %w", err)
	}
	s := &WatchServer{ws: ws, log: log, ln: ln, lock: lock, state: filepath.Join(dir, watchStateFile),
		waiting: map[string]chan bool{}, done: make(chan struct{})}
	st, _ := json.Marshal(watchState{PID: os.Getpid(), Socket: sock, Started: time.Now().UTC().Format(time.RFC3339), FS: fsName})
	if err := store.WriteFileAbs(s.state, st); err != nil {
		ln.Close()
		lock.Unlock()
		return nil, fmt.Errorf("watch state: %w", err)
	}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Close stops answering and removes the state file.
func (s *WatchServer) Close() {
	select {
	case <-s.done:
		return
	default:
	}
	close(s.done)
	os.Remove(s.state)
	s.ln.Close()
	s.wg.Wait()
	s.lock.Unlock()
}

// Ack tells the waiting searches whose cookies a batch carried whether the
// index is in step with everything before them.
func (s *WatchServer) Ack(cookies []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cookies {
		if ch := s.waiting[c]; ch != nil {
			select {
			case ch <- ok:
			default:
			}
		}
	}
}

func (s *WatchServer) serve() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.done:
				return
			default:
			}
			s.log.Warn("watch socket", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			s.answer(conn)
		}()
	}
}

func (s *WatchServer) answer(conn net.Conn) {
	conn.SetDeadline(time.Now().Add(cookieWait + time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "sync" {
		fmt.Fprintf(conn, "no unknown request\n")
		return
	}
	name := fmt.Sprintf("%s%d-%d", store.WatchCookiePrefix, os.Getpid(), s.seq.Add(1))
	ch := make(chan bool, 1)
	s.mu.Lock()
	s.waiting[name] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiting, name)
		s.mu.Unlock()
	}()
	p := filepath.Join(s.ws.Abs(store.WatchCookieDir), name)
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		fmt.Fprintf(conn, "no cookie: %v\n", err)
		return
	}
	defer os.Remove(p)
	select {
	case ok := <-ch:
		if ok {
			fmt.Fprintf(conn, "ok\n")
		} else {
			fmt.Fprintf(conn, "no the watcher could not index the changes\n")
		}
	case <-time.After(cookieWait):
		fmt.Fprintf(conn, "no the watcher is busy\n")
	case <-s.done:
		fmt.Fprintf(conn, "no the watcher is stopping\n")
	}
}

// askWatcher reports whether a live watcher vouches that the index holds
// every change made to the notes so far; why says why not.
func (ix *Index) askWatcher(ctx context.Context) (ok bool, why string) {
	if !ix.opt.TrustWatcher {
		return false, "not asked"
	}
	b, err := os.ReadFile(filepath.Join(ix.ws.Abs(store.WatchCookieDir), watchStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, "no watcher"
	}
	if err != nil {
		return false, err.Error()
	}
	var st watchState
	if err := json.Unmarshal(b, &st); err != nil || st.Socket == "" {
		return false, "unreadable watch state"
	}
	deadline := time.Now().Add(watcherWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var d net.Dialer
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := d.DialContext(dctx, "unix", st.Socket)
	if err != nil {
		return false, "watcher not running"
	}
	defer conn.Close()
	conn.SetDeadline(deadline)
	if _, err := conn.Write([]byte("sync\n")); err != nil {
		return false, "watcher not answering"
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return false, "watcher did not answer in time"
	}
	line = strings.TrimSpace(line)
	if line == "ok" {
		return true, "the watcher vouched"
	}
	return false, strings.TrimPrefix(line, "no ")
}
