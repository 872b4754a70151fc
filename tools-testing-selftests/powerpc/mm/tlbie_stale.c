// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * No stale translation survives a flush. A reader thread keeps the
 * translations of a range hot by reading it, then stops touching it; once
 * the main thread's munmap(), shmdt(), mprotect(PROT_NONE) or
 * MADV_DONTNEED of the range has returned, the reader reads every page
 * once more:
 *  - after munmap(), shmdt() and PROT_NONE, every read must fault: a read
 *    that returns anything at all went through a stale translation;
 *  - after ftruncate() of a memfd to 0, every read must fault (SIGBUS);
 *  - after MADV_DONTNEED of private memory, or a hole punched in a memfd,
 *    every read must return zero.
 *    Each page held its index and a cookie drawn for the case, so its old
 *    data is recognised, and anything else but zero (another page's data,
 *    what a freed and reused page holds now) is stale too. A freed page
 *    may have been reused and zeroed, and read zero through a stale
 *    translation: so the reader also writes a mark to each page, which the
 *    main thread must then read back through its own translation (a write
 *    through a stale one lands in the freed page instead).
 * Each page is read at its first and at its last word: a flush of the
 * wrong size (4K where the page is 64K) clears the translation of its
 * first 4K only, and hardware, or an emulator that keeps 4K TLB entries,
 * sees the rest stale. A page counts as
 * flushed only if both reads do what they must.
 * The reader runs on another core than the main thread: the SMT threads of
 * a core share its TLB, so a flush wrongly kept local would still clear a
 * sibling thread's translations. The same single-threaded, where the
 * flush is local.
 *
 * The memory:
 *  - private anonymous small pages, 1, 2, a global ceiling's, one more,
 *    2 page tables + 3 and a local ceiling's + 1 pages: radix__tlb_flush()
 *    sees each operation as one batch;
 *  - shared, dirty: a SysV shm segment detached, and MAP_SHARED anonymous
 *    memory unmapped, from a page-table boundary, 2 page tables + 3 pages
 *    and 64 page tables, small pages: core mm flushes shared dirty pages
 *    at the end of each page table, so these are flushed in batches (of
 *    32 pages with 64K pages, each below the global ceiling), each
 *    batch of more than half the ceiling by the whole PID;
 *  - shared, dirty, a memfd mapped MAP_SHARED from a page-table boundary,
 *    one page table + 3 pages, unmapped, truncated to 0 and hole-punched
 *    (fallocate()): a dense batch that flushes the whole PID followed by a
 *    3-page batch flushed page by page. Truncate and hole punch free no
 *    page table, so nothing flushed after the operation's last batch can
 *    hide a missed flush of the first;
 *  - THP, where the kernel has it: private anonymous memory with
 *    MADV_HUGEPAGE, and a memfd (shmem) with MADV_HUGEPAGE where
 *    shmem_enabled allows it, 2 page tables + 3 pages: two huge pages and
 *    small ones;
 *  - hugetlb, MAP_HUGETLB, 3 huge pages (1 if larger than 16MB), where
 *    huge pages can be had (as root, nr_hugepages is raised for the test if
 *    need be, and restored).
 */
#define _GNU_SOURCE
#include <ctype.h>
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
#include <time.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define THP_DIR		"/sys/kernel/mm/transparent_hugepage/"
#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"
#define SHARED_TABLES	64	/* page tables of the large shared cases */

enum kind { PRIVATE, SHM, SHARED, MEMFD, THP, SHMEM_THP, HUGETLB };

static const char * const kind_name[] = {
	[PRIVATE]	= "private",
	[SHM]		= "sysv_shm",
	[SHARED]	= "shared",
	[MEMFD]		= "memfd",
	[THP]		= "thp",
	[SHMEM_THP]	= "shmem_thp",
	[HUGETLB]	= "hugetlb",
};

enum op { OP_MUNMAP, OP_DONTNEED, OP_PROT_NONE, OP_SHMDT, OP_TRUNCATE, OP_PUNCH };

