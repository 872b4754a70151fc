#!/bin/bash
# The class-1 reader (tlbie_rmap.c, a look during the operation) on the
# series and on rmap-before-flush, in QEMU with pause.c stalling the vCPU
# that enters radix__tlb_flush() for PAUSE_US: the window between a zap's
# rmap removal and its flush, which a kernel that flushes first never
# opens, lasts long enough for the reader's vCPU to run in it. A draft
# beside the harness (not in the series, not in scripts/test): it builds
# the plugin QEMU (PLUGINS=1 scripts/build-qemu), pause.so, tlbie_rmap
# (static, against the patched build's headers) and the mutant, then boots
# each kernel RUNS times per CPU model and prints a line per boot.
# Usage: notes/class1-draft/run.sh [OUT]   (default out/class1; LINUX=7.3
#   only: the mutant is 7.3's; RUNS (2), CPUS ("power10 power9"),
#   PAUSE_US (20000), PAUSE=0: no plugin)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/lib.sh"

[ "$(linux_version)" = 7.3 ] || die "rmap-before-flush@7.3.patch is for 7.3 only"
out=${1:-$TOP/out/class1}
mkdir -p "$out"
out=$(cd "$out" && pwd)
runs=${RUNS:-2} pause_us=${PAUSE_US:-20000}
mapfile -t series < <(series_patches)
patched=$(build_root)/patched
[ -f "$patched/initramfs.cpio" ] || patched=$("$TOP/scripts/prepare" patched)

qemu=$(PLUGINS=1 "$TOP/scripts/build-qemu")
inc=$(dirname "$qemu")/include
[ -f "$inc/qemu-plugin.h" ] || die "no qemu-plugin.h in $inc: PLUGINS=1 scripts/build-qemu keeps it there"
need pkg-config pkg-config
# shellcheck disable=SC2046 # pkg-config prints several words
gcc -shared -fPIC -O2 -Wall -I "$inc" $(pkg-config --cflags glib-2.0) \
	-o "$out/pause.so" "$here/pause.c" $(pkg-config --libs glib-2.0) ||
	die "notes/class1-draft/pause.c does not compile (errors above)"

# tlbie_rmap with the series' selftest helpers, as the kselftests are built
src=$("$TOP/scripts/apply" build --series)
kst=$src/tools/testing/selftests/powerpc
"${CROSS_COMPILE}gcc" -std=gnu99 -O2 -Wall -static -DGIT_VERSION='"class1-draft"' \
	-I "$kst/include" -I "$kst/mm" -isystem "$patched/usr/include" -o "$out/tlbie_rmap" \
	"$here/tlbie_rmap.c" "$kst/mm/tlbie_count.c" "$kst/harness.c" "$kst/utils.c" -lpthread ||
	die "tlbie_rmap.c does not build against the series' selftests"
rm -rf "$out/root"
mkdir -p "$out/root"
cp "$out/tlbie_rmap" "$out/root/"
(cd "$out/root" && echo ./tlbie_rmap | cpio -o -H newc --owner=0:0 --quiet >"$out/rmap.cpio")
cat "$patched/initramfs.cpio" "$out/rmap.cpio" >"$out/initramfs.cpio"

mutant=$(BUILD_NAME=mutant KERNEL_ONLY=1 "$TOP/scripts/prepare" mutant-rmap-before-flush \
	"${series[@]}" "$here/rmap-before-flush@7.3.patch" 2>"$out/mutant-build.log") ||
	{ tail -n 20 "$out/mutant-build.log" >&2; die "the mutant does not build"; }

# boot_one NAME BUILD CPU: one boot, one line
boot_one() {
	local n=$1 b=$2 cpu=$3 s plugin=() result stale ops how
	s=$(awk '$3 == "radix__tlb_flush" { print $1 }' "$b/System.map")
	[ -n "$s" ] || die "no radix__tlb_flush in $b/System.map"
	# The global and the local entry (ELFv2: 8 bytes on); calls from the
	# kernel take the local one
	[ "${PAUSE:-1}" = 0 ] ||
		plugin=(PLUGIN="$out/pause.so,addr=0x$s,addr=$(printf '0x%x' $((0x$s + 8))),us=$pause_us"
			PLUGIN_LOG="$out/$n.plugin")
	env CPU="$cpu" QEMU="$qemu" "${plugin[@]}" RUN=cmd APPEND=rtlb.cmd=/tlbie_rmap QUIET=1 \
		TIMEOUT=900 "$TOP/scripts/boot" "$b/vmlinux" "$out/initramfs.cpio" "$out/$n.log" \
		>/dev/null 2>&1 || true
	result=$(tr -d '\r' <"$out/$n.log" | sed -n 's/^\(success\|failure\): tlbie_rmap$/\1/p')
	ops=$(grep -c 'read stale' "$out/$n.log" || true)
	stale=$(tr -d '\r' <"$out/$n.log" | awk '/read stale$/ { s += $(NF - 2) } END { print s + 0 }')
	how="no pause"
	[ "${PAUSE:-1}" = 0 ] || how=$(tail -n 1 "$out/$n.plugin")
	printf '%s: %s, %s operations, %s stale reads; %s\n' "$n" "${result:-no result}" "$ops" \
		"$stale" "$how"
}
for cpu in ${CPUS:-power10 power9}; do
	for ((r = 1; r <= runs; r++)); do
		boot_one "series-$cpu-$r" "$patched" "$cpu"
		boot_one "rmap-before-flush-$cpu-$r" "$mutant" "$cpu"
	done
done
