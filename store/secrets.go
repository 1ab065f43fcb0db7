package store

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Secrets people paste into a conversation (API keys, tokens, passwords)
// must not end up in a model request or in a card. RedactSecrets masks the
// ones whose format says what they are; precision comes first, so an
// ordinary hash, UUID, git SHA, base64 image or id is never masked, and a
// secret with no telling format or context (a bare random string) is not
// found. The scan is one pass per rule family, each linear in the input.

// SecretFinding is one masked secret: its kind (the placeholder says
// [redacted:<kind>]) and its byte range in the input. The secret itself is
// not kept.
type SecretFinding struct {
	Kind  string `json:"kind"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// RedactPrefix starts every placeholder.
const RedactPrefix = "[redacted:"

// Placeholder is what a secret of kind is replaced by.
func Placeholder(kind string) string { return RedactPrefix + kind + "]" }

// Rule families, strongest first: where two findings overlap, the one
// from the stronger family wins (a GitHub token that is also a URL's
// password is a github-token).
const (
	prioAssignment = iota
	prioContext    // URL passwords, Authorization headers
	prioFormat     // self-describing token formats
	prioBlock      // private key blocks
)

type span struct {
	SecretFinding
	prio int
}

// RedactSecrets returns s with every secret found replaced by its typed
// placeholder, and the findings in input order. Text outside the findings
// is unchanged, and redacting the result again finds nothing.
func RedactSecrets(s string) (string, []SecretFinding) {
	var spans []span
	spans = findKeyBlocks(s, spans)
	spans = findTokens(s, spans)
	spans = findURLPasswords(s, spans)
	spans = findAuthHeaders(s, spans)
	spans = findAssignments(s, spans)
	if len(spans) == 0 {
		return s, nil
	}
	// Keep the strongest of overlapping findings, then the earliest.
	slices.SortStableFunc(spans, func(a, b span) int {
		if a.prio != b.prio {
			return b.prio - a.prio
		}
		return a.Start - b.Start
	})
	var kept []SecretFinding
	var taken []bool // byte offsets already masked, once there are many findings
	if len(spans) > 16 {
		taken = make([]bool, len(s))
	}
	for _, sp := range spans {
		overlaps := false
		if taken != nil {
			overlaps = slices.Contains(taken[sp.Start:sp.End], true)
			if !overlaps {
				for i := sp.Start; i < sp.End; i++ {
					taken[i] = true
				}
			}
		} else {
			for _, k := range kept {
				if sp.Start < k.End && k.Start < sp.End {
					overlaps = true
					break
				}
			}
		}
		if !overlaps {
			kept = append(kept, sp.SecretFinding)
		}
	}
	slices.SortFunc(kept, func(a, b SecretFinding) int { return a.Start - b.Start })
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range kept {
		b.WriteString(s[last:f.Start])
		b.WriteString(Placeholder(f.Kind))
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String(), kept
}

func add(spans []span, kind string, start, end, prio int) []span {
	return append(spans, span{SecretFinding{kind, start, end}, prio})
}

// --- private key blocks ---

const (
	pemBegin = "-----BEGIN "
	pemEnd   = "-----END "
	pemDash  = "-----"
)

// findKeyBlocks masks PEM, OpenSSH and PGP private key blocks from BEGIN to
// END, also when the newlines are escaped (\n inside a JSON string, as in
// a GCP service-account key). A block whose END is missing (a cut paste)
// is masked to the end of its base64 body.
func findKeyBlocks(s string, spans []span) []span {
	// Both caches only move forward, which keeps the scan linear.
	nextEnd := -1 // offset of the next "-----END "
	nextBad := -1 // offset of the next byte that cannot be in a key body
	for i := 0; ; {
		k := strings.Index(s[i:], pemBegin)
		if k < 0 {
			return spans
		}
		start := i + k
		labelStart := start + len(pemBegin)
		le := strings.Index(s[labelStart:min(len(s), labelStart+64)], pemDash)
		if le < 0 {
			i = labelStart
			continue
		}
		label := s[labelStart : labelStart+le]
		if !strings.HasSuffix(label, "PRIVATE KEY") && !strings.HasSuffix(label, "PRIVATE KEY BLOCK") {
			i = labelStart
			continue
		}
		bodyStart := labelStart + le + len(pemDash)
		if nextEnd < bodyStart && nextEnd != len(s) {
			if e := strings.Index(s[bodyStart:], pemEnd); e >= 0 {
				nextEnd = bodyStart + e
			} else {
				nextEnd = len(s)
			}
		}
		if nextBad < bodyStart {
			nextBad = bodyStart
			for nextBad < len(s) && isKeyBodyByte(s[nextBad]) {
				nextBad++
			}
		}
		var end int
		if marker := pemEnd + label + pemDash; nextEnd < len(s) && nextBad >= nextEnd && strings.HasPrefix(s[nextEnd:], marker) {
			end = nextEnd + len(marker)
		} else {
			end = keyBodyEnd(s, bodyStart)
		}
		spans = add(spans, "private-key", start, end, prioBlock)
		i = end
	}
}

// keyBodyEnd returns the end of the base64 lines after a BEGIN line: lines
// broken by \n, \r\n or an escaped \n, plus the header lines of encrypted
// PEM keys (Proc-Type, DEK-Info, Comment).
func keyBodyEnd(s string, p int) int {
	end := p
	for first := true; ; first = false {
		switch {
		case strings.HasPrefix(s[p:], "\r\n"):
			p += 2
		case strings.HasPrefix(s[p:], "\n"), first && strings.HasPrefix(s[p:], " "):
			p++
		case strings.HasPrefix(s[p:], `\n`):
			p += 2
		default:
			return end
		}
		if hasAnyPrefix(s[p:], "Proc-Type:", "DEK-Info:", "Comment:") {
			for p < len(s) && s[p] != '\n' && s[p] != '\\' {
				p++
			}
			end = p
			continue
		}
		q := p
		for q < len(s) && isBase64Byte(s[q]) {
			q++
		}
		if q == p {
			return end
		}
		end, p = q, q
	}
}

// isKeyBodyByte: base64, blanks, escaped line breaks and the header lines
// of encrypted PEM keys (Proc-Type: 4,ENCRYPTED).
func isKeyBodyByte(c byte) bool {
	return isAlnum(c) || strings.IndexByte("+/=\r\n\t \\:,-", c) >= 0
}

// --- self-describing tokens ---

// isTokenByte is the alphabet of the token formats below, plus '.' (JWT,
// SendGrid, Google access tokens) and '~' (Azure client secrets).
func isTokenByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '~' }

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// findTokens looks at every maximal run of token bytes once; a format
// must cover the whole run (less a sentence's final dots), so a token is
// never found inside a longer word.
func findTokens(s string, spans []span) []span {
	for i := 0; i < len(s); {
		if !isTokenByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		end := j
		for end > i && s[end-1] == '.' {
			end--
		}
		if end-i >= 20 {
			if kind := tokenKind(s[i:end]); kind != "" {
				spans = add(spans, kind, i, end, prioFormat)
			}
		}
		i = j
	}
	return spans
}

// tokenKind names the format of a whole run, or returns "".
func tokenKind(t string) string {
	switch {
	case len(t) == 20 && hasAnyPrefix(t, "AKIA", "ASIA", "ABIA", "ACCA") && allIn(t[4:], isBase32Upper):
		return "aws-access-key"
	case len(t) == 39 && strings.HasPrefix(t, "AIza") && allIn(t[4:], isURLSafe):
		return "gcp-api-key"
	case len(t) == 35 && strings.HasPrefix(t, "GOCSPX-") && allIn(t[7:], isURLSafe):
		return "gcp-oauth-secret"
	case strings.HasPrefix(t, "ya29.") && len(t) >= 30 && allIn(t[5:], isURLSafeDot):
		return "gcp-access-token"
	case strings.HasPrefix(t, "sk-ant-") && len(t) >= 40 && allIn(t[7:], isURLSafe) && varied(t[7:]):
		return "anthropic-api-key"
	case hasAnyPrefix(t, "sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-") && len(t) >= 40 && allIn(t[3:], isURLSafe) && varied(t[8:]):
		return "openai-api-key"
	case strings.HasPrefix(t, "sk-") && strings.Contains(t, "T3BlbkFJ") && allIn(t[3:], isAlnum):
		return "openai-api-key"
	case strings.HasPrefix(t, "sk-") && len(t) >= 23 && allIn(t[3:], isURLSafe) && hasDigit(t[3:]) && hasLetter(t[3:]) && varied(t[3:]):
		return "api-key" // DeepSeek, OpenRouter, Moonshot and other sk- keys
	case len(t) >= 40 && len(t) <= 255 && hasAnyPrefix(t, "ghp_", "gho_", "ghu_", "ghs_", "ghr_") && allIn(t[4:], isAlnum) && varied(t[4:]):
		return "github-token"
	case strings.HasPrefix(t, "github_pat_") && len(t) >= 40 && allIn(t[11:], isIdent) && varied(t[11:]):
		return "github-token"
	case hasAnyPrefix(t, "glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "gloas-") && allIn(t[strings.IndexByte(t, '-')+1:], isURLSafe) && len(t)-strings.IndexByte(t, '-') > 20 && varied(t[6:]):
		return "gitlab-token"
	case len(t) >= 24 && hasAnyPrefix(t, "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "xapp-") && allIn(t[5:], isURLSafe) && hasDigit(t[5:]):
		return "slack-token"
	case hasAnyPrefix(t, "sk_live_", "rk_live_", "sk_test_", "rk_test_", "whsec_") && len(t) >= 30 && allIn(t[strings.LastIndexByte(t[:8], '_')+1:], isAlnum) && varied(t[8:]):
		return "stripe-key"
	case len(t) == 37 && strings.HasPrefix(t, "hf_") && allIn(t[3:], isLetter) && varied(t[3:]):
		return "huggingface-token"
	case len(t) == 40 && strings.HasPrefix(t, "npm_") && allIn(t[4:], isAlnum) && varied(t[4:]):
		return "npm-token"
	case len(t) == 69 && strings.HasPrefix(t, "SG.") && t[25] == '.' && allIn(t[3:25], isURLSafe) && allIn(t[26:], isURLSafe):
		return "sendgrid-key"
	case strings.HasPrefix(t, "pypi-AgEIcHlwaS5vcmc") && len(t) >= 70 && allIn(t[5:], isURLSafe):
		return "pypi-token"
	case strings.HasPrefix(t, "eyJ") && isJWT(t):
		return "jwt"
	case len(t) >= 37 && len(t) <= 40 && t[3] >= '0' && t[3] <= '9' && t[4:6] == "Q~" && allIn(t, isAzureSecretByte) && varied(t[6:]):
		return "azure-client-secret"
	}
	return ""
}

// isJWT checks the three dot-separated base64url parts and that the header
// decodes to a JSON object with an "alg" (or "typ").
func isJWT(t string) bool {
	parts := strings.Split(t, ".")
	if len(parts) != 3 || len(parts[0]) < 10 || len(parts[0]) > 1024 || len(parts[1]) < 10 || !strings.HasPrefix(parts[1], "eyJ") {
		return false
	}
	for _, p := range parts {
		if !allIn(p, isURLSafe) {
			return false
		}
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[0], "="))
	if err != nil {
		return false
	}
	var head map[string]any
	if json.Unmarshal(raw, &head) != nil {
		return false
	}
	_, alg := head["alg"]
	_, typ := head["typ"]
	return alg || typ
}

func hasAnyPrefix(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func allIn(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isBase32Upper(c byte) bool     { return c >= 'A' && c <= 'Z' || c >= '2' && c <= '7' }
func isURLSafe(c byte) bool         { return isAlnum(c) || c == '_' || c == '-' }
func isURLSafeDot(c byte) bool      { return isURLSafe(c) || c == '.' }
func isIdent(c byte) bool           { return isAlnum(c) || c == '_' }
func isLetter(c byte) bool          { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAzureSecretByte(c byte) bool { return isURLSafe(c) || c == '.' || c == '~' }

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }
func hasLetter(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 128 && isLetter(byte(r)) }) >= 0
}

// varied tells a random-looking string from a placeholder such as
// sk-xxxxxxxxxxxxxxxxxxxxxxxx or ghp_000000…: at least 8 distinct bytes.
func varied(s string) bool {
	var seen [256]bool
	n := 0
	for i := 0; i < len(s); i++ {
		if !seen[s[i]] {
			seen[s[i]] = true
			if n++; n >= 8 {
				return true
			}
		}
	}
	return false
}

// --- URLs with credentials ---

// maxAuthority bounds the scan for a URL's user:password@ part.
const maxAuthority = 512

// findURLPasswords masks the password of scheme://user:password@host, and
// the secret path of Slack incoming webhooks.
func findURLPasswords(s string, spans []span) []span {
	for i := 0; ; {
		k := strings.Index(s[i:], "://")
		if k < 0 {
			return spans
		}
		sep := i + k
		i = sep + 3
		st := sep
		for st > 0 && sep-st < 32 && (isAlnum(s[st-1]) || s[st-1] == '+' || s[st-1] == '.' || s[st-1] == '-') {
			st--
		}
		if sep-st < 2 || !isLetter(s[st]) {
			continue
		}
		auth := i
		for auth < len(s) && auth-i < maxAuthority && !isAuthorityEnd(s[auth]) {
			auth++
		}
		host := s[i:auth]
		if strings.HasPrefix(host, "hooks.slack.com") && strings.HasPrefix(s[auth:], "/services/") {
			p := auth + len("/services/")
			e := p
			for e < len(s) && (isAlnum(s[e]) || s[e] == '/') {
				e++
			}
			if e-p >= 30 {
				spans = add(spans, "slack-webhook", p, e, prioContext)
			}
			continue
		}
		at := strings.LastIndexByte(host, '@')
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(host[:at], ':')
		if colon < 0 {
			continue
		}
		pw := host[colon+1 : at]
		if pw == "" || isPlaceholderValue(pw) {
			continue
		}
		spans = add(spans, "url-password", i+colon+1, i+at, prioContext)
	}
}

func isAuthorityEnd(c byte) bool {
	return c <= ' ' || strings.IndexByte("/?#\"'`<>()[]{}|\\", c) >= 0
}

