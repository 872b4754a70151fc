// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Count TLB invalidations through the powerpc:tlbie tracepoint: one
 * counting perf event per filter, for this process's threads or on every
 * online CPU (enum tlbie_scope).
 *
 * Files and numbers are read with utils.c. What powerpc's selftests do
 * not have, and so is here: pmu/event.c opens one event at a time, with
 * no helpers for tracepoint filters, groups per CPU or inheritance by
 * the threads a test creates; utils.c's pick_online_cpu() picks one CPU,
 * where these tests need two on different cores from the affinity mask;
 * and nothing there writes a debugfs knob back on the harness's timeout
 * signal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
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

/*
 * RB bits 10-11 are IS: 0 flushes one page, 1 the whole PID. RS bits 0-31
 * (IBM numbering) hold the PID, so RS == 0 is PID 0: kernel addresses, or
 * the POWER9 ERAT work-around. The POWER9 store-queue work-around for a
 * whole-PID flush invalidates the page at (1 << 52) - 1.
 */
#define DUMMY_VA	"rb >= 0xffffffffff000 && rb < 0x10000000000000"

/*
 * Process-scoped translations of the host: lpid == 0 && prs == 1, and no
 * LPID in RS bits 32-63 (IBM numbering), where a KVM host that flushes
 * for a guest (H_RPT_INVALIDATE) puts the guest's LPID, and traces
 * lpid == 0.
 */
#define HOST		"lpid == 0 && prs == 1 && !(rs & 0xffffffff) && "

/* RS holds the PID from this bit up */
#define RS_PID_SHIFT	32

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
	F_PWC,
	NR_FILTERS
};

static const char * const filters[NR_FILTERS] = {
	[F_GLOBAL]	= HOST "local == 0",
	[F_GLOBAL_PID]	= HOST "local == 0 && rb & 1024",
	[F_LOCAL]	= HOST "local == 1",
	[F_LOCAL_PID]	= HOST "local == 1 && rb & 1024",
	[F_PID0]	= HOST "local == 0 && rs == 0",
	[F_PID0_PID]	= HOST "local == 0 && rs == 0 && rb & 1024",
	[F_PID0_TLB]	= HOST "local == 0 && rs == 0 && ric == 0",
	[F_PID0_DUMMY]	= HOST "local == 0 && rs == 0 && " DUMMY_VA,
	[F_DUMMY]	= HOST "local == 0 && rs != 0 && " DUMMY_VA,
	[F_PWC]		= HOST "rs != 0 && ric != 0",
};

/* TLBIE_SCOPE_MM: this process's tlbiel on every CPU; "%llx" is its RS */
enum { F_MM_LOCAL, F_MM_LOCAL_PID, NR_MM_FILTERS };

static const char * const mm_filters[NR_MM_FILTERS] = {
	[F_MM_LOCAL]		= HOST "local == 1 && rs == 0x%llx",
	[F_MM_LOCAL_PID]	= HOST "local == 1 && rs == 0x%llx && rb & 1024",
};

/* Groups of per_group events, leader first: one per CPU, or one per task */
struct counter_set {
	int *fds;
	unsigned long long *base;	/* the values at tlbie_count_start() */
	int nr;				/* events open */
	int per_group;
};

static struct counter_set main_set, mm_set;
static enum tlbie_scope scope;
static bool opened;
static const char *why_not;
static char why_buf[320];

void tlbie_count_set_scope(enum tlbie_scope s)
{
	scope = s;
}

static long tracepoint_id(void)
{
	long id;

	if (read_long(TLBIE_ID_PATH, &id, 10) == 0 ||
	    read_long(TLBIE_ID_PATH2, &id, 10) == 0)
		return id;
	return -1;
}

