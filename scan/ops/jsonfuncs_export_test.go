package ops

// JSONBSortKey, JSONBContains, JSONBConcat and JSONBPretty are jsonb_sortkey, @>, || and
// jsonb_pretty of documents (jsonfuncs.go), for TestJSONBSortKeyOrder and FuzzJSONBFunctions.
func JSONBSortKey(doc []byte) ([]byte, error) {
	v, err := decodeDoc(doc, true)
	if err != nil {
		return nil, err
	}
	return appendJSONBSortKey(nil, v, true)
}

func JSONBContains(a, b []byte) (bool, error) {
	x, err := decodeDoc(a, true)
	if err != nil {
		return false, err
	}
	y, err := decodeDoc(b, true)
	if err != nil {
		return false, err
	}
	return jsonbContains(x, y), nil
}

func JSONBConcat(a, b []byte) ([]byte, error) {
	x, err := decodeDoc(a, true)
	if err != nil {
		return nil, err
	}
	y, err := decodeDoc(b, true)
	if err != nil {
		return nil, err
	}
	return writeJSONB(nil, jsonbConcat(x, y), false)
}

func JSONBPretty(doc []byte) (string, error) {
	v, err := decodeDoc(doc, true)
	if err != nil {
		return "", err
	}
	out, err := appendPretty(nil, v, 0, nil)
	return string(out), err
}

// JSONBEqualKey is jsonb_key, the key jsonb equality compares (jsonb.go).
func JSONBEqualKey(doc []byte) ([]byte, error) { return appendJSONB(nil, doc, true) }

// JSONStripNulls is json_strip_nulls of a json document, for FuzzJSONBFunctions.
func JSONStripNulls(doc []byte) ([]byte, error) {
	v, err := decodeDoc(doc, false)
	if err != nil {
		return nil, err
	}
	return appendCompactJSON(nil, stripNulls(v)), nil
}
