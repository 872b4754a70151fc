// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit test of the radix TLB flush decision (radix_flush.h): for each
 * range, whether it is flushed page by page or by invalidating the whole
 * PID, at every boundary of the flush ceilings, and for whole operations
 * cut into batches as core mm cuts them. A change to the heuristic changes
 * these tables, so review sees what it does.
 */
#include <kunit/test.h>
#include <linux/minmax.h>
#include <linux/sizes.h>

#include "radix_flush.h"

/* The defaults of radix_tlb.c: above 33 pages global, 256 local */
#define GLOBAL_CEILING	33
#define LOCAL_CEILING	256

/* Instructions a whole-PID flush takes */
#define TLBIE		1	/* tlbie, any CPU */
#define P10_TLBIEL	1	/* tlbiel, ISA v3.1 */
#define P9_TLBIEL	128	/* tlbiel, one per set (POWER9_TLB_SETS_RADIX) */

#define ALONE		0	/* entire/done pages: not part of a larger operation */

struct flush_case {
	const char *what;
	unsigned long nr_pages;
	unsigned long entire_pages;
	unsigned long done_pages;	/* flushed by the operation, this batch included */
	unsigned long ceiling;
	unsigned long pid_cost;
	bool pid;
};

static const struct flush_case flush_cases[] = {
	/* A flush on its own: the ceiling alone decides */
	{ "global, 1 page",			1,   ALONE, ALONE, GLOBAL_CEILING, TLBIE, false },
	{ "global, one 2MB PMD of 64K pages",	32,  ALONE, ALONE, GLOBAL_CEILING, TLBIE, false },
	{ "global, at the ceiling",		33,  ALONE, ALONE, GLOBAL_CEILING, TLBIE, false },
	{ "global, ceiling + 1",		34,  ALONE, ALONE, GLOBAL_CEILING, TLBIE, true },
	{ "local P9, at the ceiling",	256, ALONE, ALONE, LOCAL_CEILING, P9_TLBIEL, false },
	{ "local P9, ceiling + 1",		257, ALONE, ALONE, LOCAL_CEILING, P9_TLBIEL, true },
	{ "local P10, at the ceiling",	256, ALONE, ALONE, LOCAL_CEILING, P10_TLBIEL, false },
	{ "local P10, ceiling + 1",	257, ALONE, ALONE, LOCAL_CEILING, P10_TLBIEL, true },
	{ "ceiling 0 flushes the PID always",	1,   ALONE, ALONE, 0, TLBIE, true },
	{ "ceiling 1, 1 page",			1,   ALONE, ALONE, 1, TLBIE, false },
	{ "ceiling 1, 2 pages",			2,   ALONE, ALONE, 1, TLBIE, true },
	{ "ceiling U32_MAX, U32_MAX pages",	U32_MAX, ALONE, ALONE, U32_MAX, TLBIE, false },

	/* A batch of a larger operation: each condition at its boundary */
	{ "global, PMD batch, 64MB flushed",	32,  1024, 1024, GLOBAL_CEILING, TLBIE, true },
	{ "global, first PMD batch of 64MB",	32,  1024, 32,   GLOBAL_CEILING, TLBIE, false },
	{ "global, flushed at the ceiling",	32,  1024, 33,   GLOBAL_CEILING, TLBIE, false },
	{ "global, flushed ceiling + 1",	32,  1024, 34,   GLOBAL_CEILING, TLBIE, true },
	{ "global, range at the ceiling",	32,  33,   33,   GLOBAL_CEILING, TLBIE, false },
	{ "global, range ceiling + 1",		32,  34,   34,   GLOBAL_CEILING, TLBIE, true },
	{ "global, batch half the ceiling",	16,  1024, 1024, GLOBAL_CEILING, TLBIE, false },
	{ "global, batch above half",		17,  1024, 1024, GLOBAL_CEILING, TLBIE, true },
	{ "global, even ceiling, batch half",	17,  1024, 1024, 34, TLBIE, false },
	{ "global, even ceiling, above half",	18,  1024, 1024, 34, TLBIE, true },
	{ "global, 2-page batch of sparse 64MB", 2,  1024, 1024, GLOBAL_CEILING, TLBIE, false },
	{ "global, 1-page batch of 64MB",	1,   1024, 1024, GLOBAL_CEILING, TLBIE, false },
	{ "global, 8 pages of an 8MB stack",	8,   128,  8,    GLOBAL_CEILING, TLBIE, false },
	{ "global, ceiling 1, 1-page batch",	1,   1024, 1024, 1, TLBIE, false },
	{ "local P10, PMD batch of 64MB",	32,  1024, 1024, LOCAL_CEILING, P10_TLBIEL, false },
	{ "local P10, batch half the ceiling",	128, 1024, 1024, LOCAL_CEILING, P10_TLBIEL, false },
	{ "local P10, batch above half",	129, 1024, 1024, LOCAL_CEILING, P10_TLBIEL, true },
	{ "local P9, batch above half",		129, 1024, 1024, LOCAL_CEILING, P9_TLBIEL, true },
	{ "local P9 tuned, PID costs more",	100, 1024, 1024, 150, P9_TLBIEL, false },
	{ "local P9 tuned, PID costs less",	129, 1024, 1024, 150, P9_TLBIEL, true },
	{ "batch above the ceiling, small total", 40, 10,  40,   GLOBAL_CEILING, TLBIE, true },
};