/* Why perf_event_open() or a filter failed with @err */
static const char *explain(const char *what, int err, bool system_wide)
{
	long paranoid = 99;

	read_long("/proc/sys/kernel/perf_event_paranoid", &paranoid, 10);
	switch (err) {
	case EACCES:
	case EPERM:
		snprintf(why_buf, sizeof(why_buf),
			 "%s %s: %s (kernel.perf_event_paranoid is %ld: counting a kernel tracepoint needs <= 1 for a task, <= 0 on every CPU, or CAP_PERFMON)",
			 what, system_wide ? "on every CPU" : "for this process",
			 strerror(err), paranoid);
		break;
	case EMFILE:
	case ENFILE:
		snprintf(why_buf, sizeof(why_buf),
			 "%s: %s (RLIMIT_NOFILE too low for %d events per CPU)",
			 what, strerror(err), NR_FILTERS);
		break;
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		snprintf(why_buf, sizeof(why_buf), "%s: %s (no perf support for tracepoints?)",
			 what, strerror(err));
		break;
	default:
		snprintf(why_buf, sizeof(why_buf), "%s: %s", what, strerror(err));
		break;
	}
	return why_buf;
}

static int perf_open(long id, pid_t pid, int cpu, int group, const char *filter)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;
	attr.disabled = group < 0;
	/* Per task: the threads it creates from now on too */
	attr.inherit = pid == 0;
	fd = syscall(__NR_perf_event_open, &attr, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		why_not = explain("perf_event_open of powerpc:tlbie", errno, pid != 0);
		return -1;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter)) {
		fprintf(stderr, "tlbie_count: filter \"%s\": %s\n", filter, strerror(errno));
		why_not = explain("tracepoint filter rejected", errno, pid != 0);
		close(fd);
		return -1;
	}
	return fd;
}

static void close_set(struct counter_set *s)
{
	int i;

	for (i = 0; i < s->nr; i++)
		close(s->fds[i]);
	free(s->fds);
	free(s->base);
	memset(s, 0, sizeof(*s));
}

/*
 * Open groups of @nr_filters events with the filters @f: one group on
 * each of the @nr_cpus CPUs @cpus (every process), or without @cpus one
 * for the calling thread (pid 0, any CPU), inherited by the threads it
 * creates. A filter's "%llx" is replaced by @rs.
 */
static int open_set(struct counter_set *s, long id, const char * const *f, int nr_filters,
		    const int *cpus, int nr_cpus, unsigned long long rs)
{
	int groups = cpus ? nr_cpus : 1, g, i;
	char filter[256];

	s->per_group = nr_filters;
	s->fds = calloc((size_t)groups * nr_filters, sizeof(*s->fds));
	s->base = calloc((size_t)groups * nr_filters, sizeof(*s->base));
	if (!s->fds || !s->base) {
		why_not = "out of memory";
		return -1;
	}
	for (g = 0; g < groups; g++) {
		int leader = -1;

		for (i = 0; i < nr_filters; i++) {
			int fd;

			snprintf(filter, sizeof(filter), f[i], rs);
			fd = perf_open(id, cpus ? -1 : 0, cpus ? cpus[g] : -1, leader, filter);
			if (fd < 0)
				return -1;
			s->fds[s->nr++] = fd;
			if (leader < 0)
				leader = fd;
		}
	}
	return 0;
}

/* @request on every group of @s */
static int ioctl_set(struct counter_set *s, unsigned long request)
{
	int i;

	for (i = 0; i < s->nr; i += s->per_group)
		if (ioctl(s->fds[i], request, PERF_IOC_FLAG_GROUP))
			return -1;
	return 0;
}

/*
 * Read every event of @s; with @diff, what it counted since @s->base,
 * else store it as @s->base. An inherited event keeps what threads that
 * exited counted (in child_count) across PERF_EVENT_IOC_RESET, so counts
 * are taken as differences rather than reset.
 */
static int read_set(struct counter_set *s, unsigned long long *sum, bool diff)
{
	int i;

	for (i = 0; i < s->nr; i++) {
		unsigned long long v;

		if (read(s->fds[i], &v, sizeof(v)) != sizeof(v))
			return -1;
		if (diff)
			sum[i % s->per_group] += v - s->base[i];
		else
			s->base[i] = v;
	}
	return 0;
}

