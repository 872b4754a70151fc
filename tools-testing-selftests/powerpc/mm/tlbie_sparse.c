// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Operations over a large range that flush few pages are flushed page by
 * page, as they would be on their own, not by the whole PID: a whole-PID
 * flush drops every TLB entry of the process on every CPU it runs on.
 * With a thread live on another CPU (global flushes):
 *  - a thread exits after touching 4 pages of its 8MB stack, giving the
 *    stack back with MADV_DONTNEED but for its top, as glibc does;
 *  - MADV_DONTNEED of 64MB of shared memory with 2 dirty pages per page
 *    table: core mm flushes each page table's 2 pages on their own;
 *  - munmap() of 64 adjacent shared VMAs of 4 pages each, in one call: a
 *    batch per VMA;
 *  - a thread exits after touching a page table's worth (32 pages with
 *    64K pages) of its stack;
 *  - mprotect() and MADV_DONTNEED of 64MB of private memory with only its
 *    first page table present: one flush, at the operation's end.
 * Each must issue no whole-PID tlbie (but one for the page tables munmap()
 * frees), and at least one per-page tlbie per page it drops: the pages
 * are flushed, and nothing more than they need. A measurement with more
 * whole-PID tlbie is taken again, up to TLBIE_TRIES times in all.
 *
 *  - shmdt() of a 2MB segment, and a hole punched over one page table of
 *    a 64MB memfd mapping, all dirty: forced batches, but of a range not
 *    above the ceiling, so flushed page by page as on their own.
 *
 * MADV_DONTNEED of 64MB of shared memory with only its first page table
 * dirty is the one sparse shape the batch rule flushes by PID: core mm
 * flushes that page table before it has seen the rest of the range. It
 * must issue that one whole-PID tlbie and no more, or else flush its pages
 * one by one.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define NR_EXITS	8
#define STACK_SIZE	(8UL << 20)	/* glibc's default, as RLIMIT_STACK */
#define STACK_PAGES	4
#define STACK_TABLE	32	/* a page table's pages with 64K pages */
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
 * A thread that exits after touching @s->pages pages of its stack just
 * below the STACK_KEEP bytes at the top, and gives back all of the stack
 * but that top with MADV_DONTNEED: what glibc's thread exit does with a
 * stack of its own (it keeps PTHREAD_STACK_MIN, 128K on powerpc, below
 * its stack pointer), so the kernel must flush those pages. The stack is
 * the test's (pthread_attr_setstack()), which no libc caches or gives
 * back, and the thread does the MADV_DONTNEED itself: what is measured
 * does not depend on the libc. The top holds the thread's frames and what
 * the libc puts at the top of a stack it is given (thread descriptor, TLS).
 */
#define STACK_KEEP	(256UL << 10)

struct stack {
	char *base;		/* STACK_SIZE bytes */
	long pages;
};

static void *stack_exit(void *arg)
{
	const struct stack *s = arg;
	char *keep = s->base + STACK_SIZE - STACK_KEEP, *touch = keep - s->pages * page_size;
	long i;

	/* Our frames are in the top, kept */
	if ((char *)__builtin_frame_address(0) < keep)
		return (void *)1;
	for (i = 0; i < s->pages; i++)
		touch[i * page_size] = 1;
	return madvise(s->base, STACK_SIZE - STACK_KEEP, MADV_DONTNEED) ? (void *)1 : NULL;
}

/* Run stack_exit() in a thread on @s: 0 once it did */
static int stack_thread(struct stack *s)
{
	pthread_attr_t attr;
	pthread_t thread;
	void *ret = (void *)1;

	if (pthread_attr_init(&attr))
		return -1;
	if (!pthread_attr_setstack(&attr, s->base, STACK_SIZE) &&
	    !pthread_create(&thread, &attr, stack_exit, s))
		pthread_join(thread, &ret);
	pthread_attr_destroy(&attr);
	return ret ? -1 : 0;
}

static int exit_threads(struct stack *s, struct tlbie_counts *c)
{
	int i;

	if (tlbie_count_start())
		return -1;
	for (i = 0; i < NR_EXITS; i++)
		if (stack_thread(s))
			return -1;
	return tlbie_count_stop(c);
}

static int thread_exit(long pages)
{
	struct stack s = { .pages = pages };
	enum tlbie_verdict v;
	struct tlbie_counts c;
	char label[40];
	int tries = 0;

	snprintf(label, sizeof(label), "thread_exit_x8_%ld_pages", pages);
	s.base = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	FAIL_IF(s.base == MAP_FAILED);
	/* Small pages: a THP would be one flush, not one per page */
	FAIL_IF(madvise(s.base, STACK_SIZE, MADV_NOHUGEPAGE));
	/* The first thread faults in the stack's top; later ones find it there */
	FAIL_IF(stack_thread(&s));
	do {
		FAIL_IF(exit_threads(&s, &c));
		v = judge(label, &c, NR_EXITS * pages, 0);
	} while (tlbie_measure_again(v, &tries));
	munmap(s.base, STACK_SIZE);
	return v != TLBIE_PASS;
}

