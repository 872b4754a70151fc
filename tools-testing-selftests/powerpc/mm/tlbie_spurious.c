// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * No TLB flush for spurious faults or permission upgrades. Book3S 64
 * refetches a PTE before raising a fault for missing permission, so a
 * fault that finds the PTE already valid (another thread fixed it first)
 * needs no flush (flush_tlb_fix_spurious_fault() is empty), and neither
 * does mprotect() adding write permission (pte_needs_flush()). Removing
 * write permission does need one.
 *
 * Threads on every CPU write the pages of fresh mappings in the same
 * order, so their faults race and many find the PTE already valid: no
 * invalidation may be issued meanwhile. Whether a given run races depends
 * on timing; each round prints how many faults the threads took.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define MAX_THREADS	8
#define PAGES		512
#define ROUNDS		8

static pthread_barrier_t start, done;
static char *area;
static long page_size;
static int cpus[MAX_THREADS];

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void *writer(void *arg)
{
	int cpu = (long)arg, r, i;

	if (bind_to_cpu(cpu) != cpu)
		return (void *)1;
	for (r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&start);
		for (i = 0; i < PAGES; i++)
			area[i * page_size + cpu] = 1;
		pthread_barrier_wait(&done);
	}
	/* Exit (glibc frees the stack: a flush) only once counting stopped */
	pthread_barrier_wait(&start);
	return NULL;
}

static int racing_faults(int nr)
{
	pthread_t threads[MAX_THREADS];
	struct tlbie_counts c;
	size_t len = PAGES * page_size;
	int r, i, failed = 0;
	long faults;

	pthread_barrier_init(&start, NULL, nr + 1);
	pthread_barrier_init(&done, NULL, nr + 1);
	for (i = 0; i < nr; i++)
		FAIL_IF(pthread_create(&threads[i], NULL, writer, (void *)(long)cpus[i]));

	for (r = 0; r < ROUNDS; r++) {
		area = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		FAIL_IF(area == MAP_FAILED);
		madvise(area, len, MADV_NOHUGEPAGE);

		faults = minor_faults();
		FAIL_IF(tlbie_count_start());
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		FAIL_IF(tlbie_count_stop(&c));
		faults = minor_faults() - faults;

		printf("round %d: %d threads, %d pages, %ld faults\n", r, nr, PAGES, faults);
		tlbie_counts_print("racing_write_faults", &c);
		if (c.global || c.local) {
			printf("racing faults issued invalidations\n");
			failed = 1;
		}
		munmap(area, len);
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < nr; i++)
		pthread_join(threads[i], NULL);
	return failed;
}

/* With a thread live on another CPU, so a flush would be global */
static int protection_changes(int cpu)
{
	struct tlbie_sibling sibling;
	struct tlbie_counts c;
	const char *why;
	int failed = 0;

	FAIL_IF(tlbie_sibling_start(&sibling, cpu));
	why = tlbie_global_unavailable();
	if (why) {
		printf("skipping the downgrade check: %s\n", why);
		tlbie_sibling_stop(&sibling);
		return 0;
	}

	FAIL_IF(tlbie_count_op(TLBIE_MPROTECT_RW, 8, &c));
	tlbie_counts_print("mprotect_upgrade_8", &c);
	if (c.global || c.local) {
		printf("adding write permission issued invalidations\n");
		failed = 1;
	}

	FAIL_IF(tlbie_count_op_global(TLBIE_MPROTECT_RO, 8, &c));
	tlbie_counts_print("mprotect_downgrade_8", &c);
	if (c.global_page != 8) {
		printf("removing write permission: want 8 per-page tlbie\n");
		failed = 1;
	}

	tlbie_sibling_stop(&sibling);
	return failed;
}

static int test_spurious(void)
{
	const char *why;
	int nr, failed;

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	nr = tlbie_online_cpus(cpus, MAX_THREADS);
	SKIP_IF_MSG(nr < 2, "needs two online CPUs");
	page_size = sysconf(_SC_PAGESIZE);

	failed = racing_faults(nr);
	FAIL_IF(bind_to_cpu(cpus[0]) != cpus[0]);
	failed |= protection_changes(cpus[1]);

	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_spurious, "tlbie_spurious");
}
