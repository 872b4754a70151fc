#!/bin/bash
# Class 5 of issue 18 (builds with KVM), before and after, on one mutant:
# MUTANT (default 45e2088100d0, scripts/mutate-gen's "nr_pages to
# range_pages" at radix_tlb.c's do_h_rpt_invalidate_prt(), a line only a
# KVM-HV build compiles) applied on top of the whole 7.3 series.
#   before: the pseries.config build, all scripts/test built before
#     14169ff: the mutant builds, and radix_tlb.o is the series' own
#     (the line is not compiled);
#   after: scripts/test's step "the series builds with KVM" (the same
#     build with configs/kvm.config): the mutant does not compile.
# Needs the mutant's patch from a scripts/mutate run (out/mutate/mutants/).
# Usage: evidence/7.3/class5-kvm/run.sh   (from the repository's top)
set -euo pipefail
TOP=$(git rev-parse --show-toplevel)
cd "$TOP"
export LINUX=7.3
. scripts/lib.sh
here=evidence/7.3/class5-kvm
m=${MUTANT:-45e2088100d0}
patch=$TOP/out/mutate/mutants/$m.patch
[ -f "$patch" ] || die "$patch not found: run LINUX=7.3 scripts/mutate first (it writes the mutants)"
mapfile -t series < <(series_patches)
br=$(build_root)
{
	echo "# $(date -u +%F) MUTANT=$m on the 7.3 series ($(cat "${series[@]}" | sha256sum | cut -c1-12)), mutant $(sha256sum <"$patch" | cut -c1-12)"
	sed -n 's/^\(Operator\|Before\|After\|File\|Line\): /# \1: /p' "$patch"
	# the series' own radix_tlb.o, pseries.config, as scripts/test builds it
	BUILD_NAME=class5-series KERNEL_ONLY=1 scripts/prepare prefix "${series[@]}" >/tmp/class5-series.log 2>&1 ||
		die "the series alone does not build (/tmp/class5-series.log)"
	ref=$(powerpc64le-linux-gnu-objcopy -O binary -j .text "$br/class5-series/arch/powerpc/mm/book3s64/radix_tlb.o" /dev/stdout | sha256sum | cut -c1-12)
	echo "# the series, pseries.config: builds; radix_tlb.o .text $ref"
	if BUILD_NAME=class5-series KERNEL_ONLY=1 scripts/prepare prefix "${series[@]}" "$patch" >"$here/before-pseries.log" 2>&1; then
		got=$(powerpc64le-linux-gnu-objcopy -O binary -j .text "$br/class5-series/arch/powerpc/mm/book3s64/radix_tlb.o" /dev/stdout | sha256sum | cut -c1-12)
		echo "before (pseries.config, scripts/test before 14169ff): the mutant builds; radix_tlb.o .text $got$([ "$got" = "$ref" ] && echo ", the series' own")"
	else
		echo "before (pseries.config): the mutant does not build (before-pseries.log)"
	fi
	if BUILD_NAME=class5-kvm KERNEL_ONLY=1 FRAGMENTS="$TOP/configs/pseries.config $TOP/configs/kvm.config" \
		scripts/prepare prefix "${series[@]}" "$patch" >"$here/after-kvm.log" 2>&1; then
		echo "after (configs/kvm.config, scripts/test's KVM step): the mutant builds: NOT caught"
	else
		echo "after (configs/kvm.config, scripts/test's KVM step): the mutant does not build, caught:"
		grep -m3 -E 'error:' "$here/after-kvm.log" | sed "s|$HOME|~|g; s/^/  /"
	fi
} | tee "$here/run.txt"
