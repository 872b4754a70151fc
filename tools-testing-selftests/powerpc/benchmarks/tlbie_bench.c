// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmarks for the radix TLB flush heuristics: both sides of the
 * trade-off a whole-PID flush makes, the invalidations it saves and the
 * TLB refills it costs, and the workloads where it could hurt.
 *
 * Usage: tlbie_bench [-n] [-m] [-t 1|2] [-i iterations] [-s MiB] [-w pages] WORKLOAD
 *   shm       shmat() and fill -s MiB; counted and timed: shmdt()
 *   refill    shm, with a pointer chase over -w pages: one lap just before
 *             the shmdt() and one just after it, which refills what the
 *             flush dropped
 *   fork      fork() a child that exits; -s MiB of the parent's memory is
 *             written again first (COW faults, counted but not timed)
 *   forkexec  fork() a child that execs this program to exit at once
 *   mixed     fork() a child that maps, fills, mprotect()s and unmaps
 *             -s MiB, then execs
 *   thp_collapse   MADV_COLLAPSE of -s MiB of small pages
 *   thp_khugepaged the same done by khugepaged (its scan interval is set
 *                  to 10 ms while this runs, and restored at exit)
 *   thp_split      mprotect() of one small page in each THP of -s MiB
 *   thp_mprotect   mprotect() of -s MiB of THPs, whole
 *   memfd_punch    a memfd of -s MiB mapped MAP_SHARED and filled;
 *                  counted and timed: fallocate(PUNCH_HOLE) of all of it
 *   memfd_truncate the same, ftruncate() to 0
 *   memfd_remove   the same, MADV_REMOVE
 *   memfd_dontneed the same, MADV_DONTNEED
 *   memfd_munmap   the same, munmap()
 *
 * The sparse side, where the whole operation is large but what it flushes
 * is not (-w sets the sparseness; the label shows it):
 *   thread_exit      create and join a thread (default attributes) that
 *                    touches -w pages of its stack (default 4): glibc's
 *                    MADV_DONTNEED of the rest of the stack at exit
 *   dontneed_sparse  MADV_DONTNEED of -s MiB of private memory with every
 *                    -w-th page present (default 8)
 *   mprotect_sparse  mprotect() read-only of the same
 *   shm_sparse       shmdt() of -s MiB of shared memory with -w dirty
 *                    pages per page table (default 1): a forced batch of
 *                    -w pages per page table
 *   thp_mixed        mprotect() of one THP followed by -w small pages
 *                    (default 20) in the next page table
 *   mprotect_first   mprotect() read-only of -s MiB of private memory
 *                    with only its first -w page tables present (default 1)
 *   dontneed_first   MADV_DONTNEED of the same
 *   memfd_first      MADV_DONTNEED of -s MiB of a shared memfd with only
 *                    its first -w page tables dirty (default 1): the
 *                    shape the batch rule cannot tell from a dense one at
 *                    its first page table
 *
 * -t 2 keeps a second thread spinning on another core all along, so the
 * kernel's flushes are global (tlbie); with -t 1 they are mostly local.
 * Children of forkexec and mixed may run on any CPU. One iteration runs
 * uncounted first, so the counts do not depend on where the process
 * started. -n: do not count (times without the tracepoint's overhead).
 *
 * -m marks each counted operation for a hypervisor's trace: a guest
 * without GTSE asks the hypervisor (H_RPT_INVALIDATE) for the global
 * flushes that the tracepoint counts as tlbie elsewhere, and only the
 * hypervisor sees what each asks for. Before the operation one page of
 * this process's marker pages (TLBIE_MARK_ADDR plus a slot for its PID)
 * is written and MADV_DONTNEEDed, after it the next page: with -t 2
 * (which -m needs) each is one global flush request of that one page,
 * and the requests in between are the operation's. Iteration k uses
 * pages 2k and 2k + 1 (modulo TLBIE_MARK_PAGES), so that a marker the
 * kernel flushes otherwise (the mm_cpumask trim flushes locally on each
 * CPU instead) loses that iteration only. The line then says marks=N
 * (the operations so marked) and mark_addr=ADDR.
 *
 * Prints the CPUs it picked (tlbie_pick_cpus()), then one line:
 *   bench: <workload>[_<MiB>M]_<threads>t[_<W>p] iters=N ns=N
 *   [chase_before_ns=N.N chase_after_ns=N.N] spread=N global=N ...
 * ns is the sum over the iterations and times only the operation that
 * flushes; the chase times are means per access. The counts (the fields
 * of tlbie_counts_print()) are those of the iteration that issued the
 * fewest invalidations, and spread is how many more the iteration that
 * issued the most did: an iteration can issue more when a reschedule
 * point splits one page table's flush (zap_pte_range() stops at
 * need_resched()) or another process flushes meanwhile, so the fewest
 * is what the operation itself issues. The periodic mm_cpumask trim (a
 * local whole-PID flush; its clock ticks once per flush call, not per
 * instruction) falls in some iterations only, and is left out too. Both
 * leave-outs favour the batch rule: a split costs only it (a 32-page batch
 * cut into 16 and 16 pages is 32 per-page tlbie instead of one whole-PID
 * flush, cut into 10 and 22 one flush more), and a trim costs both
 * kernels alike.
 * "counts=none (why)" stands
 * in place of the counts where the powerpc:tlbie tracepoint cannot be
 * used, and "skipped=why" for the whole line where the workload cannot
 * run. Counts are what the kernel issued on all CPUs meanwhile, for all
 * processes (TLBIE_SCOPE_SYSTEM: per task, the tlbiel that IPIs make other
 * CPUs issue would be missed, and so would the children's flushes); times
 * mean something only on real hardware (under QEMU TCG they measure the
 * emulator).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

#define THP		"/sys/kernel/mm/transparent_hugepage/"

struct bench {
	unsigned long mib, pages;	/* pages: -w */
	size_t size;
	char *mem;		/* fork: the parent's memory */
	void **chain;		/* refill: the pointer chase */
	double before, after;	/* refill: ns per access, summed */
	unsigned long long ns;	/* time in the operations that flush */
};

static unsigned long page_size, pmd_size;
static int counting;		/* the powerpc:tlbie tracepoint is used */
static char *marks;		/* -m: the marker pages, once counting */
static unsigned long nr_marks;
static int *usable, nr_usable;	/* the CPUs this process may use */

/* -m: slot (getpid() % TLBIE_MARK_SLOTS) of TLBIE_MARK_PAGES pages */
#define TLBIE_MARK_ADDR		0x7e5700000000UL
#define TLBIE_MARK_PAGES	32
#define TLBIE_MARK_SLOTS	32768

/* -m: one flush request of one page of the marker pages */
static void mark(int after)
{
	char *page;

	if (!marks)
		return;
	page = marks + (2 * (nr_marks % (TLBIE_MARK_PAGES / 2)) + after) * page_size;
	*page = 1;		/* present, to be flushed */
	madvise(page, page_size, MADV_DONTNEED);
	nr_marks += after;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int count_start(void)
{
	mark(0);
	return counting ? tlbie_count_start() : 0;
}

static int count_stop(struct tlbie_counts *c)
{
	int rc;

	memset(c, 0, sizeof(*c));
	rc = counting ? tlbie_count_stop(c) : 0;
	mark(1);
	return rc;
}

/* Attached at a page-table boundary (tlbie_shm_attach()), and filled */
static void *shm_attach_filled(size_t size)
{
	void *addr = tlbie_shm_attach(size);

	if (addr)
		memset(addr, 0x5a, size);
	return addr;
}

/*
 * One pointer per page, linked in a random cycle through all @pages, each
 * at a different cache line so the chase measures translations rather
 * than a handful of congested cache sets.
 */
static void **chase_build(unsigned long pages)
{
	unsigned long i, j, t, *order, lines = page_size / 128;
	void ***slot = NULL;
	void **start = NULL;
	char *map;

	map = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	order = malloc(pages * sizeof(*order));
	slot = malloc(pages * sizeof(*slot));
	if (!order || !slot)
		goto out;
	madvise(map, pages * page_size, MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++)
		order[i] = i;
	srandom(1);
	for (i = pages - 1; i > 0; i--) {
		j = random() % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < pages; i++)
		slot[i] = (void **)(map + order[i] * page_size + (order[i] % lines) * 128);
	for (i = 0; i < pages; i++)
		*slot[i] = slot[(i + 1) % pages];
	start = slot[0];
out:
	free(order);
	free(slot);
	return start;
}

/* One lap of the chase; returns ns per access. */
static double chase(void **start, unsigned long pages)
{
	unsigned long long t = now_ns();
	void **p = start;
	unsigned long i;

	for (i = 0; i < pages; i++)
		p = *p;
	/* Keep the loads: the compiler cannot know p == start now. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return (double)(now_ns() - t) / pages;
}

static int run_shm(struct bench *b, struct tlbie_counts *c, int unused)
{
	unsigned long long t;
	void *addr;
	int rc;

	addr = shm_attach_filled(b->size);
	if (!addr)
		return -1;
	if (b->chain) {
		chase(b->chain, b->pages);	/* refill what the fill evicted */
		b->before += chase(b->chain, b->pages);
	}
	if (count_start())
		return -1;
	t = now_ns();
	rc = shmdt(addr);
	b->ns += now_ns() - t;
	if (b->chain)
		b->after += chase(b->chain, b->pages);
	if (count_stop(c) || rc)
		return -1;
	return 0;
}

static int wait_child(pid_t pid)
{
	int status;

	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "child failed (status %#x)\n", status);
		return -1;
	}
	return 0;
}

