// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The batches of a large zap flush the PID, and no other flush changes
 * ("powerpc/64s/radix: Flush the PID for the batches of a large zap").
 * zap_pte_range() flushes a zap of dirty shared memory at the end of every
 * page table (32 pages with 64K pages, under the global ceiling, 33);
 * radix__tlb_flush() flushes such a batch by PID when the zap's range is
 * above the ceiling, the batch above half of it, and a whole-PID flush
 * costs fewer instructions than its pages.
 *
 * Each row is a zap of one shape, with one to three threads spinning on
 * other CPUs (tlbie) or single-threaded (tlbiel), and the whole-PID,
 * per-page and PWC flushes it must issue, counted with the powerpc:tlbie
 * tracepoint, POWER9's errata fix-ups of each whole-PID tlbie too. The rows
 * flushed by PID, and a reap's full gather, fail on v7.3-rc7, which flushes
 * their pages one by one; those of an mm with three other users fail on a
 * rule without its bound.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

/* Pages a page table maps, with 64K pages */
#define TABLE_PAGES	32
/* Pages an mmu_gather holds: 7 on the stack, 8189 in its one batch page (64K) */
#define GATHER_PAGES	8196

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL	102
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB		(21 << MAP_HUGE_SHIFT)
#endif

enum seg_kind { SEG_NONE, SEG_SHARED, SEG_SHM, SEG_MEMFD, SEG_PRIVATE, SEG_THP, SEG_HUGETLB };
enum zap_op {
	OP_UNMAP, OP_DONTNEED, OP_PROCESS_MADVISE, OP_GUARD, OP_MPROTECT, OP_TRUNCATE,
	OP_PUNCH, OP_REAP
};

/* Rows for one kind of CPU: ISA v3.0 (POWER9) or v3.1 (POWER10) */
enum isa { ISA_ANY, ISA_V30, ISA_V31 };

/*
 * @pages pages written (or @read): the first @every (0: all) of each @period
 * (0: TABLE_PAGES), and of those the first (@only > 0) or last @only only
 */
struct seg {
	unsigned char kind, vmas, read, every, period;
	unsigned short pages;
	short only;
	/* MEMFD: the file's pages (the first segment's; a later one maps it), offset */
	unsigned short file, off;
};

#define SHARED(n)	{ .kind = SEG_SHARED, .pages = (n) }
#define SHM(n)		{ .kind = SEG_SHM, .pages = (n) }
#define MEMFD(n, f, o)	{ .kind = SEG_MEMFD, .pages = (n), .file = (f), .off = (o) }
#define EVERY(n, e, per)	{ .kind = SEG_SHARED, .pages = (n), .every = (e), .period = (per) }
#define PRIVATE(n, o)	{ .kind = SEG_PRIVATE, .pages = (n), .only = (o) }

struct row {
	const char *name;
	struct seg seg[3];		/* one after the other */
	enum zap_op op;
	unsigned short skip, len;	/* the op's pages after the first's start (0: all) */
	bool local;			/* single-threaded */
	unsigned char threads;		/* other threads, on CPUs of their own (0: 1) */
	unsigned char second;		/* MEMFD: another process maps it, its users */
	enum isa isa;
	const char *knob, *val;		/* set for the row, after the defaults */
	/* Whole-PID flushes of the TLB, per-page invalidations, PWC flushes */
	unsigned short pid, page, pwc;
};

