package routing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type damaged struct{ reason string }

func (d damaged) Error() string        { return "archive: " + d.reason }
func (d damaged) Is(target error) bool { return target == ErrArchiveDamaged }
func (d damaged) Reason() string       { return d.reason }

func TestRouteID(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	for key, want := range map[string]string{
		"archives/4f5244/6d6f6e7468/generation-3/manifest-" + digest + ".json": digest[:16],
		"manifest-" + strings.ToUpper(digest) + ".json":                        digest[:16],
	} {
		if got := RouteID(key); got != want {
			t.Errorf("RouteID(%q) = %q, want %q", key, got, want)
		}
	}
	legacy := RouteID("archives/4f5244/legacy-manifest.json")
	if len(legacy) != 16 || strings.Contains(legacy, "4f5244") || legacy == RouteID("archives/4f5245/legacy-manifest.json") {
		t.Errorf("legacy route id %q", legacy)
	}
}

// TestDamageMemory: a damaged route is reported once per finding and refused for
// DamageMemory, then read again; other errors are neither reported nor remembered.
func TestDamageMemory(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := newDamageLog(TableDef{Name: "flights", Strategy: CalendarMonthUTC}, slog.New(slog.NewTextHandler(&buf, nil)), func() time.Time { return now })
	key := "archives/4f5244/6d/generation-1/manifest-" + strings.Repeat("0123456789abcdef", 4) + ".json"
	ctx := context.Background()
	if err := d.note(ctx, key, fmt.Errorf("read: %w", ErrUnavailable)); !errors.Is(err, ErrUnavailable) || d.check(key) != nil || buf.Len() != 0 {
		t.Fatalf("an unavailable store was taken for damage: %v %q", d.check(key), buf.String())
	}
	bad := damaged{"payload digest mismatch"}
	if err := d.note(ctx, key, bad); err != bad {
		t.Fatalf("note returned %v", err)
	}
	line := buf.String()
	for _, want := range []string{"route=0123456789abcdef", "table=flights", "strategy=calendar_month_utc", `reason="payload digest mismatch"`} {
		if !strings.Contains(line, want) {
			t.Errorf("damage line %q lacks %s", line, want)
		}
	}
	if strings.Contains(line, "4f5244") || strings.Contains(line, "archives") {
		t.Errorf("damage line %q names the key", line)
	}
	now = now.Add(DamageMemory - time.Nanosecond)
	if err := d.check(key); err != bad {
		t.Fatalf("check within the memory: %v", err)
	}
	now = now.Add(time.Nanosecond)
	if err := d.check(key); err != nil {
		t.Fatalf("check after the memory: %v", err)
	}
	for i := range maxDamagedRoutes + 1 {
		d.note(ctx, fmt.Sprint(i), bad)
	}
	if len(d.damaged) != maxDamagedRoutes || d.check("0") != nil || d.check(fmt.Sprint(maxDamagedRoutes)) != bad {
		t.Fatalf("bound: %d remembered", len(d.damaged))
	}
}
