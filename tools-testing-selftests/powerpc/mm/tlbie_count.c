// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Count TLB invalidations with the powerpc:tlbie tracepoint: one counting
 * event (pmu/event.c) per filter below, for the calling task and the
 * threads and processes it creates, or on every online CPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "event.h"
#include "tlbie_count.h"
#include "utils.h"

/*
 * Process-scoped flushes of the host (a KVM host's flushes for a guest
 * carry its LPID in RS bits 32-63, IBM numbering), and of those the user
 * PIDs' (RS != 0). RB's IS field (1024) is set for a whole-PID flush.
 * POWER9's fix-ups follow each tlbie sequence with a tlbie to PID 0, RIC 0
 * and, with CPU_FTR_P9_TLBIE_STQ_BUG, one for the sequence's PID: of the
 * address 2^52 - 1 after a whole-PID flush, else of its last page again.
 * The kernel's own flushes are _tlbie_pid(0, RIC_FLUSH_ALL), with fix-ups.
 */
#define HOST		"lpid == 0 && prs == 1 && !(rs & 0xffffffff) && "
#define USER		HOST "rs != 0 && "
#define NOT_DUMMY	"(rb < 0xffffffffff000 || rb >= 0x10000000000000)"

enum {
	TLBIE_RAW, TLBIE_GLOBAL, TLBIE_GLOBAL_PID, TLBIE_SEQ, TLBIE_KERNEL, TLBIE_LOCAL,
	TLBIE_LOCAL_PID, TLBIE_PWC, TLBIE_PWC_ONLY, TLBIE_NR
};

static const char * const filters[TLBIE_NR] = {
	[TLBIE_RAW]		= HOST "local == 0",
	[TLBIE_GLOBAL]		= USER "local == 0",
	[TLBIE_GLOBAL_PID]	= USER "local == 0 && rb & 1024",
	/* One a sequence with fix-ups, the kernel's and the users' */
	[TLBIE_SEQ]		= HOST "local == 0 && rs == 0 && ric == 0 && " NOT_DUMMY,
	[TLBIE_KERNEL]		= HOST "local == 0 && rs == 0 && ric == 2",
	[TLBIE_LOCAL]		= USER "local == 1",
	[TLBIE_LOCAL_PID]	= USER "local == 1 && rb & 1024",
	[TLBIE_PWC]		= USER "ric != 0",
	[TLBIE_PWC_ONLY]	= USER "ric == 1",
};

static enum tlbie_scope scope;
static struct event *events;
static unsigned long long *base;
static int nr_events, fixups = -1;
static long id = -1;
static const char *why_not;
static char why[200];

void tlbie_count_set_scope(enum tlbie_scope s)
{
	scope = s;
}

int tlbie_event_open(struct event *e, pid_t pid, int cpu, const char *filter)
{
	int err;

	if (id < 0 && read_long("/sys/kernel/tracing/events/powerpc/tlbie/id", &id, 10) &&
	    read_long("/sys/kernel/debug/tracing/events/powerpc/tlbie/id", &id, 10)) {
		errno = ENOENT;
		return -1;
	}
	event_init_opts(e, id, PERF_TYPE_TRACEPOINT, "tlbie");
	e->attr.inherit = pid == 0;
	if (event_open_with_options(e, pid, cpu, -1))
		return -1;
	if (!ioctl(e->fd, PERF_EVENT_IOC_SET_FILTER, filter))
		return 0;
	err = errno;
	event_close(e);
	errno = err;
	return -1;
}

/*
 * The fix-ups a sequence takes follow the CPU features the kernel chose (a
 * POWER9-mode guest on POWER10, dt_cpu_ftrs=off), not the PVR: learnt from
 * a global flush of one page, counted as if there were none. It is one
 * user tlbie, a STQ fix-up for its PID, and K kernel flushes: each with
 * its fix-ups.
 */
