// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Small ranges stay precise: in a process with a thread live on another
 * CPU, munmap(), MADV_DONTNEED and an mprotect() downgrade of k pages, for
 * k = 1, 2 and one below the global flush ceiling, must invalidate exactly
 * those k pages with per-page tlbie and never flush the whole PID. A
 * whole-PID flush throws away the TLB entries of every thread of the
 * process on every CPU, which is what the flush ceiling exists to avoid for
 * small ranges.
 *
 * The range never covers a whole page table, so no page table is freed
 * and no page walk cache flush is due.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define CEILING_FILE	"powerpc/tlb_single_page_flush_ceiling"
#define PMD_SPAN	(2UL << 20)	/* what one PTE page maps, 64K or 4K pages */

enum op { OP_MUNMAP, OP_DONTNEED, OP_MPROTECT };
static const char * const op_name[] = { "munmap", "madv_dontneed", "mprotect_ro" };

/* Flush k pages starting one page past a page-table boundary, counted. */
static int flush_k_pages(enum op op, unsigned long k, struct tlbie_counts *c)
{
	unsigned long page = sysconf(_SC_PAGESIZE);
	size_t len = 2 * PMD_SPAN + (k + 2) * page;
	char *map, *start;
	int rc;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -1;
	madvise(map, len, MADV_NOHUGEPAGE);
	memset(map, 1, len);

	start = (char *)(((unsigned long)map + PMD_SPAN - 1) & ~(PMD_SPAN - 1)) + page;

	if (tlbie_count_start())
		return -1;
	switch (op) {
	case OP_MUNMAP:
		rc = munmap(start, k * page);
		break;
	case OP_DONTNEED:
		rc = madvise(start, k * page, MADV_DONTNEED);
		break;
	default:
		rc = mprotect(start, k * page, PROT_READ);
		break;
	}
	if (tlbie_count_stop(c) || rc)
		return -1;
	munmap(map, len);
	return 0;
}

static int test_small_range(void)
{
	struct tlbie_sibling sibling;
	struct tlbie_counts c;
	unsigned long ks[3];
	const char *why;
	int cpus[2], ceiling, failed = 0;
	unsigned int i, o;
	char label[64];

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_online_cpus(cpus, 2) < 2, "needs two online CPUs");
	SKIP_IF_MSG(read_debugfs_int(CEILING_FILE, &ceiling),
		    "cannot read " CEILING_FILE " in debugfs");
	SKIP_IF_MSG(ceiling < 3, "global flush ceiling below 3 pages");
	printf("global flush ceiling: %d pages\n", ceiling);

	ks[0] = 1;
	ks[1] = 2;
	ks[2] = ceiling - 1;

	FAIL_IF(bind_to_cpu(cpus[0]) != cpus[0]);
	FAIL_IF(tlbie_sibling_start(&sibling, cpus[1]));

	for (o = OP_MUNMAP; o <= OP_MPROTECT; o++) {
		for (i = 0; i < 3; i++) {
			if (flush_k_pages(o, ks[i], &c)) {
				perror(op_name[o]);
				failed = 1;
				continue;
			}
			snprintf(label, sizeof(label), "%s_%lu", op_name[o], ks[i]);
			tlbie_counts_print(label, &c);
			if (c.global_page != ks[i] || c.global_pid != 0) {
				printf("%s of %lu pages: want %lu per-page and 0 whole-PID tlbie\n",
				       op_name[o], ks[i], ks[i]);
				failed = 1;
			}
		}
	}

	tlbie_sibling_stop(&sibling);
	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_small_range, "tlbie_small_range");
}
