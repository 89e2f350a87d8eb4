package ops

// UseArrowSort makes Sort and TopK order rows with arrow-go's sort_indices where it orders as
// this package does (no NaN in a float key), instead of this package's comparator sort, until
// the returned function is called; tests check that both agree.
func UseArrowSort() (restore func()) {
	old := arrowSort.Swap(true)
	return func() { arrowSort.Store(old) }
}

// EncodeDataError and DecodeDataError are deferred_error's text of a data exception and
// raise_deferred's reading of one (deferred.go), for FuzzDeferredErrorText.
var (
	EncodeDataError = encodeDataError
	DecodeDataError = decodeDataError
)