/* The child of forkexec and mixed: any CPU, some mm work for mixed, exec. */
static void child(struct bench *b, int work)
{
	char *map;

	tlbie_bind_cpus(usable, nr_usable);
	if (work) {
		map = tlbie_map_filled(b->size);
		if (!map || mprotect(map, b->size / 2, PROT_READ) ||
		    munmap(map + b->size / 4, b->size / 2))
			_exit(1);
	}
	execl("/proc/self/exe", "tlbie_bench", "-x", (char *)NULL);
	_exit(127);
}

enum { FORK, FORK_EXEC, FORK_WORK_EXEC };

static int run_fork(struct bench *b, struct tlbie_counts *c, int how)
{
	unsigned long long t;
	pid_t pid;
	int rc;

	if (count_start())
		return -1;
	/* Write again what the last fork() write-protected. */
	if (b->mem)
		memset(b->mem, 0x5a, b->size);
	t = now_ns();
	pid = fork();
	if (pid == 0) {
		if (how == FORK)
			_exit(0);
		child(b, how == FORK_WORK_EXEC);
	}
	rc = wait_child(pid);
	b->ns += now_ns() - t;
	if (count_stop(c) || rc)
		return -1;
	return 0;
}

/* THP-backed anonymous memory of this process, kB */
static unsigned long anon_huge_kb(void)
{
	long kb = tlbie_proc_value("/proc/self/smaps_rollup", "AnonHugePages:");

	return kb < 0 ? 0 : kb;
}

