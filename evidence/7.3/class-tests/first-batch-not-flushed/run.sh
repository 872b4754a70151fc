#!/bin/bash
# first-batch-not-flushed on the current series, booted with tlbie_stale as
# it was before its memfd cases (a4b091f^) and as it is now.
set -euo pipefail
. /work/main/scripts/lib.sh
mapfile -t series < <(series_patches)
patched=$(build_root)/patched
QEMU=$("$TOP/scripts/build-qemu"); export QEMU
m=$TOP/scripts/mutants/first-batch-not-flushed.patch
mb=$(BUILD_NAME=mutant KERNEL_ONLY=1 "$TOP/scripts/prepare" mutant-first-batch-not-flushed "${series[@]}" "$m")
echo "mutant vmlinux: $mb/vmlinux"
mkdir -p /tmp/class1
for r in 1 2; do
CPU=power10 RUN=kselftest TESTS=$(tests_arg tlbie_stale) QUIET=1 "$TOP/scripts/boot" "$mb/vmlinux" /tmp/oldstale/initramfs-old-stale.cpio /tmp/class1/before-$r.log >/dev/null 2>&1 || true
CPU=power10 RUN=kselftest TESTS=$(tests_arg tlbie_stale) QUIET=1 "$TOP/scripts/boot" "$mb/vmlinux" "$patched/initramfs.cpio" /tmp/class1/after-$r.log >/dev/null 2>&1 || true
done
for f in /tmp/class1/*.log; do echo "== $f"; "$TOP/scripts/check-log" "$f" 2>&1 | tail -3; done
