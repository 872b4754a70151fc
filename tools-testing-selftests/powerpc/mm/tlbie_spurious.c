// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * No TLB flush for spurious faults or permission upgrades (Nicholas
 * Piggin, v4.18: "powerpc/64s/radix: do not flush TLB on spurious fault"):
 * Book3S 64 refetches a PTE before it faults, so a write fault that finds
 * the PTE valid (another thread's fault set it) needs no flush, nor does
 * mprotect() adding write permission; removing it does. Threads on up to
 * MAX_THREADS CPUs write a fresh mapping's pages in the same order, so that
 * their faults race, and no page may be invalidated, in any of ROUNDS
 * rounds. Every fault past a page's first (RUSAGE_THREAD) found its PTE
 * valid; rounds where none did tested nothing, and all of them so fail.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "event.h"
#include "tlbie_count.h"
#include "utils.h"

#define MAX_THREADS	8
#define PAGES		512
#define ROUNDS		8

static pthread_barrier_t start, done;
static char *area;
static long page_size, faults[MAX_THREADS];
static int cpus[MAX_THREADS], bound, quit;

static long thread_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

static void *writer(void *arg)
{
	long i, index = (long)arg, before;

	if (!tlbie_bind(cpus[index]))
		__atomic_add_fetch(&bound, 1, __ATOMIC_RELEASE);
	for (;;) {
		pthread_barrier_wait(&start);
		/* Exit (a flush: glibc frees the stack) once counting stopped */
		if (__atomic_load_n(&quit, __ATOMIC_ACQUIRE))
			return NULL;
		before = thread_faults();
		for (i = 0; i < PAGES; i++)
			area[i * page_size + index] = 1;
		faults[index] = thread_faults() - before;
		pthread_barrier_wait(&done);
	}
}

/*
 * Each round one try: a retry would drop the rounds whose faults raced.
 * Invalidations of the area's pages, by any of this process's threads,
 * are what a flush on spurious faults issues; other ones are only shown.
 */
static int racing_faults(int nr)
{
	unsigned long long inside = 0, before;
	size_t len = PAGES * page_size;
	long valid, total = 0, i;
	struct tlbie_counts c;
	pthread_t t[MAX_THREADS];
	char filter[160];
	struct event e;
	int r;

	area = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	FAIL_IF(area == MAP_FAILED);
	/* RB of a page: its address and the page size's AP */
	snprintf(filter, sizeof(filter), "prs == 1 && rs != 0 && rb >= %#lx && rb < %#lx",
		 (unsigned long)area, (unsigned long)area + len);
	FAIL_IF(tlbie_event_open(&e, 0, -1, filter));
	pthread_barrier_init(&start, NULL, nr + 1);
	pthread_barrier_init(&done, NULL, nr + 1);
	for (i = 0; i < nr; i++)
		FAIL_IF(pthread_create(&t[i], NULL, writer, (void *)i));
	for (r = 0; r < ROUNDS; r++) {
		/* Fresh: no PTE */
		FAIL_IF(mmap(area, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != area);
		FAIL_IF(tlbie_nohugepage(area, len));
		FAIL_IF(event_read(&e) || tlbie_count_start());
		before = e.result.value;
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		FAIL_IF(tlbie_count_stop(&c) || event_read(&e));
		inside += e.result.value - before;
		for (valid = -PAGES, i = 0; i < nr; i++)
			valid += faults[i];
		total += valid > 0 ? valid : 0;
		printf("round %d: %d threads, %ld faults found the PTE valid, %llu invalidated\n",
		       r, nr, valid, e.result.value - before);
		tlbie_counts_print("racing_write_faults", &c);
	}
	__atomic_store_n(&quit, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&start);
	for (i = 0; i < nr; i++)
		pthread_join(t[i], NULL);
	event_close(&e);
	munmap(area, len);
	FAIL_IF_MSG(bound != nr, "a writer could not bind to its CPU");
	printf("in all: %ld faults found their PTE valid, %llu invalidations of the area\n",
	       total, inside);
	FAIL_IF_MSG(!total, "no fault raced another: spurious faults were not tested");
	return inside != 0;
}

/* mprotect() of 8 written pages from @from to @to, counted */
static int protect(const char *label, int from, int to, long page)
{
	struct tlbie_counts c;
	int tries, i, v = 1;
	char *p;

	for (tries = 0; v > 0 && tries < TLBIE_TRIES; tries++) {
		p = mmap(NULL, 10 * page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		FAIL_IF(p == MAP_FAILED);
		for (i = 0; i < 10; i++)
			p[i * page_size] = 1;
		FAIL_IF(mprotect(p + page_size, 8 * page_size, from));
		FAIL_IF(tlbie_count_start() || mprotect(p + page_size, 8 * page_size, to) ||
			tlbie_count_stop(&c));
		munmap(p, 10 * page_size);
		tlbie_counts_print(label, &c);
		v = tlbie_judge(&c, &(struct tlbie_want){ .page = page });
	}
	return v != 0;
}

static int test_spurious(void)
{
	int rw = PROT_READ | PROT_WRITE, nr, failed;
	const char *why;

	page_size = getpagesize();
	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	why = tlbie_global_unavailable();
	SKIP_IF_MSG(why, why);
	nr = tlbie_usable_cpus(cpus, MAX_THREADS);
	SKIP_IF_MSG(nr < 2, "needs two CPUs");

	failed = racing_faults(nr);
	FAIL_IF(tlbie_bind(cpus[0]) || tlbie_sibling_start(cpus[1]));
	failed |= protect("mprotect_upgrade_8", PROT_READ, rw, 0);
	failed |= protect("mprotect_downgrade_8", rw, PROT_READ, 8);
	tlbie_sibling_stop();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_spurious, "tlbie_spurious");
}
