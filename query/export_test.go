package query

import "encoding/json"

// SpecJSON returns a fragment's spec (its ticket form, encodeSpec) as the JSON of
// fragmentSpec's tags, for the external tests that look inside fragments.
func SpecJSON(spec []byte) ([]byte, error) {
	s, err := decodeSpec(spec)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// ForgetStatements empties e's statement cache, so that the next Execute of a statement
// plans it again (benchmarks of planning). Not safe while e runs queries.
func (e *Engine) ForgetStatements() { e.stmts = newStmtCache(statementCacheEntries) }
