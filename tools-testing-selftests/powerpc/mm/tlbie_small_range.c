// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Small ranges stay precise: in a process with a thread live on another
 * CPU, munmap(), MADV_DONTNEED and an mprotect() downgrade of k pages, for
 * k = 1, 2 and one below the global flush ceiling, must invalidate exactly
 * those k pages with per-page tlbie and never flush the whole PID. A
 * whole-PID flush throws away the TLB entries of every thread of the
 * process on every CPU, which is what the flush ceiling exists to avoid for
 * small ranges. Counts above these are measured again (noise only adds).
 *
 * And where THP is on: mprotect() of one small page of a THP splits it
 * first, and must invalidate the huge page with one tlbie (the split's
 * flush_pmd_tlb_range(), the only flush of that translation) and the
 * small page with one more.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

/* Exactly @k per-page tlbie, no whole-PID one */
static enum tlbie_verdict judge(unsigned long k, const struct tlbie_counts *c)
{
	if (c->global_page > k || c->global_pid)
		return TLBIE_TOO_MANY;
	return c->global_page < k ? TLBIE_TOO_FEW : TLBIE_PASS;
}

/*
 * One measurement of the THP case; 1 if no THP could be had (not counted),
 * -1 on error.
 */
static int count_thp_split(struct tlbie_counts *c)
{
	size_t len = 2 * TLBIE_PMD_SPAN;
	long before, after;
	char *map, *p;
	int ret = -1;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -1;
	p = (char *)(((unsigned long)map + TLBIE_PMD_SPAN - 1) & ~(TLBIE_PMD_SPAN - 1));
	before = tlbie_proc_value("/proc/self/smaps_rollup", "AnonHugePages:");
	if (madvise(p, TLBIE_PMD_SPAN, MADV_HUGEPAGE))
		goto out;
	for (size_t off = 0; off < TLBIE_PMD_SPAN; off += getpagesize())
		p[off] = 1;
	after = tlbie_proc_value("/proc/self/smaps_rollup", "AnonHugePages:");
	if (before < 0 || after - before < (long)(TLBIE_PMD_SPAN >> 10)) {
		ret = 1;
		goto out;
	}
	if (tlbie_count_start())
		goto out;
	ret = mprotect(p, getpagesize(), PROT_READ);
	if (tlbie_count_stop(c))
		ret = -1;
out:
	munmap(map, len);
	return ret;
}

static int test_thp_split(void)
{
	enum tlbie_verdict v;
	struct tlbie_counts c;
	int tries = 0, ret;

	if (tlbie_thp_mode("enabled") < 1) {
		printf("THP off here: no THP split measured\n");
		return 0;
	}
	do {
		ret = count_thp_split(&c);
		if (ret)
			break;
		tlbie_counts_print("thp_split_mprotect_ro_1", &c);
		v = judge(2, &c);
	} while (tlbie_measure_again(v, &tries));
	if (ret > 0) {
		printf("no THP was allocated: no THP split measured\n");
		return 0;
	}
	FAIL_IF_MSG(ret, "THP split measurement");
	if (v != TLBIE_PASS) {
		printf("THP split: want 2 per-page tlbie (the 2M page, the page), 0 whole-PID\n");
		return 1;
	}
	return 0;
}

static int test_small_range(void)
{
	struct tlbie_sibling sibling;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	unsigned long ks[3];
	int cpus[2], ceiling, failed = 0, tries;
	const char *why;
	char label[64];
	unsigned int i;
	int op;

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_pick_cpus(cpus) < 2, "needs two CPUs");
	SKIP_IF_MSG(read_debugfs_int(TLBIE_GLOBAL_CEILING, &ceiling),
		    "cannot read " TLBIE_GLOBAL_CEILING " in debugfs");
	SKIP_IF_MSG(ceiling < 3, "global flush ceiling below 3 pages");
	printf("global flush ceiling: %d pages\n", ceiling);

	ks[0] = 1;
	ks[1] = 2;
	ks[2] = ceiling - 1;

	FAIL_IF(tlbie_bind_cpu(cpus[0]));
	FAIL_IF(tlbie_sibling_start(&sibling, cpus[1]));
	why = tlbie_global_unavailable();
	SKIP_IF_MSG(why, why);

	for (op = TLBIE_MUNMAP; op <= TLBIE_MPROTECT_RO; op++) {
		for (i = 0; i < 3; i++) {
			snprintf(label, sizeof(label), "%s_%lu", tlbie_op_name[op], ks[i]);
			tries = 0;
			do {
				FAIL_IF_MSG(tlbie_count_op_global(op, ks[i], &c),
					    tlbie_op_name[op]);
				tlbie_counts_print(label, &c);
				v = judge(ks[i], &c);
			} while (tlbie_measure_again(v, &tries));
			if (v != TLBIE_PASS) {
				printf("%s of %lu pages: want %lu per-page and 0 whole-PID tlbie\n",
				       tlbie_op_name[op], ks[i], ks[i]);
				failed = 1;
			}
		}
	}

	failed |= test_thp_split();

	tlbie_sibling_stop(&sibling);
	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_small_range, "tlbie_small_range");
}
