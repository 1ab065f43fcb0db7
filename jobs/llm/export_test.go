package llm

// Internals that the external tests (package llm_test) check.
var (
	RetryAfterCap          = retryAfterCap
	ParseRetryAfter        = parseRetryAfter
	BackoffCap             = backoffCap
	Backoff                = backoff
	MaxResponseBytes int64 = maxResponseBytes
	SleepContext           = sleepContext
)
