// Package setting holds flightsrv's one convention for numeric and duration settings, which
// every layer's options struct and every serve flag follow (docs/architecture.md,
// "Configuration"):
//
//   - 0 means the setting's default (the zero value of an options struct is its defaults);
//   - a negative value turns the setting off: no bound for a limit, nothing kept for a cache
//     or a reserve, "at once" for a grace period — each setting's documentation says which,
//     and a setting that cannot be off refuses negative values where it is validated;
//   - a positive value is taken as given.
//
// Each options struct applies the convention in one place, its withDefaults method (as
// archive.ReaderOptions does), with Or, Required and Bound.
package setting

// Or returns def when v is 0, else v (negative values pass: the caller's "off").
func Or[T ~int | ~int64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Required returns the value of a setting that cannot be off: def when v is 0 or negative (a
// negative value is refused where a flag is validated; an options struct given one keeps the
// default), else v.
func Required[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Bound returns the bound v means for code below the options struct, where 0 means "no
// bound": def when v is 0, 0 when v is negative (off), else v.
func Bound[T ~int | ~int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
