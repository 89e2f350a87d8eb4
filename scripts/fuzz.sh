#!/usr/bin/env bash
# fuzz.sh runs every Go fuzz target of the module (func FuzzXxx(f *testing.F) in a _test.go
# file), one after the other: Go fuzzes one target per `go test -fuzz` invocation. Each runs
# for FUZZTIME (default 10s) with FUZZ_PARALLEL workers (default 1, leaving the other cores to
# whoever shares the machine), from its seed corpus: the f.Add seeds and the package's
# testdata/fuzz/FuzzXxx directory. A summary prints the inputs run (counted by the targets
# themselves, internal/fuzzcount), the fuzzing time and the result of each.
# A crasher found is written by Go to <package>/testdata/fuzz/FuzzXxx/<hash>: fix the cause,
# then commit the file as a regression seed (plain `go test` runs it from then on).
#
# usage: scripts/fuzz.sh [-l]           -l lists the targets (package and name) and exits
#        FUZZTIME=2m scripts/fuzz.sh    FUZZ_TARGETS='Parquet|SQL' selects targets by regexp
#
# The first run builds every package instrumented for fuzzing (minutes with a cold build
# cache, for the cgo SQL parser above all); later runs reuse the build cache. Exits 1 when a
# target failed, after running all of them.
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
FUZZ_PARALLEL=${FUZZ_PARALLEL:-1}
FUZZ_TARGETS=${FUZZ_TARGETS:-.}

# targets prints "dir name" for every fuzz target, sorted.
targets() {
	grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
		sed -E 's#^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*).*#\1 \2#' |
		awk -v re="$FUZZ_TARGETS" '$2 ~ re' | sort -u
}

if [ "${1:-}" = "-l" ]; then
	targets
	exit 0
fi

list=$(targets)
if [ -z "$list" ]; then
	echo "fuzz.sh: no fuzz target matches $FUZZ_TARGETS" >&2
	exit 1
fi
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
failed=0
summary=""
start_all=$(date +%s)
while read -r dir name; do
	echo "=== fuzz ./$dir $name for $FUZZTIME"
	out="$log/$name.out"
	start=$(date +%s)
	# The fuzz time does not bound the build; -timeout bounds the whole run.
	# Each process running the target writes its count of inputs to $log/$name.count.<pid>
	# (internal/fuzzcount): go test's own "execs" leaves out what its workers ran since their
	# last report, often nearly everything.
	FLIGHTSRV_FUZZ_COUNT="$log/$name.count" \
		"$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -parallel "$FUZZ_PARALLEL" -timeout 30m "./$dir" >"$out" 2>&1
	rc=$?
	# Go's fuzzing coordinator sometimes gives up on a worker still busy with one input when
	# the fuzz time ends ("context deadline exceeded", no crasher written): not a finding of
	# the target. Run it once more; a real failure fails again or leaves a crasher.
	if [ $rc -ne 0 ] && grep -q 'context deadline exceeded' "$out" && ! grep -qE 'testdata/fuzz/[^ ]+' "$out"; then
		echo "fuzz.sh: $name: the fuzzing coordinator timed out on a busy worker (no crasher); running it again"
		FLIGHTSRV_FUZZ_COUNT="$log/$name.count" \
			"$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -parallel "$FUZZ_PARALLEL" -timeout 30m "./$dir" >"$out" 2>&1
		rc=$?
	fi
	secs=$(($(date +%s) - start))
	execs=$(awk '{n += $1} END {printf "%d", n}' "$log/$name".count.* 2>/dev/null)
	fuzzed=$(grep -oE '^fuzz: elapsed: [0-9hms.]+' "$out" | tail -1 | sed 's/fuzz: elapsed: //')
	if [ $rc -eq 0 ]; then
		result=ok
	else
		result=FAIL
		failed=1
		tail -40 "$out"
		crasher=$(grep -oE 'testdata/fuzz/[^ ]+' "$out" | head -1)
		[ -n "$crasher" ] && result="FAIL ($dir/$crasher)"
	fi
	summary+=$(printf '%-14s %-24s %12s %8s %6ss  %s' "$dir" "$name" "${execs:-0}" "${fuzzed:-0s}" "$secs" "$result")$'\n'
done <<<"$list"
echo
printf '%-14s %-24s %12s %8s %7s  %s\n' package target executions fuzzed wall result
printf '%s' "$summary"
echo "fuzz.sh: $(wc -l <<<"$list") targets, ${FUZZTIME} each, $(($(date +%s) - start_all))s in all"
exit $failed
