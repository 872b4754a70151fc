// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * No stale translation outlives a flush, with the radix batch rule
 * ("powerpc/64s/radix: Flush the PID for the batches of a large zap") or
 * without. A reader on another core reads a word of each page, past its
 * first 4K (a flush of the wrong page size leaves the rest of a 64K page),
 * all through the zap (rows below): an early whole-PID flush empties its
 * TLB, and only a reader that refills it shows a later batch's missed
 * flush. After the operation a read must fault or read zero; DONTNEED and
 * punched pages are then written anew through /proc/self/mem (not this
 * CPU's TLB) and must read that. Variants: the reader asleep (its CPU
 * lazily holding the mm) or exited (exit_flush_lazy_tlbs()) during it and
 * started again on its CPU, and each row single-threaded. QEMU empties its
 * TLB on any 2M tlbie: the rows with two page sizes fail on hardware only.
 *
 * rmap rows (root): a third thread watches /proc/kpagecount for the
 * reader's pages; a read that returns after a count went to 0, of a page
 * no longer mapped, means the rmap went before the flush (5df397dec7c4
 * "mm: delay page_remove_rmap() until after the TLB has been flushed").
 * The window is short: only hardware or a stall in radix__tlb_flush() (an
 * instrumented kernel or emulator) shows it. Migrated pages, and reads
 * after a fault served to the reader, are not judged.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL	102
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB		(21 << MAP_HUGE_SHIFT)
#endif

#define PMD_SPAN	(2UL << 20)	/* what a page table maps */
#define HUGE_POOL	"/sys/kernel/mm/hugepages/hugepages-2048kB/"
#define MAX_WATCH	160
#define RMAP_TRIES	3
#define KPF_THP		22		/* include/uapi/linux/kernel-page-flags.h */
#define PUNCH		(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)

enum mem { PRIV, THP, HUGETLB, SHMEM, SHMEM_THP, SYSV };
static const char * const mem_name[] = {
	[PRIV] = "private", [THP] = "thp", [HUGETLB] = "hugetlb",
	[SHMEM] = "memfd", [SHMEM_THP] = "shmem_thp", [SYSV] = "sysv_shm",
};

/* Operations, bits of a row's ops (op_name[] by bit number) */
enum operation {
	OP_MUNMAP = 1, OP_MPROTECT = 2, OP_DONTNEED = 4, OP_SHMDT = 8,
	OP_TRUNCATE = 16, OP_PUNCH = 32, OP_GUARD = 64, OP_END = 128,
	ANON_OPS = OP_MUNMAP | OP_MPROTECT | OP_DONTNEED,
	FILE_OPS = OP_MUNMAP | OP_TRUNCATE | OP_PUNCH,
};

static const char * const op_name[] = {
	"munmap", "mprotect_none", "madv_dontneed", "shmdt", "ftruncate_0",
	"punch_hole", "madv_guard_install"
};

enum ceiling { NO_CEIL, GLOBAL_CEIL, LOCAL_CEIL };
enum sparse { DENSE, SPARSE_LAST, SPARSE_ALL };
/* What the reader does during the operation */
enum reader_mode { READING, ASLEEP, EXITED };
static const char * const mode_name[] = { "", ", reader asleep", ", reader exited" };

/*
 * Length: page tables (HUGETLB: huge pages), pages more (small), a ceiling's
 * more. Sparse: 4 pages in 13 of the last table or every table. A memfd is
 * a page table larger at each end than its mapping; ops spare @mid pages.
 */
