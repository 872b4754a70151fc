// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Both sides of the radix batch rule ("powerpc/64s/radix: Flush the PID for
 * the batches of a large zap"): a large zap of shared dirty memory issues
 * fewer tlbie, and the other threads refill their TLBs after each whole-PID
 * flush. This counts both, and with -p prices them on POWER9 and POWER10.
 * -t N: N - 1 more threads, a core each while there are cores, each walking
 * -r pages of its own (0: spins); no arguments: -p -t 2 -r 256 -i 4 shm.
 * Prints "bench: LABEL iters=N ns=N [marks=N mark_addr=A] spread=N COUNTS":
 * ns times the operations (under QEMU, the emulator); COUNTS (all CPUs) are
 * the iteration's with the fewest invalidations, spread how many more the
 * busiest had ("counts=none (why)" where it does not count, as with -n).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

#include "event.h"
#include "tlbie_count.h"
#include "utils.h"

#define PMD_SPAN	(2UL << 20)	/* what one page table maps */
#define MAX_THREADS	64

enum { SHMDT, PUNCH, TRUNCATE, REMOVE, DONTNEED, MUNMAP };
enum { DENSE, PER_PMD, FIRST_PMDS };	/* what -w means */

/*
 * -s MiB of dirty shared memory, SysV shm or a memfd; shm_sparse: -w dirty
 * pages a page table; memfd_first: the first -w tables only
 */
static const struct workload {
	const char *name;
	int op, fill;
	const char *wfmt;	/* -w in the label */
} workloads[] = {
	{ "shm",		SHMDT,		DENSE,		NULL },
	{ "shm_sparse",		SHMDT,		PER_PMD,	"_%lup" },
	{ "memfd_punch",	PUNCH,		DENSE,		NULL },
	{ "memfd_truncate",	TRUNCATE,	DENSE,		NULL },
	{ "memfd_remove",	REMOVE,		DENSE,		NULL },
	{ "memfd_dontneed",	DONTNEED,	DENSE,		NULL },
	{ "memfd_munmap",	MUNMAP,		DENSE,		NULL },
	{ "memfd_first",	DONTNEED,	FIRST_PMDS,	"_%lupmd" },
};

static const struct workload *wl;
static unsigned long mib = 64, threads = 2, iterations = 4, ws, w = 1;
static unsigned long no_counts, use_counts, use_marks, use_pmu, page_size;
static unsigned long long ns;		/* in the operation, summed */

/* The other threads ([0]: the unmapping one) and the operations' epoch */
static struct worker {
	pthread_t thread;
	int cpu;
	pid_t tid;		/* set once it runs its loop */
	unsigned long done;	/* the epoch its last lap began in */
} workers[MAX_THREADS];
static unsigned long epoch, stop;

/* Step @k of a walk: a pointer a page, pages scattered, each its own line */
static void **slot(char *map, unsigned long k)
{
	return (void **)(map + k * 2654435761UL % ws * page_size + k % (page_size / 128) * 128);
}

