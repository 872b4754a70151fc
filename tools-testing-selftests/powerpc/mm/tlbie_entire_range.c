// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Large dense operations that core mm flushes in small batches are
 * flushed by the whole PID once they have flushed a ceiling's worth of
 * pages: with a thread live on another CPU (global flushes),
 *  - shmdt() of a filled 64MB and 256MB SysV shm segment,
 *  - MADV_DONTNEED of 64MB of dirty shared memory
 * reach the kernel's flush in batches of one page table, 32 pages with
 * 64K pages (delayed rmap of shared dirty pages forces a flush at the end
 * of each), each below the global flush ceiling. The first batch is
 * flushed page by page (the operation has not flushed a ceiling's worth
 * yet), every later one by the whole PID:
 *  - per-page tlbie: the first page table's pages, and at most one more
 *    (a batch that a reschedule point cut to one page);
 *  - whole-PID tlbie: no more than one per later batch plus one for freed
 *    page tables, and no fewer than one per later batch less one.
 * Per-page flushes of every page (the base's 4097 for 256MB) or no flush
 * of the later batches both fail. The detach frees page tables, so at
 * least one of its flushes must flush the page walk cache too (RIC != 0).
 * A reschedule point in zap_pte_range() can cut a batch in two, one part
 * flushed page by page; that adds per-page tlbie, so a measurement above
 * the bounds is taken again, up to TLBIE_TRIES times in all (and one below
 * them fails at once).
 *
 * And single-threaded (local tlbiel), with the local ceiling lowered to
 * 40 so that 32-page batches qualify: a batch flushes the PID only where
 * that takes fewer instructions than its pages, so the detach never
 * issues more tlbiel than one per page plus one whole-PID flush for the
 * freed page tables. On POWER9 a local whole-PID flush is 128 tlbiel, one
 * per TLB set, and the batches stay per page; on POWER10 it is one.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

/* Page tables spanned by [start, start + len) */
static unsigned long page_tables(void *start, size_t len)
{
	unsigned long s = (unsigned long)start & ~(TLBIE_PMD_SPAN - 1);
	unsigned long e = ((unsigned long)start + len + TLBIE_PMD_SPAN - 1) & ~(TLBIE_PMD_SPAN - 1);

	return (e - s) / TLBIE_PMD_SPAN;
}

static enum tlbie_verdict judge(const char *label, const struct tlbie_counts *c,
				unsigned long batches, bool want_pwc)
{
	unsigned long first = TLBIE_PMD_SPAN / sysconf(_SC_PAGESIZE);

	tlbie_counts_print(label, c);
	printf("%s: %lu batches: want per-page <= %lu, whole-PID %lu..%lu%s\n",
	       label, batches, first + 1, batches - 2, batches,
	       want_pwc ? ", PWC flushes >= 1" : "");
	if (c->global_page > first + 1 || c->global_pid > batches)
		return TLBIE_TOO_MANY;
	return c->global_pid + 2 < batches || (want_pwc && !c->pwc) ? TLBIE_TOO_FEW : TLBIE_PASS;
}

static int shm_detach(unsigned long mib)
{
	size_t len = mib << 20;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	char label[32];
	int tries = 0;
	void *p;

	snprintf(label, sizeof(label), "shmdt_%luM", mib);
	do {
		FAIL_IF(tlbie_count_shmdt(len, &c, &p));
		v = judge(label, &c, page_tables(p, len), true);
	} while (tlbie_measure_again(v, &tries));
	return v != TLBIE_PASS;
}

/* MADV_DONTNEED frees no page tables on powerpc: no PWC flush is due */
static int dontneed(unsigned long mib)
{
	size_t len = mib << 20;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	char label[32];
	int tries = 0;
	char *p;

	snprintf(label, sizeof(label), "madv_dontneed_%luM", mib);
	do {
		p = tlbie_map_shared(len, 1);
		FAIL_IF(!p);
		FAIL_IF(tlbie_count_start());
		FAIL_IF(madvise(p, len, MADV_DONTNEED));
		FAIL_IF(tlbie_count_stop(&c));
		munmap(p, len);
		v = judge(label, &c, page_tables(p, len), false);
	} while (tlbie_measure_again(v, &tries));
	return v != TLBIE_PASS;
}

#define LOCAL_CEILING	"40"
#define POWER9_SETS	128	/* tlbiel of a local whole-PID flush on POWER9 */

/* Single-threaded shmdt() of 64MB with the local ceiling at 40 pages */
static int local_detach(void)
{
	size_t len = 64UL << 20;
	unsigned long pages = len / sysconf(_SC_PAGESIZE);
	enum tlbie_verdict v;
	struct tlbie_counts c;
	int tries = 0;
	void *p;

	FAIL_IF(tlbie_write_restored("/sys/kernel/debug/" TLBIE_LOCAL_CEILING, LOCAL_CEILING));
	/* The first flush trims CPUs the process ran on before: not counted */
	FAIL_IF(tlbie_count_op(TLBIE_MUNMAP, 1, &c));
	do {
		FAIL_IF(tlbie_count_shmdt(len, &c, &p));
		tlbie_counts_print("shmdt_64M_local_ceiling_" LOCAL_CEILING, &c);
		/* At least one tlbiel per batch: each page table's flush */
		printf("want tlbie 0, tlbiel %lu..%lu\n",
		       len / TLBIE_PMD_SPAN, pages + POWER9_SETS);
		v = c.global || c.local > pages + POWER9_SETS ? TLBIE_TOO_MANY :
		    c.local < len / TLBIE_PMD_SPAN ? TLBIE_TOO_FEW : TLBIE_PASS;
	} while (tlbie_measure_again(v, &tries));
	tlbie_restore_files();
	return v != TLBIE_PASS;
}

static int test_entire_range(void)
{
	struct tlbie_sibling sibling;
	int cpus[2], failed = 0;
	const char *why;

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_pick_cpus(cpus) < 2, "needs two CPUs");
	SKIP_IF_MSG(sysconf(_SC_PAGESIZE) != 65536,
		    "4K pages: a page table's 512 pages are above the ceiling anyway");
	/* The bounds are for the default global ceiling; set it, restored at exit */
	SKIP_IF_MSG(tlbie_write_restored("/sys/kernel/debug/" TLBIE_GLOBAL_CEILING, "33"),
		    "cannot set the flush ceilings in debugfs");

	FAIL_IF(tlbie_bind_cpu(cpus[0]));
	failed |= local_detach();

	FAIL_IF(tlbie_sibling_start(&sibling, cpus[1]));
	why = tlbie_global_unavailable();
	/* A local failure is a failure, whether or not global can be measured */
	if (why && !failed)
		SKIP_IF_MSG(why, why);
	if (!why) {
		failed |= shm_detach(64);
		failed |= shm_detach(256);
		failed |= dontneed(64);
	} else {
		printf("global flushes not measured: %s\n", why);
	}

	tlbie_sibling_stop(&sibling);
	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_entire_range, "tlbie_entire_range");
}
