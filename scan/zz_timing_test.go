package scan_test

import (
	"testing"
	"time"
)

func TestZZTiming(t *testing.T) {
	s := time.Now()
	recs := generate()
	t.Logf("generate %v (%d)", time.Since(s), len(recs))
	s = time.Now()
	fixtures(t)
	t.Logf("fixtures %v", time.Since(s))
}
