// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * No stale translation survives a flush. A thread on another CPU keeps the
 * translations of a range hot by reading it; once munmap(),
 * mprotect(PROT_NONE) or MADV_DONTNEED of the range has returned in the
 * main thread, that thread's next read of every page must fault (munmap,
 * PROT_NONE) or return zero (MADV_DONTNEED of private anonymous memory),
 * never the old data. The same single-threaded, where the flush is local.
 * Ranges of 1 page, around the global flush ceiling and above the local
 * one, so every flush strategy is exercised.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define PATTERN		0xa5

/*
 * IDLE -> HOT (reader loops over the pages) -> HOLD (reader stops touching
 * them, its TLB still holds them: HELD) -> main thread unmaps -> CHECK ->
 * CHECKED (reader read each page once more) -> IDLE.
 */
enum { IDLE, HOT, HOLD, HELD, CHECK, CHECKED, QUIT };

static char *area;
static unsigned long nr_pages;
static long page_size;
static int phase, passes;
static unsigned long faults, zeroes, stale;
static __thread sigjmp_buf fault_jmp;

static void segv(int sig, siginfo_t *info, void *ctx)
{
	siglongjmp(fault_jmp, 1);
}

/* Read every page once; count faults, zeroes and old data. */
static void check_pages(void)
{
	unsigned long i;

	faults = 0;
	zeroes = 0;
	stale = 0;
	for (i = 0; i < nr_pages; i++) {
		if (sigsetjmp(fault_jmp, 1)) {
			faults++;
			continue;
		}
		if (__atomic_load_n(&area[i * page_size], __ATOMIC_RELAXED) == (char)PATTERN)
			stale++;
		else
			zeroes++;
	}
}

static void keep_hot(void)
{
	unsigned long i;

	for (i = 0; i < nr_pages; i++)
		(void)__atomic_load_n(&area[i * page_size], __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
	int cpu = (long)arg, ph;

	if (bind_to_cpu(cpu) != cpu)
		return (void *)1;
	while ((ph = __atomic_load_n(&phase, __ATOMIC_ACQUIRE)) != QUIT) {
		if (ph == HOT) {
			keep_hot();
			__atomic_add_fetch(&passes, 1, __ATOMIC_RELEASE);
		} else if (ph == HOLD) {
			__atomic_store_n(&phase, HELD, __ATOMIC_RELEASE);
		} else if (ph == CHECK) {
			check_pages();
			__atomic_store_n(&phase, CHECKED, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void set_phase(int ph)
{
	__atomic_store_n(&phase, ph, __ATOMIC_RELEASE);
}

static void wait_for(int *var, int val)
{
	while (__atomic_load_n(var, __ATOMIC_ACQUIRE) < val)
		;
}

static int apply(int op)
{
	size_t len = nr_pages * page_size;

	switch (op) {
	case TLBIE_MUNMAP:
		return munmap(area, len);
	case TLBIE_DONTNEED:
		return madvise(area, len, MADV_DONTNEED);
	default:
		return mprotect(area, len, PROT_NONE);
	}
}

static const char * const op_name[] = { "munmap", "madv_dontneed", "mprotect_none" };

/* One case; @threaded: another thread reads, else this one. */
static int one(int op, unsigned long pages, bool threaded)
{
	size_t len = pages * page_size;
	bool want_fault = op != TLBIE_DONTNEED;

	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FAIL_IF(area == MAP_FAILED);
	madvise(area, len, MADV_NOHUGEPAGE);
	memset(area, PATTERN, len);
	nr_pages = pages;

	if (threaded) {
		int seen = __atomic_load_n(&passes, __ATOMIC_ACQUIRE);

		set_phase(HOT);
		wait_for(&passes, seen + 2);	/* translations are cached */
		set_phase(HOLD);
		wait_for(&phase, HELD);		/* no access races the unmap */
		FAIL_IF(apply(op));
		set_phase(CHECK);
		wait_for(&phase, CHECKED);
		set_phase(IDLE);
	} else {
		keep_hot();
		FAIL_IF(apply(op));
		check_pages();
	}

	printf("%s %s of %lu pages: %lu faulted, %lu read zero, %lu read old data\n",
	       threaded ? "2 threads" : "1 thread", op_name[op], pages, faults, zeroes, stale);
	if (op != TLBIE_MUNMAP)
		munmap(area, len);
	if (stale || (want_fault ? faults : zeroes) != pages) {
		printf("stale translation: want every page to %s\n",
		       want_fault ? "fault" : "read zero");
		return 1;
	}
	return 0;
}

static int test_stale(void)
{
	int cpus[2], ceiling = 33, local_ceiling = 256, failed = 0;
	unsigned long sizes[6];
	pthread_t thread;
	bool hash;
	int op, t;
	unsigned int i;

	SKIP_IF_MSG(using_hash_mmu(&hash) || hash, "radix MMU not in use");
	SKIP_IF_MSG(tlbie_online_cpus(cpus, 2) < 2, "needs two online CPUs");
	page_size = sysconf(_SC_PAGESIZE);
	read_debugfs_int("powerpc/tlb_single_page_flush_ceiling", &ceiling);
	read_debugfs_int("powerpc/tlb_local_single_page_flush_ceiling", &local_ceiling);
	sizes[0] = 1;
	sizes[1] = 2;
	sizes[2] = ceiling ? ceiling : 1;
	sizes[3] = ceiling + 1;
	sizes[4] = 2 * TLBIE_PMD_SPAN / page_size + 3;
	sizes[5] = local_ceiling + 1;

	push_signal_handler(SIGSEGV, segv);
	FAIL_IF(bind_to_cpu(cpus[0]) != cpus[0]);

	for (t = 0; t < 2; t++) {
		if (t == 1) {
			set_phase(IDLE);
			FAIL_IF(pthread_create(&thread, NULL, reader, (void *)(long)cpus[1]));
		}
		for (op = TLBIE_MUNMAP; op <= TLBIE_MPROTECT_RO; op++)
			for (i = 0; i < ARRAY_SIZE(sizes); i++)
				failed |= one(op, sizes[i], t == 1);
	}
	set_phase(QUIT);
	pthread_join(thread, NULL);

	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_stale, "tlbie_stale");
}
