package jobs

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

// imageConv is a conversation with one base64 image and one URL image.
func imageConv(t *testing.T, extra string) []byte {
	png := base64.StdEncoding.EncodeToString(encodeImage(t, "png"))
	return []byte(`[
 {"role":"user","id":"m1","created_at":"2026-06-20T10:00:00","content":[
   {"type":"text","text":"Here is the deployment diagram."},
   {"type":"data","source":{"type":"base64","media_type":"image/png","data":"` + png + `"}}]},
 {"role":"user","id":"m2","created_at":"2026-06-20T10:01:00","content":[
   {"type":"image","source":{"type":"url","url":"https://example.com/chart.png"}}` + extra + `]}
]`)
}

// imageModel describes images, then writes the card citing them.
func imageModel() *llmtest.Scripted {
	return &llmtest.Scripted{Func: func(req llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == llm.RoleTool {
			return llmtest.TextReply("done"), nil
		}
		if len(req.Tools) == 0 { // the vision call
			var srcs []string
			for _, p := range last.Parts {
				if s, ok := strings.CutPrefix(p.Text, "Image source: "); ok {
					srcs = append(srcs, fmt.Sprintf("%q: %q", s, "a diagram of "+s))
				}
			}
			return llmtest.TextReply("{" + strings.Join(srcs, ", ") + "}"), nil
		}
		for _, tool := range req.Tools {
			if tool.Name == "daily_write" {
				return llmtest.ToolCallReply(call("daily_write", map[string]string{"name": "deployment-diagram", "description": "The deployment diagram.", "content": "- Gateway in front of the workers."})), nil
			}
		}
		return llmtest.TextReply("no tags"), nil
	}}
}

func TestAutoMemoryWithImages(t *testing.T) {
	model := imageModel()
	env, _ := newEnv(t, model)
	env.VisionModelID = "vision"
	res, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "img", Messages: imageConv(t, ""), IncludeImages: true})
	if err != nil {
		t.Fatal(err)
	}
	saved := "session/images/img/msg-" + hex.EncodeToString([]byte("m1")) + "-image-1.png"
	if !env.WS.Exists(saved) {
		t.Fatalf("the base64 image was not saved at %s", saved)
	}
	n, err := env.WS.ReadNote(*res.Path)
	if err != nil {
		t.Fatal(err)
	}
	got := n.FM.Strings("source_images")
	if len(got) != 2 || got[0] != "[["+saved+"]]" || got[1] != "https://example.com/chart.png" {
		t.Errorf("source_images %v", got)
	}
	reqs := model.Requests()
	vision := reqs[0]
	if vision.Model != "vision" || len(vision.Tools) != 0 {
		t.Fatalf("first request should be the vision call: %+v", vision.Model)
	}
	var parts []string
	for _, p := range vision.Messages[0].Parts {
		switch {
		case p.ImageURL != "":
			parts = append(parts, "image:"+p.ImageURL[:min(len(p.ImageURL), 22)])
		case strings.HasPrefix(p.Text, "Image source: "):
			parts = append(parts, p.Text)
		}
	}
	want := []string{"Image source: [[" + saved + "]]", "image:data:image/png;base64,", "Image source: https://example.com/chart.png", "image:https://example.com/ch"}
	if strings.Join(parts, "|") != strings.Join(want, "|") {
		t.Errorf("each image must come right after its source:\n%v\nwant\n%v", parts, want)
	}
	if !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Text(), "a diagram of [["+saved+"]]") {
		t.Error("the memory agent did not get the image description beside its source")
	}
	// the dialog file keeps no base64 payload
	b, _ := os.ReadFile(env.WS.Abs("session/dialog/img.jsonl"))
	if strings.Contains(string(b), `"base64"`) || !strings.Contains(string(b), "https://example.com/chart.png") {
		t.Errorf("dialog file:\n%s", b)
	}
	// a second call with the same image reuses the file and does not duplicate source_images
	before, _ := os.Stat(env.WS.Abs(saved))
	more := imageConv(t, `,{"type":"text","text":"and one more fact"}`)
	if _, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "img", Messages: more, IncludeImages: true}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(env.WS.Abs(saved))
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("the saved image was rewritten")
	}
	n, _ = env.WS.ReadNote(*res.Path)
	if len(n.FM.Strings("source_images")) != 2 {
		t.Errorf("source_images duplicated: %v", n.FM.Strings("source_images"))
	}
}

func TestAutoMemoryImageInputIsCheckedBeforeSaving(t *testing.T) {
	png := base64.StdEncoding.EncodeToString(encodeImage(t, "png"))
	block := `{"type":"data","source":{"type":"base64","media_type":"image/png","data":"` + png + `"}}`
	tests := []struct {
		name, msgs, want string
	}{
		{"file url", `[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"file:///etc/passwd"}}]}]`, "only http and https"},
		{"ftp url", `[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"ftp://x/y.png"}}]}]`, "only http and https"},
		{"bad base64", `[{"role":"user","content":[{"type":"data","source":{"type":"base64","media_type":"image/png","data":"!!!"}}]}]`, "not valid base64"},
		{"too many", `[{"role":"user","content":[` + strings.Repeat(block+",", 5) + block + `]}]`, "at most 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := newEnv(t, imageModel())
			_, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s", Messages: []byte(tt.msgs), IncludeImages: true})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if files := workspaceFiles(t, env.WS); len(files) != 0 {
				t.Errorf("wrote %v", files)
			}
		})
	}
	// images off (the default): image blocks are neither saved nor shown
	model := imageModel()
	env, _ := newEnv(t, model)
	if _, err := AutoMemory(context.Background(), env, AutoMemoryRequest{SessionID: "s", Messages: imageConv(t, "")}); err != nil {
		t.Fatal(err)
	}
	if env.WS.Exists("session/images") || model.Requests()[0].Model == "vision" {
		t.Error("images were processed although include_images was off")
	}
}
