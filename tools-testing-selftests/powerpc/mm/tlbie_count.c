// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Count TLB invalidations through the powerpc:tlbie tracepoint: one counting
 * perf event per filter and online CPU, system wide.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define TLBIE_ID_PATH	"/sys/kernel/tracing/events/powerpc/tlbie/id"
#define TLBIE_ID_PATH2	"/sys/kernel/debug/tracing/events/powerpc/tlbie/id"
#define MAX_CPUS	1024

/*
 * RB bits 10-11 are IS: 0 flushes one page, 1 the whole PID. RS bits 0-31
 * (IBM numbering) hold the PID, so RS == 0 is PID 0: kernel addresses, or
 * the POWER9 ERAT work-around. The POWER9 store-queue work-around for a
 * whole-PID flush invalidates the page at (1 << 52) - 1.
 */
#define DUMMY_VA	"rb >= 0xffffffffff000 && rb < 0x10000000000000"

enum {
	F_GLOBAL,
	F_GLOBAL_PID,
	F_LOCAL,
	F_LOCAL_PID,
	F_PID0,
	F_PID0_PID,
	F_PID0_TLB,
	F_PID0_DUMMY,
	F_DUMMY,
	NR_FILTERS
};

static const char * const filters[NR_FILTERS] = {
	[F_GLOBAL]	= "local == 0",
	[F_GLOBAL_PID]	= "local == 0 && rb & 1024",
	[F_LOCAL]	= "local == 1",
	[F_LOCAL_PID]	= "local == 1 && rb & 1024",
	[F_PID0]	= "local == 0 && rs == 0",
	[F_PID0_PID]	= "local == 0 && rs == 0 && rb & 1024",
	[F_PID0_TLB]	= "local == 0 && rs == 0 && ric == 0",
	[F_PID0_DUMMY]	= "local == 0 && rs == 0 && " DUMMY_VA,
	[F_DUMMY]	= "local == 0 && rs != 0 && " DUMMY_VA,
};

static int *fds;
static int nr_fds;

static const char *why_not;

static long tracepoint_id(void)
{
	long id;

	if (read_long(TLBIE_ID_PATH, &id, 10) == 0 ||
	    read_long(TLBIE_ID_PATH2, &id, 10) == 0)
		return id;
	return -1;
}

/* Parse /sys/devices/system/cpu/online ("0-3,6"): counting must see every CPU. */
int tlbie_online_cpus(int *cpus, int max)
{
	char buf[4096], *p;
	size_t len;
	int n = 0;

	if (read_file("/sys/devices/system/cpu/online", buf, sizeof(buf) - 1, &len))
		return -1;
	buf[len] = '\0';
	for (p = buf; *p && *p != '\n';) {
		long lo = strtol(p, &p, 10), hi = lo;

		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		for (; lo <= hi && n < max; lo++)
			cpus[n++] = lo;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return n;
}

static int open_all(long id)
{
	int cpus[MAX_CPUS], nr_cpus, i, f;
	struct perf_event_attr attr;
	struct rlimit rl;

	nr_cpus = tlbie_online_cpus(cpus, MAX_CPUS);
	if (nr_cpus <= 0)
		return -1;

	/* NR_FILTERS descriptors per CPU: raise the soft limit on big machines */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fds = calloc((size_t)nr_cpus * NR_FILTERS, sizeof(*fds));
	if (!fds)
		return -1;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;

	/*
	 * One group per CPU, so its counters start and stop together and one
	 * CPU's counts are consistent with each other.
	 */
	for (i = 0; i < nr_cpus; i++) {
		int leader = -1;

		for (f = 0; f < NR_FILTERS; f++) {
			int fd;

			attr.disabled = leader < 0;
			fd = syscall(__NR_perf_event_open, &attr, -1, cpus[i], leader,
				     PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				if (errno == EACCES || errno == EPERM)
					why_not = "perf_event_open of powerpc:tlbie not permitted";
				else if (errno == EMFILE)
					why_not = "too many CPUs for RLIMIT_NOFILE";
				else
					why_not = "perf_event_open of powerpc:tlbie failed";
				return -1;
			}
			fds[nr_fds++] = fd;
			if (leader < 0)
				leader = fd;
			if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filters[f])) {
				fprintf(stderr, "tlbie_count: filter \"%s\": %s\n",
					filters[f], strerror(errno));
				why_not = "tracepoint filter rejected";
				return -1;
			}
		}
	}
	return 0;
}

