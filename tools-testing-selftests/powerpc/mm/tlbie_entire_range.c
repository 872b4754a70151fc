// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Large dense operations that core mm flushes in small batches are
 * flushed by the whole PID from their first page table: with a thread
 * live on another CPU (global flushes),
 *  - shmdt() of a filled 64MB and 256MB SysV shm segment,
 *  - MADV_DONTNEED of 64MB of dirty shared memory, from a page-table
 *    boundary and from 24 pages into a page table
 * reach the kernel's flush in batches of one page table, 32 pages with
 * 64K pages (delayed rmap of shared dirty pages forces a flush at the end
 * of each), each below the global flush ceiling. In a range above the
 * ceiling, each such batch of more than half the ceiling flushes the PID;
 * smaller ones, the partial page tables at either end of an unaligned
 * range, page by page:
 *  - per-page tlbie: the pages of those small partial page tables only;
 *  - whole-PID tlbie: one per batch of more than half the ceiling, and
 *    one more for freed page tables (shmdt()), no fewer and no more.
 * Per-page flushes of every page (the base's 4097 for 256MB), per-page
 * flushes of the first page table, or no flush of some batches all fail.
 * The detach frees page tables, so at least one of its flushes must
 * flush the page walk cache too (RIC != 0). A reschedule point in
 * zap_pte_range() can cut a batch in two, a small part flushed page by
 * page; that adds per-page tlbie, and the periodic mm_cpumask trim turns
 * one batch's flush into tlbiel, so a measurement above the bounds or with
 * tlbiel is taken again, up to TLBIE_TRIES times in all (and one below
 * them fails at once).
 *
 * With the rule switched off in debugfs (powerpc/tlb_batch_flush_pid),
 * the 64MB detach is flushed page by page again, as before the rule.
 *
 * And single-threaded (local tlbiel), with the local ceiling lowered to
 * 40 so that 32-page batches qualify: a batch flushes the PID only where
 * that takes fewer instructions than its pages. On POWER10 (ISA v3.1) a
 * local whole-PID flush is one tlbiel, and the detach must issue one per
 * page table plus one for the freed page tables, all whole-PID; on POWER9
 * it is 128, one per TLB set, and the batches stay per page. At the
 * default local ceiling, 256, the batches stay per page everywhere.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define GLOBAL_CEILING	33	/* the default, written to debugfs for the test */
#define BATCH_RULE	"powerpc/tlb_batch_flush_pid"

/*
 * What [start, start + len) flushes in: page tables of more than half the
 * ceiling's pages (@dense, each a whole-PID flush), and the pages of the
 * partial ones at either end with no more (@small, flushed page by page)
 */
static void batches(void *start, size_t len, unsigned long *dense, unsigned long *small)
{
	unsigned long s = (unsigned long)start, e = s + len, page = sysconf(_SC_PAGESIZE);
	unsigned long a, next;

	*dense = *small = 0;
	for (a = s; a < e; a = next) {
		unsigned long pages;

		next = (a | (TLBIE_PMD_SPAN - 1)) + 1;
		pages = ((next < e ? next : e) - a) / page;

		if (pages > GLOBAL_CEILING / 2)
			(*dense)++;
		else
			*small += pages;
	}
}

static enum tlbie_verdict judge(const char *label, const struct tlbie_counts *c,
				void *start, size_t len, bool freed_tables)
{
	unsigned long dense, small, pid;

	batches(start, len, &dense, &small);
	pid = dense + freed_tables;
	tlbie_counts_print(label, c);
	printf("%s: %lu dense page tables, %lu pages in small ones\n", label, dense, small);
	printf("%s: want per-page <= %lu, whole-PID %lu%s\n", label, small, pid,
	       freed_tables ? ", PWC flushes >= 1" : "");
	/*
	 * A periodic mm_cpumask trim turns one batch's flush into an IPI and
	 * tlbiel: its pages are flushed, but not by tlbie. Measure again.
	 */
	if (c->global_page > small || c->global_pid > pid || c->local)
		return TLBIE_TOO_MANY;
	return c->global_pid < pid || (freed_tables && !c->pwc) ? TLBIE_TOO_FEW : TLBIE_PASS;
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
		v = judge(label, &c, p, len, true);
	} while (tlbie_measure_again(v, &tries));
	return v != TLBIE_PASS;
}

/*
 * MADV_DONTNEED of @mib MB from @skip pages into dirty shared memory from a
 * page-table boundary. It frees no page tables on powerpc: no PWC flush is
 * due.
 */