// --- Authorization headers ---

// findAuthHeaders masks the credentials after "Bearer " (anywhere: curl
// commands, logs) and after "Authorization: Basic ".
func findAuthHeaders(s string, spans []span) []span {
	for _, scheme := range []string{"Bearer ", "bearer ", "BEARER ", "Basic ", "basic "} {
		basic := strings.EqualFold(scheme, "basic ")
		for i := 0; ; {
			k := strings.Index(s[i:], scheme)
			if k < 0 {
				break
			}
			at := i + k
			p := at + len(scheme)
			i = p
			if at > 0 && isAlnum(s[at-1]) {
				continue
			}
			if basic && !strings.HasSuffix(strings.ToLower(strings.TrimRight(s[max(0, at-32):at], " \t\"'")), "authorization:") {
				continue
			}
			e := p
			for e < len(s) && (isURLSafeDot(s[e]) || s[e] == '~' || s[e] == '+' || s[e] == '/') {
				e++
			}
			for e < len(s) && s[e] == '=' {
				e++
			}
			tok := s[p:e]
			kind := "bearer-token"
			if basic {
				kind = "basic-auth"
				if len(tok) < 8 {
					continue
				}
			} else if len(tok) < 16 || !hasDigit(tok) || !varied(tok) {
				continue
			}
			spans = add(spans, kind, p, e, prioContext)
		}
	}
	return spans
}

