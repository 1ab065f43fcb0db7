package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On the synthetic conversations shipped in testdata (made by
// scripts/gencorpus -locomo: paraphrased questions, answers given in
// replies, both friends living similar stories), reme finds at least a
// tenth more of the evidence than plain BM25 over single turns, within the
// same reading budget of 20 turns and without a model.
func TestEvalBeatsTurnBM25(t *testing.T) {
	out, errOut, code := runReme(t, "-w", t.TempDir(), "--json", "eval", filepath.Join("testdata", "eval", "locomo-synthetic.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Conversations != 10 || rep.Questions < 600 || rep.Budget != 20 || len(rep.Categories) != 5 {
		t.Fatalf("report %+v", rep)
	}
	if d := rep.Overall.Reme - rep.Overall.Baseline; d < 0.10 {
		t.Errorf("reme %.3f, single-turn BM25 %.3f: ahead by %.3f, want at least 0.10", rep.Overall.Reme, rep.Overall.Baseline, d)
	}
	t.Logf("reme %.3f, bm25 %.3f", rep.Overall.Reme, rep.Overall.Baseline)
}

const evalSample1 = `[{
 "sample_id": "conv 7/x",
 "conversation": {
  "speaker_a": "Caroline", "speaker_b": "Melanie",
  "session_2_date_time": "9:15 am on 12 May, 2023",
  "session_2": [
   {"speaker": "Melanie", "dia_id": "D2:1", "text": "How is the pottery going?"},
   {"speaker": "Caroline", "dia_id": "D2:2", "text": "I made a blue bowl!", "blip_caption": "a photo of a blue bowl"}
  ],
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
   {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
   {"speaker": "Melanie", "dia_id": "D1:2", "text": "Hi!  How are\nyou?"},
   {"speaker": "Caroline", "dia_id": "D1:3", "text": "I went to a support group yesterday."}
  ]
 },
 "qa": [
  {"question": "When did Caroline go to the support group?", "answer": "7 May 2023", "evidence": ["D1:3"], "category": 2},
  {"question": "What did Caroline make in pottery?", "evidence": ["D2:2; D2:1"], "category": "4"},
  {"question": "What is unknown?", "evidence": [], "category": 3},
  {"question": "Who is missing?", "evidence": ["D9:9"], "category": 1}
 ]
}]`

func TestEvalSmall(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.json")
	if err := os.WriteFile(data, []byte(evalSample1), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(dir, "keep")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out, errOut, code := runReme(t, "-w", dir, "--json", "eval", data, "--keep", keep, "--budget", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// --keep writes its workspaces there and nowhere else
	if left, _ := filepath.Glob(filepath.Join(tmp, "reme-eval-*")); len(left) > 0 {
		t.Errorf("--keep left %v", left)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Questions != 2 || rep.Skipped != 2 || rep.Sessions != 2 || rep.Overall.Reme != 1 {
		t.Errorf("report %+v", rep)
	}
	// one card per session, dated from the session, one line per turn
	card, err := os.ReadFile(filepath.Join(keep, "01-conv-7-x", "daily", "2023-05-08", "conv-7-x-session-1.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(card), "\n")
	if lines[7] != "Caroline: Hey Mel!" || lines[8] != "Melanie: Hi! How are you?" {
		t.Errorf("card:\n%s", card)
	}
	card2, err := os.ReadFile(filepath.Join(keep, "01-conv-7-x", "daily", "2023-05-12", "conv-7-x-session-2.md"))
	if err != nil || !strings.Contains(string(card2), "Caroline: I made a blue bowl! [shares a photo: a photo of a blue bowl]\n") {
		t.Errorf("card 2 (%v):\n%s", err, card2)
	}
	// the human table
	out, _, code = runReme(t, "-w", dir, "eval", data, "--budget", "3")
	if code != 0 || !strings.Contains(out, "2 temporal") || !strings.Contains(out, "(2 question(s) without usable evidence left out)") {
		t.Errorf("table:\n%s", out)
	}
}

func TestEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"not": "locomo"`), 0o644)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`[]`), 0o644)
	noq := filepath.Join(dir, "noq.json")
	os.WriteFile(noq, []byte(`[{"conversation": {"session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}, "qa": []}]`), 0o644)
	nosession := filepath.Join(dir, "nosession.json")
	os.WriteFile(nosession, []byte(`[{"conversation": {"speaker_a": "A"}, "qa": []}]`), 0o644)
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"eval", bad}, 1, "not LoCoMo-shaped JSON"},
		{[]string{"eval", empty}, 1, "no conversation in the file"},
		{[]string{"eval", noq}, 1, "no question with evidence to ask"},
		{[]string{"eval", nosession}, 1, "conversation has no session_N"},
		{[]string{"eval", filepath.Join(dir, "missing.json")}, 1, "no such file"},
		{[]string{"eval", bad, "--budget", "0"}, 2, "--budget must be at least 1"},
	} {
		out, errOut, code := runReme(t, append([]string{"-w", dir}, tt.args...)...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and %q", tt.args, code, out, errOut, tt.code, tt.msg)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("eval left files behind: %v", ents)
	}
}
