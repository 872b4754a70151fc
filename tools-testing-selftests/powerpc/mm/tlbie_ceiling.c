// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The flush ceilings mean what radix_tlb.c says: a range flush of more
 * than N pages invalidates the whole PID, one of N or fewer goes page by
 * page. N is the global ceiling for tlbie (a thread live on another CPU),
 * the local one for tlbiel. Each row flushes private pages, one page past
 * a page-table boundary (no page table freed), with munmap(), DONTNEED,
 * mprotect() (radix__tlb_flush()) or mremap() (radix__flush_tlb_range()):
 * 1, 2 and 32 pages at the default global ceiling of 33; N - 1, N and
 * N + 1 with the scope's ceiling at N = 8 and the other's at 32, so that
 * the wrong scope's ceiling shows. Splitting a THP for an mprotect() of
 * one of its pages flushes the 2MB page (flush_pmd_tlb_range()) and the page.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbie_count.h"
#include "utils.h"

#define SPAN		(2UL << 20)	/* a page table's */

enum ceiling_op { OP_MUNMAP, OP_DONTNEED, OP_MPROTECT, OP_MREMAP, OP_THP_SPLIT };
static const char * const op_names[] = {
	[OP_MUNMAP] = "munmap", [OP_DONTNEED] = "madv_dontneed", [OP_MPROTECT] = "mprotect_ro",
	[OP_MREMAP] = "mremap", [OP_THP_SPLIT] = "thp_split_mprotect_ro",
};

struct row {
	enum ceiling_op op;
	int pages;
	/* The scope's ceiling, the other's at 32; 0: both at their defaults */
	int ceiling;
	bool local;			/* single-threaded: tlbiel */
	int pid, page, pwc;
};

static const struct row rows[] = {
	{ .op = OP_MUNMAP, .pages = 7, .ceiling = 8, .local = true, .page = 7 },
	{ .op = OP_MUNMAP, .pages = 8, .ceiling = 8, .local = true, .page = 8 },
	{ .op = OP_MUNMAP, .pages = 9, .ceiling = 8, .local = true, .pid = 1 },
	{ .op = OP_MREMAP, .pages = 7, .ceiling = 8, .local = true, .page = 7 },
	{ .op = OP_MREMAP, .pages = 8, .ceiling = 8, .local = true, .page = 8 },
	/* radix__flush_tlb_range() flushes the page walk cache with the PID */
	{ .op = OP_MREMAP, .pages = 9, .ceiling = 8, .local = true, .pid = 1, .pwc = 1 },
	{ .op = OP_MUNMAP, .pages = 7, .ceiling = 8, .page = 7 },
	{ .op = OP_MUNMAP, .pages = 8, .ceiling = 8, .page = 8 },
	{ .op = OP_MUNMAP, .pages = 9, .ceiling = 8, .pid = 1 },
	{ .op = OP_MREMAP, .pages = 7, .ceiling = 8, .page = 7 },
	{ .op = OP_MREMAP, .pages = 8, .ceiling = 8, .page = 8 },
	{ .op = OP_MREMAP, .pages = 9, .ceiling = 8, .pid = 1, .pwc = 1 },
	{ .op = OP_MUNMAP, .pages = 1, .page = 1 },
	{ .op = OP_MUNMAP, .pages = 2, .page = 2 },
	{ .op = OP_MUNMAP, .pages = 32, .page = 32 },
	{ .op = OP_DONTNEED, .pages = 1, .page = 1 },
	{ .op = OP_DONTNEED, .pages = 2, .page = 2 },
	{ .op = OP_DONTNEED, .pages = 32, .page = 32 },
	{ .op = OP_MPROTECT, .pages = 1, .page = 1 },
	{ .op = OP_MPROTECT, .pages = 2, .page = 2 },
	{ .op = OP_MPROTECT, .pages = 32, .page = 32 },
	{ .op = OP_THP_SPLIT, .pages = 1, .page = 2 },
};