/* Parse a CPU list such as "0-3,6\n" into *@cpus (malloc()ed); count or -1 */
static int parse_cpu_list(const char *p, int **cpus)
{
	int *list = NULL, n = 0, size = 0;

	while (*p && *p != '\n') {
		long lo, hi;
		char *end;

		lo = strtol(p, &end, 10);
		if (end == p || lo < 0)
			goto bad;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				goto bad;
			p = end;
		}
		for (; lo <= hi; lo++) {
			if (n == size) {
				int *bigger;

				size = size ? 2 * size : 64;
				bigger = realloc(list, size * sizeof(*list));
				if (!bigger)
					goto bad;
				list = bigger;
			}
			list[n++] = lo;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto bad;
	}
	*cpus = list;
	return n;
bad:
	free(list);
	return -1;
}

/* /sys/devices/system/cpu/online, of any length */
static int online_cpus(int **cpus)
{
	char *buf, *text;
	size_t len;
	int n;

	if (read_file_alloc("/sys/devices/system/cpu/online", &buf, &len))
		return -1;
	text = realloc(buf, len + 1);
	if (!text) {
		free(buf);
		return -1;
	}
	text[len] = '\0';
	n = parse_cpu_list(text, cpus);
	free(text);
	return n;
}

/* The caller's affinity mask, as large as the kernel's; NULL on error */
static cpu_set_t *affinity(size_t *size)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	for (n = n > 0 ? n : 1024; n <= (1L << 22); n *= 2) {
		cpu_set_t *set = CPU_ALLOC(n);

		if (!set)
			return NULL;
		*size = CPU_ALLOC_SIZE(n);
		if (!sched_getaffinity(0, *size, set))
			return set;
		CPU_FREE(set);
		if (errno != EINVAL)
			return NULL;
	}
	return NULL;
}

int tlbie_usable_cpus(int **cpus)
{
	cpu_set_t *allowed;
	int *online, n, i, nr = 0;
	size_t size;

	n = online_cpus(&online);
	if (n < 0)
		return -1;
	allowed = affinity(&size);
	if (!allowed) {
		free(online);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (CPU_ISSET_S(online[i], size, allowed))
			online[nr++] = online[i];
	CPU_FREE(allowed);
	*cpus = online;
	return nr;
}

/*
 * The core of @cpu, -1 if sysfs does not say. On powerpc, core_id is the
 * core's number in the device tree, unique in the system.
 */
static long core_of(int cpu)
{
	char path[96];
	long core;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
	if (read_long(path, &core, 10) || core < 0)
		return -1;
	return core;
}

int tlbie_pick_cpus(int cpus[2])
{
	int *usable, nr, i, n = 0;
	long core = -1;

	nr = tlbie_usable_cpus(&usable);
	if (nr < 0)
		return -1;
	if (nr > 0) {
		cpus[n++] = usable[0];
		core = core_of(usable[0]);
	}
	for (i = 1; i < nr; i++) {
		long other = core_of(usable[i]);

		if (n == 1)
			cpus[n++] = usable[i];
		if (core >= 0 && other >= 0 && other != core) {
			cpus[1] = usable[i];
			break;
		}
	}
	free(usable);
	if (n == 2)
		printf("CPUs %d (core %ld) and %d (core %ld) of %d usable\n", cpus[0],
		       core_of(cpus[0]), cpus[1], core_of(cpus[1]), nr);
	return n;
}

int tlbie_bind_cpus(const int *cpus, int nr)
{
	int i, max = 0, rc;
	cpu_set_t *set;
	size_t size;

	for (i = 0; i < nr; i++)
		if (cpus[i] > max)
			max = cpus[i];
	set = CPU_ALLOC(max + 1);
	if (!set)
		return -1;
	size = CPU_ALLOC_SIZE(max + 1);
	CPU_ZERO_S(size, set);
	for (i = 0; i < nr; i++)
		CPU_SET_S(cpus[i], size, set);
	rc = sched_setaffinity(0, size, set);
	CPU_FREE(set);
	return rc ? -1 : 0;
}

int tlbie_bind_cpu(int cpu)
{
	return tlbie_bind_cpus(&cpu, 1);
}

/*
 * One flush of this process's: a page made read-only (no other CPU need
 * see it; where it is global, so much the better).
 */
static int flush_one_page(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;
	int rc;

	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	p[0] = 1;
	rc = mprotect(p, page, PROT_READ);
	munmap(p, page);
	return rc;
}

/*
 * The RS value of this process's flushes, for TLBIE_SCOPE_MM filters:
 * count one flush of ours with a counter per bit of the PID, each bit set
 * in every flush seen or in none. Noise (an IPI for another mm taken
 * meanwhile) mixes PIDs, and is measured again.
 */
#define PID_BITS	32

static int learn_rs(long id, unsigned long long *rs)
{
	int fds[PID_BITS + 1], tries, i, n;
	char filter[128];

	for (tries = 0; tries < TLBIE_TRIES; tries++) {
		unsigned long long v[PID_BITS + 1];
		bool mixed = false;

		*rs = 0;
		n = 0;
		for (i = 0; i <= PID_BITS; i++) {
			if (i == 0)
				snprintf(filter, sizeof(filter), HOST "rs != 0");
			else
				snprintf(filter, sizeof(filter), HOST "rs & 0x%llx",
					 1ULL << (RS_PID_SHIFT + i - 1));
			fds[n] = perf_open(id, 0, -1, n ? fds[0] : -1, filter);
			if (fds[n] < 0)
				goto out;
			n++;
		}
		if (ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) ||
		    flush_one_page() ||
		    ioctl(fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP))
			goto out;
		for (i = 0; i <= PID_BITS; i++)
			if (read(fds[i], &v[i], sizeof(v[i])) != sizeof(v[i]))
				goto out;
		for (i = 1; i <= PID_BITS; i++) {
			if (v[i] == v[0])
				*rs |= 1ULL << (RS_PID_SHIFT + i - 1);
			else if (v[i])
				mixed = true;
		}
		for (i = 0; i < n; i++)
			close(fds[i]);
		n = 0;
		if (v[0] && *rs && !mixed) {
			printf("this process flushes with rs=%#llx (PID %llu)\n", *rs,
			       *rs >> RS_PID_SHIFT);
			return 0;
		}
	}
	why_not = "cannot tell this process's PID from the flushes it issues";
	return -1;
out:
	for (i = 0; i < n; i++)
		close(fds[i]);
	if (!why_not)
		why_not = "cannot count this process's flushes";
	return -1;
}

