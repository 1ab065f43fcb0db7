package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"sort"
	"strings"
	"unicode"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
)

// MaintainPromptVersion names the review prompt in the journal.
const MaintainPromptVersion = "maintain-review/1"

// DefaultNearDupThreshold is the shingle similarity from which two entries
// go to the model.
const DefaultNearDupThreshold = 0.6

// shingles are the word 3-grams of a text (CJK characters count as words),
// hashed; shorter texts give one shingle of all their words.
func shingles(text string) map[uint64]bool {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case store.IsCJK(r):
			flush()
			words = append(words, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	out := map[uint64]bool{}
	if len(words) == 0 {
		return out
	}
	n := 3
	if len(words) < n {
		n = len(words)
	}
	for i := 0; i+n <= len(words); i++ {
		h := fnv.New64a()
		h.Write([]byte(strings.Join(words[i:i+n], " ")))
		out[h.Sum64()] = true
	}
	return out
}

const minhashSize = 64

// minhash is a MinHash signature: for each of 64 hash functions, the
// smallest value over the shingles. The share of equal positions estimates
// the Jaccard similarity of two shingle sets.
func minhash(sh map[uint64]bool) [minhashSize]uint64 {
	var sig [minhashSize]uint64
	for i := range sig {
		sig[i] = ^uint64(0)
	}
	for s := range sh {
		for i := range sig {
			if v := mix(s ^ (uint64(i+1) * 0x9e3779b97f4a7c15)); v < sig[i] {
				sig[i] = v
			}
		}
	}
	return sig
}

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func jaccard(a, b map[uint64]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for s := range a {
		if b[s] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// nearPair is two entries similar enough for the model to look at.
type nearPair struct {
	a, b       *maintainItem
	similarity float64
}

// nearDuplicates finds entry pairs whose shingle similarity reaches
// threshold: MinHash signatures pick candidates, exact Jaccard confirms.
func nearDuplicates(entries []*maintainItem, threshold float64) []nearPair {
	sets := make([]map[uint64]bool, len(entries))
	sigs := make([][minhashSize]uint64, len(entries))
	for i, e := range entries {
		sets[i] = shingles(e.body)
		sigs[i] = minhash(sets[i])
	}
	var out []nearPair
	for i := range entries {
		for j := i + 1; j < len(entries); j++ {
			eq := 0
			for k := 0; k < minhashSize; k++ {
				if sigs[i][k] == sigs[j][k] {
					eq++
				}
			}
			// the estimate's error at 64 hashes is about ±0.12
			if float64(eq)/minhashSize < threshold-0.15 {
				continue
			}
			if s := jaccard(sets[i], sets[j]); s >= threshold {
				out = append(out, nearPair{entries[i], entries[j], s})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].similarity != out[j].similarity {
			return out[i].similarity > out[j].similarity
		}
		return out[i].a.path+out[i].b.path < out[j].a.path+out[j].b.path
	})
	return out
}

// verdict is the model's answer about a pair or a milestone.
type verdict struct {
	Verdict string `json:"verdict"` // merge, keep, archive
	Keep    string `json:"keep"`    // pairs: the entry that survives
	Body    string `json:"body"`    // merge: the survivor's new body
	Reason  string `json:"reason"`
}

const reviewSystem = `You maintain a person's long-term memory entries (markdown notes).
Answer with one JSON object and nothing else.
For two similar entries: {"verdict": "merge"|"keep"|"archive", "keep": "<path of the entry that stays>", "body": "<merged body, only for merge>", "reason": "<one sentence>"}.
- merge: they say the same thing with different details; write one body that keeps every fact of both.
- archive: one is redundant; "keep" names the better one, the other is archived.
- keep: they are different memories; change nothing.
For a project milestone past its due date: {"verdict": "keep"|"archive", "reason": "<one sentence>"}; archive it only if it is done or no longer relevant.
Never invent facts.`

// reviewWithModel sends near-duplicate entries and milestones past their
// due date to the model and applies its verdicts within what the caps
// leave. In a dry run the candidates are listed and the model is not asked.
func reviewWithModel(ctx context.Context, env *Env, ix MaintainIndex, run *store.Run, items []*maintainItem, done []MaintainAction, today string, opt MaintainOptions, caps Caps) ([]MaintainAction, error) {
	taken := map[string]bool{}
	used := map[string]int{}
	total := 0
	for _, a := range done {
		taken[a.Path] = true
		if a.Status == StatusDone {
			used[a.Kind]++
			total++
		}
	}
	var entries []*maintainItem
	for _, it := range items {
		if it.kind == "entry" && !taken[it.path] {
			entries = append(entries, it)
		}
	}
	threshold := opt.NearDupThreshold
	if threshold <= 0 {
		threshold = DefaultNearDupThreshold
	}
	var out []MaintainAction
	room := func() bool { return total < caps.MaxChanges && used["entry"] < caps.Entries }
	for _, p := range nearDuplicates(entries, threshold) {
		if taken[p.a.path] || taken[p.b.path] {
			continue
		}
		a := MaintainAction{Step: StepNearDuplicates, Path: p.b.path, Keep: p.a.path, Kind: "entry",
			Reason: fmt.Sprintf("%.0f%% similar to %s", p.similarity*100, p.a.path)}
		switch {
		case opt.DryRun:
			a.Action, a.Status = "review", StatusPlanned
		case !room():
			a.Action, a.Status = "review", StatusPending
		default:
			v, err := askVerdict(ctx, env, fmt.Sprintf("Entry %s:\n%s\n\nEntry %s:\n%s", p.a.path, p.a.body, p.b.path, p.b.body))
			if err != nil {
				a.Action, a.Status, a.Error = "review", StatusFailed, err.Error()
				break
			}
			var err2 error
			a, err2 = applyPairVerdict(ctx, env, ix, run, p, v, today, a)
			if err2 != nil {
				out = append(out, a)
				return out, err2
			}
			if a.Status == StatusDone && a.Action != "keep" {
				used["entry"]++
				total++
			}
		}
		taken[p.a.path], taken[p.b.path] = true, true
		out = append(out, a)
	}
	for _, it := range entries {
		if taken[it.path] || strings.TrimSpace(it.fm.String("type")) != "project" {
			continue
		}
		due, err := store.NormalizeDate(it.fm.String("due"))
		if err != nil || due >= today {
			continue
		}
		a := MaintainAction{Step: StepModelMilestones, Path: it.path, Kind: "entry", Reason: "milestone due " + due}
		switch {
		case opt.DryRun:
			a.Action, a.Status = "review", StatusPlanned
		case !room():
			a.Action, a.Status = "review", StatusPending
		default:
			v, err := askVerdict(ctx, env, fmt.Sprintf("Today is %s. Project milestone %s (due %s):\n%s", today, it.path, due, it.body))
			if err != nil {
				a.Action, a.Status, a.Error = "review", StatusFailed, err.Error()
				break
			}
			a.Reason += ": " + v.Reason
			switch v.Verdict {
			case "keep":
				a.Action, a.Status = "keep", StatusDone
			case "archive":
				a.Action, a.To = store.ActionArchive, archivePath(env.WS, it.path, out)
				a.sha, a.edit = it.sha, archiveEdit(today, it.path, "", "model review: "+v.Reason)
				a.why = store.Why{Model: env.ModelID, Prompt: MaintainPromptVersion}
				a.Status = StatusPlanned
				one := []MaintainAction{a}
				if err := ix.Locked(ctx, func() error { return applyMaintain(ctx, env, ix, run, one) }); err != nil {
					return append(out, one[0]), err
				}
				a = one[0]
				if a.Status == StatusDone {
					used["entry"]++
					total++
				}
			default:
				a.Action, a.Status, a.Error = "review", StatusFailed, fmt.Sprintf("model answered verdict %q", v.Verdict)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// askVerdict asks the model one question and parses its JSON answer;
// anything else is an error that changes nothing.
func askVerdict(ctx context.Context, env *Env, question string) (*verdict, error) {
	resp, err := env.model().Chat(ctx, llm.Request{Model: env.ModelID, Messages: []llm.Message{
		llm.TextMessage(llm.RoleSystem, reviewSystem),
		llm.TextMessage(llm.RoleUser, question),
	}})
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	var v verdict
	if err := decodeReply(resp.Message.Text(), &v); err != nil {
		return nil, fmt.Errorf("model reply is not a verdict: %w", err)
	}
	switch v.Verdict {
	case "merge", "keep", "archive":
	default:
		return nil, fmt.Errorf("model reply is not a verdict: verdict %q", v.Verdict)
	}
	return &v, nil
}

// decodeReply reads one JSON object from a model reply, fenced or not.
func decodeReply(text string, v any) error {
	s := strings.TrimSpace(text)
	if i := strings.Index(s, "```"); i >= 0 {
		s = s[i+3:]
		s = strings.TrimPrefix(strings.TrimPrefix(s, "json"), "yaml")
		if j := strings.Index(s, "```"); j >= 0 {
			s = s[:j]
		}
	}
	s = strings.TrimSpace(s)
	if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i {
		s = s[i : j+1]
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

// applyPairVerdict carries out the model's answer about two entries; an
// error is a failed write, which stops the run.
func applyPairVerdict(ctx context.Context, env *Env, ix MaintainIndex, run *store.Run, p nearPair, v *verdict, today string, a MaintainAction) (MaintainAction, error) {
	a.Reason += ": " + v.Reason
	if v.Verdict == "keep" {
		a.Action, a.Status = "keep", StatusDone
		return a, nil
	}
	keep, drop := p.a, p.b
	switch v.Keep {
	case p.a.path, "":
	case p.b.path:
		keep, drop = p.b, p.a
	default:
		a.Action, a.Status, a.Error = "review", StatusFailed, fmt.Sprintf("model named %q, which is neither entry", v.Keep)
		return a, nil
	}
	a.Path, a.Keep, a.To = drop.path, keep.path, archivePath(env.WS, drop.path, nil)
	a.Action, a.sha = store.ActionArchive, drop.sha
	a.edit = archiveEdit(today, drop.path, keep.path, "model review: "+v.Reason)
	a.why = store.Why{Model: env.ModelID, Prompt: MaintainPromptVersion}
	a.Status = StatusPlanned
	var stop error
	err := ix.Locked(ctx, func() error {
		if v.Verdict == "merge" {
			if strings.TrimSpace(v.Body) == "" {
				return errors.New("the model merged without a body")
			}
			raw, err := os.ReadFile(env.WS.Abs(keep.path))
			if err != nil || store.Sum(raw) != keep.sha {
				return fmt.Errorf("%s changed since the plan", keep.path)
			}
			n := store.ParseNote(keep.path, raw)
			if n.FMErr != nil {
				return fmt.Errorf("%s: %w", keep.path, n.FMErr)
			}
			if n.FM.Has("updated") {
				if err := n.FM.Set("updated", today); err != nil {
					return err
				}
			}
			n.Body = "\n" + strings.TrimSpace(v.Body) + "\n"
			if !n.HasFM {
				n.Body = strings.TrimPrefix(n.Body, "\n")
			}
			env.maskSecrets(n, keep.path)
			out, err := n.Bytes()
			if err != nil {
				return err
			}
			why := store.Why{Reason: "merged with " + drop.path + ": " + v.Reason, Model: env.ModelID, Prompt: MaintainPromptVersion}
			if err := run.WriteFile(keep.path, out, why); err != nil {
				stop = err
				return err
			}
			if err := ix.UpdatePaths(ctx, keep.path); err != nil {
				stop = err
				return err
			}
			a.Action = "merge"
		}
		one := []MaintainAction{a}
		stop = applyMaintain(ctx, env, ix, run, one)
		a.Status, a.Error = one[0].Status, one[0].Error
		return stop
	})
	if err != nil {
		a.Status, a.Error = StatusFailed, err.Error()
	}
	return a, stop
}
