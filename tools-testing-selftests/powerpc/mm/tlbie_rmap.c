// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A zap flushes a dirty shared page from every CPU's TLB before core mm
 * drops the page's mapping count. zap_pte_range() flushes a page table's
 * dirty shared pages first and removes their rmaps after
 * (tlb_flush_rmaps()), so that nothing that walks the rmap (writeback,
 * reclaim) takes a page for unmapped while another CPU can still write to
 * it. An arch that defers a batch's flush, to a later whole-PID flush or to
 * the end of the zap, breaks this order, and so does core mm if it drops
 * the rmaps first.
 *
 * tlbie_stale looks once the operation has returned. An munmap() or
 * shmdt() of shared memory ends in a whole-PID flush (of the page tables
 * it frees), which hides a batch flushed late. This test looks during the
 * operation, through /proc/kpagecount:
 *  - a reader on another core writes, then keeps reading, one page in each
 *    of TABLES page-table spans (2MB; with hash and 64K pages a page table
 *    spans 16MB, so fewer tables);
 *  - a watcher on a third CPU reads the pages' mapping counts, in order,
 *    while the main thread unmaps the memfd mapping, or detaches the SysV
 *    segment, that holds them (small pages, dirty);
 *  - the reader reads each page again and again until the read faults. A
 *    read made after the watcher saw the page's count at 0 must fault: if
 *    it returns, a translation outlived the page's rmap.
 * The reader makes no system call while it waits: a kernel entry and exit
 * between the count and the read would only widen the time between them.
 *
 * The check holds however the kernel flushes (page by page, by PID, hash
 * or radix). A count can also read 0 while the page stays readable: a
 * page migrated during the operation (after a stale read, the test maps
 * the file or segment again and checks the page is still at its frame),
 * or reclaimed and faulted back in (a stale read fails the test only if
 * getrusage() shows no fault served to the reader before it). Such an
 * operation is not judged, and is taken again. (Served faults would hide
 * a kernel whose zap runs while the VMA can still be found: munmap() and
 * shmdt() remove the VMA first. Arches that drop rmaps in reclaim before
 * the flush, ARCH_WANT_BATCHED_UNMAP_TLB_FLUSH, would fail it falsely.)
 *
 * A kernel that breaks the order fails only if the reader reads in the
 * window between the rmaps' removal and the flush, which can be short,
 * and the watcher's read of the count (a system call) lands in it: a pass
 * proves little. A page is looked at during the operation if the reader
 * read it once the zap had reached its page table (for the first page,
 * once the unmap had begun; for the others, once the page before had
 * faulted) and then faulted: it read the page before, and faulted after,
 * its translation went. shmdt() holds mmap_lock for writing throughout,
 * so the reader's first fault waits for the detach to finish: a detach
 * looks at one page at most. Each kind is taken TRIES times, and again,
 * up to MAX_TRIES, until one judged operation looked at a page; a failure
 * ends it. A kind that never looked makes the test skip (nothing was
 * measured), unless it failed.
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
#include <sys/resource.h>
#include <sys/shm.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define TABLES		16	/* page-table spans unmapped, one page watched in each */
#define TRIES		5	/* judged operations of each kind */
#define MAX_TRIES	50	/* operations of each kind, until one looked at a page */

#define PAGEMAP		"/proc/self/pagemap"
#define KPAGECOUNT	"/proc/kpagecount"
#define KPAGEFLAGS	"/proc/kpageflags"
#define KPF_THP		22	/* include/uapi/linux/kernel-page-flags.h */

enum kind { MEMFD, SHM, NR_KINDS };

static const char * const kind_name[] = {
	[MEMFD]	= "memfd munmap",
	[SHM]	= "sysv_shm shmdt",
};

/*
 * IDLE -> HOT (the reader writes the watched pages) -> WATCH (the watcher
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
/* Kept until the watch is over: the file or segment keeps its pages */
static int memfd = -1, shmid = -1;
static long page_size;
static uint64_t pfn[TABLES];
static int kpagecount = -1, kpageflags = -1;
static unsigned int phase, operation;
static int passes, started, unmapped;
static int reader_bound, watcher_bound, reader_done, watcher_done;
/* The reader has left its warm-up loop, where a fault is not expected */
static int reader_watching;
/* Watched pages, in order, whose count the watcher saw at 0 */
static int zeroed;
/* Whether the unmap had returned when the watcher saw each count at 0 */
static bool done_at_zero[TABLES];
/*
 * Pages the reader read after their count went to 0, printed once the
 * operation is over: a printf() of the reader's could fault (its buffer),
 * which would make the operation look disturbed.
 */