// --- key = value assignments ---

// maxValue and maxQuoted bound a value's scan, which keeps the rule
// linear on hostile input such as "password=password=…". Longer secrets
// have formats of their own (JWTs, key blocks).
const (
	maxValue  = 256
	maxQuoted = 1024
)

// findAssignments masks the value of password=…, secret: …, "api_key":
// "…", DB_PASSWORD=…, AccountKey=… and the like. A colon form with an
// unquoted value must end its line (YAML, headers, "Password: hunter2"),
// so prose such as "password: must be long" is left alone.
func findAssignments(s string, spans []span) []span {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' && c != ':' {
			continue
		}
		if c == '=' && (i+1 < len(s) && s[i+1] == '=' || i > 0 && strings.IndexByte("=!<>", s[i-1]) >= 0) {
			continue // a comparison
		}
		if c == ':' && strings.HasPrefix(s[i:], "://") {
			continue
		}
		key, ok := keyBefore(s, i)
		if !ok {
			continue
		}
		kind, minLen := secretKeyKind(key)
		if kind == "" {
			continue
		}
		vs, ve, quoted, ok := valueAfter(s, i+1)
		if !ok {
			continue
		}
		v := s[vs:ve]
		if strings.Contains(v, RedactPrefix) || strings.HasPrefix(s[ve:], RedactPrefix) {
			continue // part of a secret masked already: nothing of its own
		}
		if !quoted && (c == ':' && !endsLine(s, ve) || isCodeReference(s, vs, ve)) {
			continue
		}
		if len(v) < minLen || isPlaceholderValue(v) || kind != "password" && (isNonSecretValue(v) || !varied(v)) {
			continue
		}
		switch {
		case kind == "secret" && strings.Contains(strings.ToLower(key), "aws") && len(v) == 40 && allIn(v, isBase64Byte):
			kind = "aws-secret-key"
		case kind == "azure-storage-key" && !(len(v) >= 40 && allIn(v, isBase64Byte)):
			continue
		case kind == "azure-sas-signature" && !(len(v) >= 40 && allIn(v, func(c byte) bool { return isBase64Byte(c) || c == '%' })):
			continue
		}
		spans = add(spans, kind, vs, ve, prioAssignment)
		i = ve - 1
	}
	return spans
}

