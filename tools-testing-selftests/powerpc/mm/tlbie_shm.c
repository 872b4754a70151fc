// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The workload of the 2021 "Upgrade va tlbie to PID tlbie if we cross
 * PMD_SIZE" thread: attach a SysV shm segment, fill it, detach it, and
 * count the TLB invalidations the detach makes the kernel issue.
 *
 * Shared dirty pages make core mm flush at the end of every page table
 * (one PMD), so the detach reaches the arch in batches of PMD_SIZE / page
 * size pages. With -t 2 a second thread spins on another core, so the
 * flushes are global (tlbie); with -t 1 they are local (tlbiel). What
 * this process issues is counted (TLBIE_SCOPE_TASK).
 *
 * With -p, the other side of the trade-off instead: mprotect() to
 * read-only and munmap() of exactly one page table's worth of memory (one
 * 2MB PMD), what khugepaged and THP-sized ranges flush; these change only
 * with the flush ceiling.
 *
 * Usage: tlbie_shm [-s MiB] [-t 1|2] [-i iterations] [-p] [-l suffix]
 * Prints one "tlbie: shm_<MiB>M_<threads>t<suffix> ..." line per detach,
 * or "pmd_mprotect_<threads>t<suffix>" and "pmd_munmap_..." with -p.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

/* mprotect() then munmap() one whole, populated page table's worth. */
static int pmd_counted(struct tlbie_counts *prot, struct tlbie_counts *unmap)
{
	size_t len = 2 * TLBIE_PMD_SPAN;
	char *map, *pmd;

	map = tlbie_map_filled(len);
	if (!map)
		return -1;
	pmd = tlbie_pmd_align(map);

	if (tlbie_count_start() || mprotect(pmd, TLBIE_PMD_SPAN, PROT_READ) ||
	    tlbie_count_stop(prot))
		return -1;
	if (tlbie_count_start() || munmap(pmd, TLBIE_PMD_SPAN) || tlbie_count_stop(unmap))
		return -1;
	return munmap(map, len);
}

int main(int argc, char *argv[])
{
	unsigned long mib = 64, threads = 2, iterations = 1, i;
	struct tlbie_counts c, unmap;
	struct tlbie_sibling sibling;
	const char *why, *suffix = "";
	char label[64], label2[64];
	int cpus[2], opt, pmd = 0;
	void *addr;

	while ((opt = getopt(argc, argv, "s:t:i:pl:")) != -1) {
		switch (opt) {
		case 'p':
			pmd = 1;
			break;
		case 'l':
			suffix = optarg;
			break;
		case 's':
			mib = strtoul(optarg, NULL, 0);
			break;
		case 't':
			threads = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			iterations = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-s MiB] [-t 1|2] [-i iterations]", argv[0]);
			fprintf(stderr, " [-p] [-l suffix]\n");
			return 2;
		}
	}
	if (!mib || (threads != 1 && threads != 2)) {
		fprintf(stderr, "%s: -s must be > 0 and -t 1 or 2\n", argv[0]);
		return 2;
	}

	why = tlbie_count_unavailable();
	if (why) {
		fprintf(stderr, "%s: cannot count tlbie: %s\n", argv[0], why);
		return 4;	/* kselftest skip */
	}
	if (tlbie_pick_cpus(cpus) < (int)threads) {
		fprintf(stderr, "%s: -t %lu needs %lu CPUs\n", argv[0], threads, threads);
		return 4;
	}
	if (tlbie_bind_cpu(cpus[0]))
		return 1;
	if (threads == 2 && tlbie_sibling_start(&sibling, cpus[1]))
		return 1;

	snprintf(label, sizeof(label), "shm_%luM_%lut%s", mib, threads, suffix);
	if (pmd) {
		snprintf(label, sizeof(label), "pmd_mprotect_%lut%s", threads, suffix);
		snprintf(label2, sizeof(label2), "pmd_munmap_%lut%s", threads, suffix);
	}
	for (i = 0; i < iterations; i++) {
		if (pmd ? pmd_counted(&c, &unmap) : tlbie_count_shmdt(mib << 20, &c, &addr))
			return 1;
		tlbie_counts_print(label, &c);
		if (pmd)
			tlbie_counts_print(label2, &unmap);
	}

	if (threads == 2)
		tlbie_sibling_stop(&sibling);
	tlbie_count_close();
	return 0;
}