static const struct row {
	const char *name;
	enum mem mem;
	int tables, pages, mid;
	enum ceiling ceiling;
	enum sparse sparse;
	enum reader_mode reader;
	bool rmap;		/* watch the mapping counts */
	unsigned int ops;
} rows[] = {
	{ "1 page", PRIV, .pages = 1, .ops = ANON_OPS },
	{ "2 pages", PRIV, .pages = 2, .ops = ANON_OPS },
	{ "ceiling", PRIV, .ceiling = GLOBAL_CEIL, .ops = ANON_OPS },
	{ "ceiling + 1", PRIV, .pages = 1, .ceiling = GLOBAL_CEIL, .ops = ANON_OPS },
	{ "2 tables + 3", PRIV, .tables = 2, .pages = 3, .ops = ANON_OPS },
	{ "local ceiling + 1", PRIV, .pages = 1, .ceiling = LOCAL_CEIL, .ops = ANON_OPS },
	/* Its CPU holds the translations, but the reader does not run */
	{ "2 tables + 3", PRIV, .tables = 2, .pages = 3, .reader = ASLEEP, .ops = ANON_OPS },
	{ "2 tables + 3", PRIV, .tables = 2, .pages = 3, .reader = EXITED, .ops = ANON_OPS },
	/* Two page sizes in one gather */
	{ "2 tables + 3", THP, .tables = 2, .pages = 3, .ops = ANON_OPS },
	{ "2 tables + 3", HUGETLB, .tables = 2, .pages = 3, .ops = ANON_OPS },
	{ "2 tables + 3", SHMEM_THP, .tables = 2, .pages = 3, .ops = FILE_OPS },
	/* Shared dirty pages: a batch per page table */
	{ "2 tables + 3", SYSV, .tables = 2, .pages = 3, .ops = OP_SHMDT },
	{ "64 tables", SYSV, .tables = 64, .rmap = true, .ops = OP_SHMDT },
	{ "2 tables + 3", SHMEM, .tables = 2, .pages = 3, .ops = OP_MUNMAP | OP_DONTNEED },
	{ "64 tables", SHMEM, .tables = 64, .rmap = true, .ops = OP_MUNMAP },
	/* A whole-PID batch, then 3 pages, and no page table freed after */
	{ "table + 3", SHMEM, .tables = 1, .pages = 3, .ops = FILE_OPS },
	{ "table + 3", SHMEM, .tables = 1, .pages = 3, .reader = ASLEEP, .ops = FILE_OPS },
	/* The last batch partial and sparse, its pages read during the zap */
	{ "8 tables + sparse 20", SHMEM, .tables = 8, .pages = 20, .sparse = SPARSE_LAST,
	  .ops = FILE_OPS },
	{ "8 sparse tables + 20", SHMEM, .tables = 8, .pages = 20, .sparse = SPARSE_ALL,
	  .ops = FILE_OPS },
	/* zap_vma_range() of the middle of a VMA */
	{ "middle of 16 tables", SHMEM, .tables = 16, .mid = 5, .ops = OP_DONTNEED | OP_GUARD },
};

/* A read may return: anything; old or a fault; a fault or 0; anything; the new data */
enum phase { WARM, DURING, GONE, WRITING, NEW };

static struct word {
	uint64_t *addr, old, pfn;
	int count_zero;		/* the watcher saw the mapping count at 0 */
	bool hot, dead, bad;	/* the reader's */
} words[MAX_WATCH];
static int nr_words, phase, stop, passes;
static int watching;		/* the watcher: 1 reading counts, -1 stopped */
static int parking, parked;	/* the reader: to sleep or exit after a pass */
static pid_t reader_tid;
static pthread_t reader_thread;
static bool must_fault;
/* What one operation's reads saw */
static struct {
	long stale, stale_rmap, looked, zeros, after_zero, moved, served;
	uint64_t value;		/* the first stale read's value */
	int first;
} seen;

/* The row's mapping: nr_pages at base, in a reservation; its memfd */
static char *base, *reservation;
static size_t reservation_len, file_len;
static long nr_pages, page_size, per_table;
static int memfd = -1, proc_mem = -1, wake_pipe[2];
static int ceiling_pages[] = { [GLOBAL_CEIL] = 33, [LOCAL_CEIL] = 256 }, cpus[3], nr_cpus;
static int kpagecount = -1, kpageflags = -1, pagemap = -1;
static bool no_hugetlb, watchable;
static char *guard_page;
static __thread sigjmp_buf fault_jmp;
static __thread const uint64_t *probing;

static void fault(int sig, siginfo_t *info, void *ctx)
{
	if (!probing || info->si_addr != probing) {	/* not a probe: die of it */
		signal(sig, SIG_DFL);
		return;
	}
	siglongjmp(fault_jmp, 1);
}