static void flush_case_desc(const struct flush_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE,
		 "%s: %lu pages, range %lu, flushed %lu, ceiling %lu, PID cost %lu",
		 c->what, c->nr_pages, c->entire_pages, c->done_pages, c->ceiling,
		 c->pid_cost);
}

KUNIT_ARRAY_PARAM(flush, flush_cases, flush_case_desc);

static void radix_flush_decision_test(struct kunit *test)
{
	const struct flush_case *c = test->param_value;
	unsigned long entire = max(c->nr_pages, c->entire_pages);
	unsigned long done = max(c->nr_pages, c->done_pages);

	KUNIT_EXPECT_EQ(test, radix_flush_pid_wanted(c->nr_pages, entire, done,
						     c->ceiling, c->pid_cost), c->pid);
}

/*
 * The wiring: what radix__tlb_flush() decides for a sequence of batches of
 * one operation, with the mmu_gather set up as core mm sets it up
 * (tlb_gather_mmu() with the operation's range, then per batch the
 * gathered range) and advanced as radix__tlb_flush() advances it.
 */
struct op_case {
	const char *what;
	unsigned int shift;		/* page size of the batches */
	unsigned long entire;		/* bytes of the operation's range */
	unsigned long batch;		/* bytes gathered per batch */
	unsigned long stride;		/* bytes from one batch to the next */
	unsigned int nr_batches;
	unsigned long ceiling;
	unsigned int want_pid;		/* whole-PID flushes expected */
};

#define SZ_64K_SHIFT	16
#define SZ_4K_SHIFT	12
#define MB		SZ_1M

static const struct op_case op_cases[] = {
	/* shmdt() of 256MB of dirty shared memory: a batch per page table */
	{ "shmdt 256MB, 64K pages",	SZ_64K_SHIFT, 256 * MB, 2 * MB, 2 * MB, 128,
	  GLOBAL_CEILING, 127 },
	/* the same sparsely dirtied: 2 pages per page table */
	{ "shmdt 256MB, 2 pages per PMD", SZ_64K_SHIFT, 256 * MB, 128 << 10, 2 * MB, 128,
	  GLOBAL_CEILING, 0 },
	{ "shmdt 256MB, 1 page per PMD", SZ_64K_SHIFT, 256 * MB, 64 << 10, 2 * MB, 128,
	  GLOBAL_CEILING, 0 },
	/* a thread's 8MB stack with 8 pages touched, one batch */
	{ "stack MADV_DONTNEED, 8 pages", SZ_64K_SHIFT, 8 * MB, 8 << 16, 0, 1,
	  GLOBAL_CEILING, 0 },
	/* one dense page table in a large mprotect(): below the ceiling */
	{ "mprotect 64MB, one PMD present", SZ_64K_SHIFT, 64 * MB, 2 * MB, 0, 1,
	  GLOBAL_CEILING, 0 },
	/* 4K pages: a page table's 512 pages are above the ceiling alone */
	{ "munmap 64MB, 4K pages",	SZ_4K_SHIFT, 64 * MB, 2 * MB, 2 * MB, 32,
	  GLOBAL_CEILING, 32 },
	/* batches of just above half the ceiling: from the second (34 flushed) */
	{ "17-page batches",		SZ_64K_SHIFT, 64 * MB, 17 << 16, 2 * MB, 4,
	  GLOBAL_CEILING, 3 },
	{ "16-page batches",		SZ_64K_SHIFT, 64 * MB, 16 << 16, 2 * MB, 4,
	  GLOBAL_CEILING, 0 },
};

static void op_case_desc(const struct op_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s: %u batches of %lu bytes in %lu",
		 c->what, c->nr_batches, c->batch, c->entire);
}

KUNIT_ARRAY_PARAM(op, op_cases, op_case_desc);

static void radix_flush_batches_test(struct kunit *test)
{
	const struct op_case *c = test->param_value;
	struct mmu_gather tlb = {
		.entire_start = 0x7fff00000000UL,
		.entire_end = 0x7fff00000000UL + c->entire,
	};
	unsigned int i, pid = 0;

	for (i = 0; i < c->nr_batches; i++) {
		tlb.start = tlb.entire_start + i * c->stride;
		tlb.end = tlb.start + c->batch;
		if (radix_tlb_batch_flush_pid(&tlb, c->shift, c->ceiling, TLBIE))
			pid++;
		radix_tlb_batch_done(&tlb, c->shift);
	}
	KUNIT_EXPECT_EQ(test, pid, c->want_pid);
	/* Every batch is counted, in its own pages */
	KUNIT_EXPECT_EQ(test, tlb.entire_flushed,
			c->nr_batches * (c->batch >> c->shift));
}

static struct kunit_case radix_flush_test_cases[] = {
	KUNIT_CASE_PARAM(radix_flush_decision_test, flush_gen_params),
	KUNIT_CASE_PARAM(radix_flush_batches_test, op_gen_params),
	{}
};

static struct kunit_suite radix_flush_test_suite = {
	.name = "powerpc_radix_flush",
	.test_cases = radix_flush_test_cases,
};

kunit_test_suite(radix_flush_test_suite);

MODULE_DESCRIPTION("KUnit test of the powerpc radix TLB flush decision");
MODULE_LICENSE("GPL");
