#!/bin/bash
# tlbie_rmap as the series has it (3-selftests 6/6), on the series and on
# a kept mutant (MUTANT, default rmap-before-flush: scripts/mutants/
# MUTANT[@VERSION].patch), with and without qemu/pause.c (a 20 ms
# stall of the vCPU entering radix__tlb_flush()), on each CPU model x4,
# multi-threaded TCG: four boots per model and run, a line each, and
# run.txt with the inputs' hashes. The verdicts are printed, not judged
# (scripts/test-slow judges: MUTANTS=rmap-before-flush scripts/test-slow
# --mutants). The mutant is built in its own build directory ("rmap").
# Logs and run.txt go to OUT, then by hand to the evidence directory.
# Usage: evidence/7.3/class1-reader/in-series/run.sh [OUT]
#   (default out/rmap-in-series; LINUX 7.3 or 6.12; RUNS (1); CPUS
#   ("power10 power9"); PAUSE_US (20000))
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/../../../../scripts/lib.sh"

v=$(linux_version)
out=${1:-$TOP/out/rmap-in-series}
mkdir -p "$out"
out=$(cd "$out" && pwd)
mapfile -t series < <(series_patches)
patched=$("$TOP/scripts/prepare" patched)
qemu=$("$TOP/scripts/build-qemu")
pqemu=$(PLUGINS=1 "$TOP/scripts/build-qemu")
name=${MUTANT:-rmap-before-flush}
mpatch=$TOP/scripts/mutants/$name@$v.patch
[ -f "$mpatch" ] || mpatch=$TOP/scripts/mutants/$name.patch
[ -f "$mpatch" ] || die "no scripts/mutants/$name@$v.patch or $name.patch"
mutant=$(BUILD_NAME=rmap KERNEL_ONLY=1 "$TOP/scripts/prepare" "mutant-$name" \
	"${series[@]}" "$mpatch" 2>"$out/mutant-build.log") ||
	{ tail -n 20 "$out/mutant-build.log" >&2; die "the mutant does not build (log: $out/mutant-build.log)"; }
us=${PAUSE_US:-20000}
{
	echo "LINUX=$v, $(date -u '+%F %T') UTC"
	echo "tlbie_rmap.c sha256 $(sha256sum "$TOP/tools-testing-selftests/powerpc/mm/tlbie_rmap.c" | cut -c1-12)"
	echo "series vmlinux sha256 $(sha256sum "$patched/vmlinux" | cut -c1-12)"
	echo "mutant vmlinux sha256 $(sha256sum "$mutant/vmlinux" | cut -c1-12)" \
		"(${mpatch#"$TOP"/} $(sha256sum "$mpatch" | cut -c1-12))"
	echo "pause: qemu/pause.c sha256 $(sha256sum "$TOP/qemu/pause.c" | cut -c1-12), $us us"
} >"$out/run.txt"
cat "$out/run.txt"

# boot_one NAME VMLINUX CPU PAUSE(0|1): one boot of tlbie_rmap, one line
boot_one() {
	local n=$1 vml=$2 cpu=$3 env=(QEMU="$qemu") result ops stale np=- t0=$SECONDS
	rm -f "$out/$n.log" "$out/$n.plugin"
	[ "$4" = 0 ] || env=(QEMU="$pqemu" PLUGIN="$(pause_plugin "$pqemu" "$vml" radix__tlb_flush "$us")"
		PLUGIN_LOG="$out/$n.plugin")
	env -u ICOUNT "${env[@]}" TCG=multi CPU="$cpu" RUN=kselftest TESTS="$(tests_arg tlbie_rmap)" QUIET=1 \
		"$TOP/scripts/boot" "$vml" "$patched/initramfs.cpio" "$out/$n.log" >/dev/null 2>"$out/$n.boot-err" || true
	t0=$((SECONDS - t0))
	[ -f "$out/$n.log" ] || { tail -n 5 "$out/$n.boot-err" >&2; die "$n: no console log (above)"; }
	result=$(tr -d '\r' <"$out/$n.log" | sed -n 's/^\(not ok\|ok\) [0-9]* selftests: powerpc\/mm: tlbie_rmap\(.*\)/\1\2/p')
	ops=$(tr -d '\r' <"$out/$n.log" | sed -n 's/^# \(.*\): \([0-9]*\) operations, \([0-9]*\) judged, \([0-9]*\) of them.*/\1 \3 judged, \4 looked/p' |
		paste -sd ';' -)
	stale=$(tr -d '\r' <"$out/$n.log" | sed -n 's/.* \([0-9]*\) read stale.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	[ "$4" = 0 ] || np=$(sed -n 's/^pause: \([0-9]*\) pauses.*/\1/p' "$out/$n.plugin" 2>/dev/null | tail -n 1)
	printf '%s: %s; %s; %s stale reads; pauses %s; boot %s s\n' "$n" "${result:-no result}" "${ops:-no operations}" \
		"$stale" "${np:-none}" "$t0"
}
for cpu in ${CPUS:-power10 power9}; do
	for ((r = 1; r <= ${RUNS:-1}; r++)); do
		boot_one "series-$cpu-$r" "$patched/vmlinux" "$cpu" 0
		boot_one "series-paused-$cpu-$r" "$patched/vmlinux" "$cpu" 1
		boot_one "mutant-$cpu-$r" "$mutant/vmlinux" "$cpu" 0
		boot_one "mutant-paused-$cpu-$r" "$mutant/vmlinux" "$cpu" 1
	done
done | tee -a "$out/run.txt"
