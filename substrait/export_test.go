package substrait

// SimilarEscapeForTest exposes similarEscape to the external fuzz target (fuzz_test.go).
var SimilarEscapeForTest = similarEscape

// SQLPlanProtoForTest exposes sqlPlanProto (anchors_test.go) to the external tests.
var SQLPlanProtoForTest = sqlPlanProto