/*
 * @size bytes, THP aligned and filled: THPs (@huge), or small pages that a
 * collapse can turn into THPs. Small pages are left without MADV_HUGEPAGE
 * unless THP is "always", so khugepaged does not race with a counted
 * MADV_COLLAPSE; with "always" they must be MADV_NOHUGEPAGE while filled
 * (*@nohuge is set then). NULL on error.
 */
static char *map_thp_range(size_t size, int huge, int *nohuge, char **base, size_t *len)
{
	char *p;

	*len = size + pmd_size;
	*base = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*base == MAP_FAILED)
		return NULL;
	p = (char *)(((unsigned long)*base + pmd_size - 1) & ~(pmd_size - 1));
	*nohuge = !huge && tlbie_thp_mode("enabled") == 2;
	if ((huge && madvise(p, size, MADV_HUGEPAGE)) ||
	    (*nohuge && madvise(p, size, MADV_NOHUGEPAGE))) {
		munmap(*base, *len);
		return NULL;
	}
	memset(p, 1, size);
	return p;
}

static const char * const khugepaged_knobs[] = {
	"scan_sleep_millisecs", "alloc_sleep_millisecs", "pages_to_scan",
};

/* khugepaged scanning every 10 ms until the test ends (tlbie_write_restored()) */
static int khugepaged_fast(void)
{
	static const char * const fast[] = { "10", "10", "4096" };
	static bool done;
	char path[128];
	int i;

	for (i = 0; !done && i < 3; i++) {
		snprintf(path, sizeof(path), THP "khugepaged/%s", khugepaged_knobs[i]);
		if (tlbie_write_restored(path, fast[i]))
			return -1;
	}
	done = true;
	return 0;
}