static void learn_fixups(void)
{
	size_t page = getpagesize();
	struct tlbie_counts c;
	int cpu[2], tries;
	cpu_set_t saved;
	long long n;
	char *p;

	fixups = 0;
	if (tlbie_global_unavailable() || sched_getaffinity(0, sizeof(saved), &saved))
		return;
	if (tlbie_usable_cpus(cpu, 2) < 2) {
		printf("fix-up tlbie a flush: cannot tell (one usable CPU), taken as 0\n");
		return;
	}
	if (!tlbie_bind(cpu[0]) && !tlbie_sibling_start(cpu[1])) {
		for (fixups = -1, tries = 0; fixups < 0 && tries < 5; tries++) {
			p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);
			if (p == MAP_FAILED)
				break;
			p[0] = 1;
			if (tlbie_count_start() || mprotect(p, page, PROT_READ) ||
			    tlbie_count_stop(&c))
				c.raw_global = 0;
			munmap(p, page);
			n = (long long)(c.raw_global / (c.kernel + 1)) - 1;
			if (c.raw_global == (n + 1) * (c.kernel + 1) && n >= 0 && n <= 2 &&
			    c.global == (n == 2 ? 2 : 1))
				fixups = n;
		}
		tlbie_sibling_stop();
		printf("fix-up tlbie a flush: %s\n", fixups < 0 ? "cannot tell, taken as 0" :
		       fixups ? fixups == 1 ? "1 (ERAT)" : "2 (ERAT, STQ)" : "none");
		fixups = fixups < 0 ? 0 : fixups;
	}
	sched_setaffinity(0, sizeof(saved), &saved);
}

