// Package shred is the shredded-column cache of archived JSON payloads (issue 19,
// docs/architecture.md "The shredded-column cache"): on a local directory, bounded in bytes,
// it keeps per archived payload and JSON field (its path and the type a query reads it as) the
// typed column a read extracted, so that later reads of that payload use the column
// instead of parsing its JSON documents.
//
// # Identity and staleness
//
// An entry is named by a content key and a field key. The executor (scan) uses as content key
// the bucket's manifest key: archive objects are immutable and content-addressed
// (docs/pulpitum-v4.md §1.5, manifest-{sha256}.json naming the payload's own SHA-256), and a
// new generation of a bucket is published under a new manifest key, so an entry is never
// stale. Entries are only ever written from a read of the whole payload in file order: entry
// row i is record i of the payload. Nothing of Pulpitum's (payloads, manifests, keys) is
// written or removed by this package; it touches only files under its own directory.
//
// # Entries on disk
//
// Each entry is one file, DIR/<40 hex digits>.shred (the hex is the start of the SHA-256 of
// the content and field keys), written to a temporary file in DIR and renamed into place, so a
// reader never sees half an entry (a crash leaves at most a DIR/.tmp-* file, removed by the
// next Open). Its layout (entry.go): the magic "FSHRED03", the CRC-32C (Castagnoli) of
// everything after it, the SHA-256 of the keys, the body's length (little-endian uint64),
// the CRC-32C of the header itself and the column's range (Range: the least and greatest
// value of an int32, int64 or timestamp column, or that no row holds one), then the column's
// Arrow buffers, each at a multiple of 8 bytes (entry.go): Get reads the file into one buffer
// of the caller's allocator and the column's buffers are slices of it, without a copy. A file
// that fails any check (magic, checksum, keys, lengths, padding, type, offsets, UTF-8; an
// entry of an earlier layout, "FSHRED01" or "FSHRED02", too) is damaged: it is removed,
// counted, and reported as a miss, so the read extracts the field again and writes the entry
// anew. A damaged entry is never served.
//
// # Ranges
//
// Range answers an entry's range without reading its column: from the index once this
// process wrote or read the entry, else from the file's header alone, which its own checksum
// covers (a header that fails it is damage, as above). A changed byte in the body does not
// make the header's range wrong: it was computed from the column before, and a content key's
// column never changes. The executor skips a bucket whose range proves its filter false
// (scan's shredded.go).
//
// # Bound and eviction
//
// The directory's entries total at most the configured bytes: when a write takes the total
// past it, the least recently used entries (by Get and Put in this process; by file
// modification time when Open indexes an existing directory) are removed first. An entry
// larger than an eighth of the bound is not written (MaxEntryBytes).
//
// # Concurrency
//
// A Cache is safe for concurrent use by any number of queries. Two reads writing the same
// entry at once write the same bytes; the last rename wins. Arrays returned by Get belong to
// the caller (Release them); arrays given to Put are only read during the call.
package shred