func isBase64Byte(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' }

// keyBefore reads the key in front of a separator: an identifier, maybe
// quoted, maybe followed by blanks.
func keyBefore(s string, sep int) (string, bool) {
	e := sep
	for e > 0 && sep-e < 4 && (s[e-1] == ' ' || s[e-1] == '\t') {
		e--
	}
	if e > 0 && (s[e-1] == '"' || s[e-1] == '\'') {
		e--
	}
	b := e
	for b > 0 && e-b < 64 && (isIdent(s[b-1]) || s[b-1] == '-' || s[b-1] == '.') {
		b--
	}
	if b == e || b > 0 && e-b == 64 {
		return "", false
	}
	return s[b:e], true
}

// secretKeyKind classifies a key by its last word: DB_PASSWORD and
// user.password are passwords, password_hash and max_tokens are not.
func secretKeyKind(key string) (kind string, minLen int) {
	// Every key below ends in one of these letters: most keys are
	// rejected without a copy.
	if last := key[len(key)-1] | 0x20; strings.IndexByte("deygtns", last) < 0 {
		return "", 0
	}
	k := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	word := func(w string) bool {
		n := len(k) - len(w)
		return n >= 0 && k[n:] == w && (n == 0 || k[n-1] == '_')
	}
	switch {
	case word("password") || word("passwd") || word("passphrase") || word("pwd") || word("pass"):
		return "password", 4
	case k == "accountkey" || k == "account_key" || k == "sharedaccesskey" || k == "shared_access_key":
		return "azure-storage-key", 40
	case k == "sig":
		return "azure-sas-signature", 40
	case word("secret") || word("secret_key") || word("secret_access_key") || k == "secretaccesskey" || k == "clientsecret" || k == "client_secret":
		return "secret", 8
	case word("api_key") || word("apikey") || k == "x_api_key" || word("access_key") && !word("access_key_id"):
		return "api-key", 12
	case word("private_key"):
		return "private-key", 16
	case k == "token" || word("access_token") || word("auth_token") || word("refresh_token") || word("api_token") ||
		word("bearer_token") || word("session_token") || word("id_token") || word("personal_access_token") ||
		k != key && strings.HasSuffix(key, "_TOKEN") && !strings.HasSuffix(key, "_MAX_TOKEN"):
		return "token", 12
	}
	return "", 0
}

// valueAfter finds the value after a separator: a quoted string on one
// line, or a run up to a blank or delimiter.
func valueAfter(s string, p int) (start, end int, quoted, ok bool) {
	for p0 := p; p < len(s) && p-p0 < 4 && (s[p] == ' ' || s[p] == '\t'); {
		p++
	}
	if p >= len(s) {
		return 0, 0, false, false
	}
	if q := s[p]; q == '"' || q == '\'' || q == '`' {
		for e := p + 1; e < len(s) && e-p < maxQuoted; e++ {
			switch s[e] {
			case q:
				return p + 1, e, true, e > p+1
			case '\\':
				e++
			case '\n':
				return 0, 0, false, false
			}
		}
		return 0, 0, false, false
	}
	e := p
	for e < len(s) && e-p < maxValue && s[e] > ' ' && strings.IndexByte(",;&\"'`<>()[]{}", s[e]) < 0 {
		if s[e] == '=' { // only as base64 padding: "a=b=c" is two assignments
			pad := e
			for pad < len(s) && s[pad] == '=' {
				pad++
			}
			if pad < len(s) && s[pad] > ' ' && strings.IndexByte(",;&\"'`>)]}", s[pad]) < 0 {
				break
			}
			e = pad
			break
		}
		e++
	}
	if e-p == maxValue {
		return 0, 0, false, false
	}
	return p, e, false, e > p
}

// endsLine reports whether only blanks follow p up to the end of its line.
func endsLine(s string, p int) bool {
	for ; p < len(s); p++ {
		switch s[p] {
		case '\n', '\r':
			return true
		case ' ', '\t':
		default:
			return false
		}
	}
	return true
}

// isCodeReference tells a variable or call in pasted code (password =
// args.password, api_key=get_key(), token=ACCESS_TOKEN, pw=user_pw) from a
// literal value.
func isCodeReference(s string, vs, ve int) bool {
	if ve < len(s) && s[ve] == '(' {
		return true
	}
	v := s[vs:ve]
	if !isLetter(v[0]) && v[0] != '_' || !allIn(v, func(c byte) bool { return isIdent(c) || c == '.' }) {
		return false
	}
	if strings.Contains(v, ".") {
		return true // a.b.c: a field or module path
	}
	if !strings.Contains(v, "_") {
		return false
	}
	lower, upper := strings.ToLower(v) == v, strings.ToUpper(v) == v
	return lower || upper // snake_case or CONSTANT_CASE
}

// isPlaceholderValue: templates, references and masks, never secrets.
func isPlaceholderValue(v string) bool {
	if v == "" || strings.IndexByte("$%<{[*#", v[0]) >= 0 || strings.HasPrefix(v, "os.") || strings.ContainsAny(v, "()") {
		return true
	}
	if strings.Trim(v, "*xX•.-_0") == "" {
		return true // ****, xxxx, ••••
	}
	switch strings.ToLower(v) {
	case "null", "none", "nil", "true", "false", "undefined", "string", "str", "required", "optional",
		"password", "secret", "token", "redacted", "hidden", "empty", "example", "your_password", "your_token", "your_api_key":
		return true
	}
	return false
}

// isNonSecretValue: values that no key, token or secret takes (plain
// numbers, short words); a password may be anything.
func isNonSecretValue(v string) bool {
	if allIn(v, func(c byte) bool { return c >= '0' && c <= '9' }) && len(v) < 16 {
		return true
	}
	return allIn(v, isLetter) && len(v) < 16
}

// RedactJSONStrings masks secrets inside the string values of a JSON
// document (object keys are left alone), keeping everything else byte for
// byte: key order, spacing and untouched strings. Input that is not valid
// JSON is returned as it is.
func RedactJSONStrings(raw []byte) ([]byte, []SecretFinding) {
	if !json.Valid(raw) {
		return raw, nil
	}
	var out []byte
	var all []SecretFinding
	last := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		end := i + 1
		for end < len(raw) && raw[end] != '"' {
			if raw[end] == '\\' {
				end++
			}
			end++
		}
		end++ // past the closing quote
		lit := raw[i:end]
		j := end
		for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\n' || raw[j] == '\r') {
			j++
		}
		isKey := j < len(raw) && raw[j] == ':'
		var s string
		if !isKey && json.Unmarshal(lit, &s) == nil {
			if red, fs := RedactSecrets(s); len(fs) > 0 {
				enc, err := MarshalNoEscape(red)
				if err == nil {
					out = append(out, raw[last:i]...)
					out = append(out, enc...)
					last = end
					all = append(all, fs...)
				}
			}
		}
		i = end - 1
	}
	if len(all) == 0 {
		return raw, nil
	}
	return append(out, raw[last:]...), all
}

