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
#define GLOBAL		33
#define LOCAL		256

/* Instructions a whole-PID flush takes */
#define TLBIE		1	/* tlbie, any CPU */
#define P10		1	/* tlbiel, ISA v3.1 */
#define P9		128	/* tlbiel, one per set (POWER9_TLB_SETS_RADIX) */

#define ALONE		0	/* range: not part of a larger operation */
#define FORCED		true	/* flushed mid-operation for delayed rmap */
#define LAST		false	/* the operation's last flush, or one on its own */

struct flush_case {
	const char *what;
	unsigned long nr_pages;
	unsigned long range_pages;
	bool forced;
	unsigned long ceiling;
	unsigned long pid_cost;
	bool pid;
};

static const struct flush_case flush_cases[] = {
	/* A flush on its own: the ceiling alone decides */
	{ "global, 1 page",                       1,       ALONE, LAST,   GLOBAL,  TLBIE, false },
	{ "global, one 2MB PMD of 64K pages",     32,      ALONE, LAST,   GLOBAL,  TLBIE, false },
	{ "global, at the ceiling",               33,      ALONE, LAST,   GLOBAL,  TLBIE, false },
	{ "global, ceiling + 1",                  34,      ALONE, LAST,   GLOBAL,  TLBIE, true },
	{ "local P9, at the ceiling",             256,     ALONE, LAST,   LOCAL,   P9,    false },
	{ "local P9, ceiling + 1",                257,     ALONE, LAST,   LOCAL,   P9,    true },
	{ "local P10, at the ceiling",            256,     ALONE, LAST,   LOCAL,   P10,   false },
	{ "local P10, ceiling + 1",               257,     ALONE, LAST,   LOCAL,   P10,   true },
	{ "ceiling 0 flushes the PID always",     1,       ALONE, LAST,   0,       TLBIE, true },
	{ "ceiling 1, 1 page",                    1,       ALONE, LAST,   1,       TLBIE, false },
	{ "ceiling 1, 2 pages",                   2,       ALONE, LAST,   1,       TLBIE, true },
	{ "ceiling U32_MAX, U32_MAX pages",       U32_MAX, ALONE, LAST,   U32_MAX, TLBIE, false },

	/* A batch of a larger operation: each condition at its boundary */
	{ "forced PMD batch of 64MB",             32,      1024,  FORCED, GLOBAL,  TLBIE, true },
	{ "last PMD batch of 64MB",               32,      1024,  LAST,   GLOBAL,  TLBIE, false },
	/* Only the range differs in these two: it decides */
	{ "forced PMD batch, range at ceiling",   32,      33,    FORCED, GLOBAL,  TLBIE, false },
	{ "forced PMD batch, range ceiling+1",    32,      34,    FORCED, GLOBAL,  TLBIE, true },
	{ "forced batch, one PMD range",          32,      32,    FORCED, GLOBAL,  TLBIE, false },
	{ "forced batch, half the ceiling",       16,      1024,  FORCED, GLOBAL,  TLBIE, false },
	{ "forced batch, above half",             17,      1024,  FORCED, GLOBAL,  TLBIE, true },
	{ "even ceiling, batch half",             17,      1024,  FORCED, 34,      TLBIE, false },
	{ "even ceiling, batch above half",       18,      1024,  FORCED, 34,      TLBIE, true },
	{ "forced 2-page batch of 64MB",          2,       1024,  FORCED, GLOBAL,  TLBIE, false },
	{ "forced 1-page batch of 64MB",          1,       1024,  FORCED, GLOBAL,  TLBIE, false },
	{ "8 pages of an 8MB stack, last",        8,       128,   LAST,   GLOBAL,  TLBIE, false },
	{ "ceiling 1, forced 1-page batch",       1,       1024,  FORCED, 1,       TLBIE, false },
	{ "local P10, forced PMD batch",          32,      1024,  FORCED, LOCAL,   P10,   false },
	{ "local P10, batch half the ceiling",    128,     1024,  FORCED, LOCAL,   P10,   false },
	{ "local P10, batch above half",          129,     1024,  FORCED, LOCAL,   P10,   true },
	{ "local P9, batch above half",           129,     1024,  FORCED, LOCAL,   P9,    true },
	{ "local P10, ceiling 40, PMD batch",     32,      1024,  FORCED, 40,      P10,   true },
	{ "local P9, ceiling 40, PMD batch",      32,      1024,  FORCED, 40,      P9,    false },
	{ "local P9 tuned, PID costs more",       100,     1024,  FORCED, 150,     P9,    false },
	{ "local P9 tuned, PID costs less",       129,     1024,  FORCED, 150,     P9,    true },
	{ "batch above the ceiling, small range", 40,      10,    LAST,   GLOBAL,  TLBIE, true },
};

static void flush_case_desc(const struct flush_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE,
		 "%s: %lu pages, range %lu, %s, ceiling %lu, PID cost %lu",
		 c->what, c->nr_pages, c->range_pages, c->forced ? "forced" : "last",
		 c->ceiling, c->pid_cost);
}

