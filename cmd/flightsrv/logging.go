package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// newLogger returns the process's logger on w: key=value text (format "" or "text") or JSON
// ("json"), at level "info" (the default), "debug", "warn" or "error". They come from
// FLIGHTSRV_LOG_FORMAT and FLIGHTSRV_LOG_LEVEL; debug adds the raw error behind each internal
// query failure (internal/querylog), which may hold values, so keep it off in production.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if level == "" {
		level = "info"
	}
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("FLIGHTSRV_LOG_LEVEL: %q is not debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("FLIGHTSRV_LOG_FORMAT: %q is not text or json", format)
}
