// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A dirty shared page is flushed from every CPU's TLB before core mm drops
 * its mapping count: zap_pte_range() flushes a page table's dirty shared
 * pages, then removes their rmaps (tlb_flush_rmaps()), so that nothing
 * walking the rmap (writeback, reclaim) takes the page for unmapped while
 * another CPU can still write to it.
 *
 * tlbie_stale looks at translations once an operation has returned. An
 * munmap() or shmdt() of shared memory ends with a whole-PID flush (for
 * the page tables it frees), which hides a batch flushed late, or not at
 * all. This test looks during the operation, through /proc/kpagecount: a
 * reader on another core holds a translation of one page in each page
 * table, and a watcher on a third CPU reads the pages' mapping counts, in
 * order, while the main thread unmaps. As soon as the watcher sees a
 * page's count at 0, the reader reads the page through its old
 * translation: that read must fault. The reader makes no system call
 * while it waits (an emulator may drop its TLB at a kernel entry or exit,
 * QEMU does, and would hide what is looked for).
 *
 * A count of 0 seen before the unmap returned is a look during the
 * operation. Each operation is taken TRIES times, and fails if none of
 * them made a look; a read that does not fault fails at once.
 * Needs root: /proc/self/pagemap gives page frame numbers to
 * CAP_SYS_ADMIN only, and /proc/kpagecount is root's.
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

#define PAGEMAP		"/proc/self/pagemap"
#define KPAGECOUNT	"/proc/kpagecount"

enum kind { MEMFD, SHM };

static const char * const kind_name[] = {
	[MEMFD]	= "memfd munmap",
	[SHM]	= "sysv_shm shmdt",
};

/*
 * IDLE -> HOT (reader reads the watched pages) -> WATCH (watcher reads
 * counts, reader waits for it) -> IDLE, once both are done. The phase word
 * holds the operation's number above the phase (PHASE_BITS), so that a
 * thread acts on each operation's WATCH once, from one load: a reader that
 * saw the last operation's WATCH and then waited must not take the next
 * operation's set-up for it.
 */
enum { IDLE, HOT, WATCH, QUIT };
#define PHASE_BITS	4
#define PHASE_MASK	((1u << PHASE_BITS) - 1)

static char *area;
static long page_size;
static uint64_t pfn[TABLES];
static int kpagecount = -1;
static unsigned int phase, operation;
static int passes, unmapped;
static int reader_bound, watcher_bound, reader_done, watcher_done;
/* The reader has left its unguarded warm-up loop: the unmap may start */
static int reader_watching;
/* Watched pages whose count the watcher saw at 0; whether the unmap had returned */
static int zeroed;
static bool done_at_zero[TABLES];
/* What they saw in one operation */
static volatile unsigned long looked, stale, errors;
static __thread sigjmp_buf fault_jmp;
static __thread bool fault_jmp_set;	/* only the reader's reads may fault */

static void fault(int sig, siginfo_t *info, void *ctx)
{
	if (!fault_jmp_set) {
		/* Not the reader's: the default action, as the faulting access is retried */
		signal(sig, SIG_DFL);
		return;
	}
	siglongjmp(fault_jmp, 1);
}

/*
 * Where the reader reads in page table @i: its first page (the first whose
 * rmap goes), at @i * 4K into it with 64K pages (page @i with 4K pages).
 * Watched addresses 2MB apart would all fall in one set of a TLB indexed
 * by 4K page number (QEMU's is, direct-mapped, 64 entries at least) and
 * evict one another during the warm-up.
 */
static volatile uint64_t *watched(int i)
{
	return (uint64_t *)(area + i * TLBIE_PMD_SPAN + i * 4096UL);
}

/* The mapping count of page frame @pfn, or -1 */
static long map_count(uint64_t frame)
{
	uint64_t count;

	if (pread(kpagecount, &count, sizeof(count), frame * sizeof(count)) != sizeof(count))
		return -1;
	return count;
}

/*
 * The watcher: read each watched page's mapping count until it is 0, in
 * order, and tell the reader. Once the unmap has returned, a count that is
 * not 0 ends the watch (a freed page reused elsewhere).
 */