const char *tlbie_count_unavailable(void)
{
	bool all = scope == TLBIE_SCOPE_SYSTEM;
	int cpus = all ? get_nprocs_conf() : 1, cpu, i;
	long paranoid = -9, online;
	struct rlimit rl;
	char path[64];
	bool hash;

	if (events || why_not)
		return why_not;
	if (using_hash_mmu(&hash) || hash)
		return (why_not = "needs the radix MMU");
	events = calloc((size_t)cpus * TLBIE_NR, sizeof(*events));
	base = calloc((size_t)cpus * TLBIE_NR, sizeof(*base));
	/* TLBIE_NR descriptors a CPU */
	if (all && !getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (cpu = 0; events && base && cpu < cpus; cpu++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		if (all && !read_long(path, &online, 10) && !online)
			continue;
		for (i = 0; i < TLBIE_NR; i++, nr_events++)
			if (tlbie_event_open(&events[nr_events], all ? -1 : 0, all ? cpu : -1,
					     filters[i]))
				goto fail;
	}
	if (events && base) {
		if (fixups < 0)
			learn_fixups();
		return NULL;
	}
	errno = ENOMEM;
fail:
	read_long("/proc/sys/kernel/perf_event_paranoid", &paranoid, 10);
	snprintf(why, sizeof(why), "cannot count powerpc:tlbie: %s (perf_event_paranoid %ld)",
		 strerror(errno), paranoid);
	tlbie_count_close();
	return (why_not = why);
}

int tlbie_count_start(void)
{
	int i;

	if (tlbie_count_unavailable())
		return -1;
	/* Inherited counts do not reset: take differences */
	for (i = 0; i < nr_events; i++) {
		if (event_read(&events[i]))
			return -1;
		base[i] = events[i].result.value;
	}
	return 0;
}

static unsigned long long minus(unsigned long long a, unsigned long long b)
{
	return a > b ? a - b : 0;
}

int tlbie_count_stop(struct tlbie_counts *c)
{
	unsigned long long v[TLBIE_NR] = { 0 }, user_seqs;
	int i;

	for (i = 0; i < nr_events; i++) {
		if (event_read(&events[i]))
			return -1;
		v[i % TLBIE_NR] += events[i].result.value - base[i];
	}
	/* With STQ, each user sequence's second fix-up is a tlbie for its PID */
	user_seqs = fixups == 2 ? minus(v[TLBIE_SEQ], v[TLBIE_KERNEL]) : 0;
	c->global = minus(v[TLBIE_GLOBAL], user_seqs);
	c->global_pid = v[TLBIE_GLOBAL_PID];
	c->global_page = minus(c->global, c->global_pid);
	c->local = v[TLBIE_LOCAL];
	c->local_pid = v[TLBIE_LOCAL_PID];
	c->pwc = v[TLBIE_PWC];
	c->pwc_only = v[TLBIE_PWC_ONLY];
	c->kernel = v[TLBIE_KERNEL];
	c->raw_global = v[TLBIE_RAW];
	c->fixup = minus(c->raw_global, c->global + c->kernel * (1 + fixups));
	return 0;
}

void tlbie_count_close(void)
{
	while (nr_events)
		event_close(&events[--nr_events]);
	free(events);
	free(base);
	events = NULL;
	base = NULL;
	why_not = NULL;
}

void tlbie_counts_print(const char *label, const struct tlbie_counts *c)
{
	if (label)
		printf("tlbie: %s", label);
	printf(" global=%llu global_pid=%llu global_page=%llu local=%llu local_pid=%llu",
	       c->global, c->global_pid, c->global_page, c->local, c->local_pid);
	printf(" pwc=%llu pwc_only=%llu kernel=%llu fixup=%llu raw_global=%llu\n",
	       c->pwc, c->pwc_only, c->kernel, c->fixup, c->raw_global);
	fflush(stdout);
}

int tlbie_fixups_per_flush(void)
{
	return fixups < 0 ? 0 : fixups;
}

int tlbie_judge(const struct tlbie_counts *c, const struct tlbie_want *w)
{
	long sets = w->local && !have_hwcap2(PPC_FEATURE2_ARCH_3_1) ? 128 : 1;
	long pid = w->local ? (long)(c->local_pid - c->pwc_only) / sets :
			      (long)(c->global_pid - c->pwc_only);
	long page = w->local ? (long)(c->local - c->local_pid) : (long)c->global_page;
	long fixup = w->fixups ? w->pid * tlbie_fixups_per_flush() : 0;
	long split = w->pid - pid;

	printf("  want %s: whole-PID %ld, per-page %ld, page walk cache %ld",
	       w->local ? "tlbiel" : "tlbie", w->pid, w->page, w->pwc);
	if (w->fixups)
		printf(", fix-ups %ld", fixup);
	printf("\n");
	if (w->local ? c->global : c->local)
		return 1;
	if (page < w->page || (long)c->pwc < w->pwc || (long)c->fixup < fixup)
		return -1;
	if (split > 0)
		return split <= 2 && w->ceiling &&
		       page >= w->page + (w->ceiling / 2 + 1) * split ? 1 : -1;
	return pid > w->pid || page > w->page || (long)c->pwc > w->pwc ||
	       (w->fixups && (long)c->fixup > fixup);
}

const char *tlbie_global_unavailable(void)
{
	char buf[256] = "";
	size_t len;

	/* As early_check_vec5() reads CAS: radix alone in byte 24, GTSE 0x40 of 26 */
	if (!read_file("/proc/device-tree/chosen/ibm,architecture-vec-5", buf, sizeof(buf),
		       &len) && len > 24 && (buf[24] & 0xc0) == 0x40 &&
	    (len <= 26 || !(buf[26] & 0x40)))
		return "no GTSE: global flushes are H_RPT_INVALIDATE hcalls";
	memset(buf, 0, sizeof(buf));
	/* There is no tlbie_enabled where tlbie is not capable */
	if (read_debugfs_file("powerpc/tlbie_enabled", buf, sizeof(buf) - 1))
		return access("/sys/kernel/debug/powerpc", F_OK) ? NULL : "tlbie is not used";
	return buf[0] == 'N' ? "tlbie is disabled (debugfs powerpc/tlbie_enabled)" : NULL;
}

static long core_of(int cpu)
{
	char path[80];
	long core = -1 - cpu;	/* its own, where sysfs does not say */

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
	read_long(path, &core, 10);
	return core;
}

int tlbie_usable_cpus(int *cpu, int max)
{
	int nr = get_nprocs_conf(), i, j, n = 0, round;
	size_t size = CPU_ALLOC_SIZE(nr);
	cpu_set_t *set = CPU_ALLOC(nr);
	long *core = calloc(max, sizeof(*core));

	if (!set || !core || sched_getaffinity(0, size, set))
		nr = 0;
	for (round = 0; round < 2; round++)
		for (i = 0; n < max && i < nr; i++) {
			if (!CPU_ISSET_S(i, size, set))
				continue;
			if (!round)
				core[n] = core_of(i);
			for (j = 0; !round && j < n && core[j] != core[n]; j++)
				;
			if (round || j == n) {
				cpu[n++] = i;
				CPU_CLR_S(i, size, set);
			}
		}
	CPU_FREE(set);
	free(core);
	return n;
}

int tlbie_bind(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The spinning threads, stopped newest first */
static struct sibling {
	pthread_t thread;
	int cpu, tid, stop;
} siblings[TLBIE_MAX_SIBLINGS];
static int nr_siblings;

static void *spin(void *arg)
{
	struct sibling *s = arg;

	/* Running there: the mm is in its mm_cpumask */
	__atomic_store_n(&s->tid, tlbie_bind(s->cpu) ? -1 : syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
		;
	return NULL;
}

int tlbie_sibling_start(int cpu)
{
	struct sibling *s = &siblings[nr_siblings];

	if (nr_siblings == TLBIE_MAX_SIBLINGS)
		return -1;
	s->cpu = cpu;
	s->tid = 0;
	s->stop = 0;
	if (pthread_create(&s->thread, NULL, spin, s))
		return -1;
	nr_siblings++;
	while (!__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE))
		sched_yield();
	if (s->tid > 0)
		return 0;
	tlbie_sibling_stop();
	return -1;
}

void tlbie_sibling_stop(void)
{
	struct sibling *s;
	char path[64];

	if (!nr_siblings)
		return;
	s = &siblings[--nr_siblings];
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_join(s->thread, NULL);
	/* pthread_join() returns before the thread has dropped the mm */
	snprintf(path, sizeof(path), "/proc/self/task/%d", s->tid);
	while (s->tid > 0 && !access(path, F_OK))
		sched_yield();
}

long tlbie_anon_huge_kb(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[128];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

int tlbie_nohugepage(void *p, size_t len)
{
	/* EINVAL: no CONFIG_TRANSPARENT_HUGEPAGE */
	return madvise(p, len, MADV_NOHUGEPAGE) && errno != EINVAL ? -1 : 0;
}

int tlbie_set_knob(const char *knob, const char *val)
{
	return write_debugfs_file(knob, val, strlen(val));
}

static const char * const knobs[] = {
	TLBIE_GLOBAL_CEILING, TLBIE_LOCAL_CEILING, TLBIE_BATCH_RULE
};

static char saved[ARRAY_SIZE(knobs)][32];
static pid_t saver;

/* main() wakes from the harness's waitpid(), which then kills the test */
static void on_term(int sig)
{
	if (getpid() != saver) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

void tlbie_knobs_save(void)
{
	struct sigaction sa = { .sa_handler = on_term };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		read_debugfs_file(knobs[i], saved[i], sizeof(saved[i]) - 1);
	saver = getpid();
	sigaction(SIGTERM, &sa, NULL);
}

void tlbie_knobs_restore(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		if (saved[i][0] && tlbie_set_knob(knobs[i], saved[i]))
			printf("cannot restore %s to %s\n", knobs[i], saved[i]);
}