static const char * const op_name[] = {
	[OP_MUNMAP]	= "munmap",
	[OP_DONTNEED]	= "madv_dontneed",
	[OP_PROT_NONE]	= "mprotect_none",
	[OP_SHMDT]	= "shmdt",
	[OP_TRUNCATE]	= "ftruncate_0",
	[OP_PUNCH]	= "punch_hole",
};

/* What the reader writes to page @i after MADV_DONTNEED */
#define MARK(i)		(~cookie ^ (i))

/*
 * IDLE -> HOT (reader loops over the pages) -> HOLD (reader stops touching
 * them, its TLB still holds them: HELD) -> main thread unmaps -> CHECK ->
 * CHECKED (reader read each page once more) -> IDLE.
 */
enum { IDLE, HOT, HOLD, HELD, CHECK, CHECKED, QUIT };

static char *area;
static int memfd = -1;		/* the file behind area, for MEMFD */
static unsigned long nr_pages;
static long page_size;
static uint64_t cookie;
static bool mark;		/* the reader marks each page it reads */
static int phase, passes;
static int reader_bound;	/* 1 once bound, -1 if binding failed */
static unsigned long faults, zeroes, old, other;
static unsigned long tail_bad;	/* pages whose last word says otherwise */
static __thread sigjmp_buf fault_jmp;

static void fault(int sig, siginfo_t *info, void *ctx)
{
	siglongjmp(fault_jmp, 1);
}

/* The last word of page @i, and what the fill wrote there */
static uint64_t *tail(unsigned long i)
{
	return (uint64_t *)(area + (i + 1) * page_size) - 1;
}

#define TAIL(i)		(~cookie ^ (i))

/*
 * 0 if the last word of page @i faults, 1 if it reads zero, 2 if it
 * reads its old data, 3 anything else.
 */
static int probe_tail(unsigned long i)
{
	uint64_t w;

	if (sigsetjmp(fault_jmp, 1))
		return 0;
	w = __atomic_load_n(tail(i), __ATOMIC_RELAXED);
	return !w ? 1 : w == TAIL(i) ? 2 : 3;
}

/*
 * Read every page once; count faults, zeroes, old data and other data at
 * its first word, and the pages whose last word reads otherwise.
 */
static void check_pages(void)
{
	unsigned long i;

	faults = 0;
	zeroes = 0;
	old = 0;
	other = 0;
	tail_bad = 0;
	for (i = 0; i < nr_pages; i++) {
		uint64_t *p = (uint64_t *)(area + i * page_size), w0, w1;

		if (sigsetjmp(fault_jmp, 1)) {
			faults++;
			if (probe_tail(i) != 0)
				tail_bad++;
			continue;
		}
		w0 = __atomic_load_n(&p[0], __ATOMIC_RELAXED);
		w1 = __atomic_load_n(&p[1], __ATOMIC_RELAXED);
		if (!w0 && !w1)
			zeroes++;
		else if (w0 == cookie && w1 == i)
			old++;
		else
			other++;
		if (mark)
			__atomic_store_n(&p[2], MARK(i), __ATOMIC_RELAXED);
		if (probe_tail(i) != 1)
			tail_bad++;
	}
}

static void keep_hot(void)
{
	unsigned long i;

	for (i = 0; i < nr_pages; i++) {
		(void)__atomic_load_n(&area[i * page_size], __ATOMIC_RELAXED);
		(void)__atomic_load_n(tail(i), __ATOMIC_RELAXED);
	}
}

