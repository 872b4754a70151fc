// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmarks for the radix TLB flush heuristics: both sides of the
 * trade-off a whole-PID flush makes, the invalidations it saves and the
 * TLB refills it costs, and the workloads where it could hurt.
 *
 * Usage: tlbie_bench [-t 1|2] [-i iterations] [-s MiB] [-w pages] WORKLOAD
 *   shm       shmat(), fill, shmdt() of -s MiB (the 2021 thread's workload)
 *   refill    shm as above, then two passes of a pointer chase over -w
 *             pages: the first pass refills what the detach flushed
 *   fork      fork() a child that exits, with -s MiB of the parent's
 *             private memory written before each fork
 *   forkexec  fork() a child that execs this program to exit at once
 *   mixed     fork() a child that maps, fills, mprotect()s and unmaps
 *             -s MiB, then execs
 *   thp_collapse   MADV_COLLAPSE of -s MiB of small pages into THPs
 *   thp_khugepaged the same done by khugepaged (scan interval set short)
 *   thp_split      mprotect() of one small page in each THP of -s MiB
 *   thp_mprotect   mprotect() of -s MiB of THPs, whole
 *
 * With -t 2 a second thread spins on another CPU all along, so the
 * kernel's flushes are global (tlbie); with -t 1 they are mostly local.
 *
 * Prints one line, the totals over the iterations:
 *   bench: <workload>_<MiB>M_<threads>t iters=N ns=N [chase_cold_ns=N.N
 *   chase_warm_ns=N.N] global=N global_pid=N ... (as tlbie_counts_print())
 * or "counts=none (why)" where the powerpc:tlbie tracepoint cannot be
 * used. Counts are exact on any machine; times mean something only on
 * real hardware (under QEMU TCG they measure the emulator).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

#define KHUGEPAGED	"/sys/kernel/mm/transparent_hugepage/khugepaged/"

static unsigned long page_size;
static const char *self;
static int counting;		/* the powerpc:tlbie tracepoint can be used */

static int count_start(void)
{
	return counting ? tlbie_count_start() : 0;
}

static int count_stop(struct tlbie_counts *c)
{
	memset(c, 0, sizeof(*c));
	return counting ? tlbie_count_stop(c) : 0;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int shm_cycle(size_t size)
{
	void *addr;
	int id;

	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (id < 0) {
		perror("shmget");
		return -1;
	}
	addr = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	if (addr == (void *)-1) {
		perror("shmat");
		return -1;
	}
	memset(addr, 0x5a, size);
	if (shmdt(addr)) {
		perror("shmdt");
		return -1;
	}
	return 0;
}

/*
 * One pointer per page, linked in a random cycle through all @pages, each
 * at a different cache line so the chase measures translations, not a
 * handful of congested cache sets.
 */
static void **chase_build(unsigned long pages)
{
	unsigned long i, j, t, *order, lines = page_size / 128;
	void ***slot;
	void **start;
	char *map;

	map = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	order = malloc(pages * sizeof(*order));
	slot = malloc(pages * sizeof(*slot));
	if (map == MAP_FAILED || !order || !slot)
		return NULL;
	madvise(map, pages * page_size, MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++)
		order[i] = i;
	srandom(1);
	for (i = pages - 1; i > 0; i--) {
		j = random() % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < pages; i++)
		slot[i] = (void **)(map + order[i] * page_size + (order[i] % lines) * 128);
	for (i = 0; i < pages; i++)
		*slot[i] = slot[(i + 1) % pages];
	start = slot[0];
	free(order);
	free(slot);
	return start;
}

/* One lap of the chase; returns ns per access. */
static double chase(void **start, unsigned long pages)
{
	unsigned long long t = now_ns();
	void **p = start;
	unsigned long i;

	for (i = 0; i < pages; i++)
		p = *p;
	/* Keep the loads: the compiler cannot know p == start now. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return (double)(now_ns() - t) / pages;
}

static int fork_child(int exec)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		if (exec)
			execl(self, self, "-x", (char *)NULL);
		_exit(exec ? 127 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "child failed (status %#x)\n", status);
		return -1;
	}
	return 0;
}

/* The child of "mixed": a short-lived process with some mm work, then exec. */
static int mixed_cycle(size_t size)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		char *map = tlbie_map_filled(size);

		if (!map || mprotect(map, size / 2, PROT_READ) ||
		    munmap(map + size / 4, size / 2))
			_exit(1);
		execl(self, self, "-x", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "child failed (status %#x)\n", status);
		return -1;
	}
	return 0;
}

static int thp_always(void)
{
	char buf[128] = "";
	int fd;

	fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) < 0)
			buf[0] = 0;
		close(fd);
	}
	return !!strstr(buf, "[always]");
}

