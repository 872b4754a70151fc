// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * PTE updates are atomic: POWER's MMU sets a PTE's change (C, dirty) bit
 * itself, atomically, when a store needs it ("PTE Subject to Atomic
 * Hardware Updates" in the ISA), so the kernel must change a live PTE
 * with a ldarx/stdcx. loop (__radix_pte_update()): a plain load and store
 * would lose a C bit the MMU set between them.
 *
 * A lost C bit loses data where the kernel trusts it to say a page was
 * written: a lazily freed page (MADV_FREE) is clean until written again,
 * and reclaim discards it if it is still clean. Each round:
 *  1. MADV_FREE of the range: every page lazily free and clean, and its
 *     TLB entries flushed;
 *  2. writer threads on other CPUs store a value new to the round to each
 *     page, once, at scattered times, the MMU setting its C bit, while the
 *     main thread rewrites every PTE of the range over and over (mprotect()
 *     adding and removing execute permission, MADV_COLD clearing the
 *     reference bit);
 *  3. once the writers are done, MADV_PAGEOUT reclaims the range: a page
 *     whose C bit an update lost is clean again, and is discarded;
 *  4. every written page must hold its value: a discarded one reads zero.
 * Nothing writes a page between its one store and the check, so a lost
 * bit cannot be covered up. One page in eight is left unwritten in a
 * round, and reads zero after step 3 if reclaim discarded it, as it should:
 * a run in which that never happened tested nothing, and fails (the test
 * skips where clean lazily freed pages are not discarded even without
 * writers).
 *
 * Whether a run catches a lost update depends on timing: the window is the
 * few cycles between the load and the store, and each round gives each
 * page one chance. It cannot fail under QEMU's TCG, whose MMU does not
 * set C bits: the kernel does, in its fault handler, under the PTE lock.
 * Soft-dirty is not checked: it is a software bit, set in the fault
 * handler under the PTE lock, which atomic updates do not protect.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#ifndef MADV_COLD
#define MADV_COLD	20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

#define MAX_WRITERS	4
#define PAGES		64
#define SECONDS		5
#define MAX_DELAY	2048	/* loop iterations before a store, at most */

struct writer {
	pthread_t thread;
	int cpu;
	int index;
};

static char *area;
static long page_size;
static int nr_writers;
static int round_no, quit, done, bound, unbound;

/* Page @i is left unwritten in round @r */
static bool control(int i, int r)
{
	return (i + r) % 8 == 0;
}

static uint64_t value(int i, int r)
{
	return (uint64_t)r << 32 | (i + 1);
}

static uint64_t *page(int i)
{
	return (uint64_t *)(area + i * page_size);
}

static void *writer(void *arg)
{
	struct writer *w = arg;
	uint64_t rnd = w->index * 2654435761ULL + 1;
	int r = 0, i;

	if (tlbie_bind_cpu(w->cpu)) {
		__atomic_add_fetch(&unbound, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_add_fetch(&bound, 1, __ATOMIC_RELEASE);
	for (;;) {
		while (__atomic_load_n(&round_no, __ATOMIC_ACQUIRE) == r &&
		       !__atomic_load_n(&quit, __ATOMIC_ACQUIRE))
			;
		if (__atomic_load_n(&quit, __ATOMIC_ACQUIRE))
			break;
		r = __atomic_load_n(&round_no, __ATOMIC_ACQUIRE);
		for (i = w->index; i < PAGES; i += nr_writers) {
			unsigned long delay;

			if (control(i, r))
				continue;
			/* xorshift: stores at scattered times */
			rnd ^= rnd << 13;
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

/* Clean pages lazily freed and paged out: how many were discarded */
static int discarded_alone(void)
{
	int i, n = 0;

	memset(area, 0x5a, PAGES * page_size);
	if (madvise(area, PAGES * page_size, MADV_FREE) ||
	    madvise(area, PAGES * page_size, MADV_PAGEOUT))
		return -1;
	for (i = 0; i < PAGES; i++)
		n += !*page(i);
	return n;
}

static int test_pte_update(void)
{
	unsigned long rounds = 0, writes = 0, lost = 0, controls = 0, discarded = 0;
	struct writer workers[MAX_WRITERS];
	int *cpus, nr, i, r, exec = 1;
	size_t len;
	time_t end;
	bool hash;

	SKIP_IF_MSG(using_hash_mmu(&hash) || hash, "radix MMU not in use");
	nr = tlbie_usable_cpus(&cpus);
	SKIP_IF_MSG(nr < 2, "needs two CPUs");
	page_size = sysconf(_SC_PAGESIZE);
	len = PAGES * page_size;
	nr_writers = nr - 1 < MAX_WRITERS ? nr - 1 : MAX_WRITERS;

	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FAIL_IF(area == MAP_FAILED);
	madvise(area, len, MADV_NOHUGEPAGE);
	FAIL_IF(tlbie_bind_cpu(cpus[0]));

	i = discarded_alone();
	printf("MADV_FREE, MADV_PAGEOUT: %d of %d clean pages discarded\n", i, PAGES);
	SKIP_IF_MSG(i <= 0, "clean lazily freed pages are not discarded here");
	memset(area, 0, len);

	for (i = 0; i < nr_writers; i++) {
		workers[i].cpu = cpus[i + 1];
		workers[i].index = i;
		FAIL_IF(pthread_create(&workers[i].thread, NULL, writer, &workers[i]));
	}
	while (__atomic_load_n(&bound, __ATOMIC_ACQUIRE) +
	       __atomic_load_n(&unbound, __ATOMIC_ACQUIRE) < nr_writers)
		sched_yield();
	FAIL_IF_MSG(unbound, "a writer thread could not bind to its CPU");
	printf("main thread on CPU %d, %d writers on CPUs %d..%d\n", cpus[0], nr_writers,
	       cpus[1], cpus[nr_writers]);
	free(cpus);

	end = time(NULL) + SECONDS;
	for (r = 1; time(NULL) < end; r++) {
		FAIL_IF(madvise(area, len, MADV_FREE));
		__atomic_store_n(&done, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&round_no, r, __ATOMIC_RELEASE);

		while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < nr_writers) {
			if (exec && (mprotect(area, len, PROT_READ | PROT_WRITE | PROT_EXEC) ||
				     mprotect(area, len, PROT_READ | PROT_WRITE))) {
				perror("mprotect(PROT_EXEC): only MADV_COLD updates PTEs");
				exec = 0;
			}
			madvise(area, len, MADV_COLD);
		}

		FAIL_IF(madvise(area, len, MADV_PAGEOUT));
		for (i = 0; i < PAGES; i++) {
			uint64_t v = *page(i);

			if (control(i, r)) {
				controls++;
				discarded += !v;
				continue;
			}
			writes++;
			if (v != value(i, r) && lost++ < 10)
				printf("round %d: page %d holds %#llx, want %#llx\n", r, i,
				       (unsigned long long)v, (unsigned long long)value(i, r));
		}
		rounds++;
	}

	__atomic_store_n(&quit, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nr_writers; i++)
		pthread_join(workers[i].thread, NULL);
	munmap(area, len);

	printf("%lu rounds, %d writers, %d pages: %lu writes, %lu lost; ", rounds, nr_writers,
	       PAGES, writes, lost);
	printf("%lu unwritten pages, %lu of them discarded\n", controls, discarded);
	FAIL_IF_MSG(lost, "written pages were discarded: a change bit was lost");
	FAIL_IF_MSG(!discarded, "no clean page was ever discarded: nothing was tested");
	return 0;
}

int main(void)
{
	return test_harness(test_pte_update, "tlbie_pte_update");
}