// RedactNote masks secrets in a note before it is written: in its body,
// and in every string value of its frontmatter, read together with its
// key (so that `password: hunter2` is found as the assignment it is), at
// any depth. Keys listed in keep are left as they are (provenance the
// system sets: paths and ids that must keep pointing at their source).
// Keys whose values do not change keep their bytes. It returns the kinds
// of the secrets masked, in the order found (frontmatter first).
func RedactNote(n *Note, keep ...string) []string {
	var kinds []string
	m := n.FM.mapping()
	for i := 0; i+1 < len(m.Content); i += 2 {
		key := m.Content[i].Value
		if slices.Contains(keep, key) {
			continue
		}
		found := redactYAMLValue(m.Content[i+1], key, 0)
		if len(found) > 0 {
			n.FM.markChanged(key)
			kinds = append(kinds, found...)
		}
	}
	if body, found := RedactSecrets(n.Body); len(found) > 0 {
		n.Body = body
		for _, f := range found {
			kinds = append(kinds, f.Kind)
		}
	}
	return kinds
}

// redactYAMLValue masks the string scalars under v (not through aliases,
// which repeat a value found elsewhere); key is the mapping key v is the
// value of, "" in a list.
func redactYAMLValue(v *yaml.Node, key string, depth int) []string {
	if v == nil || depth > 64 {
		return nil
	}
	switch v.Kind {
	case yaml.ScalarNode:
		if v.ShortTag() != "!!str" {
			return nil
		}
		red, found := redactValue(key, v.Value)
		if len(found) == 0 {
			return nil
		}
		v.Value, v.Tag = red, "!!str"
		kinds := make([]string, len(found))
		for i, f := range found {
			kinds[i] = f.Kind
		}
		return kinds
	case yaml.SequenceNode:
		var kinds []string
		for _, c := range v.Content {
			kinds = append(kinds, redactYAMLValue(c, "", depth+1)...)
		}
		return kinds
	case yaml.MappingNode:
		var kinds []string
		for i := 0; i+1 < len(v.Content); i += 2 {
			kinds = append(kinds, redactYAMLValue(v.Content[i+1], v.Content[i].Value, depth+1)...)
		}
		return kinds
	}
	return nil
}

// redactValue masks a frontmatter value read after its key; findings that
// reach into the key (there should be none) fall back to the value alone.
func redactValue(key, value string) (string, []SecretFinding) {
	if key == "" || strings.ContainsAny(key, "\n\r") {
		return RedactSecrets(value)
	}
	prefix := key + ": "
	red, found := RedactSecrets(prefix + value)
	for _, f := range found {
		if f.Start < len(prefix) {
			return RedactSecrets(value)
		}
	}
	return red[len(prefix):], found
}
