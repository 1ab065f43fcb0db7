// Command fakecohere serves the Cohere v2 chat API locally (or, with
// -openai, the OpenAI-compatible one) with a model that answers instantly,
// for measuring reme's own work in auto_memory: it writes the card it is
// asked for, then sets tags. It prints its base URL on stdout and serves
// until killed.
//
//	fakecohere -addr 127.0.0.1:0
//	fakecohere -openai   # then: REME_LLM_PROVIDER=openai REME_LLM_BASE_URL=<url> REME_MODEL=fake REME_LLM_API_KEY=fake-openai-key-0123456789
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

var sessionRE = regexp.MustCompile(`Session id: (\S+)`)
var pathRE = regexp.MustCompile(`read\(path="([^"]+)"\)`)
var writeRE = regexp.MustCompile(`write\(path="([^"]+)"`)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	openAI := flag.Bool("openai", false, "speak the OpenAI-compatible API (base URL ends in /v1) instead of Cohere's")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	var handler http.Handler
	url := "http://" + ln.Addr().String()
	if *openAI {
		fake := llmtest.NewFakeOpenAI()
		fake.SetHandler(reply)
		handler, url = fake, url+"/v1"
	} else {
		fake := llmtest.NewFakeCohere()
		fake.SetHandler(reply)
		handler = fake
	}
	fmt.Println(url)
	os.Stdout.Sync()
	log.Fatal(http.Serve(ln, handler))
}

// reply plays the model: on the first turn it calls the one tool that
// writes, on the next it answers in text.
func reply(body []byte) llmtest.FakeReply {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		return llmtest.FakeReply{Status: 400}
	}
	if req.Messages[len(req.Messages)-1].Role == "tool" {
		return llmtest.FakeReply{Text: "Done."}
	}
	prompt := text(req.Messages[len(req.Messages)-1].Content)
	tools := map[string]bool{}
	for _, t := range req.Tools {
		tools[t.Function.Name] = true
	}
	switch {
	case tools["daily_write"]:
		sid := "session"
		if m := sessionRE.FindStringSubmatch(prompt); m != nil {
			sid = m[1]
		}
		args, _ := json.Marshal(map[string]string{
			"name":        "bench-" + sid,
			"description": "A benchmark card written by the instant fake model for session " + sid + ".",
			"content":     "## Facts\n\n- The benchmark conversation mentioned a rate limit of 100 requests per second.\n",
		})
		return llmtest.FakeReply{ToolCalls: []llmtest.FakeToolCall{{Name: "daily_write", Arguments: args}}}
	case tools["write"] && !tools["read"]:
		// auto_resource creating a card: write it where the prompt says,
		// named after the file
		m := writeRE.FindStringSubmatch(prompt)
		if m == nil {
			return llmtest.FakeReply{Text: "No target path."}
		}
		name := strings.TrimSuffix(m[1][strings.LastIndexByte(m[1], '/')+1:], ".md")
		args, _ := json.Marshal(map[string]string{"path": m[1], "name": name,
			"description": "A resource card written by the instant fake model.", "content": "## Content\n\nSummarised.\n"})
		return llmtest.FakeReply{ToolCalls: []llmtest.FakeToolCall{{Name: "write", Arguments: args}}}
	case tools["list_tags"]:
		path := ""
		if m := pathRE.FindStringSubmatch(prompt); m != nil {
			path = m[1]
		}
		args, _ := json.Marshal(map[string]any{"path": path, "metadata": map[string]any{"memory_tags": []string{"bench", "rate-limit"}}})
		return llmtest.FakeReply{ToolCalls: []llmtest.FakeToolCall{{Name: "frontmatter_update", Arguments: args}}}
	}
	return llmtest.FakeReply{Text: "Nothing to do."}
}

// text decodes a message content: a string or a list of text blocks.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}
