// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A dirty shared page is flushed from every CPU's TLB before core mm drops
 * its mapping count. zap_pte_range() flushes a page table's dirty shared
 * pages first and removes their rmaps after (tlb_flush_rmaps()), so that
 * nothing that walks the rmap (writeback, reclaim) takes a page for
 * unmapped while another CPU can still write to it. An arch that defers a
 * batch's flush, to the end of the zap or to a later whole-PID flush,
 * breaks this order, and so does core mm if it drops the rmaps first.
 *
 * tlbie_stale looks once the operation has returned. An munmap() or
 * shmdt() of shared memory ends in a whole-PID flush (of the page tables
 * it frees), which hides a batch flushed late. This test looks during
 * the operation, through /proc/kpagecount:
 *  - a reader on another core holds a translation of one page in each of
 *    16 page tables;
 *  - a watcher on a third CPU reads the pages' mapping counts, in order,
 *    while the main thread unmaps a memfd mapping, or detaches a SysV
 *    segment, of the 16 page tables (small pages, dirty);
 *  - the reader reads each page again and again until the read faults. A
 *    read made after the watcher saw the page's count at 0 must fault: if
 *    it returns, a translation outlived the page's rmap.
 * That holds however the kernel flushes (page by page, the whole PID, hash
 * or radix), so a kernel that keeps the order cannot fail. A kernel that
 * breaks it fails only when the reader's read falls in the window between
 * the rmap's removal and the flush. That window can be short, so a pass
 * proves little, but a failure is always a bug. The reader makes no
 * system call while it waits: an emulator may drop its TLB at a kernel
 * entry or exit (QEMU does), which would close the window.
 *
 * A page whose count the watcher saw at 0 before the unmap returned, and
 * whose read then faulted, is a look during the operation. Each kind is
 * taken TRIES times, and again (up to MAX_TRIES) until one operation made a
 * look; none in MAX_TRIES fails (the watcher never ran during an unmap).
 * Retrying cannot hide a stale read: any stale read fails the test.
 *
 * Needs root: /proc/self/pagemap gives page frame numbers to CAP_SYS_ADMIN
 * only, and /proc/kpagecount and /proc/kpageflags are root's.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define TABLES		16	/* page tables unmapped, one page watched in each */
#define TRIES		5	/* operations of each kind */
#define MAX_TRIES	50	/* of each kind, until one made a look */

#define PAGEMAP		"/proc/self/pagemap"
#define KPAGECOUNT	"/proc/kpagecount"
#define KPAGEFLAGS	"/proc/kpageflags"
#define KPF_THP		22	/* include/uapi/linux/kernel-page-flags.h */

enum kind { MEMFD, SHM };

static const char * const kind_name[] = {
	[MEMFD]	= "memfd munmap",
	[SHM]	= "sysv_shm shmdt",
};

/*
 * IDLE -> HOT (the reader reads the watched pages) -> WATCH (the watcher
 * reads counts, the reader reads pages) -> IDLE once both are done. The
 * phase word holds the operation's number above the phase (PHASE_BITS), so
 * that each thread acts once on each operation's WATCH, from one load: a
 * reader that saw the last operation's WATCH must not take the next one's
 * set-up for it.
 */
enum { IDLE, HOT, WATCH, QUIT };
#define PHASE_BITS	4
#define PHASE_MASK	((1u << PHASE_BITS) - 1)

static char *area;
static long page_size;
static uint64_t pfn[TABLES];
static int kpagecount = -1, kpageflags = -1;
static unsigned int phase, operation;
static int passes, unmapped;
static int reader_bound, watcher_bound, reader_done, watcher_done;
/* The reader has left its warm-up loop, where a fault is not expected */
static int reader_watching;
/* Watched pages, in order, whose count the watcher saw at 0 */
static int zeroed;
/* Whether the unmap had returned when the watcher saw each count at 0 */
static bool done_at_zero[TABLES];
/* What one operation saw: pages looked at during it, stale reads, errors */
static unsigned long looked, stale, errors;
static __thread sigjmp_buf fault_jmp;
static __thread int fault_jmp_set;	/* only the reader's reads may fault */

static void fault(int sig, siginfo_t *info, void *ctx)
{
	if (!__atomic_load_n(&fault_jmp_set, __ATOMIC_RELAXED)) {
		/* Not the reader's: the default action, as the access is retried */
		signal(sig, SIG_DFL);
		return;
	}
	siglongjmp(fault_jmp, 1);
}

