#!/bin/sh
# The benchmark set of scripts/compare: each line runs tlbie_bench once and
# prints one "bench: ..." line. Runs in the guest (job "benchmark" of
# /init) and, with scripts/compare --host, on a real machine.
# Usage: benchmarks.sh [DIR]   DIR holds tlbie_bench (/kselftest/powerpc/benchmarks)
# Environment: BENCH_SCALE=N multiplies the iteration counts (1);
#   BENCH_NOCOUNT=1 runs tlbie_bench -n (times without counting overhead);
#   BENCH_SET=rpti runs, marked (tlbie_bench -m) and with two threads, the
#   workloads whose global flushes a guest without GTSE asks of the
#   hypervisor (scripts/compare-rpti counts the requests in QEMU's trace).
bench=${1:-/kselftest/powerpc/benchmarks}/tlbie_bench
[ -x "$bench" ] || { echo "benchmarks.sh: no $bench" >&2; exit 1; }
k=${BENCH_SCALE:-1}
rc=0
n=
[ "${BENCH_NOCOUNT:-0}" != 1 ] || n=-n
run() {
	# shellcheck disable=SC2086 # $n is empty, -n or -m
	"$bench" $n "$@"
	r=$?
	# 4: skipped (fewer CPUs than threads), already said on stdout
	[ "$r" = 0 ] || [ "$r" = 4 ] || { echo "bench: failed tlbie_bench $*"; rc=1; }
}
if [ "${BENCH_SET:-}" = rpti ]; then
	n=-m	# run()'s option: mark each operation for the hypervisor's trace
	for s in 64 256; do
		run -t 2 -i $((3 * k)) -s $s shm
		for op in punch truncate remove dontneed munmap; do
			run -t 2 -i $((3 * k)) -s $s memfd_$op
		done
	done
	for w in 1 2; do
		run -t 2 -i $((3 * k)) -s 64 -w $w shm_sparse
	done
	run -t 2 -i $((3 * k)) -s 64 -w 1 memfd_first
	exit $rc
fi
for t in 2 1; do
	# The 2021 thread's workload. Five iterations: the counts are the
	# fewest of them (one that no reschedule point split), times the sum.
	run -t $t -i $((5 * k)) -s 256 shm
	# Its other side: the other thread walks -r pages of its own after
	# each detach, refilling its TLB (-t 1 has no other thread: no -r).
	if [ $t = 2 ]; then
		for p in 256 1024 4096; do
			run -t $t -i $((5 * k)) -s 64 -r $p shm
		done
	else
		run -t $t -i $((5 * k)) -s 64 shm
	fi
	# The sparse side: a few dirty pages per page table, which must be
	# flushed as the base flushes them (no whole-PID flush it has not).
	for w in 1 2; do
		run -t $t -i $((3 * k)) -s 64 -w $w shm_sparse
	done
	# Only the first page table dirty: one dense batch in a large range,
	# the one sparse shape the batch rule flushes by PID (a forced batch).
	run -t $t -i $((3 * k)) -s 64 -w 1 memfd_first
	# The other callers of a dense shared unmap: a memfd punched,
	# truncated, MADV_REMOVEd, MADV_DONTNEEDed and unmapped.
	for s in 64 256; do
		for op in punch truncate remove dontneed munmap; do
			run -t $t -i $((3 * k)) -s $s memfd_$op
		done
	done
done
exit $rc
