package llm

import "encoding/json"

// Internals that the external tests (package llm_test) check.
var (
	RetryAfterCap          = retryAfterCap
	ParseRetryAfter        = parseRetryAfter
	BackoffCap             = backoffCap
	Backoff                = backoff
	MaxResponseBytes int64 = maxResponseBytes
	SleepContext           = sleepContext
)

// ParseOpenAIResponse decodes a chat completions answer as the client does.
func ParseOpenAIResponse(body []byte) (*Response, error) {
	var r oaResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	return fromOpenAIResponse(&r)
}
