// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Small ranges stay precise: in a process with a thread live on another
 * CPU, munmap(), MADV_DONTNEED and an mprotect() downgrade of k pages, for
 * k = 1, 2 and one below the global flush ceiling, must invalidate exactly
 * those k pages with per-page tlbie and never flush the whole PID. A
 * whole-PID flush throws away the TLB entries of every thread of the
 * process on every CPU, which is what the flush ceiling exists to avoid for
 * small ranges.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "tlbie_count.h"
#include "utils.h"

#define CEILING_FILE	"powerpc/tlb_single_page_flush_ceiling"

static int test_small_range(void)
{
	struct tlbie_sibling sibling;
	struct tlbie_counts c;
	unsigned long ks[3];
	int cpus[2], ceiling, failed = 0;
	const char *why;
	char label[64];
	unsigned int i;
	int op;

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
	why = tlbie_global_unavailable();
	SKIP_IF_MSG(why, why);

	for (op = TLBIE_MUNMAP; op <= TLBIE_MPROTECT_RO; op++) {
		for (i = 0; i < 3; i++) {
			if (tlbie_count_op_global(op, ks[i], &c)) {
				perror(tlbie_op_name[op]);
				failed = 1;
				continue;
			}
			snprintf(label, sizeof(label), "%s_%lu", tlbie_op_name[op], ks[i]);
			tlbie_counts_print(label, &c);
			if (c.global_page != ks[i] || c.global_pid != 0) {
				printf("%s of %lu pages: want %lu per-page and 0 whole-PID tlbie\n",
				       tlbie_op_name[op], ks[i], ks[i]);
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
