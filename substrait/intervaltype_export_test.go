package substrait

// ParseIntervalFieldsForTest exposes parseIntervalFields to the external tests
// (intervaltype_test.go).
var ParseIntervalFieldsForTest = parseIntervalFields

// MaxIntervalMicros is maxIntervalMicros.
const MaxIntervalMicros = maxIntervalMicros