/*
 * Where the reader reads in page table @i: its first page (the first whose
 * rmap goes), at @i * 4K into it with 64K pages (page @i with 4K pages).
 * Watched addresses 2MB apart would all fall in one set of a TLB indexed
 * by 4K page number (QEMU's is, direct-mapped) and evict one another.
 */
static uint64_t *watched(int i)
{
	return (uint64_t *)(area + i * TLBIE_PMD_SPAN + i * 4096UL);
}

static void read_watched(int i)
{
	__atomic_load_n(watched(i), __ATOMIC_RELAXED);
}

/* Entry @frame of the /proc file open at @fd in @v: 0, or -1 */
static int kpage(int fd, uint64_t frame, uint64_t *v)
{
	return pread(fd, v, sizeof(*v), frame * sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

/*
 * The watcher: read each watched page's mapping count until it is 0, in
 * order, and tell the reader. Once the unmap has returned, a count that is
 * not 0 ends the watch.
 */
static void watch_counts(void)
{
	int i;

	errors = 0;
	for (i = 0; i < TABLES; i++) {
		uint64_t count;
		bool done;
		int rc;

		do {
			done = __atomic_load_n(&unmapped, __ATOMIC_ACQUIRE);
			rc = kpage(kpagecount, pfn[i], &count);
		} while (!rc && count && !done);
		if (rc || count) {
			errors += rc < 0;
			break;
		}
		done_at_zero[i] = done;
		__atomic_store_n(&zeroed, i + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&watcher_done, 1, __ATOMIC_RELEASE);
}

/*
 * The reader: read page @i over and over (its translation stays cached,
 * whatever else the loop evicts) until it faults; a read made after the
 * watcher saw the page's count at 0 must fault. A page whose count is not
 * 0 once the watcher has finished ends the watch. sigsetjmp() once per
 * page, not in the loop: its cost would come between the count and the
 * read.
 */
static void read_zeroed(void)
{
	static int done;	/* static: it must hold its value across siglongjmp() */
	int i;

	looked = 0;
	stale = 0;
	for (i = 0; i < TABLES; i++) {
		if (sigsetjmp(fault_jmp, 1)) {
			if (!__atomic_load_n(&done, __ATOMIC_RELAXED))
				looked++;
			continue;
		}
		for (;;) {
			bool zero;

			__atomic_store_n(&done, __atomic_load_n(&unmapped, __ATOMIC_ACQUIRE),
					 __ATOMIC_RELAXED);
			zero = __atomic_load_n(&zeroed, __ATOMIC_ACQUIRE) > i;
			read_watched(i);
			if (zero) {
				stale++;
				printf("page %d read after its count went to 0%s\n",
				       i, done_at_zero[i] ? " (and the unmap returned)" : "");
				break;
			}
			if (__atomic_load_n(&watcher_done, __ATOMIC_ACQUIRE) &&
			    __atomic_load_n(&zeroed, __ATOMIC_ACQUIRE) <= i)
				return;
		}
	}
}

static void *reader(void *arg)
{
	unsigned int word, ph, last = 0;
	int i;

	if (tlbie_bind_cpu((long)arg)) {
		__atomic_store_n(&reader_bound, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&reader_bound, 1, __ATOMIC_RELEASE);
	for (;;) {
		word = __atomic_load_n(&phase, __ATOMIC_ACQUIRE);
		ph = word & PHASE_MASK;
		if (ph == QUIT)
			break;
		if (ph == HOT) {
			for (i = 0; i < TABLES; i++)
				read_watched(i);
			__atomic_add_fetch(&passes, 1, __ATOMIC_RELEASE);
		} else if (ph == WATCH && word >> PHASE_BITS != last) {
			last = word >> PHASE_BITS;
			__atomic_store_n(&reader_watching, 1, __ATOMIC_RELEASE);
			/* each page's sigsetjmp() comes before its first read */
			__atomic_store_n(&fault_jmp_set, 1, __ATOMIC_RELAXED);
			read_zeroed();
			__atomic_store_n(&fault_jmp_set, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&reader_done, 1, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void *watcher(void *arg)
{
	unsigned int word, last = 0;

	if (tlbie_bind_cpu((long)arg)) {
		__atomic_store_n(&watcher_bound, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&watcher_bound, 1, __ATOMIC_RELEASE);
	for (;;) {
		word = __atomic_load_n(&phase, __ATOMIC_ACQUIRE);
		if ((word & PHASE_MASK) == QUIT)
			break;
		if ((word & PHASE_MASK) == WATCH && word >> PHASE_BITS != last) {
			last = word >> PHASE_BITS;
			watch_counts();
		}
	}
	return NULL;
}

static void set_phase(unsigned int ph)
{
	__atomic_store_n(&phase, operation << PHASE_BITS | ph, __ATOMIC_RELEASE);
}

static void wait_for(int *var, int val)
{
	while (__atomic_load_n(var, __ATOMIC_ACQUIRE) < val)
		;
}

/* The page frame of @p from pagemap, 0 if it has none (or pagemap hides it) */
static uint64_t frame_of(int pagemap, void *p)
{
	uint64_t e;

	if (pread(pagemap, &e, sizeof(e), (uintptr_t)p / page_size * sizeof(e)) != sizeof(e))
		return 0;
	return (e >> 63) ? e & ((1ULL << 55) - 1) : 0;
}

/* Undo map() where the operation is not taken */
static void unmap(enum kind kind, size_t len)
{
	if (kind == SHM)
		shmdt(area);
	else
		munmap(area, len);
}

/* Map and dirty @len bytes of @kind at a page-table boundary; 0 or -1 */
static int map(enum kind kind, size_t len)
{
	char *base;
	int fd;

	if (kind == SHM) {
		area = tlbie_shm_attach(len);
		if (!area)
			return -1;
	} else {
		fd = memfd_create("tlbie_rmap", 0);
		if (fd < 0)
			return -1;
		base = mmap(NULL, len + TLBIE_PMD_SPAN, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ftruncate(fd, len) || base == MAP_FAILED) {
			if (base != MAP_FAILED)
				munmap(base, len + TLBIE_PMD_SPAN);
			close(fd);
			return -1;
		}
		munmap(base, len + TLBIE_PMD_SPAN);
		/* The file keeps its pages: no frame is reused while watched */
		area = mmap(tlbie_pmd_align(base), len, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_FIXED, fd, 0);
		close(fd);
		if (area == MAP_FAILED)
			return -1;
		/* Small pages: a page table per batch */
		madvise(area, len, MADV_NOHUGEPAGE);
	}
	memset(area, 0x5a, len);
	return 0;
}

/*
 * Find each watched page's frame, which must be a small page mapped once:
 * 0, 1 where shmem THP is forced on the mapping (no per-page-table zap to
 * watch), -1 on error.
 */
static int find_frames(enum kind kind, int pagemap)
{
	uint64_t count, flags;
	int i;

	for (i = 0; i < TABLES; i++) {
		pfn[i] = frame_of(pagemap, watched(i));
		if (!pfn[i] || kpage(kpagecount, pfn[i], &count) ||
		    kpage(kpageflags, pfn[i], &flags)) {
			printf("%s: page %d: no frame, or no count or flags for frame %#llx\n",
			       kind_name[kind], i, (unsigned long long)pfn[i]);
			return -1;
		}
		if (flags & (1ULL << KPF_THP))
			return 1;
		if (count != 1) {
			printf("%s: page %d: frame %#llx mapped %llu times, want once\n",
			       kind_name[kind], i, (unsigned long long)pfn[i],
			       (unsigned long long)count);
			return -1;
		}
	}
	return 0;
}

/* One operation: 0, 1 if a watched page read stale, -1 on error, 2 on THP */
static int one(enum kind kind, int pagemap)
{
	size_t len = TABLES * TLBIE_PMD_SPAN;
	int seen, rc;

	if (map(kind, len)) {
		perror(kind_name[kind]);
		return -1;
	}
	rc = find_frames(kind, pagemap);
	if (rc) {
		unmap(kind, len);
		return rc < 0 ? -1 : 2;
	}

	seen = __atomic_load_n(&passes, __ATOMIC_ACQUIRE);
	__atomic_store_n(&unmapped, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&zeroed, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&reader_done, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&watcher_done, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&reader_watching, 0, __ATOMIC_RELEASE);
	operation++;	/* never 0, the threads' "none yet" */
	set_phase(HOT);
	wait_for(&passes, seen + 2);	/* translations are cached */
	set_phase(WATCH);
	/* Not before: a warm-up read of an unmapped page would be a plain SIGSEGV */
	wait_for(&reader_watching, 1);
	rc = kind == SHM ? shmdt(area) : munmap(area, len);
	__atomic_store_n(&unmapped, 1, __ATOMIC_RELEASE);
	wait_for(&watcher_done, 1);
	wait_for(&reader_done, 1);
	set_phase(IDLE);
	if (rc) {
		perror(kind_name[kind]);
		return -1;
	}
	printf("%s of %zu kB: %lu of %d watched pages looked at during it, %lu read stale\n",
	       kind_name[kind], len >> 10, looked, TABLES, stale);
	if (errors)
		printf("%s: %lu reads of " KPAGECOUNT " failed\n", kind_name[kind], errors);
	return stale || errors ? 1 : 0;
}

/* A usable CPU that is neither @a nor @b, or -1 */
static int third_cpu(int a, int b)
{
	int *usable, nr, i, cpu = -1;

	nr = tlbie_usable_cpus(&usable);
	for (i = 0; i < nr && cpu < 0; i++)
		if (usable[i] != a && usable[i] != b)
			cpu = usable[i];
	if (nr >= 0)
		free(usable);
	return cpu;
}

/* TRIES operations of @kind, more until one made a look: 0, 1 failed, 2 THP */
static int watch_kind(enum kind kind, int pagemap)
{
	int t, rc, failed = 0, with_look = 0;

	for (t = 0; t < TRIES || (!with_look && t < MAX_TRIES); t++) {
		rc = one(kind, pagemap);
		if (rc == 2) {
			printf("%s: shmem THP is forced, no page table to watch\n",
			       kind_name[kind]);
			return 2;
		}
		if (rc < 0)
			return 1;
		failed |= rc;
		with_look += looked > 0;
	}
	printf("%s: %d operations, %d with a look during the operation\n",
	       kind_name[kind], t, with_look);
	if (!with_look) {
		printf("%s: no look in %d operations: the watcher never ran during an unmap\n",
		       kind_name[kind], t);
		failed = 1;
	}
	return failed;
}

static int test_rmap(void)
{
	int cpus[2], pagemap, failed = 0, thp = 0, kind, rc, cpu;
	pthread_t thread, watcher_thread;

	SKIP_IF_MSG(geteuid() != 0, "needs root (page frames from pagemap, " KPAGECOUNT ")");
	SKIP_IF_MSG(access(KPAGECOUNT, R_OK) || access(KPAGEFLAGS, R_OK),
		    "no " KPAGECOUNT " (CONFIG_PROC_PAGE_MONITOR)");
	SKIP_IF_MSG(tlbie_pick_cpus(cpus) < 2, "needs three CPUs");
	cpu = third_cpu(cpus[0], cpus[1]);
	SKIP_IF_MSG(cpu < 0, "needs three CPUs");
	page_size = sysconf(_SC_PAGESIZE);
	pagemap = open(PAGEMAP, O_RDONLY);
	kpagecount = open(KPAGECOUNT, O_RDONLY);
	kpageflags = open(KPAGEFLAGS, O_RDONLY);
	FAIL_IF(pagemap < 0 || kpagecount < 0 || kpageflags < 0);

	push_signal_handler(SIGSEGV, fault);
	push_signal_handler(SIGBUS, fault);
	FAIL_IF(tlbie_bind_cpu(cpus[0]));
	FAIL_IF(pthread_create(&thread, NULL, reader, (void *)(long)cpus[1]));
	while (!__atomic_load_n(&reader_bound, __ATOMIC_ACQUIRE))
		sched_yield();
	FAIL_IF_MSG(reader_bound < 0, "the reader cannot bind to its CPU");
	FAIL_IF(pthread_create(&watcher_thread, NULL, watcher, (void *)(long)cpu));
	while (!__atomic_load_n(&watcher_bound, __ATOMIC_ACQUIRE))
		sched_yield();
	FAIL_IF_MSG(watcher_bound < 0, "the watcher cannot bind to its CPU");

	for (kind = MEMFD; kind <= SHM; kind++) {
		rc = watch_kind(kind, pagemap);
		if (rc == 2)
			thp++;
		else
			failed |= rc;
	}
	set_phase(QUIT);
	pthread_join(thread, NULL);
	pthread_join(watcher_thread, NULL);
	FAIL_IF(failed);
	SKIP_IF_MSG(thp == 2, "shmem THP is forced (shmem_enabled): no page table to watch");
	return 0;
}

int main(void)
{
	return test_harness(test_rmap, "tlbie_rmap");
}
