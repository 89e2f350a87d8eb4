// Package archivefault holds the fault tests of the archival protocol (issue 9): the archiver,
// both hot stores and a real file:// archive, with failures injected in the object store
// (internal/testsupport/blobfault) and in the hot store's state machine (a wrapper of
// routing.ArchiveStateStore) at every step, two runners competing for the same buckets, a
// stale worker resuming after its lease was taken over, and readers counting and scanning
// while buckets move from hot to archiving to archived. Every test ends by checking that each
// record is readable exactly once and that counts equal an independent reference (the
// records the test appended). It has no non-test code.
package archivefault