enum first_table_op { FIRST_MPROTECT, FIRST_DONTNEED, FIRST_DONTNEED_SHARED };

/*
 * @op on 64MB from a page-table boundary with only the first page table
 * present (written: dirty, for shared memory)
 */
static int first_table_only(enum first_table_op op)
{
	static const char * const label[] = {
		[FIRST_MPROTECT] = "mprotect_64M_first_pmd",
		[FIRST_DONTNEED] = "madv_dontneed_64M_first_pmd",
		[FIRST_DONTNEED_SHARED] = "madv_dontneed_shared_64M_first_pmd",
	};
	size_t len = (size_t)SPARSE_MIB << 20, off;
	unsigned long pages = TLBIE_PMD_SPAN / page_size;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	int tries = 0, rc;
	char *p, *base;

	do {
		if (op == FIRST_DONTNEED_SHARED) {
			p = tlbie_map_shared(len, 1);
			FAIL_IF(!p);
			base = p;
			FAIL_IF(madvise(p, len, MADV_DONTNEED));
		} else {
			base = mmap(NULL, len + TLBIE_PMD_SPAN, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			FAIL_IF(base == MAP_FAILED);
			p = tlbie_pmd_align(base);
			FAIL_IF(madvise(p, len, MADV_NOHUGEPAGE));
		}
		for (off = 0; off < TLBIE_PMD_SPAN; off += page_size)
			p[off] = 1;
		FAIL_IF(tlbie_count_start());
		if (op == FIRST_MPROTECT)
			rc = mprotect(p, len, PROT_READ);
		else
			rc = madvise(p, len, MADV_DONTNEED);
		FAIL_IF(rc);
		FAIL_IF(tlbie_count_stop(&c));
		munmap(base, op == FIRST_DONTNEED_SHARED ? len : len + TLBIE_PMD_SPAN);
		/* Flushed by PID, or else page by page */
		if (op == FIRST_DONTNEED_SHARED)
			v = judge(label[op], &c, c.global_pid ? 0 : pages, 1);
		else
			v = judge(label[op], &c, pages, 0);
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

/*
 * A zap whose range is one page table, all of it dirty shared memory: a
 * shmdt() of a 2MB segment, and a hole punched over one page table of a
 * 64MB memfd mapping. The range is not above the ceiling: page by page, as
 * on its own (the detach frees its page table: one whole-PID flush).
 */
static int one_table_zap(bool punch)
{
	const char *label = punch ? "punch_2M_of_64M_memfd" : "shmdt_2M";
	size_t len = SPARSE_MIB << 20, off;
	unsigned long pages = TLBIE_PMD_SPAN / page_size;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	int tries = 0, fd, rc;
	char *p;

	do {
		if (punch) {
			fd = memfd_create("tlbie_sparse", 0);
			FAIL_IF(fd < 0);
			FAIL_IF(ftruncate(fd, len));
			p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			FAIL_IF(p == MAP_FAILED);
			madvise(p, len, MADV_NOHUGEPAGE);
			for (off = 0; off < len; off += page_size)
				p[off] = 1;
		} else {
			p = tlbie_shm_attach(TLBIE_PMD_SPAN);
			FAIL_IF(!p);
			for (off = 0; off < TLBIE_PMD_SPAN; off += page_size)
				p[off] = 1;
		}
		FAIL_IF(tlbie_count_start());
		if (punch)
			rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				       TLBIE_PMD_SPAN, TLBIE_PMD_SPAN);
		else
			rc = shmdt(p);
		FAIL_IF(rc);
		FAIL_IF(tlbie_count_stop(&c));
		if (punch) {
			munmap(p, len);
			close(fd);
		}
		v = judge(label, &c, pages, !punch);
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

	failed |= thread_exit(STACK_PAGES);
	failed |= thread_exit(STACK_TABLE);
	failed |= sparse_dontneed();
	failed |= multi_vma_munmap();
	failed |= first_table_only(FIRST_MPROTECT);
	failed |= first_table_only(FIRST_DONTNEED);
	failed |= first_table_only(FIRST_DONTNEED_SHARED);
	failed |= one_table_zap(false);
	failed |= one_table_zap(true);

	tlbie_sibling_stop(&sibling);
	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_sparse, "tlbie_sparse");
}