static int dontneed(unsigned long mib, unsigned long skip)
{
	size_t len = mib << 20, map = len + TLBIE_PMD_SPAN;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	char label[40];
	int tries = 0;
	char *p;

	snprintf(label, sizeof(label), "madv_dontneed_%luM_skip_%lu", mib, skip);
	do {
		p = tlbie_map_shared(map, 1);
		FAIL_IF(!p);
		FAIL_IF(tlbie_count_start());
		FAIL_IF(madvise(p + skip * sysconf(_SC_PAGESIZE), len, MADV_DONTNEED));
		FAIL_IF(tlbie_count_stop(&c));
		munmap(p, map);
		v = judge(label, &c, p + skip * sysconf(_SC_PAGESIZE), len, false);
	} while (tlbie_measure_again(v, &tries));
	return v != TLBIE_PASS;
}

/* The rule off: the 64MB detach's batches are flushed page by page */
static int rule_off(void)
{
	size_t len = 64UL << 20;
	unsigned long pages = len / sysconf(_SC_PAGESIZE);
	struct tlbie_counts c;
	void *p;
	int rc;

	if (tlbie_write_restored("/sys/kernel/debug/" BATCH_RULE, "N")) {
		printf("shmdt_64M_rule_off: cannot write %s\n", BATCH_RULE);
		return 1;
	}
	rc = tlbie_count_shmdt(len, &c, &p);
	tlbie_write_restored("/sys/kernel/debug/" BATCH_RULE, "Y");
	FAIL_IF(rc);
	tlbie_counts_print("shmdt_64M_rule_off", &c);
	printf("shmdt_64M_rule_off: want per-page >= %lu, whole-PID <= 1\n", pages);
	return c.global_page < pages || c.global_pid > 1;
}

#define POWER9_SETS	128	/* tlbiel of a local whole-PID flush on POWER9 */

/*
 * Single-threaded shmdt() of 64MB with the local ceiling at @ceiling pages.
 * At 40 (a 32-page batch is more than half of it), each batch flushes the
 * PID where that is one tlbiel (ISA v3.1): one per batch and one for the
 * freed page tables; on POWER9, where it is 128, every page is flushed on
 * its own, and the freed page tables by PID. At the default 256, a 32-page
 * batch is not more than half the ceiling: page by page everywhere.
 */
static int local_detach(const char *ceiling)
{
	size_t len = 64UL << 20;
	unsigned long pages = len / sysconf(_SC_PAGESIZE);
	unsigned long batches = len / TLBIE_PMD_SPAN;
	bool pid = strcmp(ceiling, "40") == 0 && have_hwcap2(PPC_FEATURE2_ARCH_3_1);
	unsigned long min, max;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	char label[48];
	int tries = 0;
	void *p;

	snprintf(label, sizeof(label), "shmdt_64M_local_ceiling_%s", ceiling);
	FAIL_IF(tlbie_write_restored("/sys/kernel/debug/" TLBIE_LOCAL_CEILING, ceiling));
	/* The first flush trims CPUs the process ran on before: not counted */
	FAIL_IF(tlbie_count_op(TLBIE_MUNMAP, 1, &c));
	min = pid ? batches + 1 : pages;
	max = pid ? batches + 1 : pages + POWER9_SETS;
	do {
		FAIL_IF(tlbie_count_shmdt(len, &c, &p));
		tlbie_counts_print(label, &c);
		printf("%s: want tlbie 0, tlbiel %lu..%lu%s\n", label, min, max,
		       pid ? ", all whole-PID" : "");
		v = c.global || c.local > max ? TLBIE_TOO_MANY :
		    c.local < min || (pid && c.local_pid < min) ? TLBIE_TOO_FEW : TLBIE_PASS;
	} while (tlbie_measure_again(v, &tries));
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
	FAIL_IF(tlbie_sibling_start(&sibling, cpus[1]));
	why = tlbie_global_unavailable();
	if (!why) {
		failed |= shm_detach(64);
		failed |= shm_detach(256);
		failed |= dontneed(64, 0);
		failed |= dontneed(64, 24);
		failed |= rule_off();
	} else {
		printf("global flushes not measured: %s\n", why);
	}
	tlbie_sibling_stop(&sibling);

	/* Single-threaded again: local flushes */
	failed |= local_detach("40");
	failed |= local_detach("256");

	tlbie_restore_files();
	tlbie_count_close();
	/* A local failure is a failure, whether or not global can be measured */
	if (why && !failed)
		SKIP_IF_MSG(why, why);
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_entire_range, "tlbie_entire_range");
}
