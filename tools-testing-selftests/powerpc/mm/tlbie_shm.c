// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The 2021 thread's workload ("Upgrade va tlbie to PID tlbie if we cross
 * PMD_SIZE"): count what detaching a filled SysV shm segment issues, a
 * flush per page table. -t 2: a thread spins on another CPU (tlbie). -p:
 * mprotect() and munmap() of a page table of private memory instead.
 * Usage: tlbie_shm [-s MiB] [-t 1|2] [-i iterations] [-p] [-l suffix];
 * prints "tlbie: shm_<MiB>M_<threads>t<suffix> ..." (or pmd_mprotect_...,
 * pmd_munmap_...) lines.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define SPAN	(2UL << 20)	/* a page table's */

/* -p: mprotect() and munmap() of a page table's worth of filled memory */
static int pmd_counted(struct tlbie_counts *prot, struct tlbie_counts *unmap)
{
	char *map = mmap(NULL, 2 * SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	char *p = (char *)(((unsigned long)map + SPAN - 1) & ~(SPAN - 1));

	if (map == MAP_FAILED || tlbie_nohugepage(map, 2 * SPAN))
		return -1;
	memset(map, 1, 2 * SPAN);
	if (tlbie_count_start() || mprotect(p, SPAN, PROT_READ) || tlbie_count_stop(prot) ||
	    tlbie_count_start() || munmap(p, SPAN) || tlbie_count_stop(unmap))
		return -1;
	return munmap(map, 2 * SPAN);
}

/* A filled segment of @len bytes at a page-table boundary, its detach counted */
static int shm_counted(size_t len, struct tlbie_counts *c)
{
	char *p = mmap(NULL, len + SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int id;

	/* Room found, given back, attached to: nothing else maps meanwhile */
	if (p == MAP_FAILED || munmap(p, len + SPAN))
		return -1;
	id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
	if (id < 0)
		return -1;
	p = shmat(id, (void *)(((unsigned long)p + SPAN - 1) & ~(SPAN - 1)), 0);
	shmctl(id, IPC_RMID, NULL);
	/* Small pages: shmem THP would take away the per-page-table batches */
	if (p == (void *)-1 || tlbie_nohugepage(p, len))
		return -1;
	memset(p, 0x5a, len);
	return tlbie_count_start() || shmdt(p) || tlbie_count_stop(c);
}

int main(int argc, char *argv[])
{
	unsigned long mib = 64, threads = 2, iterations = 1, i;
	unsigned long *num[128] = { ['s'] = &mib, ['t'] = &threads, ['i'] = &iterations };
	char label[64], label2[64];
	struct tlbie_counts c, c2;
	const char *why, *suffix = "";
	int cpu[2], opt;
	bool pmd = false;

	while ((opt = getopt(argc, argv, "s:t:i:pl:")) != -1) {
		if (opt == 'p')
			pmd = true;
		else if (opt == 'l')
			suffix = optarg;
		else if (opt < 0 || opt >= 128 || !num[opt] ||
			 parse_ulong(optarg, strlen(optarg), num[opt], 0))
			mib = 0;
	}
	if (!mib || (threads != 1 && threads != 2)) {
		fprintf(stderr, "usage: %s [-s MiB] [-t 1|2] [-i iterations] [-p] [-l suffix]\n",
			argv[0]);
		return 2;
	}
	why = tlbie_count_unavailable();
	if (!why && tlbie_usable_cpus(cpu, 2) < (int)threads)
		why = "not enough CPUs";
	if (why) {
		fprintf(stderr, "%s: %s\n", argv[0], why);
		return 4;	/* kselftest skip */
	}
	if (tlbie_bind(cpu[0]) || (threads == 2 && tlbie_sibling_start(cpu[1])))
		return 1;
	snprintf(label, sizeof(label), "%s_%lut%s", pmd ? "pmd_mprotect" : "shm", threads, suffix);
	if (!pmd)
		snprintf(label, sizeof(label), "shm_%luM_%lut%s", mib, threads, suffix);
	snprintf(label2, sizeof(label2), "pmd_munmap_%lut%s", threads, suffix);
	for (i = 0; i < iterations; i++) {
		if (pmd ? pmd_counted(&c, &c2) : shm_counted(mib << 20, &c))
			return 1;
		tlbie_counts_print(label, &c);
		if (pmd)
			tlbie_counts_print(label2, &c2);
	}
	if (threads == 2)
		tlbie_sibling_stop();
	return 0;
}
