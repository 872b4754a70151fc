#!/bin/bash
# Class 5 of issue 18 (builds with KVM), before and after, on one mutant:
# 45e2088100d0.patch here, scripts/mutate-gen's "nr_pages to range_pages"
# in radix_tlb.c's do_h_rpt_invalidate_prt(), a line only a KVM-HV build
# compiles, applied on top of the whole 7.3 series.
#   before: the pseries.config build, all scripts/test built before
#     14169ff: the mutant builds, and radix_tlb.o is byte for byte the
#     series' own (the line is not compiled);
#   after: scripts/test's step "the series builds with KVM" (the same
#     build with configs/kvm.config): the series alone builds (the
#     control), the mutant fails on the mutated name.
# Builds in the shared "build" worktree (run nothing else that uses it)
# and leaves the mutant applied there; the next scripts/prepare puts the
# series back. Writes run.txt and the two logs only when it finishes.
# Usage: evidence/7.3/class5-kvm/run.sh   (from anywhere in the repository)
set -euo pipefail
TOP=$(git rev-parse --show-toplevel)
cd "$TOP"
export LINUX=7.3
. scripts/lib.sh
here=$TOP/evidence/7.3/class5-kvm
patch=$here/${MUTANT:-45e2088100d0}.patch
[ -f "$patch" ] || die "$patch not found"
mapfile -t series < <(series_patches)
br=$(build_root)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
obj=arch/powerpc/mm/book3s64/radix_tlb.o
kvm=("$TOP/configs/pseries.config" "$TOP/configs/kvm.config")
{
	echo "# $(date -u +%F) $(basename "$patch" .patch) on the 7.3 series ($(cat "${series[@]}" | sha256sum | cut -c1-12)), mutant $(sha256sum <"$patch" | cut -c1-12)"
	sed -n 's/^\(Operator\|Before\|After\|File\|Line\): /# \1: /p' "$patch"
	BUILD_NAME=class5-series KERNEL_ONLY=1 scripts/prepare prefix "${series[@]}" >"$tmp/series-pseries.log" 2>&1 ||
		{ tail -n 20 "$tmp/series-pseries.log" >&2; die "the series alone does not build with pseries.config (log tail above)"; }
	cp "$br/class5-series/$obj" "$tmp/series-radix_tlb.o"
	echo "# the series, pseries.config: builds"
	if BUILD_NAME=class5-series KERNEL_ONLY=1 scripts/prepare prefix "${series[@]}" "$patch" >"$tmp/before-pseries.log" 2>&1; then
		if cmp -s "$tmp/series-radix_tlb.o" "$br/class5-series/$obj"; then
			echo "before (pseries.config, all scripts/test built before 14169ff): the mutant builds; $obj is byte for byte the series' own"
		else
			echo "before (pseries.config): the mutant builds; $obj differs from the series'"
		fi
	else
		echo "before (pseries.config): the mutant does not build (before-pseries.log)"
	fi
	if BUILD_NAME=class5-kvm KERNEL_ONLY=1 FRAGMENTS="${kvm[*]}" scripts/prepare prefix "${series[@]}" >"$tmp/series-kvm.log" 2>&1; then
		echo "# control: the series alone builds with configs/kvm.config"
	else
		tail -n 20 "$tmp/series-kvm.log" >&2
		die "control failed: the series alone does not build with kvm.config (log tail above)"
	fi
	if BUILD_NAME=class5-kvm KERNEL_ONLY=1 FRAGMENTS="${kvm[*]}" scripts/prepare prefix "${series[@]}" "$patch" >"$tmp/after-kvm.log" 2>&1; then
		echo "after (configs/kvm.config, scripts/test's KVM step): the mutant builds: NOT caught"
	elif grep -q "error: .range_pages. undeclared" "$tmp/after-kvm.log"; then
		echo "after (configs/kvm.config, scripts/test's KVM step): the mutant does not build, caught:"
		grep -m1 -E "error: .range_pages. undeclared" "$tmp/after-kvm.log" | sed "s|^.*/linux-7.3.wt/build/||; s/^/  /"
	else
		echo "after (configs/kvm.config): the build failed, but not on the mutated name: see after-kvm.log"
	fi
} >"$tmp/run.txt"
cp "$tmp/before-pseries.log" "$tmp/after-kvm.log" "$here/"
cp "$tmp/run.txt" "$here/run.txt"
cat "$here/run.txt"
