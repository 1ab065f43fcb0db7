package store

import (
	"errors"
	"testing"
)

func TestIsDate(t *testing.T) {
	tests := map[string]bool{
		"2026-05-18":          true,
		"2024-02-29":          true,
		"0001-01-01":          true,
		"2023-02-29":          false,
		"2026-13-01":          false,
		"2026-00-10":          false,
		"2026-01-00":          false,
		"2026-04-31":          false,
		"2026-1-05":           false,
		"2026-01-5":           false,
		"20260518":            false,
		"2026/05/18":          false,
		"2026-05-18 ":         false,
		" 2026-05-18":         false,
		"2026-05-18T10:00:00": false,
		"":                    false,
		"abcd-ef-gh":          false,
		"+026-05-18":          false,
	}
	for in, want := range tests {
		if got := IsDate(in); got != want {
			t.Errorf("IsDate(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"2026-08-20", "2026-08-20", true},
		{"  2026-08-20\n", "2026-08-20", true},
		{"2024-02-29", "2024-02-29", true},
		{"2026-08-20T10:00:00", "", false},
		{"2026-08-20 10:00", "", false},
		{"2026-8-20", "", false},
		{"2026-02-30", "", false},
		{"2026-13-01", "", false},
		{"", "", false},
		{"today", "", false},
		{"2026/08/20", "", false},
	}
	for _, tt := range tests {
		got, err := ParseDate(tt.in)
		if tt.ok {
			if err != nil || got != tt.want {
				t.Errorf("ParseDate(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidDate) {
			t.Errorf("ParseDate(%q) = %q, %v; want ErrInvalidDate", tt.in, got, err)
		}
	}
}

func TestNormalizeDate(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"2024-01-05", "2024-01-05", true},
		{"2024-1-5", "2024-01-05", true},
		{"2024-01-5", "2024-01-05", true},
		{"2024-1-05", "2024-01-05", true},
		{" 2024-1-5 ", "2024-01-05", true},
		{"2024-12-31", "2024-12-31", true},
		{"2026-08-20T10:00:00", "2026-08-20", true},
		{"2026-08-20T10:00:00+08:00", "2026-08-20", true},
		{"2026-08-20 10:00", "2026-08-20", true},
		{"2024-2-30", "", false},
		{"2024-13-1", "", false},
		{"2024-0-1", "", false},
		{"24-1-5", "", false},
		{"2024-1", "", false},
		{"2024-1-5-6", "", false},
		{"2024-a-5", "", false},
		{"2024-1-5T10:00", "", false},
		{"", "", false},
		{"garbage", "", false},
		{"yesterday", "", false},
		{"2024/01/05", "", false},
		{"2024-+1-5", "", false},
		{"2024-1-+5", "", false},
		{"+2024-1-5", "", false},
		{"2024-001-05", "", false},
		{"2024-1-005", "", false},
		{"2024- 1-5", "", false},
	}
	for _, tt := range tests {
		got, err := NormalizeDate(tt.in)
		if tt.ok {
			if err != nil || got != tt.want {
				t.Errorf("NormalizeDate(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidDate) {
			t.Errorf("NormalizeDate(%q) = %q, %v; want ErrInvalidDate", tt.in, got, err)
		}
	}
}
