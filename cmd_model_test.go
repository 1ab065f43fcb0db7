package main

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

// TestResolveModel covers how the provider is chosen and where its key,
// URL and model come from.
func TestResolveModel(t *testing.T) {
	type want struct {
		Provider, Reason, KeyFrom, BaseURL, Model, VisionModel string
	}
	tests := []struct {
		name string
		file string // config.yaml
		env  map[string]string
		want want
	}{
		{"nothing", "", nil, want{Reason: "no model configured: set COHERE_API_KEY or OPENAI_API_KEY, or llm.base_url for a local OpenAI-compatible server"}},
		{"cohere key", "", map[string]string{"COHERE_API_KEY": "co"},
			want{"cohere", "COHERE_API_KEY is set", "COHERE_API_KEY", llm.DefaultCohereURL, llm.DefaultModel, llm.DefaultVisionModel}},
		{"cohere key with a proxy", "", map[string]string{"COHERE_API_KEY": "co", "REME_LLM_BASE_URL": "https://proxy.example.com"},
			want{"cohere", "COHERE_API_KEY is set", "COHERE_API_KEY", "https://proxy.example.com", llm.DefaultModel, llm.DefaultVisionModel}},
		{"cohere wins over an OpenAI key, and says so", "", map[string]string{"COHERE_API_KEY": "co", "OPENAI_API_KEY": "sk"},
			want{"cohere", "COHERE_API_KEY is set; set llm.provider: openai to use OPENAI_API_KEY instead", "COHERE_API_KEY", llm.DefaultCohereURL, llm.DefaultModel, llm.DefaultVisionModel}},
		{"openai key", "", map[string]string{"OPENAI_API_KEY": "sk"},
			want{"openai", "OPENAI_API_KEY is set", "OPENAI_API_KEY", llm.DefaultOpenAIURL, llm.DefaultOpenAIModel, llm.DefaultOpenAIModel}},
		{"REME_LLM_API_KEY before OPENAI_API_KEY", "", map[string]string{"OPENAI_API_KEY": "sk", "REME_LLM_API_KEY": "rk"},
			want{"openai", "REME_LLM_API_KEY is set", "REME_LLM_API_KEY", llm.DefaultOpenAIURL, llm.DefaultOpenAIModel, llm.DefaultOpenAIModel}},
		{"ReMe's variables", "", map[string]string{"LLM_API_KEY": "dk", "LLM_BASE_URL": "https://dashscope.aliyuncs.com/compatible-mode/v1", "LLM_MODEL_NAME": "qwen3.7-plus"},
			want{"openai", "LLM_API_KEY is set", "LLM_API_KEY", "https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3.7-plus", "qwen3.7-plus"}},
		{"a local server without key", "llm:\n  base_url: http://localhost:11434/v1\n  model: llama3.1\n", nil,
			want{"openai", "llm.base_url is set", "", "http://localhost:11434/v1", "llama3.1", "llama3.1"}},
		{"OPENAI_BASE_URL alone, no model", "", map[string]string{"OPENAI_BASE_URL": "http://localhost:8000/v1"},
			want{"openai", "OPENAI_BASE_URL is set", "", "http://localhost:8000/v1", "", ""}},
		{"config before foreign variables, REME_ before config", "llm:\n  provider: openai\n  base_url: http://file/v1\n  model: from-file\n  vision_model: llava\n",
			map[string]string{"OPENAI_BASE_URL": "http://openai-env/v1", "LLM_MODEL_NAME": "from-reme", "REME_MODEL": "from-env", "OPENAI_API_KEY": "sk"},
			want{"openai", "llm.provider is openai", "OPENAI_API_KEY", "http://file/v1", "from-env", "llava"}},
		{"explicit cohere ignores OpenAI settings", "", map[string]string{"REME_LLM_PROVIDER": "cohere", "OPENAI_API_KEY": "sk", "LLM_BASE_URL": "http://x/v1"},
			want{"cohere", "REME_LLM_PROVIDER is cohere", "", llm.DefaultCohereURL, llm.DefaultModel, llm.DefaultVisionModel}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := loadConfig(ws, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			l := cfg.LLM
			got := want{l.Provider, l.ProviderReason, l.APIKeyFrom, l.BaseURL, l.Model, l.VisionModel}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("resolved (-want +got):\n%s", diff)
			}
			if tt.want.KeyFrom != "" && l.APIKey != tt.env[tt.want.KeyFrom] {
				t.Errorf("APIKey = %q, want the value of %s", l.APIKey, tt.want.KeyFrom)
			}
		})
	}
}

func TestResolveModelErrorsAndEmbeddings(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte("llm:\n  provider: gemini\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(ws, func(string) string { return "" }); err == nil || !strings.HasSuffix(err.Error(), `: llm.provider must be cohere or openai, not "gemini"`) {
		t.Errorf("error = %v", err)
	}

	fake := llmtest.NewFakeOpenAI()
	srv := httptest.NewServer(fake)
	defer srv.Close()
	env := map[string]string{"COHERE_API_KEY": "co", "EMBEDDING_API_KEY": llmtest.FakeOpenAIKey, "EMBEDDING_BASE_URL": srv.URL + "/v1", "EMBEDDING_MODEL_NAME": "text-embedding-v4"}
	cfg, err := loadConfig(t.TempDir(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	app := &App{Globals: &Globals{}, cfg: cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	app.setup()
	e, err := app.Embedder()
	if err != nil {
		t.Fatal(err)
	}
	if e.Model() != "text-embedding-v4" {
		t.Errorf("embedder = %v, want ReMe's OpenAI-compatible endpoint", e)
	}
	// the texts sent to be embedded are masked, as chat requests are
	if _, err := e.Embed(context.Background(), []string{"deploy key AKIA2QZ5K7X4MWRP3T6N at 9fceb02d0ae598e95dc970b74767f19372d61af8"}, llm.InputDocument); err != nil {
		t.Fatal(err)
	}
	if reqs := fake.EmbedRequests(); len(reqs) != 1 || strings.Contains(string(reqs[0]), "AKIA2QZ5K7X4MWRP3T6N") ||
		!strings.Contains(string(reqs[0]), "deploy key [redacted:aws-access-key] at 9fceb02d0ae598e95dc970b74767f19372d61af8") {
		t.Errorf("embedding requests at ReMe's endpoint: %s", reqs)
	}
	if r := cfg.redacted().LLM.Embed; r.APIKey != "(set)" {
		t.Errorf("redacted embedding key = %q", r.APIKey)
	}
	if r, err := app.Reranker(); r != nil || err != nil {
		t.Errorf("Reranker without rerank_model = %v, %v", r, err)
	}
	cfg.LLM.RerankModel = "rerank-v3.5"
	if r, err := app.Reranker(); err != nil || r == nil || r.Model() != "rerank-v3.5" {
		t.Errorf("Reranker = %v, %v", r, err)
	}
	cfg.LLM.Embed = nil
	if e, err := app.Embedder(); err != nil || e.Model() != llm.DefaultCohereEmbedModel || e.Dimensions() != 1536 {
		t.Errorf("Cohere embedder = %v, %v", e, err)
	}
	none := &App{Globals: &Globals{}, cfg: defaultConfig()}
	if c, err := none.ChatModel(); c != nil || err != nil {
		t.Errorf("ChatModel without a model = %v, %v", c, err)
	}
	if e, err := none.Embedder(); e != nil || err != nil {
		t.Errorf("Embedder without a model = %v, %v", e, err)
	}
}
