// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * With radix each CPU patches kernel text through a temporary mm of its
 * own, made when the CPU comes online and torn down when it goes offline,
 * which must free its page tables ("powerpc/code-patching: Finish the
 * mmu_gather in put_patching_mm()"): cycle a CPU offline and online and
 * check that nr_page_table_pages in /proc/vmstat does not grow with the
 * cycles. A leak is 2 pages a cycle (198 to 214 in 100 with 64K pages);
 * fixed kernels grew by 0 to 32 in 100. N cycles (MIN_CYCLES at least)
 * pass with a growth of up to N pages, read once RCU freed what they gave
 * back; a failure is measured again, TRIES times within BUDGET seconds of
 * hotplug. main() brings the CPU back online however the test ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"

#define BUDGET		30	/* seconds of hotplug in all */
#define TRIES		3
#define MAX_CYCLES	64	/* per measurement */
#define MIN_CYCLES	32	/* per measurement, for a verdict */
#define SETTLE		5	/* seconds a read waits at most */

static int cpu = -1;
static char online[64];

static long page_table_pages(void)
{
	char line[128];
	long n = -1;
	FILE *f;

	/* Fold the per-CPU deltas in (root only): else they lag up to a second */
	write_file("/proc/sys/vm/stat_refresh", "1", 1);
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nr_page_table_pages %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The count once it has stopped falling (RCU frees page tables late) */
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

/* Hotplug time, which a change of the wall clock must not cut short */
static time_t seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static int set_online(int on)
{
	return write_file(online, on ? "1" : "0", 1);
}

/*
 * The highest-numbered online CPU whose online file takes a write (CPU 0
 * often has none; CPUs taken offline by an administrator are left alone):
 * the CPU, -1 if none, -2 if we may not.
 */
static int hotpluggable_cpu(void)
{
	long c = sysconf(_SC_NPROCESSORS_CONF), on;

	while (--c > 0) {
		snprintf(online, sizeof(online), "/sys/devices/system/cpu/cpu%ld/online", c);
		if (read_long(online, &on, 10) || on != 1)
			continue;
		if (!set_online(1))
			return c;
		if (errno == EACCES || errno == EPERM)
			return -2;
	}
	return -1;
}

static int test_patching_mm_leak(void)
{
	long before, after, cycles;
	time_t end, start, share, t;
	int tries = 0;
	bool hash;

	SKIP_IF_MSG(using_hash_mmu(&hash) || hash,
		    "hash MMU: no temporary mm for code patching");
	SKIP_IF_MSG(cpu == -2, "no permission for CPU hotplug");
	SKIP_IF_MSG(cpu < 0, "no CPU that can be taken offline");
	SKIP_IF_MSG(page_table_pages() < 0, "no nr_page_table_pages in /proc/vmstat");

	end = seconds() + BUDGET;
	do {
		before = settled_page_table_pages();
		start = seconds();
		share = (end - start) / (TRIES - tries);
		for (cycles = 0; cycles < MAX_CYCLES; cycles++) {
			t = seconds();
			if (t >= end || (t - start >= share && cycles >= MIN_CYCLES))
				break;
			FAIL_IF(set_online(0) || set_online(1));
		}
		t = seconds() - start;
		after = settled_page_table_pages();
		printf("cpu %d offline/online x%ld in %ld s: nr_page_table_pages %ld -> %ld",
		       cpu, cycles, (long)t, before, after);
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
	int rc;

	cpu = hotpluggable_cpu();
	rc = test_harness(test_patching_mm_leak, "patching_mm_leak");
	if (cpu >= 0 && set_online(1))
		perror(online);
	return rc;
}