static void *worker_fn(void *arg)
{
	struct worker *me = arg;
	unsigned long k, e;
	char *map = NULL;
	void **p;

	if (ws)
		map = mmap(NULL, ws * page_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tlbie_bind(me->cpu) || map == MAP_FAILED)
		exit(1);
	madvise(map, ws * page_size, MADV_NOHUGEPAGE);	/* a TLB entry a page */
	for (k = 0; k < ws; k++)
		*slot(map, k) = slot(map, (k + 1) % ws);
	__atomic_store_n(&me->tid, gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		e = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
		for (k = 0, p = ws ? slot(map, 0) : NULL; k < ws; k++)
			p = *p;
		/* Keep the loads: the compiler cannot know where p is now */
		__asm__ volatile("" : : "r"(p) : "memory");
		__atomic_store_n(&me->done, e, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * -m (-t 2 up), for scripts/compare-rpti: a guest without GTSE asks
 * H_RPT_INVALIDATE for its global flushes, which only the hypervisor sees.
 * Iteration k flushes marker page 2k before the operation and 2k + 1 after
 * it; one the mm_cpumask trim makes local loses that iteration only.
 */
#define TLBIE_MARK_ADDR		0x7e5700000000UL
#define TLBIE_MARK_PAGES	32
#define TLBIE_MARK_SLOTS	32768
static char *marks;
static unsigned long nr_marks;

static void mark(int after)
{
	char *page;

	if (!marks)
		return;
	page = marks + (2 * (nr_marks % (TLBIE_MARK_PAGES / 2)) + after) * page_size;
	*page = 1;		/* present, so flushed */
	madvise(page, page_size, MADV_DONTNEED);
	nr_marks += after;
}

/*
 * -p: up to each other thread's first lap after the operation, the zapping
 * thread's stall cycles per tlbie, and the others' data TLB misses, cycles a
 * miss (POWER10: the oldest instruction's stall; POWER9: table walks, not
 * comparable) and tlbie snoop cycles (POWER9: snoops) per tlbie. Events on
 * one counter take alternate iterations. Codes: tools/perf/pmu-events/arch/
 * powerpc/power{9,10} (POWER11: POWER10's).
 */
enum { STALL, SYNC, WALK, MISS, SNOOP, NR_ROLES };

static const struct pmu_def {
	const char *cpu, *name;
	u64 code;
	unsigned long role, iters;	/* 1: even iterations, 2: odd, 3: all */
} pmu_defs[] = {
	{ "power10", "PM_EXEC_STALL_TLBIE",		0x2e01c, STALL, 3 },
	{ "power10", "PM_EXEC_STALL_PTESYNC",		0x4d016, SYNC,	3 },
	{ "power10", "PM_EXEC_STALL_DERAT_DTLB_MISS",	0x30016, WALK,	1 },
	{ "power10", "PM_DTLB_MISS",			0x300fc, MISS,	2 },
	{ "power10", "PM_SNOOP_TLBIE_CYC",		0x0f880, SNOOP, 3 },
	{ "power9",  "PM_CMPLU_STALL_TLBIE",		0x2e01c, STALL, 3 },
	{ "power9",  "PM_DATA_TABLEWALK_CYC",		0x3001a, WALK,	1 },
	{ "power9",  "PM_DTLB_MISS",			0x300fc, MISS,	2 },
	{ "power9",  "PM_SNOOP_TLBIE",			0x0f880, SNOOP, 3 },
};

static const struct pmu_def *pdef[NR_ROLES];	/* NULL: not counted */
static struct event pev[NR_ROLES][MAX_THREADS];	/* per role and thread */
/* The threads a role counts on: the unmapping one (0), or the others */
#define FIRST(r)	((r) >= WALK)
#define END(r)		((r) >= WALK ? threads : 1)

static void pmu_open(const char *label)
{
	const char *cpu = auxv_platform() ? auxv_platform() : "?";
	const struct pmu_def *d;
	unsigned long t, known = 0;

	cpu = strcmp(cpu, "power11") ? cpu : "power10";
	for (d = pmu_defs; d < pmu_defs + ARRAY_SIZE(pmu_defs); d++) {
		known += !strcmp(d->cpu, cpu);
		if (strcmp(d->cpu, cpu) || FIRST(d->role) >= END(d->role))
			continue;
		pdef[d->role] = d;
		for (t = FIRST(d->role); t < END(d->role); t++) {
			event_init_opts(&pev[d->role][t], d->code, PERF_TYPE_RAW, (char *)d->name);
			pev[d->role][t].attr.disabled = 1;
			/* workers[0].tid is 0: this thread */
			if (!event_open_with_options(&pev[d->role][t], workers[t].tid, -1, -1))
				continue;
			printf("pmu: %s unavailable %s (%#llx): %s\n", label, d->name,
			       (unsigned long long)d->code, strerror(errno));
			pdef[d->role] = NULL;	/* what it opened closes at exit */
			break;
		}
	}
	if (!known)
		printf("pmu: %s unavailable: no events for %s (POWER9, 10)\n", label, cpu);
}

static void pmu_switch(unsigned long iter, int on)
{
	unsigned long r, t;

	for (r = 0; r < NR_ROLES; r++)
		for (t = FIRST(r); pdef[r] && (pdef[r]->iters & (iter % 2 + 1)) && t < END(r); t++)
			(on ? event_enable : event_disable)(&pev[r][t]);
}

static void pmu_report(const char *label, double tlbie)
{
	double v[NR_ROLES] = { 0 };
	unsigned long r, t, n;
	struct event *e;

	printf("pmu: %s", label);
	for (r = 0; r < NR_ROLES; r++) {
		if (!pdef[r])
			continue;
		n = pdef[r]->iters == 3 ? iterations : (iterations + 2 - pdef[r]->iters) / 2;
		for (t = FIRST(r); t < END(r); t++) {
			e = &pev[r][t];
			if (!event_read(e) && e->result.running)	/* scaled if multiplexed */
				v[r] += (double)e->result.value * e->result.enabled /
					e->result.running / n;
		}
		/* Zero where there was something to count: the CPU does not count it */
		printf(" %s=%.1f%s", pdef[r]->name, v[r],
		       !v[r] && (r == WALK || r == MISS ? ws : tlbie) ? "(uncounted)" : "");
	}
	if (tlbie && v[STALL])
		printf(" stall_per_tlbie=%.1f", v[STALL] / tlbie);
	if (tlbie && v[SYNC])
		printf(" sync_per_tlbie=%.1f", v[SYNC] / tlbie);
	if (v[MISS])
		printf(" dtlb_misses=%.1f cyc_per_dtlb_miss=%.1f", v[MISS], v[WALK] / v[MISS]);
	if (tlbie && v[SNOOP])
		printf(" snoop_per_tlbie=%.1f", v[SNOOP] / (threads - 1) / tlbie);
	printf("\n");
}

/* @len bytes at a page-table boundary: SysV shm (@fd < 0) or the memfd @fd */
static char *map_shared(size_t len, int fd)
{
	char *p = mmap(NULL, len + PMD_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int id;

	if (p == MAP_FAILED)
		return NULL;
	/* Give the room back, map there: nothing else maps meanwhile */
	munmap(p, len + PMD_SPAN);
	p = (char *)(((unsigned long)p + PMD_SPAN - 1) & ~(PMD_SPAN - 1));
	if (fd >= 0) {
		if (ftruncate(fd, len) || mmap(p, len, PROT_READ | PROT_WRITE,
					       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0) != p)
			return NULL;
	} else {
		id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
		p = id < 0 ? (char *)-1 : shmat(id, p, 0);
		if (id >= 0)
			shmctl(id, IPC_RMID, NULL);	/* gone once detached */
		if (p == (char *)-1)
			return NULL;
	}
	/* Small pages: a shmem THP would take away the per-page-table batches */
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

/* One iteration, counted into @c unless NULL */
static int run_once(unsigned long iter, struct tlbie_counts *c)
{
	size_t len = mib << 20, off, dirty = wl->fill == PER_PMD ? w * page_size : PMD_SPAN;
	int fd = wl->op == SHMDT ? -1 : memfd_create("tlbie_bench", 0), rc;
	char *p = map_shared(len, fd);
	struct timespec t[2];
	unsigned long i, e;

	if (!p)
		return -1;
	for (off = 0; off < len && (wl->fill != FIRST_PMDS || off < w * PMD_SPAN); off += PMD_SPAN)
		memset(p + off, 1, dirty < PMD_SPAN ? dirty : PMD_SPAN);
	if (c) {
		mark(0);
		pmu_switch(iter, 1);	/* no events without -p */
		if (use_counts && tlbie_count_start())
			return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t[0]);
	rc = wl->op == SHMDT ? shmdt(p) : wl->op == TRUNCATE ? ftruncate(fd, 0) :
	     wl->op == PUNCH ? fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, len) :
	     wl->op == MUNMAP ? munmap(p, len) :
	     madvise(p, len, wl->op == REMOVE ? MADV_REMOVE : MADV_DONTNEED);
	clock_gettime(CLOCK_MONOTONIC, &t[1]);
	ns += (t[1].tv_sec - t[0].tv_sec) * 1000000000ULL + t[1].tv_nsec - t[0].tv_nsec;
	if (c && use_counts && tlbie_count_stop(c))
		rc = -1;
	if (c)
		mark(1);
	/* The refill: until each other thread walked its pages once since */
	e = __atomic_add_fetch(&epoch, 1, __ATOMIC_RELEASE);
	for (i = 1; i < threads; i++)
		while (__atomic_load_n(&workers[i].done, __ATOMIC_ACQUIRE) != e)
			;
	if (c)
		pmu_switch(iter, 0);
	if (fd >= 0) {
		munmap(p, len);
		close(fd);
	}
	return rc;
}

static unsigned long long total(const struct tlbie_counts *c)
{
	return c->global + c->local;
}

static int tlbie_bench(void)
{
	struct tlbie_counts *per = calloc(iterations, sizeof(*per));
	unsigned long i, lo = 0, hi = 0, n;
	const char *why = "-n";
	int cpus[MAX_THREADS];
	double tlbie = 0;
	char label[80];
	void *want;

	n = snprintf(label, sizeof(label), "%s_%luM_%lut", wl->name, mib, threads);
	n += wl->wfmt ? snprintf(label + n, sizeof(label) - n, wl->wfmt, w) : 0;
	if (ws)
		snprintf(label + n, sizeof(label) - n, "_r%lu", ws);
	if (tlbie_usable_cpus(cpus, threads) < (int)threads) {
		printf("bench: %s skipped=needs_%lu_cpus\n", label, threads);
		return MAGIC_SKIP_RETURN_VALUE;
	}
	/* Every CPU, every process: IPIs make other CPUs issue the tlbiel */
	tlbie_count_set_scope(TLBIE_SCOPE_SYSTEM);
	if (!no_counts)
		why = tlbie_count_unavailable();
	use_counts = !why;
	FAIL_IF(!per || tlbie_bind(cpus[0]));
	for (i = 1; i < threads; i++) {
		workers[i].cpu = cpus[i];
		FAIL_IF(pthread_create(&workers[i].thread, NULL, worker_fn, &workers[i]));
		while (!__atomic_load_n(&workers[i].tid, __ATOMIC_ACQUIRE))
			;
	}
	if (use_pmu)
		pmu_open(label);
	if (use_marks) {
		want = (void *)(TLBIE_MARK_ADDR + (getpid() % TLBIE_MARK_SLOTS) *
				TLBIE_MARK_PAGES * page_size);
		marks = mmap(want, TLBIE_MARK_PAGES * page_size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		FAIL_IF_MSG(marks != want, "cannot map the marker pages");
	}

	/* One iteration uncounted: the mm settles on its CPUs */
	FAIL_IF_MSG(run_once(0, NULL), label);
	ns = 0;
	for (i = 0; i < iterations; i++) {
		FAIL_IF_MSG(run_once(i, &per[i]), label);
		tlbie += (double)per[i].global / iterations;
		lo = total(&per[i]) < total(&per[lo]) ? i : lo;
		hi = total(&per[i]) > total(&per[hi]) ? i : hi;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 1; i < threads; i++)
		pthread_join(workers[i].thread, NULL);

	printf("bench: %s iters=%lu ns=%llu", label, iterations, ns);
	if (marks)
		printf(" marks=%lu mark_addr=%p", nr_marks, marks);
	if (use_counts) {
		printf(" spread=%llu", total(&per[hi]) - total(&per[lo]));
		tlbie_counts_print(NULL, &per[lo]);
		tlbie_count_close();
	} else {
		printf(" counts=none (%s)\n", why);
	}
	if (use_pmu)
		pmu_report(label, tlbie);
	return 0;
}

int main(int argc, char *argv[])
{
	static unsigned long *const num[128] = {
		['t'] = &threads, ['r'] = &ws, ['i'] = &iterations, ['s'] = &mib, ['w'] = &w,
		['n'] = &no_counts, ['m'] = &use_marks, ['p'] = &use_pmu,
	};
	unsigned long i;
	int opt;

	page_size = sysconf(_SC_PAGESIZE);
	use_pmu = argc == 1;
	ws = argc == 1 ? 256 : 0;
	while ((opt = getopt(argc, argv, "nmpt:r:i:s:w:")) != -1) {
		if (opt > 0 && opt < 128 && strchr("nmp", opt))
			*num[opt] = 1;
		else if (opt < 0 || opt >= 128 || !num[opt] ||
			 parse_ulong(optarg, strlen(optarg), num[opt], 0))
			goto usage;
	}
	for (i = 0; i < ARRAY_SIZE(workloads); i++)
		if (!strcmp(optind < argc ? argv[optind] : "shm", workloads[i].name))
			wl = &workloads[i];
	if (!wl || argc - optind > 1 || !threads || threads > MAX_THREADS || !iterations ||
	    iterations > 100000 || !mib || mib > (1UL << 20) || ws > (1UL << 24) ||
	    (use_marks && threads < 2) || (use_pmu && iterations < 2))
		goto usage;
	test_harness_set_timeout(600);
	return test_harness(tlbie_bench, "tlbie_bench");
usage:
	fprintf(stderr, "Usage: %s [-n] [-m] [-p] [-t 1-%d] [-r pages] [-i iterations] [-s MiB]",
		argv[0], MAX_THREADS);
	fprintf(stderr, " [-w pages] WORKLOAD\n(-m: -t 2 up; -p: -i 2 up) WORKLOAD:");
	for (i = 0; i < ARRAY_SIZE(workloads); i++)
		fprintf(stderr, " %s", workloads[i].name);
	fprintf(stderr, "\n");
	return 2;
}