static void *reader(void *arg)
{
	int cpu = (long)arg, ph;

	if (tlbie_bind_cpu(cpu)) {
		__atomic_store_n(&reader_bound, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&reader_bound, 1, __ATOMIC_RELEASE);
	while ((ph = __atomic_load_n(&phase, __ATOMIC_ACQUIRE)) != QUIT) {
		if (ph == HOT) {
			keep_hot();
			__atomic_add_fetch(&passes, 1, __ATOMIC_RELEASE);
		} else if (ph == HOLD) {
			__atomic_store_n(&phase, HELD, __ATOMIC_RELEASE);
		} else if (ph == CHECK) {
			check_pages();
			__atomic_store_n(&phase, CHECKED, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void set_phase(int ph)
{
	__atomic_store_n(&phase, ph, __ATOMIC_RELEASE);
}

static void wait_for(int *var, int val)
{
	while (__atomic_load_n(var, __ATOMIC_ACQUIRE) < val)
		;
}

/* The value of @key in /proc/meminfo, -1 if none */
static long read_meminfo(const char *key)
{
	return tlbie_proc_value("/proc/meminfo", key);
}

/* @field (e.g. "AnonHugePages:") of the VMA at @addr in smaps, kB; -1 if none */
static long smaps_kb(void *addr, const char *field)
{
	char line[256], start[32];
	bool in = false;
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), f)) {
		/* A VMA's first line starts with its address, a field with a capital */
		if (isxdigit(line[0]) && !isupper(line[0]))
			in = !strncmp(line, start, strlen(start));
		else if (in && !strncmp(line, field, strlen(field)) &&
			 sscanf(line + strlen(field), "%ld", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * NULL if @need free huge pages of the default size can be had, adding
 * them to the pool as root if need be; else why not. *@size: their size.
 */
static const char *hugetlb_unavailable(unsigned long *need, size_t *size)
{
	long kb = read_meminfo("Hugepagesize:"), avail, nr;
	char want[24];

	if (kb <= 0)
		return "no hugetlb in this kernel";
	*size = (size_t)kb << 10;
	*need = *size <= 8 * TLBIE_PMD_SPAN ? 3 : 1;
	avail = read_meminfo("HugePages_Free:") - read_meminfo("HugePages_Rsvd:");
	if (avail >= (long)*need)
		return NULL;
	if (geteuid() != 0)
		return "too few free huge pages, and only root may add some";
	if (read_long(NR_HUGEPAGES, &nr, 10))
		return "cannot read " NR_HUGEPAGES;
	snprintf(want, sizeof(want), "%ld", nr + *need - avail);
	if (tlbie_write_restored(NR_HUGEPAGES, want))
		return "cannot write " NR_HUGEPAGES;
	avail = read_meminfo("HugePages_Free:") - read_meminfo("HugePages_Rsvd:");
	printf("nr_hugepages %ld -> %s: %ld huge pages free\n", nr, want, avail);
	if (avail < (long)*need)
		return "cannot allocate huge pages";
	return NULL;
}

/* NULL if THP of a page table's size can be had where @file says, else why not */
static const char *thp_unavailable(const char *file)
{
	long size;

	switch (tlbie_thp_mode(file)) {
	case -1:
		return "no THP in this kernel";
	case 0:
		return "THP disabled";
	}
	if (read_long(THP_DIR "hpage_pmd_size", &size, 10) || size != TLBIE_PMD_SPAN)
		return "THP are not a page table's size";
	return NULL;
}

/* Where area was mapped from a reservation, what else to unmap at the end */
struct region {
	char *base;		/* NULL: no reservation */
	size_t base_len;
};

/* Map @len bytes of @kind at area; 0, or -1 with errno */
static int map_region(enum kind kind, size_t len, struct region *r)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS, fd = -1;

	memset(r, 0, sizeof(*r));
	switch (kind) {
	case PRIVATE:
	case HUGETLB:
		if (kind == HUGETLB)
			flags |= MAP_HUGETLB;
		area = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
		if (area == MAP_FAILED)
			return -1;
		if (kind == PRIVATE)
			madvise(area, len, MADV_NOHUGEPAGE);
		return 0;
	case SHM:
		area = tlbie_shm_attach(len);
		if (!area)
			return -1;
		/* Small pages, flushed in batches of a page table's */
		madvise(area, len, MADV_NOHUGEPAGE);
		return 0;
	case SHARED:
		flags = MAP_SHARED | MAP_ANONYMOUS;
		break;
	case MEMFD:
	case SHMEM_THP:
		fd = memfd_create("tlbie_stale", 0);
		if (fd < 0)
			return -1;
		if (ftruncate(fd, len)) {
			close(fd);
			return -1;
		}
		flags = MAP_SHARED;
		break;
	default:
		break;
	}

	/* From a page-table boundary: reserve room, map there */
	r->base_len = len + TLBIE_PMD_SPAN;
	r->base = mmap(NULL, r->base_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	area = mmap(tlbie_pmd_align(r->base), len, PROT_READ | PROT_WRITE,
		    flags | MAP_FIXED, fd, 0);
	if (kind == MEMFD && area != MAP_FAILED)
		memfd = fd;	/* truncated or punched, closed after the case */
	else if (fd >= 0)
		close(fd);
	if (area == MAP_FAILED)
		return -1;
	if (kind == THP || kind == SHMEM_THP)
		return madvise(area, len, MADV_HUGEPAGE);
	madvise(area, len, MADV_NOHUGEPAGE);
	return 0;
}

static int apply(enum op op, size_t len)
{
	switch (op) {
	case OP_MUNMAP:
		return munmap(area, len);
	case OP_DONTNEED:
		return madvise(area, len, MADV_DONTNEED);
	case OP_PROT_NONE:
		return mprotect(area, len, PROT_NONE);
	case OP_TRUNCATE:
		return ftruncate(memfd, 0);
	case OP_PUNCH:
		return fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, len);
	default:
		return shmdt(area);
	}
}

/* The huge pages backing area, for the kinds that have them; -1 if none */
static long huge_kb(enum kind kind)
{
	switch (kind) {
	case THP:
		return smaps_kb(area, "AnonHugePages:");
	case SHMEM_THP:
		return smaps_kb(area, "ShmemPmdMapped:");
	case HUGETLB:
		return smaps_kb(area, "Private_Hugetlb:");
	default:
		return -1;
	}
}

/* One case; @threaded: another thread reads, else this one. */
static int one(enum kind kind, enum op op, size_t len, bool threaded)
{
	bool want_zero = op == OP_DONTNEED || op == OP_PUNCH;
	unsigned long i, lost = 0;
	struct region r;
	char what[160];
	long huge;
	int rc;

	snprintf(what, sizeof(what), "%s: %s %s of %zu kB", threaded ? "2 threads" : "1 thread",
		 kind_name[kind], op_name[op], len >> 10);
	if (map_region(kind, len, &r)) {
		if (kind != HUGETLB) {
			perror(what);
			return 1;
		}
		printf("%s: not measured, no huge pages to map\n", what);
		return 0;
	}
	nr_pages = len / page_size;
	cookie = ((uint64_t)random() << 33 ^ (uint64_t)random() << 2 ^ random()) | 1;
	mark = threaded && want_zero;
	for (i = 0; i < nr_pages; i++) {
		uint64_t *p = (uint64_t *)(area + i * page_size);

		p[0] = cookie;
		p[1] = i;
		*tail(i) = TAIL(i);
	}
	huge = huge_kb(kind);

	if (threaded) {
		int seen = __atomic_load_n(&passes, __ATOMIC_ACQUIRE);

		set_phase(HOT);
		wait_for(&passes, seen + 2);	/* translations are cached */
		set_phase(HOLD);
		wait_for(&phase, HELD);		/* no access races the unmap */
		rc = apply(op, len);
		set_phase(CHECK);
		wait_for(&phase, CHECKED);
		set_phase(IDLE);
	} else {
		keep_hot();
		rc = apply(op, len);
		check_pages();
	}
	if (rc)
		perror(what);

	/* Each page the reader marked must show the mark through a fresh translation */
	for (i = 0; mark && i < nr_pages; i++)
		if (*(uint64_t *)(area + i * page_size + 16) != MARK(i))
			lost++;

	printf("%s (%lu pages", what, nr_pages);
	if (huge >= 0)
		printf(", %ld kB of them huge%s", huge, huge ? "" : ": small pages only");
	printf("): %lu faulted, %lu read zero, %lu read old data, %lu read other data",
	       faults, zeroes, old, other);
	printf(", %lu whose last word read otherwise", tail_bad);
	if (mark)
		printf(", %lu reader's writes lost", lost);
	printf("\n");

	if (op != OP_MUNMAP && op != OP_SHMDT)
		munmap(area, len);
	if (memfd >= 0) {
		close(memfd);
		memfd = -1;
	}
	if (r.base) {	/* what is left of the reservation, around area */
		if (area > r.base)
			munmap(r.base, area - r.base);
		munmap(area + len, r.base + r.base_len - (area + len));
	}
	if (rc || (want_zero ? zeroes : faults) != nr_pages || lost || tail_bad) {
		printf("stale translation: want every page to %s\n",
		       want_zero ? "read zero, and keep what the reader wrote" : "fault");
		return 1;
	}
	return 0;
}

static int test_stale(void)
{
	int cpus[2], ceiling = 33, local_ceiling = 256, failed = 0, t, op;
	const char *no_thp, *no_shmem_thp, *no_hugetlb;
	size_t small[6], shared[2], thp, memfd_len, huge_size = 0;
	unsigned long huge_need = 0;
	pthread_t thread;
	unsigned int i;
	bool hash;

	SKIP_IF_MSG(using_hash_mmu(&hash) || hash, "radix MMU not in use");
	SKIP_IF_MSG(tlbie_pick_cpus(cpus) < 2, "needs two CPUs");
	page_size = sysconf(_SC_PAGESIZE);
	srandom(time(NULL) ^ getpid());
	read_debugfs_int(TLBIE_GLOBAL_CEILING, &ceiling);
	read_debugfs_int(TLBIE_LOCAL_CEILING, &local_ceiling);
	printf("ceilings: global %d, local %d pages\n", ceiling, local_ceiling);
	small[0] = 1;
	small[1] = 2;
	small[2] = ceiling ? ceiling : 1;
	small[3] = ceiling + 1;
	small[4] = 2 * TLBIE_PMD_SPAN / page_size + 3;
	small[5] = local_ceiling + 1;
	for (i = 0; i < ARRAY_SIZE(small); i++)
		small[i] *= page_size;
	shared[0] = 2 * TLBIE_PMD_SPAN + 3 * page_size;
	shared[1] = SHARED_TABLES * TLBIE_PMD_SPAN;
	thp = 2 * TLBIE_PMD_SPAN + 3 * page_size;
	memfd_len = TLBIE_PMD_SPAN + 3 * page_size;

	no_thp = thp_unavailable("enabled");
	no_shmem_thp = thp_unavailable("shmem_enabled");
	no_hugetlb = hugetlb_unavailable(&huge_need, &huge_size);
	if (no_thp)
		printf("thp cases not measured: %s\n", no_thp);
	if (no_shmem_thp)
		printf("shmem_thp cases not measured: %s\n", no_shmem_thp);
	if (no_hugetlb)
		printf("hugetlb cases not measured: %s\n", no_hugetlb);

	push_signal_handler(SIGSEGV, fault);
	push_signal_handler(SIGBUS, fault);
	FAIL_IF(tlbie_bind_cpu(cpus[0]));

	for (t = 0; t < 2; t++) {
		if (t == 1) {
			set_phase(IDLE);
			FAIL_IF(pthread_create(&thread, NULL, reader, (void *)(long)cpus[1]));
			while (!__atomic_load_n(&reader_bound, __ATOMIC_ACQUIRE))
				sched_yield();
			FAIL_IF_MSG(reader_bound < 0, "the reader cannot bind to its CPU");
		}
		for (op = OP_MUNMAP; op <= OP_PROT_NONE; op++)
			for (i = 0; i < ARRAY_SIZE(small); i++)
				failed |= one(PRIVATE, op, small[i], t);
		for (i = 0; i < ARRAY_SIZE(shared); i++) {
			failed |= one(SHM, OP_SHMDT, shared[i], t);
			failed |= one(SHARED, OP_MUNMAP, shared[i], t);
		}
		failed |= one(MEMFD, OP_MUNMAP, memfd_len, t);
		failed |= one(MEMFD, OP_TRUNCATE, memfd_len, t);
		failed |= one(MEMFD, OP_PUNCH, memfd_len, t);
		for (op = OP_MUNMAP; !no_thp && op <= OP_PROT_NONE; op++)
			failed |= one(THP, op, thp, t);
		if (!no_shmem_thp)
			failed |= one(SHMEM_THP, OP_MUNMAP, thp, t);
		for (op = OP_MUNMAP; !no_hugetlb && op <= OP_PROT_NONE; op++)
			failed |= one(HUGETLB, op, huge_need * huge_size, t);
	}
	set_phase(QUIT);
	pthread_join(thread, NULL);
	tlbie_restore_files();

	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_stale, "tlbie_stale");
}
