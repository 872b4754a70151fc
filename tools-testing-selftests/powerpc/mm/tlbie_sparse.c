// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Operations over a large range that flush few pages are flushed page by
 * page, as they would be on their own, not by the whole PID: a whole-PID
 * flush drops every TLB entry of the process on every CPU it runs on.
 * With a thread live on another CPU (global flushes):
 *  - a thread exits after touching 4 pages of its 8MB default stack:
 *    glibc gives the stack back with MADV_DONTNEED, but for its top;
 *  - MADV_DONTNEED of 64MB of shared memory with 2 dirty pages per page
 *    table: core mm flushes each page table's 2 pages on their own;
 *  - munmap() of 64 adjacent shared VMAs of 4 pages each, in one call: a
 *    batch per VMA.
 * Each must issue no whole-PID tlbie (but one for the page tables munmap()
 * frees), and at least one per-page tlbie per page it drops: the pages
 * are flushed, and nothing more than they need. A measurement with more
 * whole-PID tlbie is taken again, up to TLBIE_TRIES times in all.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define NR_EXITS	8
#define STACK_PAGES	4
#define NR_VMAS		64
#define VMA_PAGES	4
#define SPARSE_MIB	64
#define SPARSE_PAGES	2	/* dirty pages per page table */

static unsigned long page_size;

static enum tlbie_verdict judge(const char *label, const struct tlbie_counts *c,
				unsigned long min_page, unsigned long max_pid)
{
	tlbie_counts_print(label, c);
	printf("%s: want per-page >= %lu, whole-PID <= %lu\n", label, min_page, max_pid);
	/*
	 * A periodic mm_cpumask trim turns one flush into an IPI and tlbiel:
	 * its pages are flushed, but not by tlbie. Measure again.
	 */
	if (c->global_pid > max_pid || c->local)
		return TLBIE_TOO_MANY;
	return c->global_page < min_page ? TLBIE_TOO_FEW : TLBIE_PASS;
}

/*
 * Touch STACK_PAGES pages of the stack below the STACK_KEEP bytes under
 * the top that glibc keeps at exit (PTHREAD_STACK_MIN, 128K on powerpc):
 * those it gives back, so the kernel must flush them.
 */
#define STACK_KEEP	(256UL << 10)

static void *stack_toucher(void *arg)
{
	char *stack = alloca(STACK_PAGES * page_size + STACK_KEEP);
	int i;

	for (i = 0; i < STACK_PAGES; i++)
		stack[i * page_size] = 1;
	/* Keep the stores: nothing reads them */
	__asm__ __volatile__("" : : "r"(stack) : "memory");
	return NULL;
}

static int exit_threads(struct tlbie_counts *c)
{
	pthread_t thread;
	int i;

	if (tlbie_count_start())
		return -1;
	for (i = 0; i < NR_EXITS; i++)
		if (pthread_create(&thread, NULL, stack_toucher, NULL) ||
		    pthread_join(thread, NULL))
			return -1;
	return tlbie_count_stop(c);
}

static int thread_exit(void)
{
	enum tlbie_verdict v;
	struct tlbie_counts c;
	pthread_t thread;
	int tries = 0;

	/* The first thread maps its stack; later ones reuse it from glibc's cache */
	FAIL_IF(pthread_create(&thread, NULL, stack_toucher, NULL));
	FAIL_IF(pthread_join(thread, NULL));
	do {
		FAIL_IF(exit_threads(&c));
		v = judge("thread_exit_x8", &c, NR_EXITS * STACK_PAGES, 0);
	} while (tlbie_measure_again(v, &tries));
	return v != TLBIE_PASS;
}

static int sparse_dontneed(void)
{
	size_t len = (size_t)SPARSE_MIB << 20, off;
	unsigned long tables = len / TLBIE_PMD_SPAN;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	int tries = 0, i;
	char *p;

	do {
		p = tlbie_map_shared(len, 1);
		FAIL_IF(!p);
		FAIL_IF(madvise(p, len, MADV_DONTNEED));
		for (off = 0; off < len; off += TLBIE_PMD_SPAN)
			for (i = 0; i < SPARSE_PAGES; i++)
				p[off + i * page_size] = 1;
		FAIL_IF(tlbie_count_start());
		FAIL_IF(madvise(p, len, MADV_DONTNEED));
		FAIL_IF(tlbie_count_stop(&c));
		munmap(p, len);
		v = judge("madv_dontneed_64M_2_per_pmd", &c, tables * SPARSE_PAGES, 0);
	} while (tlbie_measure_again(v, &tries));
	return v != TLBIE_PASS;
}

static int multi_vma_munmap(void)
{
	size_t len = NR_VMAS * VMA_PAGES * page_size;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	int tries = 0;
	char *p;

	do {
		p = tlbie_map_shared(len, NR_VMAS);
		FAIL_IF(!p);
		FAIL_IF(tlbie_count_start());
		FAIL_IF(munmap(p, len));
		FAIL_IF(tlbie_count_stop(&c));
		/* 4-page batches, and one flush of the freed page table */
		v = judge("munmap_64_vmas", &c, NR_VMAS * VMA_PAGES, 1);
	} while (tlbie_measure_again(v, &tries));
	return v != TLBIE_PASS;
}

static int test_sparse(void)
{
	struct tlbie_sibling sibling;
	int cpus[2], failed = 0;
	const char *why;

	page_size = sysconf(_SC_PAGESIZE);
	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_pick_cpus(cpus) < 2, "needs two CPUs");

	FAIL_IF(tlbie_bind_cpu(cpus[0]));
	FAIL_IF(tlbie_sibling_start(&sibling, cpus[1]));
	why = tlbie_global_unavailable();
	SKIP_IF_MSG(why, why);

	failed |= thread_exit();
	failed |= sparse_dontneed();
	failed |= multi_vma_munmap();

	tlbie_sibling_stop(&sibling);
	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_sparse, "tlbie_sparse");
}
