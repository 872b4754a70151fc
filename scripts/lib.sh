# shellcheck shell=bash
# Shared settings and helpers for the scripts in this directory; sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${RADIX_TLB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/radix-tlb}
JOBS=${JOBS:-$(( $(nproc) + 1 ))}
CROSS_COMPILE=${CROSS_COMPILE:-powerpc64le-linux-gnu-}
# The make variable the selftests are built with (scripts/build-selftests,
# build-mm-selftests): linked statically, they run on the guest's userspace
# whatever glibc the host's cross toolchain has.
# shellcheck disable=SC2034 # used by the scripts that source this file
SELFTEST_LINK=USERLDFLAGS=-static
export TOP CACHE JOBS CROSS_COMPILE

# A command that fails under set -e stops the script: say which, and where,
# rather than stopping silently. Only under set -e (set +e regions check
# their own status; $? and PIPESTATUS are left as they were).
set -E
# shellcheck disable=SC2154 # assigned in the trap itself
trap '_rtlb_rc=$?; [[ $- != *e* ]] || printf "%s: error: \"%s\" returned %s (%s line %s)\n" "${0##*/}" "$BASH_COMMAND" "$_rtlb_rc" "${BASH_SOURCE[0]##*/}" "$LINENO" >&2 || :' ERR

die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

log() {
	printf '==> %s\n' "$*" >&2
}

# need CMD PACKAGE: fail with the package to install when CMD is missing.
need() {
	command -v "$1" >/dev/null 2>&1 ||
		die "'$1' not found; install it with: apt-get install $2 (or run scripts/deps)"
}

# debian_uris: the Debian archive URIs (ending in /debian or
# /debian-security, without a trailing /) in the machine's apt sources,
# deb822 or one-line format, in their order (other vendors' repositories
# are skipped); prints nothing if there is none.
debian_uris() {
	local files=() f
	for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || return 0
	awk '
		/^[ \t]*#/ { next }
		FILENAME ~ /\.sources$/ { if (tolower($1) != "uris:") next; i = 2 }
		FILENAME !~ /\.sources$/ {
			if ($1 != "deb" && $1 != "deb-src") next
			sub(/\[[^]]*\]/, ""); i = 2
		}
		{ for (; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\/[^\/]+\/debian(-security)?\/?$/) { sub(/\/$/, "", $i); print $i } }
	' "${files[@]}"
}

# debian_mirror: the first Debian archive URI ending in /debian (see
# debian_uris); prints nothing if there is none.
debian_mirror() {
	debian_uris | awk '/\/debian$/ && !f { print; f = 1 }'
}

# linux_version: the kernel the series is based on, from $LINUX: 7.3 (the
# default: the mainline series, patches/ + series, on Debian's
# linux-source-7.3 from experimental, a mainline release candidate) or 6.12
# (its stable backport, stable/6.12/, on Debian's linux-source-6.12). Both
# bases are made by get-base.
linux_version() {
	case ${LINUX:-7.3} in
	6.12 | 7.3) printf '%s\n' "${LINUX:-7.3}" ;;
	*) die "LINUX=$LINUX is not a base get-base makes; set LINUX=6.12 or LINUX=7.3 (or KERNEL_TREE= for your own tree)" ;;
	esac
}

# The kernel tree the series applies to: $KERNEL_TREE, else the unpacked
# Debian linux-source made by scripts/get-base: $CACHE/linux for 6.12,
# $CACHE/linux-7.3 for 7.3.
kernel_tree() {
	if [ -n "${KERNEL_TREE:-}" ]; then
		printf '%s\n' "$KERNEL_TREE"
	else
		local v
		v=$(linux_version) || exit 1
		case $v in
		6.12) printf '%s\n' "$CACHE/linux" ;;
		*) printf '%s\n' "$CACHE/linux-$v" ;;
		esac
	fi
}

# wt_root: the directory for worktrees of the base tree: $CACHE/wt for 6.12
# (and for a KERNEL_TREE, as before), $CACHE/linux-7.3.wt for 7.3, so that
# worktrees of one base are never checked out at the other's tag.
wt_root() {
	if [ -n "${KERNEL_TREE:-}" ]; then
		printf '%s\n' "$CACHE/wt"
	else
		local v
		v=$(linux_version) || exit 1
		case $v in
		6.12) printf '%s\n' "$CACHE/wt" ;;
		*) printf '%s\n' "$CACHE/linux-$v.wt" ;;
		esac
	fi
}

# series_dir: where the series for $LINUX lives: the top for mainline,
# stable/6.12 for the backport (each a patches/ directory and a series file).
series_dir() {
	local v
	v=$(linux_version) || exit 1
	case $v in
	7.3) printf '%s\n' "$TOP" ;;
	*) printf '%s\n' "$TOP/stable/$v" ;;
	esac
}

# build_root: the build directories of $LINUX's kernels (one per variant).
build_root() {
	local v
	v=$(linux_version) || exit 1
	case $v in
	6.12) printf '%s\n' "$CACHE/build" ;;
	*) printf '%s\n' "$CACHE/build-$v" ;;
	esac
}

# The commit the series applies to: $BASE, else the tag made by get-base
# (or HEAD of a user tree).
base_rev() {
	if [ -n "${BASE:-}" ]; then
		printf '%s\n' "$BASE"
	elif [ -n "${KERNEL_TREE:-}" ]; then
		printf 'HEAD\n'
	else
		printf 'debian-base\n'
	fi
}