static int open_all(long id)
{
	int *cpus = NULL, nr_cpus = 0, rc = -1;
	unsigned long long rs = 0;
	struct rlimit rl;

	if (scope != TLBIE_SCOPE_TASK) {
		nr_cpus = online_cpus(&cpus);
		if (nr_cpus <= 0) {
			why_not = "cannot read /sys/devices/system/cpu/online";
			return -1;
		}
		/* Descriptors per CPU: raise the soft limit on big machines */
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}

	if (scope == TLBIE_SCOPE_MM &&
	    (learn_rs(id, &rs) ||
	     open_set(&mm_set, id, mm_filters, NR_MM_FILTERS, cpus, nr_cpus, rs)))
		goto out;
	/* Per task but for TLBIE_SCOPE_SYSTEM */
	if (scope != TLBIE_SCOPE_SYSTEM) {
		free(cpus);
		cpus = NULL;
	}
	rc = open_set(&main_set, id, filters, NR_FILTERS, cpus, nr_cpus, 0);
out:
	free(cpus);
	return rc;
}

const char *tlbie_count_unavailable(void)
{
	bool hash;
	long id;

	if (opened)
		return why_not;
	opened = true;
	if (using_hash_mmu(&hash) || hash)
		return (why_not = "radix MMU not in use");
	id = tracepoint_id();
	if (id < 0) {
		snprintf(why_buf, sizeof(why_buf),
			 "cannot read the powerpc:tlbie tracepoint's id: %s (tracefs mounted and readable? CONFIG_EVENT_TRACING?)",
			 strerror(errno));
		return (why_not = why_buf);
	}
	if (open_all(id)) {
		close_set(&main_set);
		close_set(&mm_set);
		return why_not;
	}
	return NULL;
}

int tlbie_count_start(void)
{
	if (tlbie_count_unavailable())
		return -1;
	if (read_set(&main_set, NULL, false) || read_set(&mm_set, NULL, false))
		return -1;
	if (ioctl_set(&mm_set, PERF_EVENT_IOC_ENABLE))
		return -1;
	return ioctl_set(&main_set, PERF_EVENT_IOC_ENABLE);
}