static int run_collapse(struct bench *b, struct tlbie_counts *c, int khugepaged)
{
	unsigned long long t;
	int rc = 0, i, nohuge;
	char *base, *p;
	size_t len;

	if (khugepaged && khugepaged_fast()) {
		perror("khugepaged sysfs");
		return -1;
	}
	p = map_thp_range(b->size, 0, &nohuge, &base, &len);
	if (!p)
		return -1;
	if (count_start())
		return -1;
	t = now_ns();
	/* khugepaged only scans what MADV_HUGEPAGE (or "always") allows. */
	if ((khugepaged || nohuge) && madvise(p, b->size, MADV_HUGEPAGE))
		rc = -1;
	if (!rc && !khugepaged && madvise(p, b->size, MADV_COLLAPSE)) {
		perror("MADV_COLLAPSE");
		rc = -1;
	}
	for (i = 0; !rc && khugepaged && i < 3000 && anon_huge_kb() < b->size / 1024; i++)
		usleep(10000);
	b->ns += now_ns() - t;
	if (count_stop(c))
		rc = -1;
	if (!rc && anon_huge_kb() < b->size / 1024) {
		fprintf(stderr, "only %lu of %zu kB collapsed\n", anon_huge_kb(), b->size / 1024);
		rc = -1;
	}
	munmap(base, len);
	return rc;
}

/* mprotect() of THPs: one small page in each (@split) or all of them. */
static int run_thp_mprotect(struct bench *b, struct tlbie_counts *c, int split)
{
	unsigned long long t;
	int rc = 0, nohuge;
	char *base, *p;
	size_t len, off;

	p = map_thp_range(b->size, 1, &nohuge, &base, &len);
	if (!p)
		return -1;
	if (anon_huge_kb() < b->size / 1024) {
		fprintf(stderr, "only %lu of %zu kB are THPs\n", anon_huge_kb(), b->size / 1024);
		munmap(base, len);
		return -1;
	}
	if (count_start())
		return -1;
	t = now_ns();
	if (split) {
		for (off = 0; off < b->size && !rc; off += pmd_size)
			rc = mprotect(p + off + pmd_size / 2, page_size, PROT_READ);
	} else {
		rc = mprotect(p, b->size, PROT_READ);
	}
	b->ns += now_ns() - t;
	if (count_stop(c))
		rc = -1;
	munmap(base, len);
	return rc;
}

