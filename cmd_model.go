package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/reme-dev/reme/jobs"
	"github.com/reme-dev/reme/jobs/llm"
)

// The model providers.
const (
	providerCohere = "cohere"
	providerOpenAI = "openai"
)

// EmbedEndpoint is a separate OpenAI-compatible embedding service, as
// ReMe's EMBEDDING_BASE_URL, EMBEDDING_API_KEY and EMBEDDING_MODEL_NAME
// configure it.
type EmbedEndpoint struct {
	BaseURL string `json:"base_url"`
	APIKey  string `json:"api_key,omitempty"`
	Model   string `json:"model"`
}

// resolveModel decides which provider is in effect and fills in its key,
// base URL and models, saying why. fromFile is the llm block as
// config.yaml left it, before the environment, to tell the two apart.
//
// With llm.provider set, that provider is used. Otherwise a Cohere key
// selects Cohere (as it always has), else an OpenAI-compatible key or base
// URL selects that provider, else there is no model. ReMe's LLM_API_KEY,
// LLM_BASE_URL and LLM_MODEL_NAME count as OpenAI-compatible settings, as
// they are in ReMe.
func resolveModel(c *LLMConfig, fromFile LLMConfig, getenv func(string) string) {
	type setting struct{ from, value string }
	env := func(name string) setting { return setting{name, strings.TrimSpace(getenv(name))} }
	first := func(ss ...setting) setting {
		for _, s := range ss {
			if s.value != "" {
				return s
			}
		}
		return setting{}
	}
	ownBase := first(env("REME_LLM_BASE_URL"), setting{"llm.base_url", strings.TrimSpace(fromFile.BaseURL)})
	cohereKey := first(env("REME_LLM_API_KEY"), env("COHERE_API_KEY"))
	openAIKey := first(env("REME_LLM_API_KEY"), env("OPENAI_API_KEY"), env("LLM_API_KEY"))
	openAIBase := first(ownBase, env("OPENAI_BASE_URL"), env("LLM_BASE_URL"))

	switch {
	case c.Provider != "":
		from := "llm.provider"
		if getenv("REME_LLM_PROVIDER") != "" {
			from = "REME_LLM_PROVIDER"
		}
		c.ProviderReason = from + " is " + c.Provider
	case getenv("COHERE_API_KEY") != "":
		c.Provider, c.ProviderReason = providerCohere, "COHERE_API_KEY is set"
		if other := first(env("OPENAI_API_KEY"), env("LLM_API_KEY"), env("LLM_BASE_URL")); other.from != "" {
			c.ProviderReason += "; set llm.provider: openai to use " + other.from + " instead"
		}
	case openAIKey.from != "":
		c.Provider, c.ProviderReason = providerOpenAI, openAIKey.from+" is set"
	case openAIBase.from != "":
		c.Provider, c.ProviderReason = providerOpenAI, openAIBase.from+" is set"
	default:
		c.ProviderReason = "no model configured: set COHERE_API_KEY or OPENAI_API_KEY, or llm.base_url for a local OpenAI-compatible server"
	}

	switch c.Provider {
	case providerCohere:
		c.APIKey, c.APIKeyFrom = cohereKey.value, cohereKey.from
		c.BaseURL = ownBase.value
		if c.BaseURL == "" {
			c.BaseURL = llm.DefaultCohereURL
		}
		if c.Model == "" {
			c.Model = llm.DefaultModel
		}
		if c.VisionModel == "" {
			c.VisionModel = llm.DefaultVisionModel
		}
	case providerOpenAI:
		c.APIKey, c.APIKeyFrom = openAIKey.value, openAIKey.from
		c.BaseURL = openAIBase.value
		if c.BaseURL == "" {
			c.BaseURL = llm.DefaultOpenAIURL
		}
		if c.Model == "" {
			c.Model = env("LLM_MODEL_NAME").value
		}
		if c.Model == "" && strings.TrimRight(c.BaseURL, "/") == llm.DefaultOpenAIURL {
			c.Model = llm.DefaultOpenAIModel
		}
		if c.VisionModel == "" {
			c.VisionModel = c.Model
		}
	}
	if base, key := env("EMBEDDING_BASE_URL"), env("EMBEDDING_API_KEY"); base.value != "" || key.value != "" {
		c.Embed = &EmbedEndpoint{BaseURL: base.value, APIKey: key.value, Model: env("EMBEDDING_MODEL_NAME").value}
		if c.Embed.BaseURL == "" {
			c.Embed.BaseURL = llm.DefaultOpenAIURL
		}
	}
}

// describe is one line saying which model is in use and why.
func (c *LLMConfig) describe() string {
	if c.Provider == "" {
		return "none (" + c.ProviderReason + ")"
	}
	model := c.Model
	if model == "" {
		model = "(no model: set llm.model)"
	}
	return fmt.Sprintf("%s %s at %s (%s)", c.Provider, model, llm.RedactURL(c.BaseURL), c.ProviderReason)
}

// connection is the llm.Config of the provider in effect, with model as
// the default model.
func (c *LLMConfig) connection(a *App, model string) llm.Config {
	return llm.Config{
		APIKey: c.APIKey, BaseURL: c.BaseURL, Model: model,
		Timeout: time.Duration(c.Timeout), MaxRetries: c.MaxRetries, Logger: a.Log,
	}
}

// ChatModel returns the chat client of the configured provider, or nil
// when no model is configured.
func (a *App) ChatModel() (llm.Client, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	c := &cfg.LLM
	conn := c.connection(a, c.Model)
	conn.VisionModel = c.VisionModel
	var client llm.Client
	switch c.Provider {
	case "":
		return nil, nil
	case providerCohere:
		client, err = llm.NewCohere(conn)
	default:
		client, err = llm.NewOpenAI(conn)
	}
	if err != nil {
		return nil, fmt.Errorf("llm (%s): %w", c.ProviderReason, err)
	}
	return client, nil
}

// Embedder returns the embedder for semantic search: ReMe's separate
// EMBEDDING_* endpoint when set, else the provider in effect with
// llm.embed_model. It is nil when no model is configured.
func (a *App) Embedder() (llm.Embedder, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	c := &cfg.LLM
	var e llm.Embedder
	switch {
	case c.Embed != nil:
		conn := c.connection(a, c.Embed.Model)
		conn.APIKey, conn.BaseURL = c.Embed.APIKey, c.Embed.BaseURL
		e, err = llm.NewOpenAIEmbedder(llm.EmbedConfig{Config: conn, Dimensions: c.EmbedDimensions})
	case c.Provider == providerCohere:
		e, err = llm.NewCohereEmbedder(llm.EmbedConfig{Config: c.connection(a, c.EmbedModel), Dimensions: c.EmbedDimensions})
	case c.Provider == providerOpenAI:
		e, err = llm.NewOpenAIEmbedder(llm.EmbedConfig{Config: c.connection(a, c.EmbedModel), Dimensions: c.EmbedDimensions})
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	return jobs.MaskEmbedder(e), nil
}

// Reranker returns Cohere's reranker when llm.rerank_model is set, else
// nil. OpenAI-compatible servers have no standard rerank endpoint.
func (a *App) Reranker() (llm.Reranker, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	c := &cfg.LLM
	if c.RerankModel == "" {
		return nil, nil
	}
	if c.Provider != providerCohere {
		return nil, fmt.Errorf("llm.rerank_model needs the cohere provider, not %q", c.Provider)
	}
	r, err := llm.NewCohereReranker(c.connection(a, c.RerankModel))
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	return jobs.MaskReranker(r), nil
}