/*
 * @size bytes, page-table aligned and filled: THPs (@huge), or small pages
 * that MADV_COLLAPSE can collapse. For the latter the range is left without
 * MADV_HUGEPAGE where THP is "madvise" or "never", so khugepaged does not
 * race with the collapse being counted; with "always" it must be
 * MADV_NOHUGEPAGE while filled (*@nohuge is set then). NULL on error.
 */
static char *map_thp_range(size_t size, int huge, int *nohuge, char **base, size_t *len)
{
	char *p;

	*len = size + TLBIE_PMD_SPAN;
	*base = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*base == MAP_FAILED)
		return NULL;
	p = tlbie_pmd_align(*base);
	*nohuge = !huge && thp_always();
	if ((huge && madvise(p, size, MADV_HUGEPAGE)) ||
	    (*nohuge && madvise(p, size, MADV_NOHUGEPAGE)))
		return NULL;
	memset(p, 1, size);
	return p;
}

static unsigned long anon_huge_kb(void)
{
	unsigned long kb = 0;
	char line[256];
	FILE *f;

	f = fopen("/proc/self/smaps_rollup", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Write @val to a khugepaged sysfs file, its old value to @old if given. */
static int sysfs_swap(const char *name, const char *val, char *old, size_t oldlen)
{
	char path[256];
	ssize_t n = 0;
	int fd, rc = -1;

	snprintf(path, sizeof(path), KHUGEPAGED "%s", name);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	if (old) {
		n = read(fd, old, oldlen - 1);
		if (n < 0 || lseek(fd, 0, SEEK_SET))
			goto out;
		old[n] = 0;
	}
	if (write(fd, val, strlen(val)) >= 0)
		rc = 0;
out:
	close(fd);
	return rc;
}

/* Collapse @size bytes of small pages: by MADV_COLLAPSE or by khugepaged. */
static int thp_collapse(size_t size, int khugepaged, struct tlbie_counts *c)
{
	char old_scan[32], old_alloc[32], old_pages[32];
	int rc = 0, i, nohuge;
	char *base, *p;
	size_t len;

	p = map_thp_range(size, 0, &nohuge, &base, &len);
	if (!p || count_start())
		return -1;
	/* khugepaged only scans what MADV_HUGEPAGE (or "always") allows. */
	if ((khugepaged || nohuge) && madvise(p, size, MADV_HUGEPAGE))
		return -1;
	if (!khugepaged) {
		if (madvise(p, size, MADV_COLLAPSE)) {
			perror("MADV_COLLAPSE");
			rc = -1;
		}
	} else {
		if (sysfs_swap("scan_sleep_millisecs", "10", old_scan, sizeof(old_scan)) ||
		    sysfs_swap("alloc_sleep_millisecs", "10", old_alloc, sizeof(old_alloc)) ||
		    sysfs_swap("pages_to_scan", "4096", old_pages, sizeof(old_pages))) {
			perror("khugepaged sysfs (needs root)");
			return -1;
		}
		for (i = 0; i < 3000 && anon_huge_kb() < size / 1024; i++)
			usleep(10000);
		if (anon_huge_kb() < size / 1024) {
			fprintf(stderr, "khugepaged collapsed %lu of %zu kB in 30 s\n",
				anon_huge_kb(), size / 1024);
			rc = -1;
		}
		sysfs_swap("scan_sleep_millisecs", old_scan, NULL, 0);
		sysfs_swap("alloc_sleep_millisecs", old_alloc, NULL, 0);
		sysfs_swap("pages_to_scan", old_pages, NULL, 0);
	}
	if (count_stop(c))
		rc = -1;
	munmap(base, len);
	return rc;
}

/* mprotect() of THPs: one small page in each (split) or all of them. */
static int thp_mprotect(size_t size, int split, struct tlbie_counts *c)
{
	size_t len, off;
	char *base, *p;
	int rc = 0, nohuge;

	p = map_thp_range(size, 1, &nohuge, &base, &len);
	if (!p)
		return -1;
	if (anon_huge_kb() < size / 1024) {
		fprintf(stderr, "only %lu of %zu kB are THPs (THP disabled?)\n",
			anon_huge_kb(), size / 1024);
		munmap(base, len);
		return -1;
	}
	if (count_start())
		return -1;
	if (split) {
		for (off = 0; off < size && !rc; off += TLBIE_PMD_SPAN)
			rc = mprotect(p + off + TLBIE_PMD_SPAN / 2, page_size, PROT_READ);
	} else {
		rc = mprotect(p, size, PROT_READ);
	}
	if (count_stop(c))
		rc = -1;
	munmap(base, len);
	return rc;
}

static void add(struct tlbie_counts *sum, const struct tlbie_counts *c)
{
	sum->global += c->global;
	sum->global_pid += c->global_pid;
	sum->global_page += c->global_page;
	sum->local += c->local;
	sum->local_pid += c->local_pid;
	sum->fixup += c->fixup;
	sum->raw_global += c->raw_global;
	sum->raw_global_pid += c->raw_global_pid;
}

int main(int argc, char *argv[])
{
	unsigned long mib = 0, threads = 1, iterations = 1, pages = 1024, i;
	double cold = 0, warm = 0;
	struct tlbie_counts c, sum = { 0 };
	struct tlbie_sibling sibling;
	unsigned long long ns = 0, t;
	const char *why, *w;
	int cpus[2], opt, rc = 0;
	void **chain = NULL;
	char *fork_mem = NULL;
	char label[64];

	page_size = sysconf(_SC_PAGESIZE);
	self = "/proc/self/exe";
	while ((opt = getopt(argc, argv, "t:i:s:w:x")) != -1) {
		switch (opt) {
		case 'x':	/* the exec'd child of forkexec and mixed */
			return 0;
		case 't':
			threads = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			iterations = strtoul(optarg, NULL, 0);
			break;
		case 's':
			mib = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			pages = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || (threads != 1 && threads != 2) || !iterations || !pages)
		goto usage;
	w = argv[optind];
	if (!mib)
		mib = !strcmp(w, "shm") || !strcmp(w, "refill") ? 64 : 16;

	snprintf(label, sizeof(label), "%s_%luM_%lut", w, mib, threads);
	if (!strcmp(w, "refill"))
		snprintf(label, sizeof(label), "refill_%luM_%lut_%lup", mib, threads, pages);
	if (tlbie_online_cpus(cpus, 2) < (int)threads) {
		printf("bench: %s skipped=needs_%lu_cpus\n", label, threads);
		return 4;
	}
	if (bind_to_cpu(cpus[0]) != cpus[0])
		return 1;
	if (threads == 2 && tlbie_sibling_start(&sibling, cpus[1]))
		return 1;
	why = tlbie_count_unavailable();
	counting = !why;
	if (!strcmp(w, "fork")) {
		fork_mem = tlbie_map_filled(mib << 20);
		if (!fork_mem)
			return 1;
	}
	if (!strcmp(w, "refill")) {
		chain = chase_build(pages);
		if (!chain)
			return 1;
		chase(chain, pages);
	}

	for (i = 0; i < iterations && !rc; i++) {
		t = now_ns();
		/* The THP workloads count only the collapse or mprotect(). */
		if (!strcmp(w, "thp_collapse") || !strcmp(w, "thp_khugepaged")) {
			rc = thp_collapse(mib << 20, !strcmp(w, "thp_khugepaged"), &c);
			ns += now_ns() - t;
		} else if (!strcmp(w, "thp_split") || !strcmp(w, "thp_mprotect")) {
			rc = thp_mprotect(mib << 20, !strcmp(w, "thp_split"), &c);
			ns += now_ns() - t;
		} else {
			if (count_start())
				return 1;
			if (!strcmp(w, "shm") || !strcmp(w, "refill")) {
				rc = shm_cycle(mib << 20);
			} else if (!strcmp(w, "fork") || !strcmp(w, "forkexec")) {
				/* Dirty again what the last fork write-protected. */
				if (fork_mem)
					memset(fork_mem, i, mib << 20);
				rc = fork_child(!strcmp(w, "forkexec"));
			} else if (!strcmp(w, "mixed")) {
				rc = mixed_cycle(mib << 20);
			} else {
				goto usage;
			}
			ns += now_ns() - t;
			if (chain && !rc) {
				cold += chase(chain, pages);
				warm += chase(chain, pages);
			}
			if (count_stop(&c))
				return 1;
		}
		add(&sum, &c);
	}
	if (threads == 2)
		tlbie_sibling_stop(&sibling);
	if (rc) {
		printf("bench: %s failed\n", label);
		return 1;
	}

	printf("bench: %s iters=%lu ns=%llu", label, iterations, ns);
	if (chain)
		printf(" chase_cold_ns=%.1f chase_warm_ns=%.1f",
		       cold / iterations, warm / iterations);
	if (!counting) {
		printf(" counts=none (%s)\n", why);
		return 0;
	}
	printf(" global=%llu global_pid=%llu global_page=%llu",
	       sum.global, sum.global_pid, sum.global_page);
	printf(" local=%llu local_pid=%llu fixup=%llu", sum.local, sum.local_pid, sum.fixup);
	printf(" raw_global=%llu raw_global_pid=%llu\n", sum.raw_global, sum.raw_global_pid);
	tlbie_count_close();
	return 0;

usage:
	fprintf(stderr, "usage: %s [-t 1|2] [-i iterations] [-s MiB] [-w pages] WORKLOAD\n",
		argv[0]);
	fprintf(stderr, "WORKLOAD: shm refill fork forkexec mixed thp_collapse\n");
	fprintf(stderr, "          thp_khugepaged thp_split thp_mprotect\n");
	return 2;
}
