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
	# 4: skipped (one CPU, no THP), already said on stdout
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
	for w in 1 2 4 8 32; do
		run -t 2 -i $((3 * k)) -w $w thread_exit
	done
	for w in 8 32; do
		run -t 2 -i $((3 * k)) -s 64 -w $w dontneed_sparse
		run -t 2 -i $((3 * k)) -s 64 -w $w mprotect_sparse
	done
	for w in 1 2; do
		run -t 2 -i $((3 * k)) -s 64 -w $w shm_sparse
	done
	for op in mprotect_first dontneed_first memfd_first; do
		run -t 2 -i $((3 * k)) -s 64 -w 1 $op
	done
	exit $rc
fi
for t in 2 1; do
	# The 2021 thread's workload, and its other side: TLB refills after it.
	# Five iterations: the counts are the fewest of them (one that no
	# reschedule point split), times the sum.
	run -t $t -i $((5 * k)) -s 256 shm
	for w in 256 1024 4096; do
		run -t $t -i $((5 * k)) -s 64 -w $w refill
	done
	# Seed 003's process workloads.
	run -t $t -i $((20 * k)) -s 16 fork
	run -t $t -i $((20 * k)) forkexec
	run -t $t -i $((10 * k)) -s 16 mixed
	# THP: the jitter risk review named (whole-PID flushes from PMD-sized work).
	run -t $t -i $((2 * k)) -s 16 thp_collapse
	run -t $t -i $((2 * k)) -s 16 thp_split
	run -t $t -i $((2 * k)) -s 16 thp_mprotect
	# The sparse side: large ranges with few pages to flush, which must be
	# flushed as the base flushes them (no whole-PID flush it has not).
	for w in 1 2 4 8 32; do
		run -t $t -i $((5 * k)) -w $w thread_exit
	done
	for w in 8 32; do
		run -t $t -i $((3 * k)) -s 64 -w $w dontneed_sparse
		run -t $t -i $((3 * k)) -s 64 -w $w mprotect_sparse
	done
	for w in 1 2; do
		run -t $t -i $((3 * k)) -s 64 -w $w shm_sparse
	done
	run -t $t -i $((3 * k)) -w 20 thp_mixed
	# Only the first page table present (dirty, for memfd_first): one
	# dense batch in a large range. mprotect and private MADV_DONTNEED
	# flush it at the operation's end, as the base; memfd_first is the
	# one shape the batch rule flushes by PID (a forced batch).
	run -t $t -i $((3 * k)) -s 64 -w 1 mprotect_first
	run -t $t -i $((3 * k)) -s 64 -w 1 dontneed_first
	run -t $t -i $((3 * k)) -s 64 -w 1 memfd_first
	# The other callers of a dense shared unmap: a memfd punched,
	# truncated, MADV_REMOVEd, MADV_DONTNEEDed and unmapped.
	for s in 64 256; do
		for op in punch truncate remove dontneed munmap; do
			run -t $t -i $((3 * k)) -s $s memfd_$op
		done
	done
done
run -t 2 -i 1 -s 16 thp_khugepaged
exit $rc