/* Read *@p into *@v, false if it faults. No mask saved: SA_NODEFER */
static bool probe(const uint64_t *p, uint64_t *v)
{
	if (sigsetjmp(fault_jmp, 0)) {
		probing = NULL;
		return false;
	}
	probing = p;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*v = __atomic_load_n(p, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	probing = NULL;
	return true;
}

/* @p's /proc/self/pagemap entry in *@e (bit 63: present); false if unread */
static bool pagemap_entry(const void *p, uint64_t *e)
{
	return pread(pagemap, e, 8, (uintptr_t)p / page_size * 8) == 8;
}

/* Read each word once; judge the reads the phase (or a count at 0) rules on */
static void read_words(void)
{
	bool after_zero, ok;
	uint64_t v = 0, e;
	struct word *x;
	int ph;

	for (x = words; x < words + nr_words; x++) {
		ph = __atomic_load_n(&phase, __ATOMIC_ACQUIRE);
		after_zero = ph == DURING && __atomic_load_n(&x->count_zero, __ATOMIC_ACQUIRE);
		if (x->dead)
			continue;
		ok = probe(x->addr, &v);
		if (!ok || v != x->old) {
			seen.looked += x->hot;	/* read during the op, then gone */
			x->hot = false;
			x->dead = !ok && must_fault;
		} else if (ph == DURING) {
			x->hot = true;
		}
		if (x->bad || (ph != GONE && ph != NEW && !after_zero))
			continue;
		seen.after_zero += after_zero;
		x->bad = ph == NEW ? !ok || v != ~x->old : ok && (must_fault || v);
		/* Mapped again (or pagemap cannot tell): migrated, read through it */
		if (x->bad && after_zero && (!pagemap_entry(x->addr, &e) || e >> 63)) {
			seen.moved++;
			x->bad = false;
			x->dead = true;
		}
		if (!x->bad)
			continue;
		if (!seen.stale && !seen.stale_rmap) {
			seen.first = x - words;
			seen.value = ok ? v : 0;
		}
		if (after_zero)
			seen.stale_rmap++;
		else
			seen.stale++;
	}
}

static void *reader(void *arg)
{
	struct rusage ru[2];
	bool running = false;
	uint64_t v;
	int park;
	char c;

	FAIL_IF_EXIT(tlbie_bind((long)arg));
	reader_tid = gettid();
	probe((uint64_t *)guard_page, &v);	/* fault in what a fault touches */
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		if (!running && __atomic_load_n(&phase, __ATOMIC_ACQUIRE) >= DURING)
			running = !getrusage(RUSAGE_THREAD, &ru[0]);
		read_words();
		__atomic_add_fetch(&passes, 1, __ATOMIC_RELEASE);
		park = __atomic_load_n(&parking, __ATOMIC_ACQUIRE);
		if (park == EXITED)
			return NULL;
		if (park == ASLEEP) {
			__atomic_store_n(&parked, 1, __ATOMIC_RELEASE);
			if (read(wake_pipe[0], &c, 1) != 1)
				return NULL;
		}
	}
	getrusage(RUSAGE_THREAD, &ru[1]);
	/* Page faults served to it during the operation, swap-ins too */
	if (running)
		seen.served = ru[1].ru_minflt + ru[1].ru_majflt - ru[0].ru_minflt - ru[0].ru_majflt;
	return NULL;
}

/* Each watched page's mapping count, in order, until it is 0 */
static void *watcher(void *arg)
{
	uint64_t count;
	int i;

	FAIL_IF_EXIT(tlbie_bind((long)arg));
	for (i = 0; i < nr_words; i++) {
		do {
			if (pread(kpagecount, &count, 8, words[i].pfn * 8) != 8 ||
			    __atomic_load_n(&phase, __ATOMIC_ACQUIRE) >= GONE)
				goto out;
			__atomic_store_n(&watching, 1, __ATOMIC_RELEASE);
		} while (count);
		__atomic_store_n(&words[i].count_zero, 1, __ATOMIC_RELEASE);
		seen.zeros++;
	}
out:
	__atomic_store_n(&watching, -1, __ATOMIC_RELEASE);
	return NULL;
}

/* The state (R, S, ...) of thread @tid, 0 once it is gone */
static char task_state(pid_t tid)
{
	char path[64], buf[512], *p;
	size_t len;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (read_file(path, buf, sizeof(buf) - 1, &len))
		return 0;
	buf[len] = 0;
	p = strrchr(buf, ')');
	return p && p + 2 < buf + len ? p[2] : 0;
}

/* After its warm-up, the reader blocks in read(), or exits and leaves the mm */
static void park_reader(enum reader_mode mode)
{
	__atomic_store_n(&parking, mode, __ATOMIC_RELEASE);
	if (mode == EXITED)
		pthread_join(reader_thread, NULL);
	while (mode == EXITED ? task_state(reader_tid) :
	       mode == ASLEEP && (!parked || task_state(reader_tid) == 'R'))
		usleep(1000);
}