static const struct row rows[] = {
	/*
	 * Dense batches of a range above the ceiling: one whole-PID tlbie each
	 * (a detach's last flush, of the page tables it frees, with the PWC)
	 */
	{ .name = "shmdt_64M", .seg = { SHM(1024) }, .op = OP_UNMAP, .pid = 33, .pwc = 1 },
	{ .name = "dontneed_64M_from_page_24", .seg = { SHARED(1056) }, .op = OP_DONTNEED,
	  .skip = 24, .len = 1024, .pid = 32, .page = 8 },
	/* The range just above the ceiling: a dense table by PID, 2 pages not */
	{ .name = "dontneed_34_pages", .seg = { SHARED(34) }, .op = OP_DONTNEED, .pid = 1,
	  .page = 2 },
	/* A last page table in part: small after dense ones, dense after sparse */
	{ .name = "dontneed_64M_and_5_pages", .seg = { SHARED(1029) }, .op = OP_DONTNEED,
	  .pid = 32, .page = 5 },
	{ .name = "dontneed_64M_2_a_table_then_20",
	  .seg = { { .kind = SEG_MEMFD, .pages = 1024, .every = 2, .file = 1044 },
		   MEMFD(20, 0, 1024) }, .op = OP_DONTNEED, .pid = 1, .page = 64 },
	/* A batch spans its first to last page: over half the ceiling from 0 and 16, 0 and 17 */
	{ .name = "dontneed_64M_1_in_16", .seg = { EVERY(1024, 1, 16) }, .op = OP_DONTNEED,
	  .pid = 32 },
	{ .name = "dontneed_64M_1_in_17", .seg = { EVERY(1024, 1, 17) }, .op = OP_DONTNEED,
	  .pid = 29, .page = 3 },
	/* Pages gathered after a forced batch: flushed at the end, on their own */
	{ .name = "dontneed_2M_dirty_then_20_clean",
	  .seg = { MEMFD(TABLE_PAGES, 52, 0),
		   { .kind = SEG_MEMFD, .pages = 20, .read = 1, .off = 32 } },
	  .op = OP_DONTNEED, .pid = 1, .page = 20 },
	/* A hugetlb VMA restarts the gather with the call's range */
	{ .name = "dontneed_hugetlb_then_64M",
	  .seg = { { .kind = SEG_HUGETLB, .pages = TABLE_PAGES }, SHARED(1024) },
	  .op = OP_DONTNEED, .pid = 32 },
	/*
	 * Two page sizes in one gather, each change a flush of what was gathered,
	 * not early: 20 small pages, a THP (flushed at once too), dense batches
	 */
	{ .name = "dontneed_20_pages_thp_64M",
	  .seg = { PRIVATE(TABLE_PAGES, -20), { .kind = SEG_THP, .pages = TABLE_PAGES },
		   SHARED(1024) },
	  .op = OP_DONTNEED, .pid = 32, .page = 22 },
	/* zap_vma_range() of part of a VMA */
	{ .name = "guard_install_64M_of_68M", .seg = { SHARED(1088) }, .op = OP_GUARD,
	  .skip = 32, .len = 1024, .pid = 32 },
	/*
	 * unmap_mapping_range(): a second process's mapping (written on cpus[1])
	 * flushed from here by its PID; with three users, none the zapping
	 * task, above the bound: per page
	 */
	{ .name = "memfd_truncate_64M", .seg = { MEMFD(1024, 1024, 0) }, .op = OP_TRUNCATE,
	  .pid = 32 },
	{ .name = "memfd_truncate_64M_2_processes", .seg = { MEMFD(1024, 1024, 0) },
	  .op = OP_TRUNCATE, .second = 1, .pid = 64 },
	{ .name = "memfd_truncate_64M_2_processes_3_users", .seg = { MEMFD(1024, 1024, 0) },
	  .op = OP_TRUNCATE, .second = 3, .pid = 32, .page = 1024 },
	{ .name = "memfd_punch_128M_64M_mapped", .seg = { MEMFD(1024, 2048, 512) },
	  .op = OP_PUNCH, .pid = 32 },
	/* The one sparse shape the rule flushes by PID, its first table */
	{ .name = "dontneed_64M_first_table_dirty",
	  .seg = { { .kind = SEG_SHARED, .pages = 1024, .only = TABLE_PAGES } }, .op = OP_DONTNEED,
	  .pid = 1 },

	/* Ranges not above the ceiling: per page (a freed table adds a page) */
	{ .name = "dontneed_2M", .seg = { SHARED(TABLE_PAGES) }, .op = OP_DONTNEED,
	  .page = TABLE_PAGES },
	{ .name = "dontneed_33_pages", .seg = { SHARED(33) }, .op = OP_DONTNEED, .page = 33 },
	{ .name = "shmdt_2M", .seg = { SHM(TABLE_PAGES) }, .op = OP_UNMAP,
	  .page = TABLE_PAGES + 1, .pwc = 1 },
	{ .name = "munmap_2M", .seg = { SHARED(TABLE_PAGES) }, .op = OP_UNMAP,
	  .page = TABLE_PAGES + 1, .pwc = 1 },
	{ .name = "memfd_truncate_8M_2M_mapped", .seg = { MEMFD(TABLE_PAGES, 128, 64) },
	  .op = OP_TRUNCATE, .page = TABLE_PAGES },
	{ .name = "memfd_punch_2M_of_8M_mapped", .seg = { MEMFD(128, 128, 0) },
	  .op = OP_PUNCH, .skip = 64, .len = TABLE_PAGES, .page = TABLE_PAGES },
	{ .name = "guard_install_2M_of_8M", .seg = { SHARED(128) }, .op = OP_GUARD,
	  .skip = 64, .len = TABLE_PAGES, .page = TABLE_PAGES },
	/* Sparse batches, and batches of half the ceiling */
	{ .name = "dontneed_64M_2_a_table", .seg = { EVERY(1024, 2, 0) }, .op = OP_DONTNEED,
	  .page = 64 },
	{ .name = "dontneed_64M_16_a_table", .seg = { EVERY(1024, 16, 0) }, .op = OP_DONTNEED,
	  .page = 512 },
	{ .name = "munmap_64_vmas_of_4_pages",
	  .seg = { { .kind = SEG_SHARED, .pages = 256, .vmas = 64 } },
	  .op = OP_UNMAP, .pid = 1, .page = 256, .pwc = 1 },
	/* Flushed once, at the end: glibc's thread exit, private memory */
	{ .name = "stack_dontneed_4_of_124", .seg = { PRIVATE(124, -4) }, .op = OP_DONTNEED,
	  .page = 4 },
	{ .name = "stack_dontneed_32_of_124", .seg = { PRIVATE(124, -TABLE_PAGES) },
	  .op = OP_DONTNEED, .page = TABLE_PAGES },
	{ .name = "dontneed_64M_private_first_table", .seg = { PRIVATE(1024, TABLE_PAGES) },
	  .op = OP_DONTNEED, .page = TABLE_PAGES },
	{ .name = "mprotect_64M_first_table", .seg = { PRIVATE(1024, TABLE_PAGES) },
	  .op = OP_MPROTECT, .page = TABLE_PAGES },
	/* No range: process_madvise(), and the rule turned off */
	{ .name = "process_madvise_64M", .seg = { SHARED(1024) }, .op = OP_PROCESS_MADVISE,
	  .page = 1024 },
	{ .name = "shmdt_64M_rule_off", .seg = { SHM(1024) }, .op = OP_UNMAP,
	  .knob = TLBIE_BATCH_RULE, .val = "N", .pid = 1, .page = 1024, .pwc = 1 },
	/*
	 * The rule only for an mm of at most 2 other threads (mm_users 3,
	 * RADIX_BATCH_MAX_OTHER_THREADS): by PID with 2, per page with 3
	 */
	{ .name = "shmdt_64M_2_other_threads", .seg = { SHM(1024) }, .op = OP_UNMAP,
	  .threads = 2, .pid = 33, .pwc = 1 },
	{ .name = "shmdt_64M_3_other_threads", .seg = { SHM(1024) }, .op = OP_UNMAP,
	  .threads = 3, .pid = 1, .page = 1024, .pwc = 1 },

	/*
	 * Local, each batch weighed against the local ceiling: above half of
	 * it by PID where that is one tlbiel (POWER10), not where it is 128
	 * (POWER9); the freed page tables' flush by PID, with the PWC
	 */
	{ .name = "shmdt_64M_local_ceiling_40_by_pid", .seg = { SHM(1024) }, .op = OP_UNMAP,
	  .local = true, .isa = ISA_V31, .knob = TLBIE_LOCAL_CEILING, .val = "40", .pid = 33,
	  .pwc = 1 },
	{ .name = "shmdt_64M_local_ceiling_40_by_page", .seg = { SHM(1024) }, .op = OP_UNMAP,
	  .local = true, .isa = ISA_V30, .knob = TLBIE_LOCAL_CEILING, .val = "40", .pid = 1,
	  .page = 1024, .pwc = 1 },
	{ .name = "shmdt_64M_local", .seg = { SHM(1024) }, .op = OP_UNMAP, .local = true,
	  .pid = 1, .page = 1024, .pwc = 1 },
	/*
	 * 150 private pages and a dirty shared one, a forced batch of 151 in a
	 * range of 183, not above the local ceiling: per page (POWER9 too)
	 */
	{ .name = "dontneed_hugetlb_then_151_local",
	  .seg = { { .kind = SEG_HUGETLB, .pages = TABLE_PAGES }, PRIVATE(150, 0), SHARED(1) },
	  .op = OP_DONTNEED, .local = true, .page = 151 },
	/*
	 * process_mrelease(), a gather a VMA with its range (zap_vma_for_reaping()):
	 * 64MB by PID at the end; 9000 pages, the ceiling at 8500: the gather,
	 * full at GATHER_PAGES, by PID, the rest page by page (all, without it)
	 */
	{ .name = "process_mrelease_64M", .seg = { PRIVATE(1024, 0) }, .op = OP_REAP,
	  .local = true, .pid = 1 },
	{ .name = "process_mrelease_9000_ceiling_8500", .seg = { PRIVATE(9000, 0) },
	  .op = OP_REAP, .local = true,
	  .knob = TLBIE_LOCAL_CEILING, .val = "8500", .pid = 1, .page = 9000 - GATHER_PAGES },
};