/* @r's flush counted: 0, 1 if no THP could be had, -1 on error */
static int count(const struct row *r, struct tlbie_counts *c)
{
	size_t page = getpagesize(), len = 3 * SPAN, off, n = r->pages * page;
	long thp = tlbie_anon_huge_kb();
	char *map, *p, *to;
	int rc;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -1;
	p = (char *)(((unsigned long)map + SPAN - 1) & ~(SPAN - 1));
	to = p + SPAN + page;
	rc = r->op == OP_THP_SPLIT ? madvise(p, 2 * SPAN, MADV_HUGEPAGE) :
				     tlbie_nohugepage(p, 2 * SPAN);
	for (off = 0; !rc && off < 2 * SPAN; off += page)
		p[off] = 1;
	if (r->op == OP_THP_SPLIT && (rc || tlbie_anon_huge_kb() - thp < 2048)) {
		munmap(map, len);
		return 1;
	}
	/* The hole mremap() moves to, made before counting */
	if (!rc && r->op == OP_MREMAP)
		rc = munmap(to, n);
	p += page * (r->op != OP_THP_SPLIT);
	if (!rc)
		rc = tlbie_count_start();
	rc = rc ?: r->op == OP_MUNMAP ? munmap(p, n) :
		   r->op == OP_DONTNEED ? madvise(p, n, MADV_DONTNEED) :
		   r->op == OP_MREMAP ? mremap(p, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, to) != to :
		   mprotect(p, n, PROT_READ);
	rc = rc ?: tlbie_count_stop(c);
	munmap(map, len);
	return rc ? -1 : 0;
}

static int run_row(const struct row *r)
{
	struct tlbie_want w = { .local = r->local, .pid = r->pid, .page = r->page, .pwc = r->pwc };
	char name[64], ceiling[16];
	struct tlbie_counts c;
	int tries, v = -1, rc;

	snprintf(ceiling, sizeof(ceiling), "%d", r->ceiling);
	if (r->ceiling)
		snprintf(name, sizeof(name), "%s_%d_%s_%d", r->local ? "local" : "global",
			 r->ceiling, op_names[r->op], r->pages);
	else
		snprintf(name, sizeof(name), "%s_%d", op_names[r->op], r->pages);
	for (tries = 0; v && tries < TLBIE_TRIES; tries++) {
		if (tlbie_set_knob(TLBIE_GLOBAL_CEILING,
				   !r->ceiling ? "33" : r->local ? "32" : ceiling) ||
		    tlbie_set_knob(TLBIE_LOCAL_CEILING,
				   !r->ceiling ? "256" : r->local ? ceiling : "32")) {
			printf("%s: cannot set the flush ceilings: FAIL\n", name);
			return 1;
		}
		rc = count(r, &c);
		/* At any try: THP is not to be had every time */
		if (rc > 0) {
			printf("%s: not measured: no THP here\n", name);
			return 0;
		}
		if (rc)
			return 1;
		tlbie_counts_print(name, &c);
		v = tlbie_judge(&c, &w);
		if (v < 0)
			break;
	}
	printf("%s: %s\n", name, v ? "FAIL" : "pass");
	return v != 0;
}

static int test_ceiling(void)
{
	int cpu[2], failed = 0;
	const char *why;
	unsigned int i;

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_usable_cpus(cpu, 2) < 2, "needs two CPUs");
	FAIL_IF(tlbie_bind(cpu[0]));

	/* Single-threaded first: the first flush trims the mm to this CPU */
	for (i = 0; i < ARRAY_SIZE(rows); i++)
		if (rows[i].local)
			failed |= run_row(&rows[i]);
	why = tlbie_global_unavailable();
	if (why)
		printf("global rows not measured: %s\n", why);
	else
		FAIL_IF(tlbie_sibling_start(cpu[1]));
	for (i = 0; !why && i < ARRAY_SIZE(rows); i++)
		if (!rows[i].local)
			failed |= run_row(&rows[i]);
	if (!why)
		tlbie_sibling_stop();
	SKIP_IF_MSG(why && !failed, why);
	FAIL_IF(failed);
	return 0;
}

/* The ceilings are written back here: the harness kills a test that times out */
int main(void)
{
	int rc;

	tlbie_knobs_save();
	test_harness_set_timeout(110);
	rc = test_harness(test_ceiling, "tlbie_ceiling");
	tlbie_knobs_restore();
	return rc;
}
