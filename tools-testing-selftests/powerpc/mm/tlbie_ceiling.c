// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The flush ceilings in debugfs mean what radix_tlb.c says they mean: a
 * range of more than N pages flushes the whole PID, one of N pages or
 * fewer is flushed page by page. For the global ceiling (a thread live on
 * another CPU, tlbie) and the local one (a single-threaded process,
 * tlbiel), set the ceiling to N and munmap() N - 1, N and N + 1 pages.
 *
 * The ceilings are restored on every exit path, signals included (with
 * only open(), write() and close() in the handler).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define GLOBAL_FILE	"powerpc/tlb_single_page_flush_ceiling"
#define LOCAL_FILE	"powerpc/tlb_local_single_page_flush_ceiling"
#define N		8

static int saved_global = -1, saved_local = -1;
/* What restore_and_die() writes back: formatted before any signal */
static char saved_text[2][24];

static void restore(void)
{
	if (saved_global >= 0)
		write_debugfs_int(GLOBAL_FILE, saved_global);
	if (saved_local >= 0)
		write_debugfs_int(LOCAL_FILE, saved_local);
}

static void write_saved(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			;	/* nothing more a signal handler can do */
		close(fd);
	}
}

static void restore_and_die(int sig)
{
	write_saved("/sys/kernel/debug/" GLOBAL_FILE, saved_text[0]);
	write_saved("/sys/kernel/debug/" LOCAL_FILE, saved_text[1]);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Global: want per-page up to N, one whole-PID flush above N. */
static int check_global(unsigned long pages, const struct tlbie_counts *c)
{
	if (pages <= N)
		return c->global_page == pages && c->global_pid == 0;
	return c->global_page == 0 && c->global_pid == 1;
}

/* Local: same, where a whole-PID tlbiel is one per TLB set on POWER9. */
static int check_local(unsigned long pages, const struct tlbie_counts *c)
{
	if (c->global)
		return 0;
	if (pages <= N)
		return c->local == pages && c->local_pid == 0;
	return c->local_pid >= 1 && c->local == c->local_pid;
}

static int run(const char *scope, int (*check)(unsigned long, const struct tlbie_counts *))
{
	bool global = check == check_global;
	struct tlbie_counts c;
	unsigned long pages;
	char label[64];
	int failed = 0;

	/* The first flush may trim CPUs the process ran on before: not counted. */
	FAIL_IF(tlbie_count_op(TLBIE_MUNMAP, 1, &c));

	for (pages = N - 1; pages <= N + 1; pages++) {
		if (global)
			FAIL_IF(tlbie_count_op_global(TLBIE_MUNMAP, pages, &c));
		else
			FAIL_IF(tlbie_count_op(TLBIE_MUNMAP, pages, &c));
		snprintf(label, sizeof(label), "%s_ceiling_%d_munmap_%lu", scope, N, pages);
		tlbie_counts_print(label, &c);
		if (!check(pages, &c)) {
			printf("%s ceiling %d, %lu pages: want %s\n", scope, N, pages,
			       pages <= N ? "per-page flushes only" : "one whole-PID flush");
			failed = 1;
		}
	}
	return failed;
}

static int test_ceiling(void)
{
	struct tlbie_sibling sibling;
	int cpus[2], failed;
	const char *why;

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_online_cpus(cpus, 2) < 2, "needs two online CPUs");
	SKIP_IF_MSG(read_debugfs_int(GLOBAL_FILE, &saved_global) ||
		    read_debugfs_int(LOCAL_FILE, &saved_local),
		    "no flush ceilings in debugfs");
	printf("ceilings were: global %d, local %d\n", saved_global, saved_local);
	snprintf(saved_text[0], sizeof(saved_text[0]), "%d", saved_global);
	snprintf(saved_text[1], sizeof(saved_text[1]), "%d", saved_local);

	atexit(restore);
	signal(SIGTERM, restore_and_die);
	signal(SIGINT, restore_and_die);
	signal(SIGALRM, restore_and_die);
	FAIL_IF(write_debugfs_int(GLOBAL_FILE, N) || write_debugfs_int(LOCAL_FILE, N));

	/* Single-threaded: the kernel trims the mm to this CPU, tlbiel. */
	FAIL_IF(bind_to_cpu(cpus[0]) != cpus[0]);
	failed = run("local", check_local);

	FAIL_IF(tlbie_sibling_start(&sibling, cpus[1]));
	why = tlbie_global_unavailable();
	/* A local failure is a failure, whether or not global can be measured */
	if (why && !failed)
		SKIP_IF_MSG(why, why);
	if (!why)
		failed |= run("global", check_global);
	else
		printf("global ceiling not measured: %s\n", why);
	tlbie_sibling_stop(&sibling);

	restore();
	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_ceiling, "tlbie_ceiling");
}