static long page_size;
static int unmeasured, cpus[TLBIE_MAX_SIBLINGS + 1], nr_cpus;
static bool have_rule;

struct area {
	char *hole, *p;		/* the reservation; the first segment */
	size_t hole_len, pages;
	int fd, pidfd;
	pid_t child;
	long others;		/* a reap's: the child's other flushes, */
	bool exact;		/* or their bound */
};

/* One segment at @p: 0, 1 if this kernel cannot have it, -1 on error */
static int map_seg(const struct seg *s, char *p, int *fd)
{
	size_t len = s->pages * page_size, piece = len / (s->vmas ? s->vmas : 1), i;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_FIXED | MAP_ANONYMOUS, id;
	size_t period = s->period ? s->period : TABLE_PAGES;
	long thp = tlbie_anon_huge_kb();
	char *q;

	switch (s->kind) {
	case SEG_SHARED:
		for (q = p; q < p + len; q += piece)
			if (mmap(q, piece, prot, MAP_SHARED | flags, -1, 0) == MAP_FAILED)
				return -1;
		break;
	case SEG_SHM:
		id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
		if (id < 0)
			return -1;
		q = shmat(id, p, 0);
		shmctl(id, IPC_RMID, NULL);
		if (q != p)
			return -1;
		break;
	case SEG_MEMFD:
		if (*fd < 0) {
			*fd = memfd_create("tlbie_entire_range", 0);
			if (*fd < 0 || ftruncate(*fd, s->file * page_size))
				return -1;
		}
		if (mmap(p, len, prot, MAP_SHARED | MAP_FIXED, *fd,
			 s->off * page_size) == MAP_FAILED)
			return -1;
		break;
	case SEG_HUGETLB:
		/* Never touched: no huge page needed, but a zap of its own */
		return mmap(p, len, prot, MAP_PRIVATE | flags | MAP_HUGETLB | MAP_HUGE_2MB |
			    MAP_NORESERVE, -1, 0) == MAP_FAILED;
	default:
		if (mmap(p, len, prot, MAP_PRIVATE | flags, -1, 0) == MAP_FAILED)
			return -1;
	}
	/* Small pages, but for THP: a huge page would be one batch */
	if (s->kind == SEG_THP && madvise(p, len, MADV_HUGEPAGE))
		return 1;
	if (s->kind != SEG_THP && tlbie_nohugepage(p, len))
		return -1;
	/* Read: mapped clean */
	if (s->read)
		return madvise(p, len, MADV_POPULATE_READ);
	for (i = 0; i < s->pages; i++)
		if ((!s->every || i % period < s->every) && (s->only <= 0 || i < (size_t)s->only) &&
		    (s->only >= 0 || (long)i >= s->pages + s->only))
			p[i * page_size] = 1;
	if (s->kind != SEG_THP || tlbie_anon_huge_kb() - thp >= 2048)
		return 0;
	errno = ENOMEM;		/* no THP to be had */
	return 1;
}