KUNIT_ARRAY_PARAM(flush, flush_cases, flush_case_desc);

static void radix_flush_decision_test(struct kunit *test)
{
	const struct flush_case *c = test->param_value;
	unsigned long range = max(c->nr_pages, c->range_pages);

	KUNIT_EXPECT_EQ(test, radix_flush_pid_wanted(c->nr_pages, range, c->forced,
						     c->ceiling, c->pid_cost), c->pid);
}

/*
 * The wiring: what radix__tlb_flush() decides for a sequence of batches of
 * one operation, with the mmu_gather set up as core mm sets it up
 * (tlb_gather_mmu() with the operation's range, then per batch the
 * gathered range, and delayed_rmap for a batch flushed before its page
 * table lock is dropped).
 */
struct op_case {
	const char *what;
	unsigned int shift;		/* page size of the batches */
	unsigned long entire;		/* bytes of the operation's range */
	unsigned long batch;		/* bytes gathered per batch */
	unsigned long stride;		/* bytes from one batch to the next */
	unsigned int nr_batches;
	bool forced;			/* each batch flushed for delayed rmap */
	bool rule_off;			/* the debugfs switch off */
	unsigned int want_pid;		/* whole-PID flushes expected */
};

#define SZ_64K_SHIFT	16
#define SZ_4K_SHIFT	12
#define MB		SZ_1M
#define PAGES_64K(n)	((unsigned long)(n) << SZ_64K_SHIFT)

static const struct op_case op_cases[] = {
	/* shmdt() of 256MB of dirty shared memory: a batch per page table */
	{ "shmdt 256MB, 64K pages", SZ_64K_SHIFT, 256 * MB, 2 * MB, 2 * MB, 128,
	  FORCED, false, 128 },
	{ "shmdt 256MB, batch rule off", SZ_64K_SHIFT, 256 * MB, 2 * MB, 2 * MB, 128,
	  FORCED, true, 0 },
	/* the same sparsely dirtied: 2 and 1 pages per page table */
	{ "shmdt 256MB, 2 pages per PMD", SZ_64K_SHIFT, 256 * MB, PAGES_64K(2), 2 * MB, 128,
	  FORCED, false, 0 },
	{ "shmdt 256MB, 1 page per PMD", SZ_64K_SHIFT, 256 * MB, PAGES_64K(1), 2 * MB, 128,
	  FORCED, false, 0 },
	/* 64MB of shared memory with only its first page table dirty */
	{ "dontneed 64MB, first PMD dirty", SZ_64K_SHIFT, 64 * MB, 2 * MB, 0, 1,
	  FORCED, false, 1 },
	/* a caller passing one page table's range: decided as on its own */
	{ "one-PMD range, one PMD dirty", SZ_64K_SHIFT, 2 * MB, 2 * MB, 0, 1,
	  FORCED, false, 0 },
	/* a thread's 8MB stack given back at exit, one page table touched */
	{ "stack MADV_DONTNEED, one PMD", SZ_64K_SHIFT, 8 * MB, 2 * MB, 0, 1,
	  LAST, false, 0 },
	/* one dense page table in a large mprotect(): below the ceiling */
	{ "mprotect 64MB, one PMD present", SZ_64K_SHIFT, 64 * MB, 2 * MB, 0, 1,
	  LAST, false, 0 },
	/* 4K pages: a page table's 512 pages are above the ceiling alone */
	{ "munmap 64MB, 4K pages", SZ_4K_SHIFT, 64 * MB, 2 * MB, 2 * MB, 32,
	  FORCED, false, 32 },
	{ "munmap 64MB, 4K pages, rule off", SZ_4K_SHIFT, 64 * MB, 2 * MB, 2 * MB, 32,
	  FORCED, true, 32 },
	/* batches at half the ceiling and just above */
	{ "17-page batches", SZ_64K_SHIFT, 64 * MB, PAGES_64K(17), 2 * MB, 4,
	  FORCED, false, 4 },
	{ "16-page batches", SZ_64K_SHIFT, 64 * MB, PAGES_64K(16), 2 * MB, 4,
	  FORCED, false, 0 },
};

static void op_case_desc(const struct op_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s: %u %s batches of %lu bytes in %lu",
		 c->what, c->nr_batches, c->forced ? "forced" : "last", c->batch,
		 c->entire);
}

KUNIT_ARRAY_PARAM(op, op_cases, op_case_desc);

static void radix_flush_batches_test(struct kunit *test)
{
	const struct op_case *c = test->param_value;
	struct mmu_gather tlb = {
		.entire_start = 0x7fff00000000UL,
		.entire_end = 0x7fff00000000UL + c->entire,
		.delayed_rmap = c->forced,
	};
	unsigned int i, pid = 0;

	for (i = 0; i < c->nr_batches; i++) {
		tlb.start = tlb.entire_start + i * c->stride;
		tlb.end = tlb.start + c->batch;
		if (radix_tlb_batch_flush_pid(&tlb, c->shift, !c->rule_off,
					      GLOBAL, TLBIE))
			pid++;
	}
	KUNIT_EXPECT_EQ(test, pid, c->want_pid);
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
