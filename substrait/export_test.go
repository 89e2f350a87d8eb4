package substrait

// SimilarEscapeForTest exposes similarEscape to the external fuzz target (fuzz_test.go).
var SimilarEscapeForTest = similarEscape
