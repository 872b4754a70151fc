// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * With the radix MMU each CPU patches kernel text through a temporary mm
 * of its own, made when the CPU comes online and torn down when it goes
 * offline (text_area_cpu_up_mm(), text_area_cpu_down_mm()). Tearing it
 * down must free its page tables: take a CPU offline and online again
 * for a while and check that the page-table pages in /proc/vmstat
 * (nr_page_table_pages) do not grow with the cycles. Freed page tables go
 * back after an RCU grace period, so the count is read once it has stopped
 * falling, with the per-CPU deltas folded in; a failure is measured
 * again, up to TRIES times in all.
 *
 * A kernel that loses the tables leaks the patching mm's PMD and PTE
 * pages every cycle (its PGD and PUD do not count as page-table pages): 2
 * pages a cycle, 198 to 214 in 100 cycles as seen with 64K pages. Fixed
 * kernels grew by 0 to 32 pages in 100 cycles (QEMU, 4 CPUs, read without
 * folding the per-CPU deltas in), which did not come with the cycles:
 * other processes' page tables, and the deltas. So N cycles pass with a
 * growth of up to N pages, halfway between the two, a margin of N pages
 * either way: at least MIN_CYCLES (32), the most a fixed kernel showed,
 * and 64 at MAX_CYCLES, where the leak adds 128.
 *
 * The cycles of a measurement stop at MAX_CYCLES, or once it had its share
 * of BUDGET seconds for all and MIN_CYCLES, or at the end of the budget;
 * with the reads (SETTLE s at most each), the test takes under a minute.
 * Hotplug too slow for MIN_CYCLES within the budget gives no verdict.
 * For a longer run set PATCHING_MM_LEAK_SECONDS to a budget in seconds:
 * then only the budget limits the cycles, and the test's timeout grows to
 * match (run it on its own: the kselftest runner stops it at 130 s).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"

#define BUDGET		30	/* seconds of hotplug in all */
#define TRIES		3
#define MAX_CYCLES	64	/* per measurement, but for a longer run */
#define MIN_CYCLES	32	/* per measurement, for a verdict */
#define SETTLE		5	/* seconds a read waits at most */

static long budget = BUDGET, max_cycles = MAX_CYCLES;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long page_table_pages(void)
{
	char line[128];
	long n = -1;
	FILE *f;
	int fd;

	/* Fold the per-CPU deltas in (root only): else they lag up to a second */
	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			perror("/proc/sys/vm/stat_refresh");
		close(fd);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nr_page_table_pages %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The count once RCU has freed what the cycles gave back (at most SETTLE s) */
static long settled_page_table_pages(void)
{
	long n = page_table_pages(), last;
	int i;

	for (i = 0; i < SETTLE * 10; i++) {
		usleep(100000);
		last = n;
		n = page_table_pages();
		if (n >= last && i >= 4)
			break;
	}
	return n;
}

static int set_online(int cpu, int online)
{
	char path[64];
	int fd, rc, err;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	rc = write(fd, online ? "1" : "0", 1) == 1 ? 0 : -1;
	err = errno;
	close(fd);
	errno = err;
	return rc;
}

/* 1 if @cpu is online, 0 if not, -1 if it has no online file */
static int is_online(int cpu)
{
	char path[64], c;
	int fd, n;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, &c, 1);
	close(fd);
	return n == 1 ? c == '1' : -1;
}

static int cycled_cpu = -1;

/* The harness's timeout (SIGALRM) or a kill: leave the CPU online */
static void online_and_die(int sig)
{
	if (cycled_cpu >= 0)
		set_online(cycled_cpu, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * The highest-numbered online CPU whose online file takes a write (CPU 0
 * often has none; CPUs an administrator took offline are left alone), -1
 * if there is none, -2 if we may not write it.
 */
static int hotpluggable_cpu(void)
{
	int cpu;

	for (cpu = sysconf(_SC_NPROCESSORS_CONF) - 1; cpu > 0; cpu--) {
		if (is_online(cpu) != 1)
			continue;
		if (set_online(cpu, 1) == 0)
			return cpu;
		if (errno == EACCES || errno == EPERM)
			return -2;
	}
	return -1;
}

static int test_patching_mm_leak(void)
{
	double end, start, share, t;
	long before, after, cycles;
	int cpu, tries = 0;
	bool hash;

	SKIP_IF_MSG(using_hash_mmu(&hash) || hash,
		    "hash MMU: no temporary mm for code patching");
	cpu = hotpluggable_cpu();
	SKIP_IF_MSG(cpu == -2, "no permission for CPU hotplug");
	SKIP_IF_MSG(cpu < 0, "no CPU that can be taken offline");
	SKIP_IF_MSG(page_table_pages() < 0, "no nr_page_table_pages in /proc/vmstat");

	cycled_cpu = cpu;
	signal(SIGTERM, online_and_die);
	signal(SIGINT, online_and_die);
	signal(SIGALRM, online_and_die);
	end = now() + budget;
	do {
		before = settled_page_table_pages();
		start = now();
		share = (end - start) / (TRIES - tries);
		for (cycles = 0; cycles < max_cycles; cycles++) {
			t = now();
			if (t >= end || (t - start >= share && cycles >= MIN_CYCLES))
				break;
			FAIL_IF(set_online(cpu, 0));
			FAIL_IF(set_online(cpu, 1));
		}
		t = now() - start;
		after = settled_page_table_pages();
		printf("cpu %d offline/online x%ld in %.1f s: nr_page_table_pages %ld -> %ld",
		       cpu, cycles, t, before, after);
		printf(" (want growth <= %ld; a leak adds %ld)\n", cycles, 2 * cycles);
		if (cycles < MIN_CYCLES) {
			/* Too few to tell: an earlier measurement's failure stands */
			FAIL_IF_MSG(tries, "no time left to measure again");
			SKIP_IF_MSG(true, "CPU hotplug too slow for a verdict in the time budget");
		}
	} while (after - before > cycles && ++tries < TRIES);
	FAIL_IF(tries == TRIES);
	return 0;
}

int main(void)
{
	const char *env = getenv("PATCHING_MM_LEAK_SECONDS");
	char *end;

	if (env) {
		budget = strtol(env, &end, 10);
		if (end == env || *end || budget <= 0) {
			fprintf(stderr, "PATCHING_MM_LEAK_SECONDS=%s: not a number of seconds\n",
				env);
			return 1;
		}
		max_cycles = LONG_MAX;
		/* The hotplug, the reads, and a minute for a last cycle and the rest */
		test_harness_set_timeout(budget + TRIES * 2 * SETTLE + 60);
	}
	return test_harness(test_patching_mm_leak, "patching_mm_leak");
}