/* The thread of thread_exit: touch b->pages pages of its stack, return. */
static void *stack_toucher(void *arg)
{
	const struct bench *b = arg;
	char *stack = alloca(b->pages * page_size);
	unsigned long i;

	for (i = 0; i < b->pages; i++)
		stack[i * page_size] = 1;
	/* Keep the stores: nothing reads them */
	__asm__ __volatile__("" : : "r"(stack) : "memory");
	return NULL;
}

static int run_thread_exit(struct bench *b, struct tlbie_counts *c, int unused)
{
	unsigned long long t;
	pthread_t thread;
	int rc;

	if (count_start())
		return -1;
	t = now_ns();
	rc = pthread_create(&thread, NULL, stack_toucher, b);
	if (!rc)
		rc = pthread_join(thread, NULL);
	b->ns += now_ns() - t;
	if (count_stop(c) || rc)
		return -1;
	return 0;
}

/* -s MiB of private memory with every -w-th page present, then @op on it */
static int run_sparse(struct bench *b, struct tlbie_counts *c, int op)
{
	unsigned long long t;
	size_t off;
	char *p;
	int rc;

	p = mmap(NULL, b->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	/* Small pages only: a THP would fill the gaps */
	madvise(p, b->size, MADV_NOHUGEPAGE);
	for (off = 0; off < b->size; off += b->pages * page_size)
		p[off] = 1;
	if (count_start())
		return -1;
	t = now_ns();
	if (op == TLBIE_DONTNEED)
		rc = madvise(p, b->size, MADV_DONTNEED);
	else
		rc = mprotect(p, b->size, PROT_READ);
	b->ns += now_ns() - t;
	munmap(p, b->size);
	if (count_stop(c) || rc)
		return -1;
	return 0;
}

/* shmdt() of -s MiB of shared memory with -w dirty pages per page table */
static int run_shm_sparse(struct bench *b, struct tlbie_counts *c, int unused)
{
	unsigned long long t;
	size_t off, i;
	char *p;
	int rc;

	p = tlbie_shm_attach(b->size);
	if (!p)
		return -1;
	for (off = 0; off < b->size; off += TLBIE_PMD_SPAN)
		for (i = 0; i < b->pages && i * page_size < TLBIE_PMD_SPAN; i++)
			p[off + i * page_size] = 1;
	if (count_start())
		return -1;
	t = now_ns();
	rc = shmdt(p);
	b->ns += now_ns() - t;
	if (count_stop(c) || rc)
		return -1;
	return 0;
}

/* mprotect() of a THP and the -w small pages that follow it */
static int run_thp_mixed(struct bench *b, struct tlbie_counts *c, int unused)
{
	unsigned long long t;
	int rc = 0, nohuge;
	size_t len, small = b->pages * page_size;
	char *base, *p;

	if (small > pmd_size)
		return -1;
	p = map_thp_range(2 * pmd_size, 1, &nohuge, &base, &len);
	if (!p)
		return -1;
	/* The second page table: small pages, -w of them present */
	if (madvise(p + pmd_size, pmd_size, MADV_DONTNEED) ||
	    madvise(p + pmd_size, pmd_size, MADV_NOHUGEPAGE)) {
		munmap(base, len);
		return -1;
	}
	memset(p + pmd_size, 1, small);
	if (anon_huge_kb() < pmd_size / 1024) {
		fprintf(stderr, "no THP: %lu kB\n", anon_huge_kb());
		munmap(base, len);
		return -1;
	}
	if (count_start())
		return -1;
	t = now_ns();
	rc = mprotect(p, pmd_size + small, PROT_READ);
	b->ns += now_ns() - t;
	if (count_stop(c))
		rc = -1;
	munmap(base, len);
	return rc;
}

enum { MEMFD_PUNCH, MEMFD_TRUNCATE, MEMFD_REMOVE, MEMFD_DONTNEED, MEMFD_MUNMAP };

/*
 * A memfd of -s MiB mapped MAP_SHARED from a page-table boundary, its first
 * @tables page tables written (all if 0), then @op on all of it
 */
static int memfd_op(struct bench *b, struct tlbie_counts *c, int op, unsigned long tables)
{
	size_t len = b->size, dirty = tables ? tables * TLBIE_PMD_SPAN : len;
	unsigned long long t;
	char *base, *p;
	int fd, rc;

	if (dirty > len)
		return -1;
	fd = memfd_create("tlbie_bench", 0);
	if (fd < 0)
		return -1;
	base = mmap(NULL, len + TLBIE_PMD_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ftruncate(fd, len) || base == MAP_FAILED) {
		close(fd);
		return -1;
	}
	p = mmap(tlbie_pmd_align(base), len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		munmap(base, len + TLBIE_PMD_SPAN);
		return -1;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 1, dirty);
	if (count_start())
		return -1;
	t = now_ns();
	switch (op) {
	case MEMFD_PUNCH:
		rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, len);
		break;
	case MEMFD_TRUNCATE:
		rc = ftruncate(fd, 0);
		break;
	case MEMFD_REMOVE:
		rc = madvise(p, len, MADV_REMOVE);
		break;
	case MEMFD_DONTNEED:
		rc = madvise(p, len, MADV_DONTNEED);
		break;
	default:
		rc = munmap(p, len);
		break;
	}
	b->ns += now_ns() - t;
	if (count_stop(c))
		rc = -1;
	munmap(base, len + TLBIE_PMD_SPAN);
	close(fd);
	return rc;
}

