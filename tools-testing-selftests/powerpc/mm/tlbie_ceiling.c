// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The flush ceilings in debugfs mean what radix_tlb.c says they mean: a
 * range of more than N pages flushes the whole PID, one of N pages or
 * fewer is flushed page by page. For the global ceiling (a thread live on
 * another CPU, tlbie) and the local one (a single-threaded process,
 * tlbiel), set the ceiling to N and munmap() N - 1, N and N + 1 pages,
 * and mremap() them (its flush is flush_tlb_range()'s, not an
 * mmu_gather's), with the other scope's ceiling at OTHER, so that a
 * flush weighed against the wrong scope's ceiling shows. Counts above
 * these are measured again (noise only adds).
 *
 * The ceilings are restored on every exit path, signals included
 * (tlbie_write_restored()).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define N		8
#define OTHER		32

#define DEBUGFS		"/sys/kernel/debug/"

/* Global: want per-page up to N, one whole-PID flush above N. */
static enum tlbie_verdict check_global(unsigned long pages, const struct tlbie_counts *c)
{
	if (pages <= N) {
		if (c->global_page > pages || c->global_pid)
			return TLBIE_TOO_MANY;
		return c->global_page < pages ? TLBIE_TOO_FEW : TLBIE_PASS;
	}
	if (c->global_page || c->global_pid > 1)
		return TLBIE_TOO_MANY;
	return c->global_pid < 1 ? TLBIE_TOO_FEW : TLBIE_PASS;
}

/* Local: same, where a whole-PID tlbiel is one per TLB set on POWER9. */
static enum tlbie_verdict check_local(unsigned long pages, const struct tlbie_counts *c)
{
	if (c->global)
		return TLBIE_TOO_MANY;
	if (pages <= N) {
		if (c->local > pages || c->local_pid)
			return TLBIE_TOO_MANY;
		return c->local < pages ? TLBIE_TOO_FEW : TLBIE_PASS;
	}
	if (c->local > c->local_pid)
		return TLBIE_TOO_MANY;
	return c->local_pid < 1 ? TLBIE_TOO_FEW : TLBIE_PASS;
}

/*
 * mremap() of @pages filled pages into a hole at the same offset in the
 * next page table: move_ptes() flushes the old range with
 * flush_tlb_range(), radix__flush_tlb_range().
 */
static int count_mremap(unsigned long pages, struct tlbie_counts *c)
{
	unsigned long page = sysconf(_SC_PAGESIZE);
	size_t len = 2 * TLBIE_PMD_SPAN + (pages + 2) * page;
	char *map, *start, *to;
	void *moved;
	int rc = 0;

	map = tlbie_map_filled(len);
	if (!map)
		return -1;
	start = tlbie_pmd_align(map) + page;
	to = start + TLBIE_PMD_SPAN;
	/* The hole, made before counting: its unmap flushes too */
	if (munmap(to, pages * page) || tlbie_count_start()) {
		munmap(map, len);
		return -1;
	}
	moved = mremap(start, pages * page, pages * page, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	if (tlbie_count_stop(c) || moved != to)
		rc = -1;
	munmap(map, len);
	return rc;
}

/* munmap() (an mmu_gather's flush) or mremap() of @pages, counted */
static int count(bool remap, bool global, unsigned long pages, struct tlbie_counts *c)
{
	int tries = 0, rc;

	if (!remap)
		return global ? tlbie_count_op_global(TLBIE_MUNMAP, pages, c) :
				tlbie_count_op(TLBIE_MUNMAP, pages, c);
	/* A global measurement that saw tlbiel is the mm_cpumask trim's */
	do
		rc = count_mremap(pages, c);
	while (global && !rc && c->local && ++tries < TLBIE_TRIES);
	return rc;
}

static int run(const char *scope,
	       enum tlbie_verdict (*check)(unsigned long, const struct tlbie_counts *))
{
	bool global = check == check_global;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	unsigned long pages;
	int failed = 0, tries, remap;
	char label[64];

	/* The first flush may trim CPUs the process ran on before: not counted. */
	FAIL_IF(tlbie_count_op(TLBIE_MUNMAP, 1, &c));

	for (remap = 0; remap < 2; remap++) {
		for (pages = N - 1; pages <= N + 1; pages++) {
			snprintf(label, sizeof(label), "%s_ceiling_%d_%s_%lu", scope, N,
				 remap ? "mremap" : "munmap", pages);
			tries = 0;
			do {
				FAIL_IF(count(remap, global, pages, &c));
				tlbie_counts_print(label, &c);
				v = check(pages, &c);
			} while (tlbie_measure_again(v, &tries));
			if (v != TLBIE_PASS) {
				printf("%s: want %s\n", label, pages <= N ?
				       "per-page flushes only" : "one whole-PID flush");
				failed = 1;
			}
		}
	}
	return failed;
}

static int test_ceiling(void)
{
	struct tlbie_sibling sibling;
	int cpus[2], saved_global, saved_local, failed;
	const char *why;

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_pick_cpus(cpus) < 2, "needs two CPUs");
	SKIP_IF_MSG(read_debugfs_int(TLBIE_GLOBAL_CEILING, &saved_global) ||
		    read_debugfs_int(TLBIE_LOCAL_CEILING, &saved_local),
		    "no flush ceilings in debugfs");
	printf("ceilings were: global %d, local %d\n", saved_global, saved_local);
	FAIL_IF(tlbie_write_restored(DEBUGFS TLBIE_GLOBAL_CEILING, str(OTHER)) ||
		tlbie_write_restored(DEBUGFS TLBIE_LOCAL_CEILING, str(N)));

	/* Single-threaded: the kernel trims the mm to this CPU, tlbiel. */
	FAIL_IF(tlbie_bind_cpu(cpus[0]));
	failed = run("local", check_local);

	FAIL_IF(tlbie_write_restored(DEBUGFS TLBIE_GLOBAL_CEILING, str(N)) ||
		tlbie_write_restored(DEBUGFS TLBIE_LOCAL_CEILING, str(OTHER)));
	FAIL_IF(tlbie_sibling_start(&sibling, cpus[1]));
	why = tlbie_global_unavailable();
	/* A local failure is a failure, whether or not global can be measured */
	if (why && !failed)
		SKIP_IF_MSG(why, why);
	if (!why)
		failed |= run("global", check_global);
	else
		printf("global ceiling not measured: %s\n", why);
	tlbie_sibling_stop(&sibling);

	tlbie_restore_files();
	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_ceiling, "tlbie_ceiling");
}
