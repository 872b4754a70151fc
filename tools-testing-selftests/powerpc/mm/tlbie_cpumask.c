// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mm_cpumask trimming (Nicholas Piggin, v4.18: "reset mm_cpumask for single
 * thread process when possible", "flush remote CPUs out of single-threaded
 * mm_cpumask"): a single-threaded process's flush has every other CPU in
 * its mm_cpumask flush its PID with tlbiel and leave the mask, then flushes
 * with tlbiel here only. Counted here and, for this PID (learnt one bit of
 * RS at a time), on every other CPU, a munmap() of PAGES pages issues:
 * after running on other CPUs, PAGES tlbiel and a whole-PID flush on each
 * of them (128 tlbiel on POWER9); again, PAGES tlbiel only; with a thread
 * live elsewhere, PAGES tlbie; first after its exit, PAGES tlbiel and a
 * whole-PID flush on its CPU, then PAGES tlbiel only.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "event.h"
#include "tlbie_count.h"
#include "utils.h"

#define PAGES		4
#define MAX_OTHERS	7
#define HOST		"lpid == 0 && prs == 1 && local == 1 && "

static int cpu[2], others[MAX_OTHERS], nr_others;
static unsigned long long rs;
static struct event *ev;	/* two per other CPU: tlbiel for our PID, whole-PID */
static long sets;

/* @pages private pages unmapped (or made read-only) in a table: no table freed */
static int flush(int pages, bool unmap, struct tlbie_counts *c)
{
	size_t page = getpagesize(), len = (pages + 2) * page;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i, rc;

	if (p == MAP_FAILED)
		return -1;
	for (i = 0; i < pages + 2; i++)
		p[i * page] = 1;
	rc = c ? tlbie_count_start() : 0;
	rc = rc ?: unmap ? munmap(p + page, pages * page) :
			   mprotect(p + page, pages * page, PROT_READ);
	rc = rc ?: c ? tlbie_count_stop(c) : 0;
	munmap(p, len);
	return rc;
}

/* Of our local flushes of a page (and its mapping), 1 if all match @filter, 0 if none */
static int all_match(const char *filter)
{
	struct event e[2];
	int rc = -1;

	if (tlbie_event_open(&e[0], 0, -1, filter))
		return -1;
	if (!tlbie_event_open(&e[1], 0, -1, HOST "rs != 0")) {
		if (!flush(1, false, NULL) && !event_read(&e[0]) && !event_read(&e[1]) &&
		    e[1].result.value)
			rc = e[0].result.value == e[1].result.value ? 1 :
			     e[0].result.value ? -1 : 0;
		event_close(&e[1]);
	}
	event_close(&e[0]);
	return rc;
}

/*
 * RS of our flushes (the PID from bit 32), a bit at a time; an IPI for
 * another mm meanwhile mixes PIDs: learnt again
 */
static int learn_rs(void)
{
	char filter[128];
	int bit, tries, n;

	for (tries = 0; tries < TLBIE_TRIES; tries++) {
		for (n = 0, rs = 0, bit = 32; n >= 0 && bit < 64; bit++) {
			snprintf(filter, sizeof(filter), HOST "rs & %#llx", 1ULL << bit);
			n = all_match(filter);
			rs |= n > 0 ? 1ULL << bit : 0;
		}
		snprintf(filter, sizeof(filter), HOST "rs == %#llx", rs);
		if (n >= 0 && all_match(filter) == 1) {
			printf("this process flushes with rs=%#llx\n", rs);
			return 0;
		}
	}
	return -1;
}

static unsigned long long other_counts(unsigned long long *pid)
{
	unsigned long long sum = 0;
	int i;

	*pid = 0;
	for (i = 0; i < 2 * nr_others; i++)
		if (!event_read(&ev[i]))
			*(i & 1 ? pid : &sum) += ev[i].result.value;	/* odd: whole-PID */
	return sum;
}

/*
 * Before the munmap(): 1 to run on the other CPUs, 2 to start and stop a
 * thread on cpu[1]; @flushed: whole-PID flushes the other CPUs must see
 */
static int measure(const char *label, int before, bool global, int flushed)
{
	unsigned long long total, pid, total0, pid0;
	struct tlbie_counts c;
	int tries, i, v = -1;

	for (tries = 0; v && tries < TLBIE_TRIES; tries++) {
		for (i = 0; before == 1 && i < nr_others; i++)
			FAIL_IF(tlbie_bind(others[i]));
		FAIL_IF(tlbie_bind(cpu[0]));
		if (before == 2) {
			FAIL_IF(tlbie_sibling_start(cpu[1]));
			tlbie_sibling_stop();
		}
		total0 = other_counts(&pid0);
		FAIL_IF(flush(PAGES, true, &c));
		total = other_counts(&pid) - total0;
		pid -= pid0;
		tlbie_counts_print(label, &c);
		printf("  elsewhere: %llu tlbiel, %llu whole-PID; want %d flushes of %ld\n",
		       total, pid, flushed, sets);
		v = tlbie_judge(&c, &(struct tlbie_want){ .local = !global, .page = PAGES });
		if (!v && (total != pid || pid != (unsigned long long)flushed * sets))
			v = pid < (unsigned long long)flushed * sets ? -1 : 1;
		if (v < 0)
			break;
	}
	printf("%s: %s\n", label, v ? "FAIL" : "pass");
	return v != 0;
}

static int test_cpumask(void)
{
	int list[MAX_OTHERS + 1], nr, i, n, failed = 0;
	const char *why;
	char filter[128];

	sets = have_hwcap2(PPC_FEATURE2_ARCH_3_1) ? 1 : 128;
	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	/* Other cores first: the thread's CPU (cpu[1]) is others[0] */
	nr = tlbie_usable_cpus(list, ARRAY_SIZE(list));
	SKIP_IF_MSG(nr < 2, "needs two CPUs");
	memcpy(cpu, list, sizeof(cpu));
	FAIL_IF(tlbie_bind(cpu[0]) || flush(1, false, NULL) || learn_rs());

	/* Counting other CPUs is system-wide: perf_event_paranoid <= 0 or CAP_PERFMON */
	ev = calloc(2 * nr, sizeof(*ev));
	FAIL_IF(!ev);
	for (i = 1; i < nr; i++) {
		snprintf(filter, sizeof(filter), HOST "rs == %#llx", rs);
		n = 2 * nr_others;
		SKIP_IF_MSG(tlbie_event_open(&ev[n], -1, list[i], filter),
			    "cannot count on other CPUs (perf_event_paranoid > 0?)");
		strcat(filter, " && rb & 1024");
		FAIL_IF(tlbie_event_open(&ev[n + 1], -1, list[i], filter));
		others[nr_others++] = list[i];
	}

	failed |= measure("after_running_elsewhere", 1, false, nr_others);
	for (i = 0; i < 3; i++)
		failed |= measure("single_thread", 0, false, 0);
	why = tlbie_global_unavailable();
	if (why) {
		printf("second thread live: not measured: %s\n", why);
	} else {
		FAIL_IF(tlbie_sibling_start(cpu[1]));
		for (i = 0; i < 3; i++)
			failed |= measure("second_thread_live", 0, true, 0);
		tlbie_sibling_stop();
	}
	failed |= measure("first_after_thread_exit", 2, false, 1);
	for (i = 0; i < 3; i++)
		failed |= measure("after_thread_exit", 0, false, 0);
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_cpumask, "tlbie_cpumask");
}