/*
 * The per-page flushes a reap of the child's other VMAs takes: in each one the
 * reaper zaps (not shared, hugetlb or PFN-mapped), its gather flushes the span
 * from its first present page to its last. A huge page flushes fewer: then
 * the spans only bound it (@exact false)
 */
static long other_spans(struct area *a)
{
	unsigned long start = 0, end = 0, va, first, last;
	char buf[PATH_MAX + 128];
	uint64_t e;
	long spans;
	FILE *f;
	int pm;

	snprintf(buf, sizeof(buf), "/proc/%d/pagemap", a->child);
	pm = open(buf, O_RDONLY);
	snprintf(buf, sizeof(buf), "/proc/%d/smaps", a->child);
	f = fopen(buf, "r");
	a->exact = true;
	for (spans = pm >= 0 && f ? 0 : -1; spans >= 0 && fgets(buf, sizeof(buf), f);) {
		if (sscanf(buf, "%lx-%lx ", &va, &end) == 2)
			start = va;
		if ((strstr(buf, "HugePages:") || strstr(buf, "PmdMapped:")) &&
		    strtol(strchr(buf, ':') + 1, NULL, 10))
			a->exact = false;
		if (strncmp(buf, "VmFlags:", 8) || strstr(buf, " sh") || strstr(buf, " ht") ||
		    strstr(buf, " pf") || start - (unsigned long)a->hole < a->hole_len)
			continue;
		for (first = 0, last = 0, va = start; va < end; va += page_size)
			if (pread(pm, &e, 8, va / page_size * 8) == 8 && e >> 63)
				last = first ? va : (first = va);
		spans += first ? (last - first) / page_size + 1 : 0;
	}
	if (f)
		fclose(f);
	close(pm);
	return spans;
}

