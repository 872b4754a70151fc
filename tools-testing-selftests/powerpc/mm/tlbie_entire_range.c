// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The batches of a large zap flush the PID, and no other flush changes.
 *
 * Core mm flushes a zap of dirty shared memory at the end of every page
 * table: 32 pages with 64K pages, below the global flush ceiling (33).
 * With the zap's range above the ceiling, radix flushes each such batch
 * of more than half the ceiling by PID, and smaller batches (the partial
 * page tables at either end of a range, sparse memory) page by page.
 *
 * With a thread spinning on another CPU, so that flushes are global, and
 * counting tlbie through the powerpc:tlbie tracepoint:
 *  - shmdt() of a filled 64MB and 256MB segment, and MADV_DONTNEED of
 *    64MB of dirty shared memory from 24 pages into a page table: one
 *    whole-PID tlbie per dense page table (and one for the page tables a
 *    detach frees, with the page walk cache), per-page tlbie only for the
 *    pages of partial page tables of up to half the ceiling; MADV_DONTNEED
 *    of one such page table alone (a range not above the ceiling): page
 *    by page;
 *  - MADV_DONTNEED of a page table of dirty shared memory and 20 clean
 *    (read) pages after it: the dirty page table's batch is forced and
 *    flushes the PID, the clean pages are flushed at the gather's end,
 *    not early, so page by page;
 *  - MADV_DONTNEED, in one call, of a 2MB hugetlb page and the 64MB of
 *    dirty shared memory mapped after it: the shared memory's batches
 *    flush the PID as above, one per-page tlbie more for the huge page,
 *    whether the zap starts one gather again after the hugetlb VMA with
 *    the call's range or, as older kernels do, gives each VMA its own;
 *  - MADV_GUARD_INSTALL over 64MB of dirty shared memory, where the
 *    kernel has guard regions there: the pages it zaps first (with
 *    zap_vma_range()) flush the PID per page table as above; over 2MB (a
 *    range not above the ceiling), page by page;
 *  - truncation to 0 of a filled 64MB memfd mapped shared, and a hole
 *    punched over all of it: each of its mappings zapped with its part of
 *    the file's range, one whole-PID tlbie per page table, nothing per
 *    page and no page walk cache (no page table is freed); the same with
 *    a second process that maps the file and wrote it from the other CPU,
 *    whose batches this process flushes by that process's PID;
 *  - process_madvise() MADV_DONTNEED of 64MB of dirty shared memory,
 *    where the kernel allows it: the call gives no range (its iovecs need
 *    not be near one another), so every page is flushed on its own, as
 *    before the rule;
 *  - shmdt() of 64MB with 2 dirty pages per page table, and of a 2MB
 *    segment (a range not above the ceiling): per-page tlbie for every
 *    page, no whole-PID tlbie but the freed page tables';
 *  - the 64MB detach with debugfs powerpc/tlb_batch_flush_pid=N: per page;
 *  - MADV_DONTNEED of one page while another thread's MADV_DONTNEED has
 *    its gather open (held by a userfaultfd remove event), after a hugetlb
 *    VMA's zap restarted a gather: the nested gathers flush the whole PID;
 *    without the other one, the page alone;
 *  - process_mrelease() of a killed child held at its exit: the reap of
 *    64MB flushes the PID at its end; of 9000 pages with the ceiling at
 *    8500, the gather's early flush when it fills, below the ceiling, is
 *    by PID too (the reap's range), the pages left page by page.
 * Single-threaded (tlbiel), with the local ceiling at 40: a POWER10 local
 * whole-PID flush is one tlbiel, so each batch flushes the PID; a POWER9
 * one is 128 (one per TLB set), so its batches stay per page. The freed
 * page tables flush the page walk cache there too. At the default 256, a
 * never touched hugetlb VMA, then 150 private pages and a dirty shared
 * page in one MADV_DONTNEED: the forced batch of 151 pages, in a range of
 * 183, goes page by page.
 *
 * Counts only gain from what else runs (a reschedule point that cuts a
 * batch in two adds per-page tlbie, or trades its whole-PID flush for
 * per-page flushes of all its pages), except where the periodic
 * mm_cpumask trim turns a global flush into tlbiel. A measurement with
 * tlbiel, above the bounds, or whole-PID flushes short where extra
 * per-page flushes of at least a dense batch's pages each make them up is
 * taken again, up to TRIES times, as are the reap's counts the trim cut
 * short (reap_once()); any other shortfall fails at once, and only a
 * measurement within every bound passes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "event.h"
#include "utils.h"

#define CEILING		33	/* the default global ceiling, set for the test */
#define PMD_SPAN	(2UL << 20)
#define POWER9_SETS	128
#define TRIES		3

#ifndef __NR_pidfd_open
#define __NR_pidfd_open		434
#endif
#ifndef __NR_process_madvise
#define __NR_process_madvise	440
#endif
#ifndef __NR_process_mrelease
#define __NR_process_mrelease	448
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif

/*
 * Process-scoped flushes of the host (a KVM host's flushes for a guest
 * carry its LPID in RS) for a user PID (PID 0: kernel flushes and the
 * POWER9 errata fix-ups). RB's IS field is 1 (1024) for a whole PID, and
 * RIC 1 flushes only the page walk cache (a range flush that frees page
 * tables adds one): a whole-PID flush of the TLB is RIC 0 or 2. The POWER9
 * fix-up after a whole-PID flush invalidates the page at 2^52 - 1.
 */
#define HOST	"lpid == 0 && prs == 1 && !(rs & 0xffffffff) && "
#define USER	HOST "rs != 0 && "
#define DUMMY	"rb >= 0xffffffffff000 && rb < 0x10000000000000"

enum { F_GLOBAL, F_GLOBAL_PID, F_GLOBAL_PWC, F_DUMMY, F_FIXUP, F_LOCAL, F_LOCAL_PID, F_PWC, NR_F };

static const char * const filters[NR_F] = {
	[F_GLOBAL]	= USER "local == 0",
	[F_GLOBAL_PID]	= USER "local == 0 && rb & 1024 && ric != 1",
	[F_GLOBAL_PWC]	= USER "local == 0 && rb & 1024 && ric == 1",
	[F_DUMMY]	= USER "local == 0 && " DUMMY,
	/* One per POWER9 fix-up sequence, which may repeat a per-page flush */
	[F_FIXUP]	= HOST "local == 0 && rs == 0 && ric == 0",
	[F_LOCAL]	= USER "local == 1",
	[F_LOCAL_PID]	= USER "local == 1 && rb & 1024 && ric != 1",
	[F_PWC]		= USER "ric != 0",
};

static struct event events[NR_F];

struct counts {
	unsigned long pid, page, fixup, local, local_pid, pwc;
};

static int open_events(void)
{
	char path[] = "/sys/kernel/tracing/events/powerpc/tlbie/id";
	long id;
	int i;

	if (read_long(path, &id, 10) &&
	    read_long("/sys/kernel/debug/tracing/events/powerpc/tlbie/id", &id, 10))
		return -1;
	for (i = 0; i < NR_F; i++) {
		event_init_opts(&events[i], id, PERF_TYPE_TRACEPOINT, "tlbie");
		/* This thread only: it does every operation measured */
		if (event_open_with_options(&events[i], 0, -1, -1))
			return -1;
		if (ioctl(events[i].fd, PERF_EVENT_IOC_SET_FILTER, filters[i])) {
			perror(filters[i]);
			return -1;
		}
	}
	return 0;
}

static void count_start(void)
{
	int i;

	for (i = 0; i < NR_F; i++)
		event_reset(&events[i]);
}

static int count_stop(struct counts *c)
{
	unsigned long v[NR_F];
	int i;

	for (i = 0; i < NR_F; i++) {
		if (event_read(&events[i]))
			return -1;
		v[i] = events[i].result.value;
	}
	c->pid = v[F_GLOBAL_PID];
	c->page = v[F_GLOBAL] - v[F_GLOBAL_PID] - v[F_GLOBAL_PWC] - v[F_DUMMY];
	c->fixup = v[F_FIXUP];
	c->local = v[F_LOCAL];
	c->local_pid = v[F_LOCAL_PID];
	c->pwc = v[F_PWC];
	return 0;
}

static void print_counts(const char *label, const struct counts *c)
{
	printf("tlbie: %s global_pid=%lu global_page=%lu fixup=%lu", label, c->pid, c->page,
	       c->fixup);
	printf(" local=%lu local_pid=%lu pwc=%lu\n", c->local, c->local_pid, c->pwc);
}

/* debugfs knobs the test writes, given back at exit and on the harness's SIGTERM */
static const char * const knobs[] = {
	"powerpc/tlb_single_page_flush_ceiling",
	"powerpc/tlb_local_single_page_flush_ceiling",
	"powerpc/tlb_batch_flush_pid",
};

#define NR_KNOBS	ARRAY_SIZE(knobs)
static char saved[NR_KNOBS][32];

/* 2MB huge pages: the pool's size to give back, or -1 */
#define HUGE_2MB	"/sys/kernel/mm/hugepages/hugepages-2048kB/"
static long hugepages_saved = -1;

/* 0 once the pool is back to its size (or was never raised) */
static int restore_hugepages(void)
{
	if (hugepages_saved >= 0 &&
	    !write_long(HUGE_2MB "nr_hugepages", hugepages_saved, 10))
		hugepages_saved = -1;
	return hugepages_saved >= 0;
}

static void restore_knobs(void)
{
	unsigned int i;

	for (i = 0; i < NR_KNOBS; i++)
		if (saved[i][0])
			write_debugfs_file(knobs[i], saved[i], strlen(saved[i]));
	restore_hugepages();
}

static void restore_and_exit(int sig)
{
	restore_knobs();
	_exit(128 + sig);
}

/* The ceilings must be there; a kernel without the rule has no switch */
static int save_knobs(void)
{
	unsigned int i;

	for (i = 0; i < NR_KNOBS; i++)
		if (read_debugfs_file(knobs[i], saved[i], sizeof(saved[i]) - 1) && i < 2)
			return -1;
	atexit(restore_knobs);
	signal(SIGTERM, restore_and_exit);
	return 0;
}

static int set_knob(int i, const char *val)
{
	return write_debugfs_file(knobs[i], val, strlen(val));
}

/*
 * A case this kernel cannot run (a feature it lacks, named in @fmt): said
 * here, and counted in the line that closes the output; the test still
 * passes
 */
static int unmeasured;

static void not_measured(const char *label, const char *fmt, ...)
{
	va_list ap;

	printf("%s: not measured: ", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	unmeasured++;
}

/* A thread spinning on another CPU: the mm stays active there */
static int stop, other_cpu, this_cpu;

static void *spin(void *arg)
{
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		;
	return arg;
}

static int bind_to(pthread_t t, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(t, sizeof(set), &set);
}

/* A free page-table-aligned hole of @len bytes in the address space, or NULL */
static void *pmd_aligned_hole(size_t len)
{
	void *p = mmap(NULL, len + PMD_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, len + PMD_SPAN);
	return (void *)(((unsigned long)p + PMD_SPAN - 1) & ~(PMD_SPAN - 1));
}

/*
 * A SysV shm segment at a page-table boundary, in small pages, with the
 * first @dirty pages of each page table written (every page if 0)
 */
static void *shm_filled(size_t size, unsigned long dirty)
{
	unsigned long page = getpagesize(), off;
	void *addr;
	int id;

	addr = pmd_aligned_hole(size);
	if (!addr)
		return NULL;
	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (id < 0)
		return NULL;
	addr = shmat(id, addr, 0);
	shmctl(id, IPC_RMID, NULL);
	if (addr == (void *)-1)
		return NULL;
	/* shmem THP would take away the per-page-table batches */
	madvise(addr, size, MADV_NOHUGEPAGE);
	for (off = 0; off < size; off += PMD_SPAN)
		memset((char *)addr + off, 0x5a, dirty ? dirty * page : PMD_SPAN);
	return addr;
}

static int count_shmdt(size_t size, unsigned long dirty, struct counts *c)
{
	void *p = shm_filled(size, dirty);

	if (!p)
		return -1;
	count_start();
	if (shmdt(p))
		return -1;
	return count_stop(c);
}

/*
 * Judge a global measurement: @pid to @max_pid whole-PID tlbie, and per-page
 * tlbie for @min_page to @max_page pages (plus a POWER9 fix-up's repeat).
 * 1 to measure again: tlbiel (the mm_cpumask trim), more than the bounds,
 * or a whole-PID flush short that per-page tlbie of at least a dense
 * batch's pages make up (a batch cut in two by a reschedule point; a
 * batch not flushed adds no per-page tlbie). -1 fails, 0 passes.
 */
static int judge(const char *label, const struct counts *c, unsigned long pid,
		 unsigned long max_pid, bool pwc, unsigned long min_page, unsigned long max_page)
{
	unsigned long short_by = c->pid < pid ? pid - c->pid : 0;

	print_counts(label, c);
	printf("%s: want whole-PID %lu..%lu, per-page %lu..%lu (+ fixup)%s\n",
	       label, pid, max_pid, min_page, max_page, pwc ? ", PWC >= 1" : "");
	if (c->local)
		return 1;
	if (c->page < min_page || (pwc && !c->pwc))
		return -1;
	if (c->pid > max_pid || c->page > max_page + c->fixup)
		return 1;
	if (short_by)
		return c->page >= max_page + short_by * (CEILING / 2 + 1) ? 1 : -1;
	return 0;
}

/* Dense batches of more than half the ceiling, and the pages of the others */
static void batches(unsigned long s, size_t len, unsigned long *dense, unsigned long *small)
{
	unsigned long e = s + len, a, next, pages;

	*dense = *small = 0;
	for (a = s; a < e; a = next) {
		next = (a | (PMD_SPAN - 1)) + 1;
		pages = ((next < e ? next : e) - a) / getpagesize();
		if (pages > CEILING / 2)
			(*dense)++;
		else
			*small += pages;
	}
}

static int detach(unsigned long mib)
{
	unsigned long dense, small;
	struct counts c;
	char label[32];
	int v, tries = 0;

	snprintf(label, sizeof(label), "shmdt_%luM", mib);
	batches(0, mib << 20, &dense, &small);
	do {
		FAIL_IF(count_shmdt(mib << 20, 0, &c));
		v = judge(label, &c, dense + 1, dense + 1, true, 0, small);
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

/* @len bytes of @fd (-1: anonymous) mapped shared at a page-table boundary, written */
static char *shared_filled(size_t len, int fd)
{
	int flags = MAP_SHARED | MAP_FIXED | (fd < 0 ? MAP_ANONYMOUS : 0);
	char *p = pmd_aligned_hole(len);

	if (!p || mmap(p, len, PROT_READ | PROT_WRITE, flags, fd, 0) == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 0x5a, len);
	return p;
}

static int dontneed_unaligned(void)
{
	unsigned long page = getpagesize(), skip = 24, dense, small;
	size_t len = 64UL << 20, map = len + PMD_SPAN;
	struct counts c;
	int v, tries = 0;
	char *p;

	do {
		p = shared_filled(map, -1);
		FAIL_IF(!p);
		batches((unsigned long)p + skip * page, len, &dense, &small);
		count_start();
		FAIL_IF(madvise(p + skip * page, len, MADV_DONTNEED));
		FAIL_IF(count_stop(&c));
		munmap(p, map);
		/* It frees no page tables: every whole-PID flush is a batch's */
		v = judge("madv_dontneed_64M_skip_24", &c, dense, dense, false, small, small);
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

/*
 * MADV_DONTNEED of one page table of dirty shared memory: its range is
 * not above the ceiling, so its one forced batch goes page by page
 */
static int dontneed_2M(void)
{
	unsigned long pages = PMD_SPAN / getpagesize();
	struct counts c;
	int v, tries = 0, rc;
	char *p;

	do {
		p = shared_filled(PMD_SPAN, -1);
		FAIL_IF(!p);
		count_start();
		rc = madvise(p, PMD_SPAN, MADV_DONTNEED) || count_stop(&c);
		munmap(p, PMD_SPAN);
		FAIL_IF(rc);
		v = judge("madv_dontneed_2M", &c, 0, 0, false, pages, pages);
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif

/*
 * A forced batch, then pages gathered to the end: a page table of dirty
 * shared memory and the first @tail pages of the next one, only read
 * (clean: core mm flushes them when the gather ends), in one
 * MADV_DONTNEED. Only the first flush is early; the last one is decided
 * on its own pages, whatever came before it.
 */
static int dontneed_forced_then_gathered(void)
{
	const char *label = "madv_dontneed_2M_dirty_then_20_clean";
	/* More than half the ceiling, so that the rule would flip them */
	unsigned long page = getpagesize(), tail = CEILING / 2 + 4;
	struct counts c;
	int v, tries = 0, rc;
	char *p;

	do {
		p = pmd_aligned_hole(2 * PMD_SPAN);
		FAIL_IF(!p);
		FAIL_IF(mmap(p, 2 * PMD_SPAN, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED);
		madvise(p, 2 * PMD_SPAN, MADV_NOHUGEPAGE);
		memset(p, 0x5a, PMD_SPAN);
		rc = madvise(p + PMD_SPAN, tail * page, MADV_POPULATE_READ);
		if (!rc) {
			count_start();
			rc = madvise(p, PMD_SPAN + tail * page, MADV_DONTNEED) || count_stop(&c);
		}
		if (rc)
			perror(label);
		munmap(p, 2 * PMD_SPAN);
		FAIL_IF(rc);
		v = judge(label, &c, 1, 1, false, tail, tail);
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB	(21 << MAP_HUGE_SHIFT)
#endif

/*
 * NULL if a free 2MB huge page (a page table's span) can be had: the pool
 * is raised by one if need be, to its size again by restore_hugepages()
 * (also at exit); why not otherwise.
 */
static const char *huge_page_unavailable(void)
{
	long free_pages, rsvd, nr;

	if (read_long(HUGE_2MB "free_hugepages", &free_pages, 10) ||
	    read_long(HUGE_2MB "resv_hugepages", &rsvd, 10))
		return "no 2MB hugetlb pages in this kernel";
	if (free_pages - rsvd >= 1)
		return NULL;
	/* A pool page, not a surplus one: it stays there between tries */
	if (read_long(HUGE_2MB "nr_hugepages", &nr, 10))
		return "no free 2MB huge page, and cannot read the pool's size";
	hugepages_saved = nr;
	if (write_long(HUGE_2MB "nr_hugepages", nr + 1, 10)) {
		hugepages_saved = -1;
		return "no free 2MB huge page, and cannot add one";
	}
	return NULL;
}

static int dontneed_after_hugetlb(void)
{
	const char *label = "madv_dontneed_hugetlb_then_64M";
	unsigned long dense, small;
	size_t len = 64UL << 20;
	const char *why;
	struct counts c;
	int v, tries = 0;
	char *p;

	why = huge_page_unavailable();
	if (why) {
		not_measured(label, "%s", why);
		return 0;
	}
	do {
		p = pmd_aligned_hole(PMD_SPAN + len);
		v = -1;
		if (!p) {
			perror(label);
			break;
		}
		/* The huge page is reserved here, or the mmap() fails */
		if (mmap(p, PMD_SPAN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB |
			 MAP_FIXED, -1, 0) == MAP_FAILED) {
			/* Once measured, a huge page is there to be had */
			if (tries) {
				perror(label);
				break;
			}
			not_measured(label, "no huge page to map (%s)", strerror(errno));
			v = 0;
			break;
		}
		if (mmap(p + PMD_SPAN, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
			perror(label);
			munmap(p, PMD_SPAN);
			break;
		}
		madvise(p + PMD_SPAN, len, MADV_NOHUGEPAGE);
		memset(p, 0x5a, PMD_SPAN + len);
		batches((unsigned long)p + PMD_SPAN, len, &dense, &small);
		count_start();
		if (madvise(p, PMD_SPAN + len, MADV_DONTNEED) || count_stop(&c)) {
			perror(label);
			munmap(p, PMD_SPAN + len);
			break;
		}
		munmap(p, PMD_SPAN + len);
		/* No page table is freed: every whole-PID flush is a batch's */
		v = judge(label, &c, dense, dense, false, small + 1, small + 1);
	} while (v > 0 && ++tries < TRIES);
	if (restore_hugepages()) {
		printf("%s: cannot give the 2MB huge page pool its size back\n", label);
		return 1;
	}
	return v != 0;
}

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL	102
#endif

/*
 * MADV_GUARD_INSTALL over @len bytes of dirty shared memory: it zaps the
 * pages with zap_vma_range() before it installs the guard markers, in
 * forced batches that free no page table. Above the ceiling, one
 * whole-PID flush per dense page table; at most the ceiling, every page
 * on its own. Not measured where the kernel refuses guard regions in
 * shared memory (EINVAL).
 */
static int guard_install(const char *label, size_t len)
{
	unsigned long pages = len / getpagesize(), dense = 0, small = pages;
	struct counts c;
	int v, tries = 0, err;
	char *p;

	do {
		p = shared_filled(len, -1);
		FAIL_IF(!p);
		if (pages > CEILING)
			batches((unsigned long)p, len, &dense, &small);
		count_start();
		err = madvise(p, len, MADV_GUARD_INSTALL) ? errno : 0;
		/* Only madvise()'s EINVAL says the kernel has no such guards */
		if (count_stop(&c) && !err) {
			perror(label);
			munmap(p, len);
			return 1;
		}
		munmap(p, len);
		if (err == EINVAL && !tries) {
			not_measured(label, "no guard regions in shared memory here (%s)",
				     strerror(err));
			return 0;
		}
		FAIL_IF(err);
		v = judge(label, &c, dense, dense, false, small, small);
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

/*
 * Fork a child that runs @prepare(@arg) on the other CPU (0: done) and
 * then waits to be killed, or dies with this process. With @fork_there
 * it is forked from the other CPU and never runs on this one, which stays
 * out of its mm_cpumask; else it moves there after the fork, with this
 * CPU in its mm_cpumask. Its pid, once @prepare is done, or -1.
 */
static pid_t child_on_other_cpu(int (*prepare)(void *), void *arg, bool fork_there)
{
	pid_t pid, parent = getpid();
	sigset_t term, old;
	cpu_set_t set;
	char c = 0;
	int ready[2];

	if (pipe(ready))
		return -1;
	/* The knobs are the parent's to give back: no SIGTERM handler here */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	if (fork_there && bind_to(pthread_self(), other_cpu)) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		close(ready[0]);
		CPU_ZERO(&set);
		CPU_SET(other_cpu, &set);
		c = !sched_setaffinity(0, sizeof(set), &set) && !prepare(arg);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	/* Back on this CPU, or no child: the cases after it measure from here */
	if (fork_there && bind_to(pthread_self(), this_cpu)) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = -1;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(ready[1]);
	if (pid > 0 && (read(ready[0], &c, 1) != 1 || !c)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

struct area {
	char *p;
	size_t len;
};

/* Its own PTEs, dirty: its zap is cut into forced batches too */
static int write_area(void *arg)
{
	struct area *a = arg;

	memset(a->p, 0xa5, a->len);
	return 0;
}

/*
 * A process that maps the same @len bytes at @p (inherited over fork())
 * and writes every page from the other CPU, then waits to be killed, or
 * dies with this one. Its pid, once it has written, or -1.
 */
static pid_t second_mapper(char *p, size_t len)
{
	struct area a = { .p = p, .len = len };

	return child_on_other_cpu(write_area, &a, false);
}

enum file_zap { TRUNCATE, PUNCH, TRUNCATE_TWO_PROCESSES };

/*
 * Truncation to 0 (PUNCH: a hole punched over it all) of a filled 64MB
 * memfd mapped shared, in this process and, with TRUNCATE_TWO_PROCESSES,
 * in a second one: unmap_mapping_range() zaps each mapping with its part
 * of the file's range, in forced batches of a page table each, and frees
 * no page table. One whole-PID tlbie per page table of each mapping, none
 * per page, and no page walk cache. The second process's zap is flushed
 * from here, by its PID, as a global flush: it ran on this CPU after the
 * fork and then on the other one. The mm_cpumask trim, should it fire
 * for that mm, drops the rest of its flushes (the process is not running)
 * after a local whole-PID flush here (tlbiel, 128 on POWER9) while this
 * CPU is in its mm_cpumask: a measurement with tlbiel is taken again.
 */
static int file_zap(enum file_zap op)
{
	bool punch = op == PUNCH, two = op == TRUNCATE_TWO_PROCESSES;
	size_t len = 64UL << 20;
	unsigned long dense, small, maps = two ? 2 : 1;
	struct counts c;
	char label[48];
	int v, tries = 0, fd, rc, stop_rc;
	pid_t pid = 0;
	char *p;

	snprintf(label, sizeof(label), "memfd_%s_64M%s", punch ? "punch" : "truncate",
		 two ? "_2_processes" : "");
	batches(0, len, &dense, &small);
	do {
		fd = memfd_create("tlbie_entire_range", 0);
		FAIL_IF(fd < 0);
		FAIL_IF(ftruncate(fd, len));
		p = shared_filled(len, fd);
		FAIL_IF(!p);
		if (two) {
			pid = second_mapper(p, len);
			FAIL_IF(pid < 0);
			/* The fork made this process's data copy-on-write: copy it now */
			(void)count_stop(&c);
		}
		count_start();
		if (punch)
			rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, len);
		else
			rc = ftruncate(fd, 0);
		stop_rc = count_stop(&c);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		munmap(p, len);
		close(fd);
		FAIL_IF(stop_rc || rc);
		v = judge(label, &c, maps * dense, maps * dense, false, maps * small,
			  maps * small);
		if (!v && c.pwc) {
			/* Above its bound, which noise could reach too: again */
			printf("%s: %lu page walk cache flushes, where no page table is freed\n",
			       label, c.pwc);
			v = 1;
		}
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

/* Whether the kernel is @major.@minor or later */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/* A MADV_DONTNEED that a userfaultfd's remove event holds */
struct parked {
	char *p;
	size_t len;
	int rc;
};

static void *park(void *arg)
{
	struct parked *pk = arg;

	pk->rc = madvise(pk->p, pk->len, MADV_DONTNEED) ? errno : 0;
	return NULL;
}

static int dontneed_1(const char *label, char *p, unsigned long pid, unsigned long page)
{
	struct counts c;
	int v, tries = 0;

	do {
		p[0] = 1;
		count_start();
		FAIL_IF(madvise(p, getpagesize(), MADV_DONTNEED));
		FAIL_IF(count_stop(&c));
		v = judge(label, &c, pid, pid, pid != 0, page, page);
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

/*
 * Nested gathers: while another thread's MADV_DONTNEED has its gather
 * open (held in a userfaultfd remove event, which waits with the mmap
 * lock dropped), tlb_finish_mmu() sees mm->tlb_flush_pending above 1 and
 * flushes the whole mm, whatever the gather holds: the other zap may have
 * cleared PTEs this one found empty, and not yet flushed them. One page's
 * MADV_DONTNEED flushes the PID then, and only that page without the
 * other gather. A MADV_DONTNEED of a hugetlb VMA comes first: its zap
 * finishes the gather and starts it again, which must leave the count as
 * it was. Not measured before 6.16, where madvise() starts its gather
 * only after the remove event.
 */
static int dontneed_nested(void)
{
	const char *label = "madv_dontneed_1_nested";
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_EVENT_REMOVE };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	size_t page = getpagesize();
	struct parked pk = { .len = page, .rc = -1 };
	struct pollfd pfd = { .events = POLLIN };
	struct uffd_msg msg = { 0 };
	int failed = 1, uffd, rc;
	pthread_t thread;
	char *p, *h;

	if (!kernel_at_least(6, 16)) {
		not_measured(label, "before 6.16, madvise() opens its gather later");
		return 0;
	}
	/* The sysctl is there when userfaultfd is (CONFIG_USERFAULTFD) */
	if (access("/proc/sys/vm/unprivileged_userfaultfd", F_OK)) {
		not_measured(label, "no userfaultfd in this kernel");
		return 0;
	}
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (uffd < 0) {
		perror(label);
		return 1;
	}
	if (ioctl(uffd, UFFDIO_API, &api)) {
		perror("UFFDIO_API");
		goto out_uffd;
	}
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror(label);
		goto out_uffd;
	}
	pk.p = p + page;
	reg.range.start = (unsigned long)pk.p;
	reg.range.len = page;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		goto out_unmap;
	}

	/* Nothing in it is touched: no pool page is needed */
	h = mmap(NULL, PMD_SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_HUGETLB | MAP_HUGE_2MB | MAP_NORESERVE, -1, 0);
	if (h == MAP_FAILED) {
		/* The rest of the case is measured */
		not_measured("madv_dontneed_1_nested's hugetlb zap first",
			     "no 2MB hugetlb VMA (%s)", strerror(errno));
	} else {
		rc = madvise(h, PMD_SPAN, MADV_DONTNEED) ? errno : 0;
		munmap(h, PMD_SPAN);
		if (rc) {
			printf("%s: MADV_DONTNEED of a hugetlb VMA: %s\n", label, strerror(rc));
			goto out_unmap;
		}
	}

	failed = dontneed_1("madv_dontneed_1", p, 0, 1);
	rc = pthread_create(&thread, NULL, park, &pk);
	if (rc) {
		printf("%s: pthread_create: %s\n", label, strerror(rc));
		failed = 1;
		goto out_unmap;
	}
	pfd.fd = uffd;
	if (poll(&pfd, 1, 10000) != 1) {
		printf("%s: no remove event from the other thread's MADV_DONTNEED\n", label);
		failed = 1;
		/* Closing the userfaultfd lets a waiter go */
		goto out_join;
	}
	/* Measured before the event is read: reading it lets the other thread go */
	failed |= dontneed_1(label, p, 1, 0);
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_REMOVE) {
		printf("%s: no remove event read (%s, event %u)\n", label, strerror(errno),
		       msg.event);
		failed = 1;
	}
out_join:
	close(uffd);
	uffd = -1;
	pthread_join(thread, NULL);
	if (pk.rc) {
		printf("%s: the other thread's MADV_DONTNEED: %s\n", label, strerror(pk.rc));
		failed = 1;
	}
out_unmap:
	munmap(p, 2 * page);
out_uffd:
	if (uffd >= 0)
		close(uffd);
	return failed;
}

/*
 * process_mrelease() of a killed child's private memory: the call reaps
 * it (zap_vma_for_reaping(), the OOM reaper's zap) from this thread, one
 * gather per VMA with the VMA's range. The child is single-threaded and
 * fills @pages pages (small pages) from the other CPU, forked there so
 * that this CPU is not in its mm_cpumask: IPIs run here would count here,
 * and work of other CPUs only ever runs tlbiel on this one, so a global
 * whole-PID count is this thread's own flush (the filter cannot tell the
 * child's PID from another). The child is traced with PTRACE_O_TRACEEXIT
 * and killed: it stops at its exit event, dying (so the call accepts it)
 * and not yet out of its mm, so the reap finds all of its memory and the
 * exit has zapped none of it; the child is let go after the count.
 *  - 64MB at the default ceiling: 1024 pages, flushed by PID at the
 *    gather's end, as the ceiling alone decides: the reap flushes at all;
 *  - 9000 pages with the global ceiling at 8500: the gather is full at
 *    GATHER_PAGES and flushes early; that batch is below the ceiling and
 *    above half of it, in a range above it, so the rule flushes it by
 *    PID; the pages left are flushed at the end, page by page. Without
 *    the reap's range, every page is flushed on its own.
 * GATHER_PAGES is core mm's, with 64K pages: a batch moves on with one
 * entry left (mmu_gather.c), the gather's bundle of 8 holds 7 pages, and
 * MAX_GATHER_BATCH_COUNT (tlb.h: 10000 / MAX_GATHER_BATCH, 8190) allows
 * one more batch page, of 8189; a kernel that gathers more before its
 * first flush gives one whole-PID flush and none of the pages left, a
 * count taken again (as the trim's, below) until the tries run out, and
 * fails. The child's other VMAs (the anonymous pages it has from the
 * fork, the pages it touched of the binary and its libraries: each
 * VMA's few pages below half the ceiling) add per-page flushes below
 * either bound. Counts where none of the VMA was flushed (the
 * periodic mm_cpumask trim may find the child's mm idle on the other CPU
 * first, and its flushes are then not needed), or where the trim cut the
 * flush of the pages left short, are taken again, as are those above the
 * bounds; a reap that never flushes fails every try.
 */
#define GATHER_PAGES	8196	/* (MMU_GATHER_BUNDLE - 1) + (MAX_GATHER_BATCH - 1), 64K pages */
#define NOT_TRACED	2	/* reap_once(): this process may not trace its child */

static int fill_private(void *arg)
{
	size_t len = *(size_t *)arg;
	char *m;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || madvise(m, len, MADV_NOHUGEPAGE))
		return -1;
	memset(m, 0x5a, len);
	return 0;
}

/* kB of memory available, from /proc/meminfo, or -1 */
static long mem_available_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * Let a traced child go from the stop it is in, if any (a stop already
 * waited for is not reported again), kill it and wait for its exit
 */
static void end_traced_child(pid_t pid)
{
	int status;

	ptrace(PTRACE_DETACH, pid, 0, 0);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, __WALL) == pid && WIFSTOPPED(status))
		ptrace(PTRACE_DETACH, pid, 0, 0);
}

/*
 * One reap of a child holding @pages filled pages, counted: 0, 1 to
 * count again, -1 to fail, or NOT_TRACED
 */
static int reap_once(const char *label, unsigned long pages, unsigned long min_page,
		     unsigned long max_page)
{
	size_t len = pages * getpagesize();
	int pidfd, status, err, v = -1;
	bool reaped = false;
	struct counts c;
	pid_t pid;
	long rc;

	pid = child_on_other_cpu(fill_private, &len, true);
	if (pid < 0) {
		printf("%s: the child did not start\n", label);
		return -1;
	}
	pidfd = syscall(__NR_pidfd_open, pid, 0);
	if (pidfd < 0) {
		printf("%s: pidfd_open: %s\n", label, strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXIT)) {
		err = errno;
		printf("%s: PTRACE_SEIZE: %s\n", label, strerror(err));
		v = err == EPERM ? NOT_TRACED : -1;
		/* A child that died first (an OOM kill) is EPERM too */
		if (waitpid(pid, &status, WNOHANG | __WALL) == pid) {
			printf("%s: the child died before it was traced\n", label);
			reaped = true;
			v = -1;
		}
		goto out;
	}
	if (kill(pid, SIGKILL)) {
		printf("%s: kill: %s\n", label, strerror(errno));
		goto out;
	}
	if (waitpid(pid, &status, __WALL) != pid) {
		printf("%s: waitpid: %s\n", label, strerror(errno));
		goto out;
	}
	if (!WIFSTOPPED(status) || status >> 8 != (SIGTRAP | PTRACE_EVENT_EXIT << 8)) {
		printf("%s: the child did not stop at its exit (status %#x)\n", label, status);
		reaped = !WIFSTOPPED(status);
		goto out;
	}
	count_start();
	rc = syscall(__NR_process_mrelease, pidfd, 0);
	err = errno;
	if (count_stop(&c))
		goto out;
	if (rc) {
		printf("%s: process_mrelease: %s\n", label, strerror(err));
		goto out;
	}
	if (!c.local && ((!c.pid && c.page < pages) || (c.pid == 1 && c.page < min_page))) {
		print_counts(label, &c);
		printf("%s: %s: again\n", label,
		       c.pid ? "the pages left were not flushed" : "none of the VMA was flushed");
		v = 1;
	} else {
		v = judge(label, &c, 1, 1, false, min_page, max_page);
	}
out:
	if (!reaped)
		end_traced_child(pid);
	close(pidfd);
	return v;
}

static int reap_killed_child(const char *label, unsigned long pages, const char *ceiling,
			     unsigned long min_page, unsigned long max_page)
{
	unsigned long need = pages * (getpagesize() / 1024);
	long avail = mem_available_kb();
	int v, tries = 0;

	if (!kernel_at_least(5, 15)) {
		not_measured(label, "no process_mrelease() before 5.15");
		return 0;
	}
	if (avail >= 0 && (unsigned long)avail < need + (64 << 10)) {
		not_measured(label, "%ld kB available, the child needs %lu kB and 64MB to spare",
			     avail, need);
		return 0;
	}
	FAIL_IF(set_knob(0, ceiling));
	do {
		v = reap_once(label, pages, min_page, max_page);
	} while (v == 1 && ++tries < TRIES);
	FAIL_IF(set_knob(0, "33"));
	if (v == NOT_TRACED) {
		not_measured(label, "this process may not trace its child");
		return 0;
	}
	if (v == 1)
		printf("%s: no count within the bounds in %d tries\n", label, TRIES);
	return v != 0;
}

/*
 * process_madvise() MADV_DONTNEED of 64MB of dirty shared memory, this
 * process's own: its gather has no range, so each page table's batch is
 * decided on its own pages, page by page. This pins what the series does
 * today, a guard against the rule reaching a gather without a range; a
 * range per iovec would be sound, and would change this case. Not
 * measured where the kernel refuses MADV_DONTNEED from process_madvise()
 * (EINVAL, before 6.13).
 */
static int dontneed_process_madvise(void)
{
	size_t len = 64UL << 20;
	unsigned long pages = len / getpagesize();
	struct iovec iov;
	struct counts c;
	int v, tries = 0, pidfd, err;
	long rc;

	pidfd = syscall(__NR_pidfd_open, getpid(), 0);
	FAIL_IF(pidfd < 0);
	do {
		iov.iov_base = shared_filled(len, -1);
		iov.iov_len = len;
		FAIL_IF(!iov.iov_base);
		count_start();
		rc = syscall(__NR_process_madvise, pidfd, &iov, 1, MADV_DONTNEED, 0);
		err = errno;
		FAIL_IF(count_stop(&c));
		munmap(iov.iov_base, len);
		if (rc < 0 && err == EINVAL) {
			not_measured("process_madvise_dontneed_64M", "%s", strerror(err));
			close(pidfd);
			return 0;
		}
		FAIL_IF(rc != (long)len);
		v = judge("process_madvise_dontneed_64M", &c, 0, 0, false, pages, pages);
	} while (v > 0 && ++tries < TRIES);
	close(pidfd);
	return v != 0;
}

/*
 * shmdt() of @len bytes with the first @dirty pages of each page table
 * written: each flushed page by page, and the freed page tables' page walk
 * cache, with at most one whole-PID flush for them (a last flush whose
 * range the freed tables stretch above the ceiling). Freeing a page table
 * adds a page to the last flush's range (pte_free_tlb()).
 */
static int per_page(const char *label, size_t len, unsigned long dirty)
{
	unsigned long pages = len / PMD_SPAN * dirty;
	struct counts c;
	int v, tries = 0;

	do {
		FAIL_IF(count_shmdt(len, dirty, &c));
		v = judge(label, &c, 0, 1, true, pages, pages + 1);
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

/*
 * Single-threaded shmdt() of 64MB with the local ceiling at @ceiling; the
 * page tables it frees flush the page walk cache too, with tlbiel
 */
static int local_detach(const char *ceiling)
{
	unsigned long pages = 1024, tables = 32, min, max;
	bool pid = !strcmp(ceiling, "40") && have_hwcap2(PPC_FEATURE2_ARCH_3_1);
	struct counts c;
	char label[48];
	int v, tries = 0;

	snprintf(label, sizeof(label), "shmdt_64M_local_ceiling_%s", ceiling);
	FAIL_IF(set_knob(1, ceiling));
	/* The first flush trims the CPUs this process ran on before */
	FAIL_IF(count_shmdt(PMD_SPAN, 0, &c));
	min = pid ? tables + 1 : pages;
	/* and the freed page tables' flush: by PID, 128 tlbiel on POWER9 */
	max = pid ? tables + 1 : pages + (have_hwcap2(PPC_FEATURE2_ARCH_3_1) ? 1 : POWER9_SETS);
	do {
		FAIL_IF(count_shmdt(64UL << 20, 0, &c));
		print_counts(label, &c);
		printf("%s: want tlbie 0, tlbiel %lu..%lu%s, PWC >= 1\n", label, min, max,
		       pid ? ", all whole-PID" : "");
		v = c.pid || c.page || c.local > max ? 1 :
		    c.local < min || (pid && c.local_pid < min) || !c.pwc ? -1 : 0;
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

/*
 * Single-threaded, with the local ceiling at 256: MADV_DONTNEED of a 2MB
 * hugetlb VMA, never touched, then 150 filled private pages and one dirty
 * shared page in the same page table. The hugetlb zap gathers nothing;
 * the private pages are gathered and flushed with the shared page's
 * forced batch, 151 pages (above half the ceiling) in a call's range of
 * 183 pages, not above it: page by page. Not measured where there are no
 * 2MB hugetlb pages.
 */
static int local_after_hugetlb(void)
{
	const char *label = "madv_dontneed_hugetlb_then_151_local";
	unsigned long page = getpagesize(), anon = 150, pages = anon + 1;
	size_t len = PMD_SPAN + pages * page;
	struct counts c;
	int v, tries = 0, rc;
	char *p;

	FAIL_IF(set_knob(1, "256"));
	do {
		p = pmd_aligned_hole(len);
		FAIL_IF(!p);
		if (mmap(p, PMD_SPAN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB |
			 MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED) {
			/* Once measured, a hugetlb VMA is there to be had */
			if (tries) {
				perror(label);
				return 1;
			}
			not_measured(label, "no 2MB hugetlb VMA (%s)", strerror(errno));
			return 0;
		}
		rc = mmap(p + PMD_SPAN, anon * page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
		     mmap(p + PMD_SPAN + anon * page, page, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED;
		if (!rc) {
			madvise(p + PMD_SPAN, anon * page, MADV_NOHUGEPAGE);
			memset(p + PMD_SPAN, 0x5a, pages * page);
			count_start();
			rc = madvise(p, len, MADV_DONTNEED) || count_stop(&c);
		}
		if (rc)
			perror(label);
		munmap(p, len);
		FAIL_IF(rc);
		print_counts(label, &c);
		printf("%s: want tlbie 0, tlbiel %lu, none whole-PID\n", label, pages);
		v = c.pid || c.page || c.local > pages ? 1 :
		    c.local < pages || c.local_pid ? -1 : 0;
	} while (v > 0 && ++tries < TRIES);
	return v != 0;
}

/*
 * Why global flushes do not issue tlbie here, from the kernel's setup (not
 * from a count, which a kernel that lost its tlbie would pass), or NULL
 */
static const char *no_tlbie(void)
{
	char buf[256];
	size_t len;

	/*
	 * As early_check_vec5() reads the CAS result: radix alone in byte 24,
	 * GTSE is 0x40 of byte 26; bytes past the property's end are zero.
	 */
	if (!read_file("/proc/device-tree/chosen/ibm,architecture-vec-5", buf,
		       sizeof(buf), &len) && len > 24 && (buf[24] & 0xc0) == 0x40 &&
	    (len <= 26 || !(buf[26] & 0x40)))
		return "no GTSE: global flushes are H_RPT_INVALIDATE hcalls";
	if (!read_debugfs_file("powerpc/tlbie_enabled", buf, sizeof(buf)) && buf[0] == 'N')
		return "tlbie is disabled (debugfs powerpc/tlbie_enabled)";
	return NULL;
}

static int test_entire_range(void)
{
	const char *why;
	pthread_t thread;
	cpu_set_t set;
	int cpu[2], n = 0, i, failed = 0;
	bool hash;

	/* Every line out before a fork, or an OOM kill, can take the rest */
	setvbuf(stdout, NULL, _IOLBF, 0);
	SKIP_IF_MSG(using_hash_mmu(&hash) || hash, "needs the radix MMU");
	SKIP_IF_MSG(getpagesize() != 65536,
		    "4K pages: a page table's 512 pages are above the ceiling anyway");
	SKIP_IF_MSG(save_knobs(), "cannot read the flush ceilings in debugfs");
	SKIP_IF_MSG(open_events(), "cannot count the powerpc:tlbie tracepoint");
	FAIL_IF(sched_getaffinity(0, sizeof(set), &set));
	for (i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &set))
			cpu[n++] = i;
	SKIP_IF_MSG(n < 2, "needs two CPUs");
	FAIL_IF(set_knob(0, "33"));

	FAIL_IF(bind_to(pthread_self(), cpu[0]));
	FAIL_IF(pthread_create(&thread, NULL, spin, NULL));
	FAIL_IF(bind_to(thread, cpu[1]));
	other_cpu = cpu[1];
	this_cpu = cpu[0];
	usleep(100000);
	why = no_tlbie();
	if (!why) {
		failed |= detach(64);
		failed |= detach(256);
		failed |= dontneed_unaligned();
		failed |= dontneed_2M();
		failed |= dontneed_forced_then_gathered();
		failed |= dontneed_after_hugetlb();
		failed |= guard_install("madv_guard_install_64M", 64UL << 20);
		failed |= guard_install("madv_guard_install_2M", PMD_SPAN);
		failed |= file_zap(TRUNCATE);
		failed |= file_zap(PUNCH);
		failed |= file_zap(TRUNCATE_TWO_PROCESSES);
		failed |= dontneed_process_madvise();
		failed |= dontneed_nested();
		failed |= reap_killed_child("process_mrelease_64M", 1024, "33", 0, 512);
		failed |= reap_killed_child("process_mrelease_9000_ceiling_8500", 9000, "8500",
					    9000 - GATHER_PAGES, 9000 - 8500 / 2);
		failed |= per_page("shmdt_64M_2_per_table", 64UL << 20, 2);
		failed |= per_page("shmdt_2M", PMD_SPAN, 32);
		if (set_knob(2, "N")) {
			printf("no debugfs %s: the kernel has not got the rule\n", knobs[2]);
			failed = 1;
		} else {
			failed |= per_page("shmdt_64M_rule_off", 64UL << 20, 32);
			FAIL_IF(set_knob(2, "Y"));
		}
	} else {
		not_measured("the global cases", "%s", why);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);

	failed |= local_detach("40");
	failed |= local_detach("256");
	failed |= local_after_hugetlb();
	restore_knobs();
	if (unmeasured)
		printf("%d case(s) not measured on this kernel (see above)\n", unmeasured);
	if (why && !failed)
		SKIP_IF_MSG(why, why);
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_entire_range, "tlbie_entire_range");
}
