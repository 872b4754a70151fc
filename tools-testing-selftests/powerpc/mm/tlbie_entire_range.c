// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Large operations that core mm flushes in small batches are flushed as a
 * whole: with a thread live on another CPU (global flushes),
 *  - shmdt() of a filled 64MB and 256MB SysV shm segment,
 *  - munmap() of 64 adjacent shared VMAs of 4 pages each, in one call,
 *  - MADV_DONTNEED of 64MB of dirty shared memory
 * reach the kernel's flush in batches of at most one page table (delayed
 * rmap of shared dirty pages forces a flush at the end of each), each
 * below the global flush ceiling. Each batch must flush the whole PID,
 * not page by page: at most one per-page tlbie in all (a one-page batch),
 * and at most one whole-PID tlbie per batch plus one for freed page
 * tables.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define NR_VMAS		64
#define VMA_PAGES	4

/* Page tables spanned by [start, start + len) */
static unsigned long page_tables(void *start, size_t len)
{
	unsigned long s = (unsigned long)start & ~(TLBIE_PMD_SPAN - 1);
	unsigned long e = ((unsigned long)start + len + TLBIE_PMD_SPAN - 1) & ~(TLBIE_PMD_SPAN - 1);

	return (e - s) / TLBIE_PMD_SPAN;
}

static int judge(const char *label, const struct tlbie_counts *c, unsigned long batches)
{
	tlbie_counts_print(label, c);
	printf("%s: %lu batches: want <= 1 per-page and <= %lu whole-PID tlbie\n",
	       label, batches, batches + 1);
	return c->global_page > 1 || c->global_pid > batches + 1;
}

static int shm_detach(unsigned long mib)
{
	size_t len = mib << 20;
	struct tlbie_counts c;
	char label[32];
	void *p;

	FAIL_IF(tlbie_count_shmdt(len, &c, &p));
	snprintf(label, sizeof(label), "shmdt_%luM", mib);
	return judge(label, &c, page_tables(p, len));
}

/*
 * Map @len of dirty shared memory as @nr adjacent VMAs, starting at a
 * page-table boundary so no VMA straddles one (which would split it into
 * two batches, one of them possibly a single page); NULL on failure.
 */
static char *map_shared(size_t len, int nr)
{
	size_t piece = len / nr;
	char *p;
	int i;

	p = mmap(NULL, len + TLBIE_PMD_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	p = tlbie_pmd_align(p);
	for (i = 0; i < nr; i++)
		if (mmap(p + i * piece, piece, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			return NULL;
	memset(p, 0x5a, len);
	return p;
}

static int multi_vma_munmap(void)
{
	size_t len = NR_VMAS * VMA_PAGES * sysconf(_SC_PAGESIZE);
	struct tlbie_counts c;
	char *p;

	p = map_shared(len, NR_VMAS);
	FAIL_IF(!p);
	FAIL_IF(tlbie_count_start());
	FAIL_IF(munmap(p, len));
	FAIL_IF(tlbie_count_stop(&c));
	/* A batch per VMA */
	return judge("munmap_64_vmas", &c, NR_VMAS);
}

static int dontneed(unsigned long mib)
{
	size_t len = mib << 20;
	struct tlbie_counts c;
	char label[32];
	char *p;

	p = map_shared(len, 1);
	FAIL_IF(!p);
	FAIL_IF(tlbie_count_start());
	FAIL_IF(madvise(p, len, MADV_DONTNEED));
	FAIL_IF(tlbie_count_stop(&c));
	munmap(p, len);
	snprintf(label, sizeof(label), "madv_dontneed_%luM", mib);
	return judge(label, &c, page_tables(p, len));
}

static int test_entire_range(void)
{
	struct tlbie_sibling sibling;
	int cpus[2], failed = 0;
	const char *why;

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_online_cpus(cpus, 2) < 2, "needs two online CPUs");
	SKIP_IF_MSG(sysconf(_SC_PAGESIZE) != 65536,
		    "4K pages: a page table's 512 pages are above the ceiling anyway");

	FAIL_IF(bind_to_cpu(cpus[0]) != cpus[0]);
	FAIL_IF(tlbie_sibling_start(&sibling, cpus[1]));
	why = tlbie_global_unavailable();
	SKIP_IF_MSG(why, why);

	failed |= shm_detach(64);
	failed |= shm_detach(256);
	failed |= multi_vma_munmap();
	failed |= dontneed(64);

	tlbie_sibling_stop(&sibling);
	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_entire_range, "tlbie_entire_range");
}
