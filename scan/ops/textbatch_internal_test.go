package ops

import (
	"errors"
	"testing"
)

// TestTextBatchBound: the values of one string array may hold maxBatchText bytes (Arrow's
// 32-bit offsets) and not one more; past it the kernel's error is errTextBatch, PostgreSQL's
// 54000, which Project answers by evaluating fewer rows.
func TestTextBatchBound(t *testing.T) {
	var b textBatch
	if err := b.add(1 << 30); err != nil {
		t.Fatal(err)
	}
	if err := b.add(maxBatchText - 1<<30); err != nil {
		t.Fatalf("exactly maxBatchText bytes: %v", err)
	}
	err := b.add(1)
	var de *DataError
	if !errors.Is(err, errTextBatch) || !errors.As(err, &de) || de.Code != "54000" {
		t.Fatalf("one byte past maxBatchText: %v, want errTextBatch (54000)", err)
	}
}