/* Enter phase @ph (the reader back), and let its reads come twice */
static void settle(int ph, bool threads)
{
	int target = __atomic_load_n(&passes, __ATOMIC_ACQUIRE) + 2;

	__atomic_store_n(&phase, ph, __ATOMIC_RELEASE);
	if (!threads) {
		read_words();
		return;
	}
	if (parking == ASLEEP) {
		parked = 0;
		__atomic_store_n(&parking, READING, __ATOMIC_RELEASE);
		FAIL_IF_EXIT(write(wake_pipe[1], "", 1) != 1);
	} else if (parking == EXITED) {
		parking = READING;
		FAIL_IF_EXIT_MSG(pthread_create(&reader_thread, NULL, reader,
						(void *)(long)cpus[1]), "cannot start a thread");
	}
	while (__atomic_load_n(&passes, __ATOMIC_ACQUIRE) < target)
		;
}

static int map_row(const struct row *r)
{
	int flags = MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, id;
	size_t len, off = 0;

	nr_pages = r->tables * per_table + r->pages + ceiling_pages[r->ceiling];
	len = nr_pages * page_size;
	reservation_len = len + PMD_SPAN;
	reservation = mmap(NULL, reservation_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (reservation == MAP_FAILED)
		return -1;
	base = (char *)(((uintptr_t)reservation + PMD_SPAN - 1) & ~(PMD_SPAN - 1));
	if (r->mem == SYSV) {
		id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
		if (id < 0)
			return -1;
		base = shmat(id, base, SHM_REMAP);
		shmctl(id, IPC_RMID, NULL);
		return base == (void *)-1 ? -1 : madvise(base, len, MADV_NOHUGEPAGE);
	}
	if (r->mem == SHMEM || r->mem == SHMEM_THP) {
		off = PMD_SPAN;
		file_len = len + 2 * off;
		memfd = memfd_create("tlbie_stale", 0);
		if (memfd < 0 || ftruncate(memfd, file_len))
			return -1;
		flags = MAP_FIXED | MAP_SHARED;
	} else if (r->mem == HUGETLB) {
		len = r->tables * PMD_SPAN;
		if (mmap(base + len, r->pages * page_size, PROT_READ | PROT_WRITE,
			 flags, -1, 0) == MAP_FAILED)
			return -1;
		flags |= MAP_HUGETLB | MAP_HUGE_2MB;
	}
	if (mmap(base, len, PROT_READ | PROT_WRITE, flags, memfd, off) == MAP_FAILED)
		return -1;
	if (r->mem == PRIV || r->mem == SHMEM)
		madvise(base, len, MADV_NOHUGEPAGE);
	return 0;
}

/*
 * Fill the pages and choose the words read in [@lo, @hi): the first and last
 * tables' and each other's first page, or a sparse last table's only
 */
static void fill(const struct row *r, long lo, long hi)
{
	uint64_t cookie = (uint64_t)random() << 32 ^ random(), *p;
	long j, k, t, last = (nr_pages - 1) / per_table, chunks = page_size / 4096;

	for (j = 0, nr_words = 0; j < nr_pages; j++) {
		k = j % per_table;
		t = j / per_table;
		if ((r->sparse == SPARSE_ALL || (r->sparse == SPARSE_LAST && t == last)) &&
		    (k % 4 || k > 15))
			continue;
		p = (uint64_t *)(base + j * page_size +
				 (chunks > 1 ? 1 + j % (chunks - 1) : 0) * 4096);
		*p = cookie ^ (uintptr_t)p;
		if (j < lo || j >= hi || nr_words == MAX_WATCH ||
		    (r->sparse ? t != last : t && t != last && k))
			continue;
		memset(&words[nr_words], 0, sizeof(words[nr_words]));
		words[nr_words].addr = p;
		words[nr_words++].old = *p;
	}
}

/* Each watched page's frame, for the watcher: NULL, or why it cannot watch */
static const char *find_frames(void)
{
	uint64_t e, count, flags;
	int i;

	for (i = 0; i < nr_words; i++) {
		if (!pagemap_entry(words[i].addr, &e) || !(e >> 63))
			return "a page not in /proc/self/pagemap";
		words[i].pfn = e & ((1ULL << 55) - 1);
		if (pread(kpagecount, &count, 8, words[i].pfn * 8) != 8 ||
		    pread(kpageflags, &flags, 8, words[i].pfn * 8) != 8)
			return "cannot read /proc/kpagecount or /proc/kpageflags";
		if (flags & (1ULL << KPF_THP))
			return "THP (shmem_enabled=force?): one count for many pages";
		if (count != 1)
			return "a page mapped more than once";
	}
	return NULL;
}

static int apply(enum operation op, char *a, size_t len)
{
	switch (op) {
	case OP_MUNMAP:
		return munmap(a, len);
	case OP_MPROTECT:
		return mprotect(a, len, PROT_NONE);
	case OP_DONTNEED:
		return madvise(a, len, MADV_DONTNEED);
	case OP_SHMDT:
		return shmdt(a);
	case OP_TRUNCATE:
		return ftruncate(memfd, 0);
	case OP_PUNCH:
		return fallocate(memfd, PUNCH, 0, file_len);
	default:
		return madvise(a, len, MADV_GUARD_INSTALL);
	}
}

/* One operation: 0 passed, 1 failed, -1 not judged; *@rmap false if not watched */
static int run_op(const struct row *r, enum operation op, bool threads, bool *rmap)
{
	/* A memfd's pages stay in the file after DONTNEED: punch them too */
	bool keep = op == OP_DONTNEED && r->mem >= SHMEM;
	/* Each page the reader faults in makes MADV_GUARD_INSTALL zap again */
	enum reader_mode mode = !threads ? READING : op == OP_GUARD ? ASLEEP : r->reader;
	bool refill = op == OP_DONTNEED || op == OP_PUNCH;
	const char *name = op_name[__builtin_ctz(op)], *why;
	long lo = r->mid, hi, huge = -1, i;
	int rc;
	pthread_t wt;
	uint64_t v;

	if (map_row(r)) {
		perror(mem_name[r->mem]);
		return 1;
	}
	hi = nr_pages - r->mid;
	fill(r, lo, hi);
	/* Regardless of the THP settings */
	if (r->mem == THP || r->mem == SHMEM_THP)
		huge = !madvise(base, r->tables * PMD_SPAN, MADV_COLLAPSE);
	why = *rmap ? find_frames() : NULL;
	if (why)
		printf("rmap: %s %s not watched: %s\n", mem_name[r->mem], r->name, why);
	*rmap = *rmap && !why;
	must_fault = !refill;
	memset(&seen, 0, sizeof(seen));
	stop = 0;
	passes = 0;
	watching = 0;
	parking = READING;
	parked = 0;
	phase = WARM;

	if (threads) {
		FAIL_IF_EXIT_MSG(pthread_create(&reader_thread, NULL, reader,
						(void *)(long)cpus[1]), "cannot start a thread");
		if (*rmap)
			FAIL_IF_EXIT(pthread_create(&wt, NULL, watcher, (void *)(long)cpus[2]));
		settle(WARM, threads);	/* translations cached */
		while (*rmap && !__atomic_load_n(&watching, __ATOMIC_ACQUIRE))
			;
		park_reader(mode);
	}
	__atomic_store_n(&phase, DURING, __ATOMIC_RELEASE);
	rc = apply(op, base + lo * page_size, (hi - lo) * page_size);
	if (!rc && keep)
		rc = fallocate(memfd, PUNCH, PMD_SPAN + lo * page_size, (hi - lo) * page_size);
	settle(GONE, threads);
	if (!rc && refill) {
		/* A freed page with a live translation now reads other data */
		settle(WRITING, threads);
		for (i = 0; i < nr_words; i++) {
			v = ~words[i].old;
			FAIL_IF_EXIT_MSG(pwrite(proc_mem, &v, 8, (uintptr_t)words[i].addr) != 8,
					 "cannot write through /proc/self/mem");
		}
		settle(NEW, threads);
	}
	if (threads) {
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		pthread_join(reader_thread, NULL);
		if (*rmap)
			pthread_join(wt, NULL);
	}
	munmap(reservation, reservation_len);
	if (memfd >= 0)
		close(memfd);
	memfd = -1;
	if (rc) {
		perror(name);
		return op != OP_GUARD;	/* not in older kernels */
	}

	printf("%s: %s %s%s%s, %s (%ld pages, %d read): %ld stale",
	       threads ? "2 threads" : "1 thread", mem_name[r->mem], r->name,
	       huge < 0 ? "" : huge ? " THP" : " (no THP)", mode_name[mode], name,
	       hi - lo, nr_words, seen.stale);
	if (threads && mode == READING)
		printf(", %ld seen going during it", seen.looked);
	if (*rmap)
		printf("; %ld counts seen at 0, %ld reads after, %ld stale%s, %ld moved",
		       seen.zeros, seen.after_zero, seen.stale_rmap,
		       seen.served ? " (faults served: not judged)" : "", seen.moved);
	printf("\n");
	if (seen.stale || seen.stale_rmap)
		printf("stale: word %d read %#llx, old %#llx\n", seen.first,
		       (unsigned long long)seen.value, (unsigned long long)words[seen.first].old);
	if (seen.stale || (seen.stale_rmap && !seen.served))
		return 1;
	return seen.stale_rmap ? -1 : 0;
}

static int run_row(const struct row *r, enum operation op, bool threads)
{
	bool rmap = threads && r->rmap && watchable;
	int t, v;

	if ((r->mem == HUGETLB && no_hugetlb) || (!threads && r->reader != READING))
		return 0;
	/* rmap: again until a judged read came after a count reached 0 */
	for (t = 0; t < (rmap ? RMAP_TRIES : 1); t++) {
		v = run_op(r, op, threads, &rmap);
		if (v > 0 || !rmap || (!v && seen.after_zero))
			return v > 0;
	}
	printf("rmap: %s %s: no judged read after a count reached 0 in %d tries\n",
	       mem_name[r->mem], r->name, t);
	return 0;
}

/* 2 free huge pages, which root may add (main() restores the pool) */
static bool find_huge_pages(void)
{
	long free_, resv, nr;

	if (read_long(HUGE_POOL "free_hugepages", &free_, 10) ||
	    read_long(HUGE_POOL "resv_hugepages", &resv, 10) ||
	    read_long(HUGE_POOL "nr_hugepages", &nr, 10))
		return false;
	return free_ - resv >= 2 ||
	       (!write_long(HUGE_POOL "nr_hugepages", nr + 2, 10) &&
		!read_long(HUGE_POOL "free_hugepages", &free_, 10) && free_ - resv >= 2);
}

static int test_stale(void)
{
	struct sigaction sa = { .sa_sigaction = fault, .sa_flags = SA_SIGINFO | SA_NODEFER };
	int failed = 0, threads;
	unsigned int i, op;
	bool hash;

	SKIP_IF_MSG(using_hash_mmu(&hash) || hash, "radix MMU not in use");
	nr_cpus = tlbie_usable_cpus(cpus, ARRAY_SIZE(cpus));
	SKIP_IF_MSG(nr_cpus < 2, "needs two CPUs");
	page_size = sysconf(_SC_PAGESIZE);
	per_table = PMD_SPAN / page_size;
	srandom(time(NULL) ^ getpid());
	read_debugfs_int(TLBIE_GLOBAL_CEILING, &ceiling_pages[GLOBAL_CEIL]);
	read_debugfs_int(TLBIE_LOCAL_CEILING, &ceiling_pages[LOCAL_CEIL]);
	printf("main thread on CPU %d, reader on %d; ceilings: global %d, local %d pages\n",
	       cpus[0], cpus[1], ceiling_pages[GLOBAL_CEIL], ceiling_pages[LOCAL_CEIL]);
	no_hugetlb = !find_huge_pages();
	if (no_hugetlb)
		printf("hugetlb rows not measured: too few free 2MB huge pages\n");
	proc_mem = open("/proc/self/mem", O_RDWR);
	SKIP_IF_MSG(proc_mem < 0, "cannot open /proc/self/mem to write new data");
	FAIL_IF(pipe(wake_pipe));
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	kpagecount = open("/proc/kpagecount", O_RDONLY);	/* root's */
	kpageflags = open("/proc/kpageflags", O_RDONLY);
	watchable = kpagecount >= 0 && kpageflags >= 0 && pagemap >= 0 && nr_cpus > 2;
	if (!watchable)
		printf("rmap not watched: needs root, /proc/kpagecount, kpageflags and 3 CPUs\n");

	guard_page = mmap(NULL, page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FAIL_IF(guard_page == MAP_FAILED);
	FAIL_IF(sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL));
	FAIL_IF(tlbie_bind(cpus[0]));
	/* Without the reader first: flushes are local until a thread has run */
	for (threads = 0; threads < 2; threads++)
		for (i = 0; i < ARRAY_SIZE(rows); i++)
			for (op = 1; op < OP_END; op <<= 1)
				if (rows[i].ops & op)
					failed |= run_row(&rows[i], op, threads);
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	long nr = -1;
	int rc;

	read_long(HUGE_POOL "nr_hugepages", &nr, 10);
	rc = test_harness(test_stale, "tlbie_stale");
	if (nr >= 0 && !geteuid())
		write_long(HUGE_POOL "nr_hugepages", nr, 10);
	return rc;
}