const char *tlbie_count_unavailable(void)
{
	bool hash;
	long id;

	if (fds)
		return why_not;
	if (getuid() != 0)
		return (why_not = "must be root to count tlbie system wide");
	if (using_hash_mmu(&hash) || hash)
		return (why_not = "radix MMU not in use");
	id = tracepoint_id();
	if (id < 0)
		return (why_not = "no powerpc:tlbie tracepoint (tracefs, EVENT_TRACING)");
	if (open_all(id)) {
		tlbie_count_close();
		fds = calloc(1, sizeof(*fds));	/* remember the failure */
		return why_not;
	}
	return NULL;
}

/* @request on every CPU's group */
static int ioctl_all(unsigned long request)
{
	int i;

	for (i = 0; i < nr_fds; i += NR_FILTERS)
		if (ioctl(fds[i], request, PERF_IOC_FLAG_GROUP))
			return -1;
	return 0;
}

int tlbie_count_start(void)
{
	if (tlbie_count_unavailable())
		return -1;
	if (ioctl_all(PERF_EVENT_IOC_RESET))
		return -1;
	return ioctl_all(PERF_EVENT_IOC_ENABLE);
}

int tlbie_count_stop(struct tlbie_counts *c)
{
	unsigned long long sum[NR_FILTERS] = { 0 };
	unsigned long long dups, user_seqs;
	int i;

	if (ioctl_all(PERF_EVENT_IOC_DISABLE))
		return -1;
	for (i = 0; i < nr_fds; i++) {
		unsigned long long v;

		if (read(fds[i], &v, sizeof(v)) != sizeof(v))
			return -1;
		sum[i % NR_FILTERS] += v;
	}

	/*
	 * PID 0 tlbies are not for user PIDs: kernel flushes (RIC_FLUSH_ALL,
	 * frequent with DEBUG_PAGEALLOC) and POWER9 errata fix-ups. A POWER9
	 * fix-up follows every global sequence with a TLB-only tlbie to PID 0
	 * and a tlbie of the dummy address (after a whole-PID flush) or a
	 * repeat of the last per-page flush, for the same PID: a kernel
	 * sequence's fix-ups are both to PID 0, a user sequence's repeat
	 * looks like any per-page flush and is worked out here. Without the
	 * errata all of these but the kernel flushes are 0.
	 */
	user_seqs = sum[F_PID0_TLB] - 2 * sum[F_PID0_DUMMY];
	if (user_seqs > sum[F_PID0_TLB])	/* wrapped: a sequence cut in two */
		user_seqs = 0;
	dups = user_seqs > sum[F_DUMMY] ? user_seqs - sum[F_DUMMY] : 0;

	memset(c, 0, sizeof(*c));
	c->raw_global = sum[F_GLOBAL];
	c->raw_global_pid = sum[F_GLOBAL_PID];
	c->fixup = sum[F_PID0] + sum[F_DUMMY] + dups;
	c->global_pid = sum[F_GLOBAL_PID] - sum[F_PID0_PID];
	c->global = c->raw_global > c->fixup ? c->raw_global - c->fixup : 0;
	c->global_page = c->global > c->global_pid ? c->global - c->global_pid : 0;
	c->local = sum[F_LOCAL];
	c->local_pid = sum[F_LOCAL_PID];
	return 0;
}

void tlbie_count_close(void)
{
	int i;

	for (i = 0; i < nr_fds; i++)
		close(fds[i]);
	free(fds);
	fds = NULL;
	nr_fds = 0;
}

/* The " key=value" fields of @c and the end of the line */
void tlbie_counts_print_fields(const struct tlbie_counts *c)
{
	printf(" global=%llu global_pid=%llu global_page=%llu",
	       c->global, c->global_pid, c->global_page);
	printf(" local=%llu local_pid=%llu fixup=%llu", c->local, c->local_pid, c->fixup);
	printf(" raw_global=%llu raw_global_pid=%llu\n", c->raw_global, c->raw_global_pid);
	fflush(stdout);
}

/* One line a harness can parse: "tlbie: <label> key=value ..." */
void tlbie_counts_print(const char *label, const struct tlbie_counts *c)
{
	printf("tlbie: %s", label);
	tlbie_counts_print_fields(c);
}

