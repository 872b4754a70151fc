// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * PTE updates are atomic. POWER's MMU sets a PTE's R and C bits itself, so
 * radix changes a live PTE with ldarx/stdcx. (__radix_pte_update(), 2018's
 * "Various TLB and PTE improvements" 5/7): a plain load and store would
 * lose a C bit set between them, and reclaim discards a MADV_FREE page
 * that is still clean. Each round: MADV_FREE; writers on other CPUs store
 * a new value once to each page, at scattered times, while the main thread
 * rewrites every PTE (mprotect() PROT_EXEC on and off, MADV_COLD); then
 * MADV_PAGEOUT, and every written page must hold its value. One page in
 * eight stays unwritten: the share discarded (MIN_DISCARD_PCT at least) is
 * the chance that a lost C bit shows. QEMU's TCG faults instead of setting
 * R/C, so this can fail on hardware (or KVM) only: it skips where a store
 * to a clean page faults.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define MAX_WRITERS	4
#define PAGES		64
#define SECONDS		5
#define MAX_DELAY	2048	/* loop iterations before a store, at most */
#define MIN_DISCARD_PCT	50	/* of the unwritten pages */

static char *area;
static long page_size;
static int cpus[MAX_WRITERS + 1], nr_writers, round_no, quit, done;

/* What round @r stores to page @i; 0: nothing, one page in eight */
static inline uint64_t value(int i, int r)
{
	return (i + r) % 8 ? (uint64_t)r << 32 | (i + 1) : 0;
}

static inline uint64_t *page(int i)
{
	return (uint64_t *)(area + i * page_size);
}

static void *writer(void *arg)
{
	int index = (long)arg, r = 0, i;
	uint64_t rnd = index * 2654435761ULL + 1;
	unsigned long delay;

	FAIL_IF_EXIT(tlbie_bind(cpus[index + 1]));
	while (!__atomic_load_n(&quit, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&round_no, __ATOMIC_ACQUIRE) == r)
			continue;
		r = __atomic_load_n(&round_no, __ATOMIC_ACQUIRE);
		for (i = index; i < PAGES; i += nr_writers) {
			if (!value(i, r))
				continue;
			rnd ^= rnd << 13;	/* xorshift: scattered times */
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			for (delay = rnd % MAX_DELAY; delay; delay--)
				__asm__ __volatile__("");
			__atomic_store_n(page(i), value(i, r), __ATOMIC_RELAXED);
		}
		__atomic_add_fetch(&done, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int test_pte_update(void)
{
	unsigned long rounds = 0, writes = 0, lost = 0, controls = 0, discarded = 0;
	pthread_t threads[MAX_WRITERS];
	struct rusage ru[2];
	bool hash, exec;
	size_t len;
	int i, r;
	time_t end;

	SKIP_IF_MSG(using_hash_mmu(&hash) || hash, "radix MMU not in use");
	page_size = sysconf(_SC_PAGESIZE);
	len = PAGES * page_size;
	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FAIL_IF(area == MAP_FAILED);
	madvise(area, len, MADV_NOHUGEPAGE);

	memset(area, 1, len);
	FAIL_IF(madvise(area, len, MADV_FREE));
	getrusage(RUSAGE_THREAD, &ru[0]);
	for (i = 0; i < PAGES; i++)
		*page(i) = 2;
	getrusage(RUSAGE_THREAD, &ru[1]);
	i = ru[1].ru_minflt - ru[0].ru_minflt;
	printf("stores to %d clean pages: %d page faults\n", PAGES, i);
	SKIP_IF_MSG(i >= PAGES / 2,
		    "the MMU does not set change bits itself (QEMU TCG): no race to lose one");
	FAIL_IF(madvise(area, len, MADV_FREE) || madvise(area, len, MADV_PAGEOUT));
	for (i = 0, r = 0; i < PAGES; i++)
		r += !*page(i);
	SKIP_IF_MSG(!r, "clean lazily freed pages are not discarded here");
	/* PROT_EXEC may be refused (SELinux execmem): MADV_COLD rewrites PTEs too */
	exec = !mprotect(area, len, PROT_READ | PROT_WRITE | PROT_EXEC);
	if (!exec)
		perror("mprotect(PROT_EXEC), so MADV_COLD alone rewrites the PTEs");
	FAIL_IF(mprotect(area, len, PROT_READ | PROT_WRITE));

	/* Writers on the other CPUs, up to MAX_WRITERS */
	nr_writers = tlbie_usable_cpus(cpus, ARRAY_SIZE(cpus)) - 1;
	SKIP_IF_MSG(nr_writers < 1, "needs two CPUs");
	FAIL_IF(tlbie_bind(cpus[0]));
	for (i = 0; i < nr_writers; i++)
		FAIL_IF(pthread_create(&threads[i], NULL, writer, (void *)(long)i));

	end = time(NULL) + SECONDS;
	for (r = 1; time(NULL) < end; r++, rounds++) {
		FAIL_IF(madvise(area, len, MADV_FREE));
		__atomic_store_n(&done, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&round_no, r, __ATOMIC_RELEASE);
		while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < nr_writers) {
			FAIL_IF(exec && (mprotect(area, len, PROT_READ | PROT_WRITE | PROT_EXEC) ||
					 mprotect(area, len, PROT_READ | PROT_WRITE)));
			FAIL_IF(madvise(area, len, MADV_COLD));
		}
		FAIL_IF(madvise(area, len, MADV_PAGEOUT));
		for (i = 0; i < PAGES; i++) {
			uint64_t v = *page(i);

			if (!value(i, r)) {
				controls++;
				discarded += !v;
				continue;
			}
			writes++;
			if (v != value(i, r) && lost++ < 10)
				printf("round %d: page %d holds %#llx, want %#llx\n", r, i,
				       (unsigned long long)v, (unsigned long long)value(i, r));
		}
	}
	__atomic_store_n(&quit, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nr_writers; i++)
		pthread_join(threads[i], NULL);

	printf("%lu rounds, %d writers, %d pages: %lu writes, %lu lost\n",
	       rounds, nr_writers, PAGES, writes, lost);
	printf("sensitivity: %lu of %lu unwritten pages discarded (want %d%%)\n",
	       discarded, controls, MIN_DISCARD_PCT);
	FAIL_IF_MSG(lost, "written pages were discarded: a change bit was lost");
	FAIL_IF_MSG(discarded * 100 < controls * MIN_DISCARD_PCT,
		    "too few clean pages discarded: a lost change bit could go unseen");
	return 0;
}

int main(void)
{
	return test_harness(test_pte_update, "tlbie_pte_update");
}
