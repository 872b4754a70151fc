// SPDX-License-Identifier: GPL-2.0-only
/*
 * tlb-refill: the refill side of a flush, for the TLB model plugin
 * (qemu/tlb-model.c). Threads on the other CPUs loop over private working
 * sets of W pages each (the kernel's base pages: 64K, or 4K), one load per
 * page, while the main thread runs an operation that flushes: the plugin
 * counts, per core, the misses the flushes cost the threads (the modelled
 * TLB against one that flushed exactly the operation's range) and the
 * entries each flush dropped.
 *
 * Each iteration: the region is created and dirtied, every thread makes two
 * passes over its working set (a warm TLB), the plugin's phase begins on
 * the region, the operation runs, every thread makes two more passes (the
 * refill), the phase ends. The marker is "or 24,24,24" with r3-r6 set: a
 * no-op hint on POWER, so the program runs (and counts nothing) elsewhere.
 *
 * Operations:
 *   shmdt      SysV shm of -s MiB, dirty, detached: the dense case the
 *              flush rule is for (forced small batches of shared dirty
 *              pages)
 *   punch      a memfd of -s MiB mapped shared, dirty, a hole punched over
 *              all of it
 *   sparse     -s MiB of private memory, every page dirty, then
 *              MADV_DONTNEED of 2 pages in each 2M page table
 *   munmap     -s MiB of private memory, dirty, unmapped (one batch)
 *
 * Usage: tlb-refill -o OP -s MIB -w PAGES -t THREADS -i ITERATIONS [-n ITEM]
 * Prints "refill: phase=ID op=... iteration=N" before each phase, ID being
 * ITEM * 1000 + N: the plugin's phase lines carry it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#define PMD	(2UL << 20)

static unsigned long page;	/* the kernel's base page size */
static const char *op = "shmdt";
static unsigned long mib = 64, wpages = 256;
static int nthreads = 3, iterations = 3, item;
static atomic_ulong passes[64];
static atomic_int stop;

static void marker(unsigned long cmd, unsigned long a, unsigned long b, unsigned long arg)
{
	register unsigned long r3 asm("r3") = cmd;
	register unsigned long r4 asm("r4") = a;
	register unsigned long r5 asm("r5") = b;
	register unsigned long r6 asm("r6") = arg;

	asm volatile("or 24,24,24" : : "r"(r3), "r"(r4), "r"(r5), "r"(r6) : "memory");
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "refill: sched_setaffinity(%d): %s\n", cpu, strerror(errno));
		exit(1);
	}
}

static void *worker(void *arg)
{
	long id = (long)arg;
	volatile char *ws;
	unsigned long sum = 0;

	pin(id + 1);
	ws = mmap(NULL, wpages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ws == MAP_FAILED) {
		perror("refill: mmap of a working set");
		exit(1);
	}
	madvise((void *)ws, wpages * page, MADV_NOHUGEPAGE);
	for (unsigned long p = 0; p < wpages; p++)
		ws[p * page] = 1;
	while (!atomic_load(&stop)) {
		for (unsigned long p = 0; p < wpages; p++)
			sum += ws[p * page];
		atomic_fetch_add(&passes[id], 1);
	}
	return (void *)sum;
}

/* Wait until every thread has made n more passes. */
static void wait_passes(unsigned long n)
{
	unsigned long start[64];

	for (int i = 0; i < nthreads; i++)
		start[i] = atomic_load(&passes[i]);
	for (int i = 0; i < nthreads; i++)
		while (atomic_load(&passes[i]) < start[i] + n)
			sched_yield();
}

static void dirty(char *p, unsigned long len)
{
	for (unsigned long off = 0; off < len; off += page)
		p[off] = 1;
}

static void fail(const char *what)
{
	fprintf(stderr, "refill: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void run(int iteration)
{
	unsigned long len = mib << 20;
	char *p;
	int id, fd = -1;

	unsigned long phase = item * 1000UL + iteration;

	printf("refill: phase=%lu op=%s mib=%lu w=%lu threads=%d iteration=%d\n", phase, op, mib,
	       wpages, nthreads, iteration);
	fflush(stdout);
	if (!strcmp(op, "shmdt")) {
		id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
		if (id < 0)
			fail("shmget");
		p = shmat(id, NULL, 0);
		if (p == (void *)-1)
			fail("shmat");
		shmctl(id, IPC_RMID, NULL);
		dirty(p, len);
		wait_passes(2);
		marker(1, (unsigned long)p, (unsigned long)p + len, phase);
		if (shmdt(p))
			fail("shmdt");
	} else if (!strcmp(op, "punch")) {
		fd = memfd_create("refill", 0);
		if (fd < 0 || ftruncate(fd, len))
			fail("memfd");
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			fail("mmap of the memfd");
		dirty(p, len);
		wait_passes(2);
		marker(1, (unsigned long)p, (unsigned long)p + len, phase);
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, len))
			fail("fallocate");
	} else if (!strcmp(op, "sparse") || !strcmp(op, "munmap")) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			fail("mmap");
		madvise(p, len, MADV_NOHUGEPAGE);
		dirty(p, len);
		wait_passes(2);
		marker(1, (unsigned long)p, (unsigned long)p + len, phase);
		if (!strcmp(op, "munmap")) {
			if (munmap(p, len))
				fail("munmap");
			p = NULL;
		} else {
			for (unsigned long off = 0; off < len; off += PMD)
				if (madvise(p + off, 2 * page, MADV_DONTNEED))
					fail("madvise");
		}
	} else {
		fprintf(stderr, "refill: unknown operation %s (shmdt, punch, sparse, munmap)\n", op);
		exit(2);
	}
	wait_passes(2);
	marker(2, 0, 0, 0);
	if (!strcmp(op, "punch")) {
		munmap(p, len);
		close(fd);
	} else if (!strcmp(op, "sparse")) {
		munmap(p, len);
	}
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	int c;

	page = sysconf(_SC_PAGESIZE);
	while ((c = getopt(argc, argv, "o:s:w:t:i:n:")) != -1) {
		switch (c) {
		case 'o': op = optarg; break;
		case 's': mib = strtoul(optarg, NULL, 0); break;
		case 'w': wpages = strtoul(optarg, NULL, 0); break;
		case 't': nthreads = atoi(optarg); break;
		case 'i': iterations = atoi(optarg); break;
		case 'n': item = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: tlb-refill -o OP -s MIB -w PAGES -t THREADS -i N [-n ITEM]\n");
			return 2;
		}
	}
	if (nthreads < 0 || nthreads > 64 || nthreads + 1 > sysconf(_SC_NPROCESSORS_ONLN)) {
		fprintf(stderr, "refill: -t %d: needs a CPU for each thread and the main one (%ld online)\n",
			nthreads, sysconf(_SC_NPROCESSORS_ONLN));
		return 2;
	}
	pin(0);
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i)) {
			fprintf(stderr, "refill: pthread_create failed\n");
			return 1;
		}
	wait_passes(1);
	for (int i = 1; i <= iterations; i++)
		run(i);
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("refill: done\n");
	return 0;
}