/*
 * A child killed and held at its exit (PTRACE_O_TRACEEXIT), for
 * process_mrelease(); on this CPU alone, so its flushes are local
 */
static int hold_dying_child(struct area *a)
{
	int status;

	a->child = fork();
	if (!a->child) {
		pause();
		_exit(0);
	}
	if (a->child < 0)
		return -1;
	a->pidfd = syscall(__NR_pidfd_open, a->child, 0);
	if (a->pidfd < 0 || ptrace(PTRACE_SEIZE, a->child, 0, PTRACE_O_TRACEEXIT))
		return errno == EPERM ? 1 : -1;
	if (kill(a->child, SIGKILL) || waitpid(a->child, &status, __WALL) != a->child ||
	    status >> 8 != (SIGTRAP | PTRACE_EVENT_EXIT << 8))
		return -1;
	a->others = other_spans(a);
	return a->others < 0 ? -1 : 0;
}

static void *idle(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* A child with @users - 1 idle threads writes the file's pages on cpus[1]: flushed by tlbie */
static int second_mapper(struct area *a, size_t pages, int users)
{
	struct tlbie_counts c;
	int pipefd[2];
	pthread_t t;
	char ok = 0;
	size_t i;

	if (pipe(pipefd))
		return -1;
	a->child = fork();
	if (!a->child) {
		while (--users > 0)
			if (pthread_create(&t, NULL, idle, NULL))
				_exit(1);
		for (i = 0; !tlbie_bind(cpus[1]) && i < pages; i++)
			a->p[i * page_size] = 2;
		ok = i == pages;
		if (write(pipefd[1], &ok, 1) == 1)
			pause();
		_exit(0);
	}
	if (a->child > 0 && read(pipefd[0], &ok, 1) != 1)
		ok = 0;
	close(pipefd[0]);
	close(pipefd[1]);
	/* Copy what counting writes now: the fork made it copy-on-write */
	if (ok && !tlbie_count_start() && !tlbie_count_stop(&c))
		return 0;
	return -1;
}

/* The row's segments from a page-table boundary, with page tables of their own */
static int build(const struct row *r, struct area *a)
{
	size_t tables, span = TABLE_PAGES * page_size;
	struct sysinfo si;
	char *p;
	int i, rc;

	a->fd = -1;
	a->pidfd = -1;
	a->child = 0;
	a->pages = r->seg[0].pages + r->seg[1].pages + r->seg[2].pages;
	tables = (a->pages + TABLE_PAGES - 1) / TABLE_PAGES;
	a->hole_len = (tables + 5) * span;
	a->hole = mmap(NULL, a->hole_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (a->hole == MAP_FAILED)
		return -1;
	/* A reap's pages and 64MB to spare */
	if (r->op == OP_REAP && !sysinfo(&si) &&
	    si.freeram * si.mem_unit < (a->pages + 1024) * page_size) {
		errno = ENOMEM;
		return 1;
	}
	p = (char *)(((unsigned long)a->hole + span - 1) & ~(span - 1)) + span;
	if (munmap(p, (tables + 2) * span))
		return -1;
	a->p = p += span;
	for (i = 0; i < 3 && r->seg[i].kind; p += r->seg[i++].pages * page_size) {
		rc = map_seg(&r->seg[i], p, &a->fd);
		if (rc)
			return rc;
	}
	if (r->second)
		return second_mapper(a, r->seg[0].pages, r->second);
	return r->op == OP_REAP ? hold_dying_child(a) : 0;
}

static void tear_down(struct area *a)
{
	int status, err = errno;

	if (a->child > 0) {
		ptrace(PTRACE_DETACH, a->child, 0, 0);
		kill(a->child, SIGKILL);
		while (waitpid(a->child, &status, __WALL) == a->child && WIFSTOPPED(status))
			ptrace(PTRACE_DETACH, a->child, 0, 0);
	}
	if (a->pidfd >= 0)
		close(a->pidfd);
	munmap(a->hole, a->hole_len);
	if (a->fd >= 0)
		close(a->fd);
	errno = err;
}

/* The row's operation; errno set on failure */
static int zap(const struct row *r, struct area *a)
{
	size_t len = (r->len ? r->len : a->pages) * page_size;
	struct iovec iov = { .iov_base = a->p + r->skip * page_size, .iov_len = len };
	char *p = iov.iov_base;
	int pidfd;
	long rc;

	switch (r->op) {
	case OP_UNMAP:
		return r->seg[0].kind == SEG_SHM ? shmdt(p) : munmap(p, len);
	case OP_DONTNEED:
		return madvise(p, len, MADV_DONTNEED);
	case OP_GUARD:
		return madvise(p, len, MADV_GUARD_INSTALL);
	case OP_MPROTECT:
		return mprotect(p, len, PROT_READ);
	case OP_TRUNCATE:
		return ftruncate(a->fd, 0);
	case OP_PUNCH:
		len = (r->len ? r->len : r->seg[0].file) * page_size;
		return fallocate(a->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 r->skip * page_size, len);
	case OP_REAP:
		return syscall(__NR_process_mrelease, a->pidfd, 0);
	default:
		pidfd = syscall(__NR_pidfd_open, getpid(), 0);
		rc = syscall(__NR_process_madvise, pidfd, &iov, 1, MADV_DONTNEED, 0);
		close(pidfd);
		return rc == (long)len ? 0 : -1;
	}
}

/* The defaults, then the row's knob: 0, or why not */
static const char *set_knobs(const struct row *r)
{
	if (tlbie_set_knob(TLBIE_GLOBAL_CEILING, "33") ||
	    tlbie_set_knob(TLBIE_LOCAL_CEILING, "256"))
		return "cannot set the flush ceilings";
	if (have_rule && tlbie_set_knob(TLBIE_BATCH_RULE, "Y"))
		return "cannot set " TLBIE_BATCH_RULE;
	if (r->knob && tlbie_set_knob(r->knob, r->val))
		return have_rule ? "cannot set the row's knob" : "the kernel has no batch rule";
	return NULL;
}

/* 0: passed (or not measured here), else failed */
static int run_row(const struct row *r)
{
	const char *ceiling = r->local ? TLBIE_LOCAL_CEILING : TLBIE_GLOBAL_CEILING;
	struct tlbie_want w = {
		.local = r->local, .pid = r->pid, .pwc = r->pwc,
		/* Where all is whole-PID, POWER9's fix-ups each; none on POWER10 */
		.fixups = !r->local && (!r->page || !tlbie_fixups_per_flush()),
		.ceiling = r->knob && !strcmp(r->knob, ceiling) ? atoi(r->val) :
			   r->local ? 256 : 33,
	};
	struct tlbie_counts c;
	const char *why;
	int tries, v = -1, rc;
	struct area a;
	long extra;

	for (tries = 0; tries < TLBIE_TRIES; tries++) {
		why = set_knobs(r);
		if (why) {
			printf("%s: %s: FAIL\n", r->name, why);
			return 1;
		}
		rc = build(r, &a);
		if (!rc) {
			if (tlbie_count_start())
				return 1;
			rc = zap(r, &a) ? (errno == EINVAL ? 1 : -1) : tlbie_count_stop(&c);
		}
		tear_down(&a);
		/* A THP, a hugetlb VMA or a syscall this kernel has not got, at any try */
		if (rc > 0) {
			printf("%s: not measured: %s (%s)\n", r->name,
			       errno == ENOMEM ? "too little memory" : "not in this kernel",
			       strerror(errno));
			unmeasured++;
			return 0;
		}
		if (rc) {
			printf("%s: %s\n", r->name, strerror(errno));
			return 1;
		}
		tlbie_counts_print(r->name, &c);
		/*
		 * A reaped child's other VMAs add their spans' per-page flushes,
		 * which the mm_cpumask trim can drop: a reap's count below is
		 * retried, and one that never flushes fails every try.
		 */
		w.page = r->page;
		extra = (r->local ? c.local - c.local_pid : c.global_page) - w.page;
		if (r->op == OP_REAP)
			w.page += a.exact || extra > a.others ? a.others : extra > 0 ? extra : 0;
		v = tlbie_judge(&c, &w);
		if (!v || (v < 0 && r->op != OP_REAP))
			break;
	}
	printf("%s: %s\n", r->name, v ? "FAIL" : "pass");
	return v != 0;
}

static int run_rows(bool local, bool v31)
{
	const struct row *r;
	int failed = 0, n;

	for (r = rows; r < rows + ARRAY_SIZE(rows); r++) {
		if (r->local != local || (r->isa != ISA_ANY && r->isa != (v31 ? ISA_V31 : ISA_V30)))
			continue;
		if (r->threads >= nr_cpus) {
			printf("%s: not measured: needs %d CPUs\n", r->name, r->threads + 1);
			unmeasured++;
			continue;
		}
		/* Beside the thread on cpus[1], while the row runs */
		for (n = 1; n < r->threads && !tlbie_sibling_start(cpus[n + 1]); n++)
			;
		if (n < r->threads)
			printf("%s: no thread on CPU %d: FAIL\n", r->name, cpus[n + 1]);
		failed |= n < r->threads ? 1 : run_row(r);
		while (n-- > 1)
			tlbie_sibling_stop();
	}
	return failed;
}

static int test_entire_range(void)
{
	bool v31 = have_hwcap2(PPC_FEATURE2_ARCH_3_1);
	int failed = 0;
	const char *why;
	char buf[16];

	/* Every line out before a fork */
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = getpagesize();
	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(page_size != 65536,
		    "4K pages: a page table's 512 pages are above the ceiling anyway");
	SKIP_IF_MSG(read_debugfs_file(TLBIE_GLOBAL_CEILING, buf, sizeof(buf) - 1),
		    "cannot read the flush ceilings in debugfs");
	nr_cpus = tlbie_usable_cpus(cpus, ARRAY_SIZE(cpus));
	SKIP_IF_MSG(nr_cpus < 2, "needs two CPUs");
	have_rule = !read_debugfs_file(TLBIE_BATCH_RULE, buf, sizeof(buf) - 1);
	FAIL_IF(tlbie_bind(cpus[0]));

	why = tlbie_global_unavailable();
	if (why) {
		printf("global rows not measured: %s\n", why);
	} else {
		FAIL_IF(tlbie_sibling_start(cpus[1]));
		failed |= run_rows(false, v31);
		tlbie_sibling_stop();
	}
	failed |= run_rows(true, v31);
	if (unmeasured)
		printf("%d row(s) not measured on this kernel\n", unmeasured);
	SKIP_IF_MSG(why && !failed, why);
	FAIL_IF(failed);
	return 0;
}

/* The knobs are written back here: the harness kills a test that times out */
int main(void)
{
	int rc;

	tlbie_knobs_save();
	test_harness_set_timeout(110);
	rc = test_harness(test_entire_range, "tlbie_entire_range");
	tlbie_knobs_restore();
	return rc;
}