static int run_memfd(struct bench *b, struct tlbie_counts *c, int op)
{
	return memfd_op(b, c, op, 0);
}

static int run_memfd_first(struct bench *b, struct tlbie_counts *c, int unused)
{
	return memfd_op(b, c, MEMFD_DONTNEED, b->pages);
}

/* -s MiB of private memory with its first -w page tables present, then @op */
static int run_first(struct bench *b, struct tlbie_counts *c, int op)
{
	size_t len = b->size, present = b->pages * TLBIE_PMD_SPAN;
	unsigned long long t;
	char *base, *p;
	int rc;

	if (present > len)
		return -1;
	base = mmap(NULL, len + TLBIE_PMD_SPAN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -1;
	p = tlbie_pmd_align(base);
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 1, present);
	if (count_start())
		return -1;
	t = now_ns();
	if (op == TLBIE_DONTNEED)
		rc = madvise(p, len, MADV_DONTNEED);
	else
		rc = mprotect(p, len, PROT_READ);
	b->ns += now_ns() - t;
	if (count_stop(c))
		rc = -1;
	munmap(base, len + TLBIE_PMD_SPAN);
	return rc;
}

static const struct workload {
	const char *name;
	unsigned long mib;	/* default -s; 0: no size */
	int thp;		/* needs THP: 1 any mode but never, 2 also not never */
	int (*run)(struct bench *b, struct tlbie_counts *c, int arg);
	int arg;
	unsigned long w;	/* default -w, 0: -w means nothing here */
	const char *wlabel;	/* how the label shows -w */
} workloads[] = {
	{ "shm",		64,	0,	run_shm,		0 },
	{ "refill",		64,	0,	run_shm,		0, 1024, "_%lup" },
	{ "fork",		16,	0,	run_fork,		FORK },
	{ "forkexec",		0,	0,	run_fork,		FORK_EXEC },
	{ "mixed",		16,	0,	run_fork,		FORK_WORK_EXEC },
	{ "thp_collapse",	16,	1,	run_collapse,		0 },
	{ "thp_khugepaged",	16,	2,	run_collapse,		1 },
	{ "thp_split",		16,	2,	run_thp_mprotect,	1 },
	{ "thp_mprotect",	16,	2,	run_thp_mprotect,	0 },
	{ "thread_exit",	0,	0,	run_thread_exit,	0, 4, "_%lup" },
	{ "dontneed_sparse",	64,	0,	run_sparse, TLBIE_DONTNEED, 8, "_every%lu" },
	{ "mprotect_sparse",	64,	0,	run_sparse, TLBIE_MPROTECT_RO, 8, "_every%lu" },
	{ "shm_sparse",		64,	0,	run_shm_sparse,		0, 1, "_%lup" },
	{ "thp_mixed",		0,	2,	run_thp_mixed,		0, 20, "_%lup" },
	{ "memfd_punch",	64,	0,	run_memfd,		MEMFD_PUNCH },
	{ "memfd_truncate",	64,	0,	run_memfd,		MEMFD_TRUNCATE },
	{ "memfd_remove",	64,	0,	run_memfd,		MEMFD_REMOVE },
	{ "memfd_dontneed",	64,	0,	run_memfd,		MEMFD_DONTNEED },
	{ "memfd_munmap",	64,	0,	run_memfd,		MEMFD_MUNMAP },
	{ "mprotect_first",	64,	0,	run_first, TLBIE_MPROTECT_RO, 1, "_%lupmd" },
	{ "dontneed_first",	64,	0,	run_first, TLBIE_DONTNEED, 1, "_%lupmd" },
	{ "memfd_first",	64,	0,	run_memfd_first,	0, 1, "_%lupmd" },
};