const char * const tlbie_op_name[NR_TLBIE_OPS] = {
	[TLBIE_MUNMAP]		= "munmap",
	[TLBIE_DONTNEED]	= "madv_dontneed",
	[TLBIE_MPROTECT_RO]	= "mprotect_ro",
	[TLBIE_MPROTECT_RW]	= "mprotect_rw",
};

char *tlbie_map_filled(size_t len)
{
	char *map;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	madvise(map, len, MADV_NOHUGEPAGE);
	memset(map, 1, len);
	return map;
}

char *tlbie_map_shared(size_t len, int nr)
{
	size_t piece = len / nr;
	char *p;
	int i;

	p = mmap(NULL, len + TLBIE_PMD_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	p = tlbie_pmd_align(p);
	for (i = 0; i < nr; i++)
		if (mmap(p + i * piece, piece, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			return NULL;
	memset(p, 0x5a, len);
	return p;
}

int tlbie_count_shmdt(size_t size, struct tlbie_counts *c, void **addr)
{
	int id;

	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (id < 0) {
		perror("shmget");
		return -1;
	}
	*addr = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	if (*addr == (void *)-1) {
		perror("shmat");
		return -1;
	}
	memset(*addr, 0x5a, size);

	if (tlbie_count_start())
		return -1;
	if (shmdt(*addr)) {
		perror("shmdt");
		return -1;
	}
	return tlbie_count_stop(c);
}

int tlbie_count_op(enum tlbie_op op, unsigned long pages, struct tlbie_counts *c)
{
	unsigned long page = sysconf(_SC_PAGESIZE);
	size_t len = 2 * TLBIE_PMD_SPAN + (pages + 2) * page;
	char *map, *start;
	int rc;

	map = tlbie_map_filled(len);
	if (!map)
		return -1;
	start = tlbie_pmd_align(map) + page;
	if (op == TLBIE_MPROTECT_RW && mprotect(start, pages * page, PROT_READ)) {
		munmap(map, len);
		return -1;
	}

	if (tlbie_count_start()) {
		munmap(map, len);
		return -1;
	}
	switch (op) {
	case TLBIE_MUNMAP:
		rc = munmap(start, pages * page);
		break;
	case TLBIE_DONTNEED:
		rc = madvise(start, pages * page, MADV_DONTNEED);
		break;
	case TLBIE_MPROTECT_RO:
		rc = mprotect(start, pages * page, PROT_READ);
		break;
	default:
		rc = mprotect(start, pages * page, PROT_READ | PROT_WRITE);
		break;
	}
	if (tlbie_count_stop(c))
		rc = -1;
	munmap(map, len);
	return rc;
}

int tlbie_count_op_global(enum tlbie_op op, unsigned long pages, struct tlbie_counts *c)
{
	int tries = 0, rc;

	do
		rc = tlbie_count_op(op, pages, c);
	while (!rc && c->local && ++tries < 3);
	return rc;
}

const char *tlbie_global_unavailable(void)
{
	struct tlbie_counts c;

	if (tlbie_count_op_global(TLBIE_MPROTECT_RO, 1, &c))
		return "cannot measure a one-page flush";
	tlbie_counts_print("calibration_mprotect_ro_1", &c);
	if (c.global == 0)
		return "global flushes do not use tlbie here (no GTSE, or tlbie disabled)";
	return NULL;
}

static void *sibling_fn(void *arg)
{
	struct tlbie_sibling *s = arg;

	if (bind_to_cpu(s->cpu) != s->cpu) {
		__atomic_store_n(&s->running, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&s->running, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
		;
	return NULL;
}

int tlbie_sibling_start(struct tlbie_sibling *s, int cpu)
{
	s->cpu = cpu;
	s->stop = 0;
	s->running = 0;
	if (pthread_create(&s->thread, NULL, sibling_fn, s))
		return -1;
	while (!__atomic_load_n(&s->running, __ATOMIC_ACQUIRE))
		sched_yield();
	if (__atomic_load_n(&s->running, __ATOMIC_ACQUIRE) < 0) {
		pthread_join(s->thread, NULL);
		return -1;
	}
	return 0;
}

void tlbie_sibling_stop(struct tlbie_sibling *s)
{
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_join(s->thread, NULL);
}