static bool read_stale[TABLES];
/*
 * What one operation saw: pages looked at, stale reads, those with no
 * fault served to the reader before them, errors, faults served in all
 */
static unsigned long looked, stale, stale_unserved, errors, served;
/* Faults served to the reader before the operation (its first HOT pass) */
static unsigned long served_before;
static int rusage_failed;
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
 * Where the reader reads in page-table span @i: its first page (the first
 * whose rmap goes), at @i * 4K into it with 64K pages (page @i with 4K
 * pages). Watched addresses 2MB apart would all fall in one set of a TLB
 * indexed by 4K page number and evict one another.
 */
static uint64_t *watched(int i)
{
	return (uint64_t *)(area + i * TLBIE_PMD_SPAN + i * 4096UL);
}

/* Faults the kernel served to the calling thread (not those it signalled) */
static unsigned long faults_served(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru)) {
		__atomic_store_n(&rusage_failed, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return ru.ru_minflt + ru.ru_majflt;
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
	static int armed;	/* static: it must hold its value across siglongjmp() */
	int i;

	for (i = 0; i < TABLES; i++) {
		if (sigsetjmp(fault_jmp, 1)) {
			if (__atomic_load_n(&armed, __ATOMIC_RELAXED))
				looked++;
			continue;
		}
		__atomic_store_n(&armed, 0, __ATOMIC_RELAXED);
		for (;;) {
			bool zero, now;

			/* Past page 0, page @i - 1 faulted (or read stale): the zap is here */
			now = i || __atomic_load_n(&started, __ATOMIC_ACQUIRE);
			zero = __atomic_load_n(&zeroed, __ATOMIC_ACQUIRE) > i;
			__atomic_load_n(watched(i), __ATOMIC_RELAXED);
			if (zero) {
				/* The read is made: a system call now costs nothing */
				stale++;
				stale_unserved += faults_served() == served_before;
				read_stale[i] = true;
				break;
			}
			if (now)
				__atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
			if (__atomic_load_n(&watcher_done, __ATOMIC_ACQUIRE) &&
			    __atomic_load_n(&zeroed, __ATOMIC_ACQUIRE) <= i)
				return;
		}
	}
}

/*
 * Take one fault through the handler, so that what a fault touches the
 * first time (this thread's TLS, its stack under a signal frame) is
 * faulted in now and not counted against the first operation; 0 or -1.
 */
static int rehearse_fault(void)
{
	void *p = mmap(NULL, page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	__atomic_store_n(&fault_jmp_set, 1, __ATOMIC_RELAXED);
	if (!sigsetjmp(fault_jmp, 1))
		__atomic_load_n((uint64_t *)p, __ATOMIC_RELAXED);
	__atomic_store_n(&fault_jmp_set, 0, __ATOMIC_RELAXED);
	munmap(p, page_size);
	return 0;
}

static void *reader(void *arg)
{
	unsigned int word, ph, last = 0, hot = 0;
	int i;

	if (tlbie_bind_cpu((long)arg) || rehearse_fault()) {
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
			if (word >> PHASE_BITS != hot) {
				hot = word >> PHASE_BITS;
				served_before = faults_served();
			}
			/* A write: the PTE is dirty, so the zap delays the rmap */
			for (i = 0; i < TABLES; i++)
				__atomic_store_n(watched(i), i, __ATOMIC_RELAXED);
			__atomic_add_fetch(&passes, 1, __ATOMIC_RELEASE);
		} else if (ph == WATCH && word >> PHASE_BITS != last) {
			last = word >> PHASE_BITS;
			__atomic_store_n(&reader_watching, 1, __ATOMIC_RELEASE);
			/* each page's sigsetjmp() comes before its first read */
			__atomic_store_n(&fault_jmp_set, 1, __ATOMIC_RELAXED);
			read_zeroed();
			__atomic_store_n(&fault_jmp_set, 0, __ATOMIC_RELAXED);
			served = faults_served() - served_before;
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

/* Undo map() */
static void unmap(enum kind kind, size_t len)
{
	if (kind == SHM)
		shmdt(area);
	else
		munmap(area, len);
}

/* Let the file or segment go */
static void release(void)
{
	if (memfd >= 0)
		close(memfd);
	if (shmid >= 0)
		shmctl(shmid, IPC_RMID, NULL);
	memfd = -1;
	shmid = -1;
}

/*
 * Map the file or segment again (read-only) and tell whether page @i of it
 * still lives at the frame the watcher watched; a page migrated during the
 * operation does not, and reads as stale through its new mapping.
 */
static bool still_at(int pagemap, size_t len, int i)
{
	char *p;
	uint64_t frame;
	size_t off = (char *)watched(i) - area;

	if (shmid >= 0)
		p = shmat(shmid, NULL, SHM_RDONLY);
	else
		p = mmap(NULL, len, PROT_READ, MAP_SHARED, memfd, 0);
	if (p == MAP_FAILED || p == (void *)-1)
		return false;
	__atomic_load_n((uint64_t *)(p + off), __ATOMIC_RELAXED);
	frame = frame_of(pagemap, p + off);
	if (shmid >= 0)
		shmdt(p);
	else
		munmap(p, len);
	if (frame != pfn[i])
		printf("page %d moved, frame %#llx to %#llx\n", i,
		       (unsigned long long)pfn[i], (unsigned long long)frame);
	return frame == pfn[i];
}

/* Map and dirty @len bytes of @kind at a page-table boundary; 0 or -1 */
static int map(enum kind kind, size_t len)
{
	char *base, *end;

	if (kind == SHM) {
		shmid = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
		if (shmid < 0)
			return -1;
	} else {
		memfd = memfd_create("tlbie_rmap", 0);
		if (memfd < 0 || ftruncate(memfd, len)) {
			release();
			return -1;
		}
	}
	base = mmap(NULL, len + TLBIE_PMD_SPAN, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		release();
		return -1;
	}
	/* Over the reservation, which is then trimmed: nothing else maps there */
	if (kind == SHM) {
		area = shmat(shmid, tlbie_pmd_align(base), SHM_REMAP);
		if (area == (void *)-1)
			area = MAP_FAILED;
	} else {
		area = mmap(tlbie_pmd_align(base), len, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_FIXED, memfd, 0);
	}
	if (area == MAP_FAILED) {
		munmap(base, len + TLBIE_PMD_SPAN);
		release();
		return -1;
	}
	end = base + len + TLBIE_PMD_SPAN;
	if (area > base)
		munmap(base, area - base);
	if (area + len < end)
		munmap(area + len, end - (area + len));
	/* Small pages: a page table per batch */
	madvise(area, len, MADV_NOHUGEPAGE);
	memset(area, 0x5a, len);
	return 0;
}

/*
 * Find each watched page's frame, which must be a small page mapped once:
 * true, else false with why (a page being migrated, say: the operation is
 * taken again). A page migrated after this makes the reader's next write
 * fault, which the kernel serves: that operation is not judged.
 */
static bool find_frames(enum kind kind, int pagemap)
{
	uint64_t count, flags;
	int i;

	for (i = 0; i < TABLES; i++) {
		pfn[i] = frame_of(pagemap, watched(i));
		if (!pfn[i] || kpage(kpagecount, pfn[i], &count) ||
		    kpage(kpageflags, pfn[i], &flags)) {
			printf("%s: page %d: no frame, or no count or flags for frame %#llx\n",
			       kind_name[kind], i, (unsigned long long)pfn[i]);
			return false;
		}
		if (count != 1 || flags & (1ULL << KPF_THP)) {
			printf("%s: page %d: frame %#llx mapped %llu times%s: want once, small\n",
			       kind_name[kind], i, (unsigned long long)pfn[i],
			       (unsigned long long)count,
			       flags & (1ULL << KPF_THP) ? ", in a large folio" : "");
			return false;
		}
	}
	return true;
}

enum verdict { JUDGED, NOT_JUDGED, FAILED, ERROR };

/* One operation of @kind */
static enum verdict one(enum kind kind, int pagemap)
{
	size_t len = TABLES * TLBIE_PMD_SPAN;
	bool moved = false;
	int seen, rc, i;

	if (map(kind, len)) {
		perror(kind_name[kind]);
		return ERROR;
	}
	if (!find_frames(kind, pagemap)) {
		unmap(kind, len);
		release();
		return NOT_JUDGED;
	}
	/* Reset here, not in the reader: a first touch of a page would be a fault */
	looked = 0;
	stale = 0;
	stale_unserved = 0;
	memset(read_stale, 0, sizeof(read_stale));
	seen = __atomic_load_n(&passes, __ATOMIC_ACQUIRE);
	__atomic_store_n(&started, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&unmapped, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&zeroed, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&reader_done, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&watcher_done, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&reader_watching, 0, __ATOMIC_RELEASE);
	operation++;	/* never 0, the threads' "none yet" */
	set_phase(HOT);
	wait_for(&passes, seen + 2);	/* translations are cached, PTEs dirty */
	set_phase(WATCH);
	/* Not before: a warm-up write of an unmapped page would be a plain SIGSEGV */
	wait_for(&reader_watching, 1);
	__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	rc = kind == SHM ? shmdt(area) : munmap(area, len);
	__atomic_store_n(&unmapped, 1, __ATOMIC_RELEASE);
	wait_for(&watcher_done, 1);
	wait_for(&reader_done, 1);
	set_phase(IDLE);
	if (rc) {
		perror(kind_name[kind]);
		release();
		return ERROR;
	}
	for (i = 0; i < TABLES; i++) {
		if (!read_stale[i])
			continue;
		printf("page %d read after its count went to 0%s\n",
		       i, done_at_zero[i] ? " (and the unmap returned)" : "");
		moved |= !still_at(pagemap, len, i);
	}
	release();
	printf("%s of %zu kB: %lu of %d watched pages looked at during it, %lu read stale%s\n",
	       kind_name[kind], len >> 10, looked, TABLES, stale,
	       moved ? ", not judged: a page moved" :
	       served && !stale_unserved ? ", not judged: the reader took page faults" : "");
	if (errors) {
		printf("%s: %lu reads of " KPAGECOUNT " failed\n", kind_name[kind], errors);
		return ERROR;
	}
	if (__atomic_load_n(&rusage_failed, __ATOMIC_RELAXED)) {
		perror("getrusage");
		return ERROR;
	}
	/* A page that moved reads through its new mapping: not a stale read */
	if (moved)
		return NOT_JUDGED;
	/* A stale read with no fault served before it: nothing else explains it */
	if (stale_unserved)
		return FAILED;
	if (served)
		return NOT_JUDGED;
	return stale ? FAILED : JUDGED;
}

/* A usable CPU that is neither @a nor @b, -1 if none, -2 on error */
static int third_cpu(int a, int b)
{
	int *usable, nr, i, cpu = -1;

	nr = tlbie_usable_cpus(&usable);
	if (nr < 0)
		return -2;
	for (i = 0; i < nr && cpu < 0; i++)
		if (usable[i] != a && usable[i] != b)
			cpu = usable[i];
	free(usable);
	return cpu;
}

/*
 * Operations of @kind until TRIES were judged and one of those looked at a
 * page, MAX_TRIES at most: true if none failed; *@looks: how many looked.
 */
static bool watch_kind(enum kind kind, int pagemap, int *looks)
{
	int t, judged = 0;
	bool failed = false;

	*looks = 0;
	for (t = 0; t < MAX_TRIES && (judged < TRIES || !*looks); t++) {
		enum verdict v = one(kind, pagemap);

		if (v == ERROR)
			return false;
		if (v == NOT_JUDGED)
			continue;
		judged++;
		*looks += looked > 0;
		if (v == FAILED) {
			failed = true;
			t++;
			break;
		}
	}
	printf("%s: %d operations, %d judged, %d of them looked at a page during it\n",
	       kind_name[kind], t, judged, *looks);
	return !failed;
}

static int test_rmap(void)
{
	int cpus[2], looks[NR_KINDS], pagemap, failed = 0, kind, cpu, nr;
	pthread_t thread, watcher_thread;

	SKIP_IF_MSG(geteuid() != 0, "needs root (page frames from pagemap, " KPAGECOUNT ")");
	SKIP_IF_MSG(access(KPAGECOUNT, R_OK) || access(KPAGEFLAGS, R_OK),
		    "no " KPAGECOUNT " (CONFIG_PROC_PAGE_MONITOR)");
	nr = tlbie_pick_cpus(cpus);
	FAIL_IF(nr < 0);
	SKIP_IF_MSG(nr < 2, "needs three CPUs");
	cpu = third_cpu(cpus[0], cpus[1]);
	FAIL_IF(cpu == -2);
	SKIP_IF_MSG(cpu < 0, "needs three CPUs");
	printf("The watcher on CPU %d\n", cpu);
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
	FAIL_IF_MSG(reader_bound < 0, "the reader cannot bind to its CPU, or map a page");
	FAIL_IF(pthread_create(&watcher_thread, NULL, watcher, (void *)(long)cpu));
	while (!__atomic_load_n(&watcher_bound, __ATOMIC_ACQUIRE))
		sched_yield();
	FAIL_IF_MSG(watcher_bound < 0, "the watcher cannot bind to its CPU");

	for (kind = 0; kind < NR_KINDS; kind++)
		failed |= !watch_kind(kind, pagemap, &looks[kind]);
	set_phase(QUIT);
	pthread_join(thread, NULL);
	pthread_join(watcher_thread, NULL);
	FAIL_IF(failed);
	SKIP_IF_MSG(!looks[MEMFD] || !looks[SHM],
		    "no look during an operation of one kind: nothing measured");
	return 0;
}

int main(void)
{
	return test_harness(test_rmap, "tlbie_rmap");
}