static unsigned long long total(const struct tlbie_counts *c)
{
	return c->global + c->fixup + c->local;
}

/*
 * The counts of the iteration that issued the fewest invalidations, and
 * how many more the one that issued the most did: what disturbs a run
 * (a reschedule point that splits a flush, another process's flush on
 * another CPU) only adds.
 */
static void print_counts(const struct tlbie_counts *per, unsigned long n)
{
	unsigned long i, lo = 0, hi = 0;

	for (i = 1; i < n; i++) {
		if (total(&per[i]) < total(&per[lo]))
			lo = i;
		if (total(&per[i]) > total(&per[hi]))
			hi = i;
	}
	printf(" spread=%llu", total(&per[hi]) - total(&per[lo]));
	tlbie_counts_print_fields(&per[lo]);
}

static unsigned long number(const char *s, const char *what)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || !*s || s[0] == '-' || v > (1UL << 20)) {
		fprintf(stderr, "tlbie_bench: bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	unsigned long i;

	fprintf(stderr, "Usage: tlbie_bench [-n] [-m] [-t 1|2] [-i iterations] [-s MiB]");
	fprintf(stderr, " [-w pages] WORKLOAD\n");
	fprintf(stderr, "WORKLOAD:");
	for (i = 0; i < ARRAY_SIZE(workloads); i++)
		fprintf(stderr, " %s", workloads[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char *argv[])
{
	unsigned long threads = 1, iterations = 1, i, n, use_counts = 1, use_marks = 0;
	struct tlbie_counts c, *per;
	struct bench b = { 0 };
	const struct workload *wl = NULL;
	struct tlbie_sibling sibling;
	const char *why = NULL;
	char label[64];
	int opt, cpus[2];
	long v;

	page_size = sysconf(_SC_PAGESIZE);
	while ((opt = getopt(argc, argv, "nmt:i:s:w:x")) != -1) {
		switch (opt) {
		case 'x':	/* the exec'd child of forkexec and mixed */
			return 0;
		case 'n':
			use_counts = 0;
			break;
		case 'm':
			use_marks = 1;
			break;
		case 't':
			threads = number(optarg, "-t");
			break;
		case 'i':
			iterations = number(optarg, "-i");
			break;
		case 's':
			b.mib = number(optarg, "-s");
			break;
		case 'w':
			b.pages = number(optarg, "-w");
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || (threads != 1 && threads != 2) || !iterations)
		usage();
	if (use_marks && threads != 2) {
		/* One thread flushes locally: the hypervisor sees no marker */
		fprintf(stderr, "tlbie_bench: -m needs -t 2\n");
		exit(2);
	}
	for (i = 0; i < ARRAY_SIZE(workloads); i++)
		if (!strcmp(argv[optind], workloads[i].name))
			wl = &workloads[i];
	if (!wl)
		usage();

	if (!b.mib)
		b.mib = wl->mib;
	if (!b.pages)
		b.pages = wl->w;
	n = snprintf(label, sizeof(label), "%s", wl->name);
	if (wl->mib)
		n += snprintf(label + n, sizeof(label) - n, "_%luM", b.mib);
	n += snprintf(label + n, sizeof(label) - n, "_%lut", threads);
	if (wl->wlabel)
		snprintf(label + n, sizeof(label) - n, wl->wlabel, b.pages);

	nr_usable = tlbie_usable_cpus(&usable);
	if (tlbie_pick_cpus(cpus) < (int)threads) {
		printf("bench: %s skipped=needs_%lu_cpus\n", label, threads);
		return 4;
	}
	if (wl->thp) {
		int mode = tlbie_thp_mode("enabled");

		pmd_size = read_long(THP "hpage_pmd_size", &v, 10) ? 0 : v;
		if (!pmd_size || mode < 0 || (wl->thp == 2 && mode == 0)) {
			printf("bench: %s skipped=no_thp\n", label);
			return 4;
		}
		/* Whole THPs only */
		b.mib = ((b.mib << 20) + pmd_size - 1) / pmd_size * pmd_size >> 20;
	}
	b.size = b.mib << 20;

	if (tlbie_bind_cpu(cpus[0])) {
		perror("sched_setaffinity");
		return 1;
	}
	if (threads == 2 && tlbie_sibling_start(&sibling, cpus[1])) {
		fprintf(stderr, "tlbie_bench: cannot start the second thread\n");
		return 1;
	}
	/* Every process, every CPU: children, and IPIs' tlbiel on other CPUs */
	tlbie_count_set_scope(TLBIE_SCOPE_SYSTEM);
	if (use_counts)
		why = tlbie_count_unavailable();
	else
		why = "-n";
	if (!strcmp(wl->name, "fork")) {
		b.mem = tlbie_map_filled(b.size);
		if (!b.mem) {
			perror("mmap");
			return 1;
		}
	}
	if (!strcmp(wl->name, "refill")) {
		b.chain = chase_build(b.pages);
		if (!b.chain) {
			perror("pointer chase");
			return 1;
		}
	}

	per = calloc(iterations, sizeof(*per));
	if (!per) {
		perror("calloc");
		return 1;
	}

	/* One uncounted iteration: the mm settles on its CPUs. */
	if (wl->run(&b, &c, wl->arg)) {
		printf("bench: %s failed\n", label);
		return 1;
	}
	counting = !why;
	if (use_marks) {
		void *want = (void *)(TLBIE_MARK_ADDR + (getpid() % TLBIE_MARK_SLOTS) *
				      TLBIE_MARK_PAGES * page_size);

		marks = mmap(want, TLBIE_MARK_PAGES * page_size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (marks != want) {
			perror("mmap of the marker pages");
			return 1;
		}
	}
	b.before = 0;
	b.after = 0;
	b.ns = 0;
	for (i = 0; i < iterations; i++) {
		if (wl->run(&b, &per[i], wl->arg)) {
			printf("bench: %s failed\n", label);
			return 1;
		}
	}
	if (threads == 2)
		tlbie_sibling_stop(&sibling);

	printf("bench: %s iters=%lu ns=%llu", label, iterations, b.ns);
	if (marks)
		printf(" marks=%lu mark_addr=%p", nr_marks, marks);
	if (b.chain)
		printf(" chase_before_ns=%.1f chase_after_ns=%.1f",
		       b.before / iterations, b.after / iterations);
	if (!counting) {
		printf(" counts=none (%s)\n", why);
		return 0;
	}
	print_counts(per, iterations);
	tlbie_count_close();
	return 0;
}