# series_patches: the patch files of series, in order, as paths.
series_patches() {
	local line series dir
	if [ -n "${SERIES:-}" ]; then
		series=$SERIES
		dir=$(dirname "$SERIES")
	else
		dir=$(series_dir) || exit 1
		series=$dir/series
	fi
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		line=$(printf '%s' "$line" | tr -d '[:space:]')
		[ -n "$line" ] || continue
		[ -f "$dir/patches/$line" ] || die "$series names patches/$line, which does not exist"
		printf '%s\n' "$dir/patches/$line"
	done <"$series"
}

# series_routes: the series' parts, one per merge route, as the
# directories under patches/ that series names, in its order (each holds
# its own cover letter and patches: 1-fix, 2-feature, 3-selftests).
series_routes() {
	series_patches | sed 's,.*/patches/\([^/]*\)/[^/]*$,\1,' | uniq
}

# mm_selftests: the programs configs/mm-selftests names, one per line.
mm_selftests() {
	sed 's/#.*//' "$TOP/configs/mm-selftests" | tr -s ' \t' '\n' | grep .
}

# restart_build DIR STAMP FLAGS: make keeps binaries built with other flags,
# so remove DIR when the file STAMP does not hold FLAGS, and record FLAGS
# (at once: a failed build is not followed by another from scratch).
restart_build() {
	[ "$(cat "$2" 2>/dev/null)" != "$3" ] || return 0
	rm -rf "$1"
	printf '%s\n' "$3" >"$2"
}

# tests_arg TEST...: the powerpc/mm kselftests TEST... as scripts/boot's
# TESTS= takes them (rtlb.tests=, "powerpc/mm:NAME,...").
tests_arg() {
	local t list=''
	for t in "$@"; do list+="${list:+,}powerpc/mm:$t"; done
	printf '%s\n' "$list"
}

# pause_plugin QEMU VMLINUX FUNC US: scripts/boot's PLUGIN for qemu/pause.c
# (pause.so beside QEMU, the binary of PLUGINS=1 scripts/build-qemu),
# stalling for US microseconds at FUNC's global entry and, where it has
# one, its local entry (ELFv2 st_other; calls from within the kernel take
# it): "DIR/pause.so,addr=0x...[,addr=0x...],us=US".
pause_plugin() {
	local line addr off entries
	need "${CROSS_COMPILE}readelf" binutils-powerpc64le-linux-gnu
	line=$("${CROSS_COMPILE}readelf" -sW "$2" | awk -v f="$3" '$NF == f && $4 == "FUNC" { print; exit }')
	[ -n "$line" ] || die "no function $3 in $2"
	addr=0x$(awk '{ print $2 }' <<<"$line")
	off=$(sed -n 's/.*<localentry>: \([0-9]*\)\].*/\1/p' <<<"$line")
	entries=addr=$addr
	if [ -n "$off" ] && [ "$off" -gt 1 ]; then
		entries+=$(printf ',addr=0x%x' $((addr + off)))
	fi
	printf '%s/pause.so,%s,us=%s\n' "$(dirname "$1")" "$entries" "$4"
}

# initramfs_plus INITRAMFS ROOT OUT: INITRAMFS with the files under ROOT
# added, as a second cpio archive (the kernel unpacks both, and a later
# archive's file replaces an earlier one's), in OUT.
initramfs_plus() {
	{
		cat "$1"
		(cd "$2" && find . | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet)
	} >"$3"
}

# selftest_program SRC PATCHED OUT VERSION FILE...: one powerpc selftest
# program built alone from FILE..., static, as the kselftests build it:
# with harness.c, utils.c and the headers of SRC's
# tools/testing/selftests/powerpc (mm/ too: a "..." include looks in the
# including file's directory first), PATCHED's installed UAPI headers, and
# VERSION as the GIT_VERSION its harness prints.
selftest_program() {
	local k=$1/tools/testing/selftests/powerpc patched=$2 out=$3 ver=$4
	shift 4
	"${CROSS_COMPILE}gcc" -std=gnu99 -O2 -Wall -static -DGIT_VERSION="\"$ver\"" \
		-I "$k/include" -I "$k/mm" -isystem "$patched/usr/include" -o "$out" \
		"$@" "$k/harness.c" "$k/utils.c" -lpthread
}

# kselftest_failed LOG TEST: the powerpc/mm kselftest TEST (an extended
# regex) is "not ok" in the guest console log LOG.
kselftest_failed() {
	grep -qE "^not ok [0-9]+ selftests: powerpc/mm: $2( |\$)" <(tr -d '\r' <"$1")
}

# TAP for the check scripts: ok/nok print one numbered line each, tap_end
# prints the plan and "NAME: N passed, N failed" and fails if any did.
n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
nok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
}
tap_end() {
	echo "1..$n"
	echo "# $1: $((n - failed)) passed, $failed failed"
	[ "$failed" = 0 ]
}

# A kernel splat line on a console (scripts/check-log's judgement, and
# scripts/precedent-x86's guests): panic, oops, BUG, WARN(), lockdep,
# KASAN, UBSAN, hung task, a Call Trace. Plain "WARNING: " messages
# (pseries nvram at boot) are not WARN()s.
# shellcheck disable=SC2034 # used by the scripts that source this file
KERNEL_SPLAT_RE='Kernel panic|Oops[:!]|kernel BUG at|BUG: |WARNING: CPU: [0-9]+ PID: |WARNING: ([^ ]+:[0-9]+ )?at |WARNING: (possible|suspicious|inconsistent|bad unlock|held lock)|\[ cut here \]|Unable to handle kernel|circular locking dependency|KASAN:|UBSAN:|INFO: task .* blocked|Call Trace:'
