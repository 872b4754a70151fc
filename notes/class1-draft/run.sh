#!/bin/bash
# The class-1 reader (tlbie_rmap.c, a look during the operation) on the
# series and on rmap-before-flush, in QEMU with pause.c stalling the vCPU
# that enters radix__tlb_flush() for PAUSE_US: the window between a zap's
# rmap removal and its flush, which a kernel that flushes first never
# opens, lasts long enough for the reader's vCPU to run in it. A draft
# beside the harness (not in the series, not in scripts/test): it builds
# the plugin QEMU (PLUGINS=1 scripts/build-qemu), pause.so, tlbie_rmap
# (static, against the series' selftest helpers and headers) and the
# mutant (build directory "class1"), then boots each kernel RUNS times per
# CPU model, multi-threaded TCG, and prints a line per boot. Exit status 0
# only if every series boot passed and, with the pause, every mutant boot
# failed (without it: every series boot passed).
# Usage: notes/class1-draft/run.sh [OUT]   (default out/class1; LINUX=7.3
#   only: the mutant is 7.3's; RUNS (2), CPUS ("power10 power9"),
#   PAUSE_US (20000), PAUSE=0: no plugin)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/lib.sh"

[ "$(linux_version)" = 7.3 ] ||
	die "rmap-before-flush@7.3.patch is for the 7.3 series only: run with LINUX=7.3"
need gcc gcc
need pkg-config pkg-config
need "${CROSS_COMPILE}readelf" binutils-powerpc64le-linux-gnu
pkg-config --exists glib-2.0 || die "no glib-2.0 for pause.c: apt-get install libglib2.0-dev (or run scripts/deps)"
out=${1:-$TOP/out/class1}
mkdir -p "$out"
out=$(cd "$out" && pwd)
runs=${RUNS:-2} pause_us=${PAUSE_US:-20000} pause=${PAUSE:-1}
mapfile -t series < <(series_patches)
patched=$("$TOP/scripts/prepare" patched)

qemu=$(PLUGINS=1 "$TOP/scripts/build-qemu")
inc=$(dirname "$qemu")/include
[ -f "$inc/qemu-plugin.h" ] || die "no qemu-plugin.h in $inc: PLUGINS=1 scripts/build-qemu keeps it there"
# shellcheck disable=SC2046 # pkg-config prints several words
gcc -shared -fPIC -O2 -Wall -I "$inc" $(pkg-config --cflags glib-2.0) \
	-o "$out/pause.so" "$here/pause.c" $(pkg-config --libs glib-2.0) ||
	die "notes/class1-draft/pause.c does not compile (errors above)"

# tlbie_rmap with the series' selftest helpers, as the kselftests are
# built; its GIT_VERSION (printed by the harness) is its source's hash
src=$("$TOP/scripts/apply" build --series)
ver=$(sha256sum "$here/tlbie_rmap.c" | cut -c1-12)
rm -rf "$out/root"
mkdir -p "$out/root"
selftest_program "$src" "$patched" "$out/root/tlbie_rmap" "tlbie_rmap.c-$ver" \
	"$here/tlbie_rmap.c" "$src/tools/testing/selftests/powerpc/mm/tlbie_count.c" ||
	die "tlbie_rmap.c does not build against the series' selftests"
initramfs_plus "$patched/initramfs.cpio" "$out/root" "$out/initramfs.cpio"

mutant=$(BUILD_NAME=class1 KERNEL_ONLY=1 "$TOP/scripts/prepare" mutant-rmap-before-flush \
	"${series[@]}" "$here/rmap-before-flush@7.3.patch" 2>"$out/mutant-build.log") ||
	{ tail -n 20 "$out/mutant-build.log" >&2; die "the mutant does not build (log: $out/mutant-build.log)"; }

# entries BUILD: radix__tlb_flush()'s global entry and, where it has one,
# its local entry (ELFv2 st_other; calls from within the kernel take it)
entries() {
	local line addr off
	line=$("${CROSS_COMPILE}readelf" -sW "$1/vmlinux" | awk '$NF == "radix__tlb_flush" && $4 == "FUNC" { print; exit }')
	[ -n "$line" ] || die "no radix__tlb_flush in $1/vmlinux"
	addr=0x$(awk '{ print $2 }' <<<"$line")
	off=$(sed -n 's/.*<localentry>: \([0-9]*\)\].*/\1/p' <<<"$line")
	if [ -n "$off" ] && [ "$off" -gt 1 ]; then
		printf 'addr=%s,addr=0x%x' "$addr" $((addr + off))
	else
		printf 'addr=%s' "$addr"
	fi
}

failed=0
# boot_one NAME BUILD CPU WANT: one boot, one line; WANT success, failure or any
boot_one() {
	local n=$1 b=$2 cpu=$3 want=$4 plugin=() result stale ops how="no pause"
	rm -f "$out/$n.plugin"
	[ "$pause" = 0 ] ||
		plugin=(PLUGIN="$out/pause.so,$(entries "$b"),us=$pause_us" PLUGIN_LOG="$out/$n.plugin")
	env -u ICOUNT TCG=multi CPU="$cpu" QEMU="$qemu" "${plugin[@]}" RUN=cmd \
		APPEND=rtlb.cmd=/tlbie_rmap QUIET=1 TIMEOUT=900 \
		"$TOP/scripts/boot" "$b/vmlinux" "$out/initramfs.cpio" "$out/$n.log" \
		>/dev/null 2>"$out/$n.boot-err" || true
	if [ ! -f "$out/$n.log" ]; then
		tail -n 5 "$out/$n.boot-err" >&2
		printf '%s: no console log: scripts/boot failed (above, %s)\n' "$n" "$out/$n.boot-err"
		failed=1
		return
	fi
	result=$(tr -d '\r' <"$out/$n.log" 2>/dev/null | sed -n 's/^\(success\|failure\): tlbie_rmap$/\1/p')
	ops=$(grep -c 'read stale' "$out/$n.log" 2>/dev/null || true)
	stale=$(tr -d '\r' <"$out/$n.log" 2>/dev/null | awk '/read stale$/ { s += $(NF - 2) } END { print s + 0 }')
	if [ "$pause" != 0 ]; then
		how=$(tail -n 1 "$out/$n.plugin" 2>/dev/null || echo "no plugin output")
	fi
	printf '%s: %s, %s operations, %s stale reads; %s\n' "$n" "${result:-no result (see $out/$n.boot-err)}" \
		"${ops:-0}" "$stale" "$how"
	[ "$want" = any ] || [ "$result" = "$want" ] || failed=1
}
for cpu in ${CPUS:-power10 power9}; do
	for ((r = 1; r <= runs; r++)); do
		boot_one "series-$cpu-$r" "$patched" "$cpu" success
		if [ "$pause" = 0 ]; then
			boot_one "rmap-before-flush-$cpu-$r" "$mutant" "$cpu" any
		else
			boot_one "rmap-before-flush-$cpu-$r" "$mutant" "$cpu" failure
		fi
	done
done
exit $failed
