#!/bin/bash
# Class 1's first half, before and after: the kept mutants
# first-batch-not-flushed and first-batch-only-not-flushed on the 7.3
# series, each booted (POWER10 x4, tlbie_stale alone) with tlbie_stale as
# it was before its memfd cases (the readable copy at a4b091f^, built
# against the series' selftest helpers) and as it is now; the series with
# the old tlbie_stale too. Logs and a line per boot in OUT; the verdicts
# are printed, not judged (README there has what they were).
# first-batch-only-not-flushed-entire-range.log and test-slow.txt there
# were taken apart: a boot of tlbie_entire_range alone on the mutant, and
# MUTANTS=first-batch-only-not-flushed scripts/test-slow --mutants.
# Usage: evidence/7.3/class-tests/first-batch-not-flushed/run.sh [OUT]
#   (default out/class1-first-batch; RUNS (2))
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/../../../../scripts/lib.sh"

[ "$(linux_version)" = 7.3 ] || die "the mutants are for the 7.3 series: run with LINUX=7.3"
out=${1:-$TOP/out/class1-first-batch}
mkdir -p "$out"
out=$(cd "$out" && pwd)
old=a4b091f^
mapfile -t series < <(series_patches)
patched=$("$TOP/scripts/prepare" patched)
QEMU=$("$TOP/scripts/build-qemu")
export QEMU

# The old tlbie_stale: the readable copies of its files at $old, built
# with the series' selftest helpers (its "tlbie_count.h" is the one beside
# it: a "..." include looks there first)
src=$("$TOP/scripts/apply" build --series)
rm -rf "$out/old" "$out/root"
mkdir -p "$out/old" "$out/root/kselftest/powerpc/mm"
for f in tlbie_stale.c tlbie_count.c tlbie_count.h; do
	git -C "$TOP" show "$old:tools-testing-selftests/powerpc/mm/$f" >"$out/old/$f" ||
		die "no $f in the readable copy at $old"
done
selftest_program "$src" "$patched" "$out/root/kselftest/powerpc/mm/tlbie_stale" \
	"tlbie_stale-at-$old" "$out/old/tlbie_stale.c" "$out/old/tlbie_count.c" ||
	die "the tlbie_stale of $old does not build against the series' selftests"
initramfs_plus "$patched/initramfs.cpio" "$out/root" "$out/initramfs-old.cpio"

# boot_one NAME VMLINUX INITRAMFS: one boot of tlbie_stale, one line
boot_one() {
	local n=$1 result old_data
	CPU=power10 RUN=kselftest TESTS=$(tests_arg tlbie_stale) QUIET=1 \
		"$TOP/scripts/boot" "$2" "$3" "$out/$n.log" >/dev/null 2>"$out/$n.boot-err" || true
	if [ ! -f "$out/$n.log" ]; then
		tail -n 5 "$out/$n.boot-err" >&2
		die "$n: no console log: scripts/boot failed (above, $out/$n.boot-err)"
	fi
	result=$(tr -d '\r' <"$out/$n.log" | sed -n 's/^\(not ok\|ok\) [0-9]* selftests: powerpc\/mm: tlbie_stale.*/\1/p')
	old_data=$(tr -d '\r' <"$out/$n.log" | grep -E '^# [12] threads?: .* [1-9][0-9]* read old data' |
		sed 's/^# \([12] threads*\): \(.*\) of .* (\([0-9]*\) pages): .* \([0-9]*\) read old data.*/\1 \2 \3 pages: \4 old/' |
		paste -sd ';' -) || true
	printf '%s: %s; %s\n' "$n" "${result:-no result (see $out/$n.boot-err)}" "${old_data:-no old data read}"
}
for ((r = 1; r <= ${RUNS:-2}; r++)); do
	boot_one "series-old-test-$r" "$patched/vmlinux" "$out/initramfs-old.cpio"
done
for m in first-batch-not-flushed first-batch-only-not-flushed; do
	mb=$(BUILD_NAME=class1 KERNEL_ONLY=1 "$TOP/scripts/prepare" "mutant-$m" "${series[@]}" \
		"$TOP/scripts/mutants/$m.patch" 2>"$out/$m-build.log") ||
		{ tail -n 20 "$out/$m-build.log" >&2; die "$m does not build (log: $out/$m-build.log)"; }
	for ((r = 1; r <= ${RUNS:-2}; r++)); do
		boot_one "$m-old-test-$r" "$mb/vmlinux" "$out/initramfs-old.cpio"
		boot_one "$m-new-test-$r" "$mb/vmlinux" "$patched/initramfs.cpio"
	done
done
