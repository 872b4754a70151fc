// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * With the radix MMU each CPU patches kernel text through a temporary mm
 * of its own, made when the CPU comes online and torn down when it goes
 * offline (text_area_cpu_up_mm(), text_area_cpu_down_mm()). Tearing it
 * down must free its page tables: take a CPU offline and online again
 * CYCLES times and check that the page-table pages in /proc/vmstat
 * (nr_page_table_pages) do not grow with the cycles. A kernel that loses
 * the tables leaks a few pages per cycle (two with 64K pages). Freed page
 * tables go back after an RCU grace period, so the count is read once it
 * has stopped falling; other processes can add a few pages meanwhile, so
 * growth of up to a quarter of a page per cycle passes, and a failure is
 * measured again, up to three times in all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "utils.h"

#define CYCLES	100
#define TRIES	3

static long page_table_pages(void)
{
	char line[128];
	long n = -1;
	FILE *f;

	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nr_page_table_pages %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The count once RCU has freed what the cycles gave back (at most 5 s) */
static long settled_page_table_pages(void)
{
	long n = page_table_pages(), last;
	int i;

	for (i = 0; i < 50; i++) {
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
	long before, after, allowed = CYCLES / 4;
	int cpu, i, tries = 0;
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
	do {
		before = settled_page_table_pages();
		for (i = 0; i < CYCLES; i++) {
			FAIL_IF(set_online(cpu, 0));
			FAIL_IF(set_online(cpu, 1));
		}
		after = settled_page_table_pages();
		printf("cpu %d offline/online x%d: nr_page_table_pages %ld -> %ld",
		       cpu, CYCLES, before, after);
		printf(" (want growth <= %ld)\n", allowed);
	} while (after - before > allowed && ++tries < TRIES);
	FAIL_IF(tries == TRIES);
	return 0;
}

int main(void)
{
	return test_harness(test_patching_mm_leak, "patching_mm_leak");
}