int tlbie_count_stop(struct tlbie_counts *c)
{
	unsigned long long sum[NR_FILTERS] = { 0 }, mm[NR_MM_FILTERS] = { 0 };
	unsigned long long dups, user_seqs;

	if (ioctl_set(&main_set, PERF_EVENT_IOC_DISABLE) ||
	    ioctl_set(&mm_set, PERF_EVENT_IOC_DISABLE))
		return -1;
	if (read_set(&main_set, sum, true) || read_set(&mm_set, mm, true))
		return -1;

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
	c->pwc = sum[F_PWC];
	c->mm_local = mm[F_MM_LOCAL];
	c->mm_local_pid = mm[F_MM_LOCAL_PID];
	return 0;
}

void tlbie_count_close(void)
{
	close_set(&main_set);
	close_set(&mm_set);
	opened = false;
	why_not = NULL;
}

/* The " key=value" fields of @c and the end of the line */
void tlbie_counts_print_fields(const struct tlbie_counts *c)
{
	printf(" global=%llu global_pid=%llu global_page=%llu",
	       c->global, c->global_pid, c->global_page);
	printf(" local=%llu local_pid=%llu fixup=%llu", c->local, c->local_pid, c->fixup);
	printf(" raw_global=%llu raw_global_pid=%llu", c->raw_global, c->raw_global_pid);
	printf(" pwc=%llu", c->pwc);
	if (scope == TLBIE_SCOPE_MM)
		printf(" mm_local=%llu mm_local_pid=%llu", c->mm_local, c->mm_local_pid);
	printf("\n");
	fflush(stdout);
}

/* One line a harness can parse: "tlbie: <label> key=value ..." */
void tlbie_counts_print(const char *label, const struct tlbie_counts *c)
{
	printf("tlbie: %s", label);
	tlbie_counts_print_fields(c);
}

bool tlbie_measure_again(enum tlbie_verdict v, int *tries)
{
	if (v != TLBIE_TOO_MANY || ++*tries >= TLBIE_TRIES)
		return false;
	printf("more than expected: measuring again (%d of %d)\n", *tries + 1, TLBIE_TRIES);
	return true;
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
	/* Small pages: shmem THP would take away the per-page-table batches */
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 0x5a, len);
	return p;
}