static void watch_counts(void)
{
	int i;

	errors = 0;
	for (i = 0; i < TABLES; i++) {
		long count;
		bool done;

		do {
			done = __atomic_load_n(&unmapped, __ATOMIC_ACQUIRE);
			count = map_count(pfn[i]);
		} while (count > 0 && !done);
		if (count) {
			errors += count < 0;
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
 * 0 once the unmap has returned ends the watch. sigsetjmp() once per page,
 * not in the loop: what it costs would come between the count and the
 * read.
 */
static void read_zeroed(void)
{
	static volatile bool done;
	int i;

	looked = stale = 0;
	for (i = 0; i < TABLES; i++) {
		if (sigsetjmp(fault_jmp, 1)) {
			if (!done)
				looked++;
			continue;
		}
		for (;;) {
			bool zero;

			done = __atomic_load_n(&unmapped, __ATOMIC_ACQUIRE);
			zero = __atomic_load_n(&zeroed, __ATOMIC_ACQUIRE) > i;
			(void)*watched(i);
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
	while ((ph = (word = __atomic_load_n(&phase, __ATOMIC_ACQUIRE)) & PHASE_MASK) != QUIT) {
		if (ph == HOT) {
			for (i = 0; i < TABLES; i++)
				(void)*watched(i);
			__atomic_add_fetch(&passes, 1, __ATOMIC_RELEASE);
		} else if (ph == WATCH && word >> PHASE_BITS != last) {
			last = word >> PHASE_BITS;
			__atomic_store_n(&reader_watching, 1, __ATOMIC_RELEASE);
			fault_jmp_set = true;	/* each page's sigsetjmp() comes first */
			read_zeroed();
			fault_jmp_set = false;
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
	while (((word = __atomic_load_n(&phase, __ATOMIC_ACQUIRE)) & PHASE_MASK) != QUIT) {
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

/* One operation; 1 if a watched page read stale, -1 on error */
static int one(enum kind kind, int pagemap)
{
	size_t len = TABLES * TLBIE_PMD_SPAN;
	int i, seen, rc;

	if (map(kind, len)) {
		perror(kind_name[kind]);
		return -1;
	}
	for (i = 0; i < TABLES; i++) {
		pfn[i] = frame_of(pagemap, (void *)watched(i));
		if (!pfn[i] || map_count(pfn[i]) != 1) {
			printf("%s: page %d: frame %#llx, count %ld: want a frame mapped once\n",
			       kind_name[kind], i, (unsigned long long)pfn[i],
			       pfn[i] ? map_count(pfn[i]) : -1);
			unmap(kind, len);
			return -1;
		}
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

static int test_rmap(void)
{
	int cpus[2], pagemap, failed = 0, kind, t, rc, cpu;
	pthread_t thread, watcher_thread;
	unsigned long total;

	SKIP_IF_MSG(geteuid() != 0, "needs root (page frames from pagemap, " KPAGECOUNT ")");
	SKIP_IF_MSG(access(KPAGECOUNT, R_OK), "no " KPAGECOUNT " (CONFIG_PROC_PAGE_MONITOR)");
	SKIP_IF_MSG(tlbie_pick_cpus(cpus) < 2, "needs three CPUs");
	cpu = third_cpu(cpus[0], cpus[1]);
	SKIP_IF_MSG(cpu < 0, "needs three CPUs");
	page_size = sysconf(_SC_PAGESIZE);
	pagemap = open(PAGEMAP, O_RDONLY);
	kpagecount = open(KPAGECOUNT, O_RDONLY);
	FAIL_IF(pagemap < 0 || kpagecount < 0);

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
		total = 0;
		for (t = 0; t < TRIES; t++) {
			rc = one(kind, pagemap);
			if (rc < 0) {
				failed = 1;
				break;
			}
			failed |= rc;
			total += looked;
		}
		if (rc >= 0 && !total) {
			printf("%s: no look during the operation in %d operations\n",
			       kind_name[kind], TRIES);
			failed = 1;
		}
	}
	set_phase(QUIT);
	pthread_join(thread, NULL);
	pthread_join(watcher_thread, NULL);
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_rmap, "tlbie_rmap");
}
