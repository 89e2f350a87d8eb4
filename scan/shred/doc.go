// Package shred is the shredded-column cache of archived JSON payloads (issue 19,
// docs/architecture.md "The shredded-column cache"): on a local directory, bounded in bytes,
// it keeps per archived payload one file holding, per JSON field (its path and the type a
// query reads it as), the typed column a read extracted, so that later reads of that payload
// use the columns instead of parsing its JSON documents.
//
// # Identity and staleness
//
// A bucket's file is named by a content key, each of its columns by a field key. The executor
// (scan) uses as content key the bucket's manifest key: archive objects are immutable and
// content-addressed (docs/pulpitum-v4.md §1.5, manifest-{sha256}.json naming the payload's own
// SHA-256), and a new generation of a bucket is published under a new manifest key, so a
// column is never stale. Columns are only ever written from a read of the whole payload in
// file order: row i is record i of the payload. Nothing of Pulpitum's (payloads, manifests,
// keys) is written or removed by this package; it touches only files under its own directory.
//
// # Files on disk
//
// Each bucket's file is DIR/<40 hex digits>.bucket (the hex is the start of the SHA-256 of
// the content key), written to a temporary file in DIR and renamed into place, so a reader
// never sees half a file (a crash leaves at most a DIR/.tmp-* file, removed by the next Open).
// Its layout (entry.go): a 64-byte header (the magic "FSHRED04", the CRC-32C (Castagnoli) of
// the header and the directory, the column count, the SHA-256 of the content key, the file's
// length), the directory (per column, in ascending order of the SHA-256 of its field key: that
// SHA-256, the column's offset and length, its CRC-32C, its range), then the columns, each the
// Arrow buffers of one array at multiples of 8 bytes of the file. Get reads the file with
// one open into one buffer of the caller's allocator (open, pread and close alone:
// read_unix.go), and the columns' buffers are slices of it, without a copy: the whole file
// (one read) when this process has not read its directory yet, else only the columns asked
// (one read per run of adjacent ones). A file whose header or directory fails a check (magic,
// checksum, content key, length, order, places, padding), or whose column asked for fails its
// own (CRC-32C, type, lengths, offsets, UTF-8), is damaged: it is removed, counted, and reported as a miss, so the read
// extracts the fields again and writes the file anew. A damaged file is never served. The
// files of the earlier layouts, one per payload and field (DIR/<hex>.shred, "FSHRED01" to
// "FSHRED03"), are removed by Open and counted as damaged.
//
// # Fields accumulate
//
// Put adds columns to a bucket's file: it reads the file there (checked as Get does; its
// columns' checksums verified), and writes the union, the new columns replacing any of the
// same field, so that a bucket read by queries of different fields ends with one file holding
// them all and a later query of any of them reads it once. The union is bounded by the
// largest file (MaxEntryBytes): the new columns go first, then the earlier ones while they fit.
// A Get that lacks one of its fields misses (the read extracts the fields it needs and Put
// adds them).
//
// # Ranges
//
// Range answers a column's range without reading it: from the index once this process
// wrote or read the bucket's file, else from the file's header and directory alone, which the
// header's checksum covers (failing it is damage, as above). A changed byte in a column does
// not make the directory's range wrong: it was computed from the column before, and a content
// key's column never changes. The executor skips a bucket whose range proves its filter false
// (scan's shredded.go).
//
// # Bound and eviction
//
// The directory's files total at most the configured bytes: when a write takes the total past
// it, the least recently used buckets' files (by Get and Put in this process; by file
// modification time when Open indexes an existing directory) are removed first. A file larger
// than an eighth of the bound is not written (MaxEntryBytes).
//
// # Concurrency
//
// A Cache is safe for concurrent use by any number of queries. Puts of one bucket are
// serialised, so that concurrent reads adding different fields all end in its file; reads of
// a bucket (Get, Range) exclude its Put's rename and index update, so that the size a read
// takes from the index is its file's (striped locks, cache.go). Across processes sharing a
// directory the last rename wins and a read that meets a file replaced under it counts it as
// damage and rebuilds it: nothing wrong is served. Arrays returned by Get belong to the caller
// (Release them); arrays given to Put are only read during the call.
package shred
