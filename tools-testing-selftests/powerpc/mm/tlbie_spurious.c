// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * No TLB flush for spurious faults or permission upgrades. Book3S 64
 * refetches a PTE before raising a fault for missing permission, so a
 * fault that finds the PTE already valid (another thread fixed it first)
 * needs no flush (flush_tlb_fix_spurious_fault() is empty), and neither
 * does mprotect() adding write permission (pte_needs_flush()). Removing
 * write permission does need one.
 *
 * Threads on up to MAX_THREADS CPUs write the pages of fresh mappings in
 * the same order, so their faults race: no invalidation may be issued
 * meanwhile. Each page takes one fault to map it; every further fault a
 * thread takes on it (getrusage(RUSAGE_THREAD) counts them) found the PTE
 * already valid, set by another thread's fault, and took the path under
 * test. Each round prints how many; a run in which no fault ever found
 * its PTE valid tested nothing, and fails.
 *
 * Without GTSE the flushes go through the hypervisor, not tlbie, and a
 * wrong flush would not be counted: skipped there.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define MAX_THREADS	8
#define PAGES		512
#define ROUNDS		8

struct writer {
	pthread_t thread;
	int cpu;
	int index;
	long faults;		/* in its last round */
};

static pthread_barrier_t start, done;
static char *area;
static long page_size;
static int bound, unbound, quit;	/* writers bound to their CPU, or not */

static long thread_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

static void *writer(void *arg)
{
	struct writer *w = arg;
	long faults;
	int i;

	if (tlbie_bind_cpu(w->cpu)) {
		__atomic_add_fetch(&unbound, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_add_fetch(&bound, 1, __ATOMIC_RELEASE);
	for (;;) {
		pthread_barrier_wait(&start);
		/* Exit (glibc frees the stack: a flush) only once counting stopped */
		if (__atomic_load_n(&quit, __ATOMIC_ACQUIRE))
			break;
		faults = thread_faults();
		for (i = 0; i < PAGES; i++)
			area[i * page_size + w->index] = 1;
		w->faults = thread_faults() - faults;
		pthread_barrier_wait(&done);
	}
	return NULL;
}

/* One round; *@valid: faults that found their PTE valid */
static int one_round(struct writer *w, int nr, int r, struct tlbie_counts *c, long *valid)
{
	size_t len = PAGES * page_size;
	long faults = 0;
	int i;

	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return -1;
	madvise(area, len, MADV_NOHUGEPAGE);

	if (tlbie_count_start())
		return -1;
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&done);
	if (tlbie_count_stop(c))
		return -1;
	munmap(area, len);

	for (i = 0; i < nr; i++)
		faults += w[i].faults;
	*valid = faults > PAGES ? faults - PAGES : 0;
	printf("round %d: %d threads, %d pages, %ld faults, %ld of them found the PTE valid\n",
	       r, nr, PAGES, faults, *valid);
	tlbie_counts_print("racing_write_faults", c);
	return 0;
}

static int racing_faults(const int *cpus, int nr)
{
	struct writer w[MAX_THREADS];
	long valid, total = 0;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	int r, i, tries, failed = 0;

	pthread_barrier_init(&start, NULL, nr + 1);
	pthread_barrier_init(&done, NULL, nr + 1);
	for (i = 0; i < nr; i++) {
		w[i].cpu = cpus[i];
		w[i].index = i;
		FAIL_IF(pthread_create(&w[i].thread, NULL, writer, &w[i]));
	}
	/* Every writer bound, or not: never wait at a barrier for one that quit */
	while (__atomic_load_n(&bound, __ATOMIC_ACQUIRE) +
	       __atomic_load_n(&unbound, __ATOMIC_ACQUIRE) < nr)
		sched_yield();
	FAIL_IF_MSG(unbound, "a writer thread could not bind to its CPU");

	for (r = 0; r < ROUNDS; r++) {
		tries = 0;
		do {
			FAIL_IF(one_round(w, nr, r, &c, &valid));
			total += valid;
			v = c.global || c.local ? TLBIE_TOO_MANY : TLBIE_PASS;
		} while (tlbie_measure_again(v, &tries));
		if (v != TLBIE_PASS) {
			printf("racing faults issued invalidations\n");
			failed = 1;
		}
	}
	__atomic_store_n(&quit, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&start);
	for (i = 0; i < nr; i++)
		pthread_join(w[i].thread, NULL);

	printf("%ld faults found their PTE valid in all\n", total);
	if (!total) {
		printf("no fault raced another: spurious faults were not tested\n");
		failed = 1;
	}
	return failed;
}

/* With a thread live on another core, so a flush would be global */
static int protection_changes(int cpu)
{
	struct tlbie_sibling sibling;
	enum tlbie_verdict v;
	struct tlbie_counts c;
	int failed = 0, tries = 0;

	FAIL_IF(tlbie_sibling_start(&sibling, cpu));

	do {
		FAIL_IF(tlbie_count_op(TLBIE_MPROTECT_RW, 8, &c));
		tlbie_counts_print("mprotect_upgrade_8", &c);
		v = c.global || c.local ? TLBIE_TOO_MANY : TLBIE_PASS;
	} while (tlbie_measure_again(v, &tries));
	if (v != TLBIE_PASS) {
		printf("adding write permission issued invalidations\n");
		failed = 1;
	}

	tries = 0;
	do {
		FAIL_IF(tlbie_count_op_global(TLBIE_MPROTECT_RO, 8, &c));
		tlbie_counts_print("mprotect_downgrade_8", &c);
		if (c.global_page > 8 || c.global_pid)
			v = TLBIE_TOO_MANY;
		else
			v = c.global_page < 8 ? TLBIE_TOO_FEW : TLBIE_PASS;
	} while (tlbie_measure_again(v, &tries));
	if (v != TLBIE_PASS) {
		printf("removing write permission: want 8 per-page tlbie\n");
		failed = 1;
	}

	tlbie_sibling_stop(&sibling);
	return failed;
}

static int test_spurious(void)
{
	struct tlbie_sibling sibling;
	int pair[2], *cpus, nr, failed;
	const char *why;

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_pick_cpus(pair) < 2, "needs two CPUs");
	page_size = sysconf(_SC_PAGESIZE);
	/* Before binding: the CPUs this process may use, for the writers */
	nr = tlbie_usable_cpus(&cpus);
	FAIL_IF(nr < 2);

	FAIL_IF(tlbie_bind_cpu(pair[0]));
	FAIL_IF(tlbie_sibling_start(&sibling, pair[1]));
	why = tlbie_global_unavailable();
	tlbie_sibling_stop(&sibling);
	SKIP_IF_MSG(why, why);

	failed = racing_faults(cpus, nr < MAX_THREADS ? nr : MAX_THREADS);
	free(cpus);
	failed |= protection_changes(pair[1]);

	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_spurious, "tlbie_spurious");
}