void *tlbie_shm_attach(size_t size)
{
	void *addr;
	int id;

	/* Find room, give it back, attach there: nothing else maps meanwhile */
	addr = mmap(NULL, size + TLBIE_PMD_SPAN, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	munmap(addr, size + TLBIE_PMD_SPAN);
	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (id < 0) {
		perror("shmget");
		return NULL;
	}
	addr = shmat(id, tlbie_pmd_align(addr), 0);
	shmctl(id, IPC_RMID, NULL);
	if (addr == (void *)-1) {
		perror("shmat");
		return NULL;
	}
	/* Small pages: shmem THP would take away the per-page-table batches */
	madvise(addr, size, MADV_NOHUGEPAGE);
	return addr;
}

int tlbie_count_shmdt(size_t size, struct tlbie_counts *c, void **addr)
{
	*addr = tlbie_shm_attach(size);
	if (!*addr)
		return -1;
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
	while (!rc && c->local && ++tries < TLBIE_TRIES);
	return rc;
}

/*
 * Why a global flush does not issue tlbie here, from what the kernel was
 * told and set (not from a count, which a kernel that lost its tlbie
 * would pass): NULL when it must issue tlbie.
 */
static const char *tlbie_not_used(void)
{
	/* What the hypervisor agreed at CAS; there is none on powernv */
	const char *vec5 = "/proc/device-tree/chosen/ibm,architecture-vec-5";
	const char *enabled = "/sys/kernel/debug/powerpc/tlbie_enabled";
	char buf[256];
	size_t len;

	/*
	 * As early_check_vec5() reads it: with radix alone in byte 24
	 * (OV5_MMU_SUPPORT), GTSE is 0x40 of byte 26 (OV5_RADIX_GTSE), and
	 * bytes past the property's end are zero.
	 */
	if (!read_file(vec5, buf, sizeof(buf), &len) && len > 24 &&
	    (buf[24] & 0xc0) == 0x40 && (len <= 26 || !(buf[26] & 0x40)))
		return "no GTSE: this guest's global flushes are H_RPT_INVALIDATE hcalls";
	/* debugfs has no tlbie_enabled when tlbie is not capable at all */
	if (access("/sys/kernel/debug/powerpc", F_OK)) {
		printf("# no debugfs at /sys/kernel/debug: tlbie taken to be enabled\n");
		return NULL;
	}
	if (read_file(enabled, buf, sizeof(buf), &len) || !len)
		return "tlbie is not used (disable_tlbie, or tlbie not capable)";
	if (buf[0] == 'N' || buf[0] == '0')
		return "tlbie is disabled (debugfs powerpc/tlbie_enabled)";
	return NULL;
}

const char *tlbie_global_unavailable(void)
{
	struct tlbie_counts c;
	const char *why = tlbie_not_used();

	if (why)
		return why;
	if (tlbie_count_op_global(TLBIE_MPROTECT_RO, 1, &c))
		return "cannot measure a one-page flush";
	tlbie_counts_print("calibration_mprotect_ro_1", &c);
	if (c.global == 0)
		printf("# a global one-page flush issued no tlbie, where it must\n");
	return NULL;
}

int tlbie_thp_mode(const char *file)
{
	char path[128], buf[128];
	size_t len;

	snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/%s", file);
	if (read_file(path, buf, sizeof(buf) - 1, &len))
		return -1;
	buf[len] = '\0';
	if (strstr(buf, "[always]") || strstr(buf, "[force]"))
		return 2;
	if (strstr(buf, "[madvise]") || strstr(buf, "[advise]") || strstr(buf, "[within_size]"))
		return 1;
	return 0;
}

long tlbie_proc_value(const char *path, const char *key)
{
	size_t n = strlen(key);
	char line[256];
	long v = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && sscanf(line + n, "%ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

#define MAX_RESTORED	8

static struct restored {
	char path[128];
	char text[32];
} restored[MAX_RESTORED];
static int nr_restored;
static bool restore_registered;

/* Only what a signal handler may call */
static void write_back(void)
{
	int i, fd;

	for (i = 0; i < nr_restored; i++) {
		fd = open(restored[i].path, O_WRONLY);
		if (fd < 0)
			continue;
		if (write(fd, restored[i].text, strlen(restored[i].text)) < 0)
			;	/* nothing more a signal handler can do */
		close(fd);
	}
}

void tlbie_restore_files(void)
{
	write_back();
	nr_restored = 0;
}

static void restore_and_die(int sig)
{
	write_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

int tlbie_write_restored(const char *path, const char *text)
{
	struct restored *r;
	size_t len;
	int i;

	for (i = 0; i < nr_restored; i++)
		if (!strcmp(restored[i].path, path))
			break;
	if (i == nr_restored) {
		if (nr_restored == MAX_RESTORED || strlen(path) >= sizeof(r->path)) {
			errno = ENOSPC;
			return -1;
		}
		r = &restored[nr_restored];
		snprintf(r->path, sizeof(r->path), "%s", path);
		if (read_file(path, r->text, sizeof(r->text) - 1, &len))
			return -1;
		r->text[len] = '\0';
		r->text[strcspn(r->text, "\n")] = '\0';
		if (!restore_registered) {
			restore_registered = true;
			atexit(tlbie_restore_files);
			signal(SIGTERM, restore_and_die);
			signal(SIGINT, restore_and_die);
			signal(SIGALRM, restore_and_die);
		}
		nr_restored++;
	}
	return write_file(path, text, strlen(text));
}

static void *sibling_fn(void *arg)
{
	struct tlbie_sibling *s = arg;

	if (tlbie_bind_cpu(s->cpu)) {
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
	/* Until it runs on @cpu, or has given up: -1 ends the wait too */
	while (!__atomic_load_n(&s->running, __ATOMIC_ACQUIRE))
		sched_yield();
	if (__atomic_load_n(&s->running, __ATOMIC_ACQUIRE) < 0) {
		fprintf(stderr, "tlbie_sibling: cannot bind to CPU %d\n", cpu);
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
