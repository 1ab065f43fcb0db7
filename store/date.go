package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidDate is returned for a date that is not YYYY-MM-DD.
var ErrInvalidDate = errors.New("date must be YYYY-MM-DD")

func parseDate(s string) (time.Time, error) {
	return time.Parse(time.DateOnly, s)
}

// ParseDate is the strict parser for explicit date parameters: exactly ten
// characters forming a valid calendar date. Timestamps are refused.
func ParseDate(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) != 10 {
		return "", fmt.Errorf("%w: %q", ErrInvalidDate, s)
	}
	if _, err := parseDate(s); err != nil {
		return "", fmt.Errorf("%w: %q", ErrInvalidDate, s)
	}
	return s, nil
}

// NormalizeDate is the lenient parser for filters: it accepts timestamps
// (first ten characters) and unpadded dates such as 2024-1-5.
func NormalizeDate(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 10 && IsDate(s[:10]) {
		return s[:10], nil
	}
	parts := strings.Split(s, "-")
	if len(parts) == 3 && allDigits(parts[0], 4, 4) && allDigits(parts[1], 1, 2) && allDigits(parts[2], 1, 2) {
		y, e1 := strconv.Atoi(parts[0])
		m, e2 := strconv.Atoi(parts[1])
		d, e3 := strconv.Atoi(parts[2])
		if e1 == nil && e2 == nil && e3 == nil && len(parts[0]) == 4 {
			norm := fmt.Sprintf("%04d-%02d-%02d", y, m, d)
			if IsDate(norm) {
				return norm, nil
			}
		}
	}
	return "", fmt.Errorf("%w: %q", ErrInvalidDate, s)
}

// allDigits reports whether s is lo..hi ASCII digits (strconv.Atoi alone
// would also take signs: "2024-+1-5").
func allDigits(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
