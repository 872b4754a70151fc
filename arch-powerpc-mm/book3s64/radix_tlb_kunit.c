// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit test of the radix TLB flush decision (radix_flush.h): for each
 * range, whether it is flushed page by page or by invalidating the whole
 * PID, at every boundary of the flush ceilings. A change to the heuristic
 * changes this table, so review sees what it does.
 */
#include <kunit/test.h>
#include <linux/minmax.h>

#include "radix_flush.h"

/* The defaults of radix_tlb.c: at or above 34 pages global, 257 local */
#define GLOBAL_CEILING	34
#define LOCAL_CEILING	257

/* Instructions a whole-PID flush takes */
#define TLBIE		1	/* tlbie, any CPU */
#define P10_TLBIEL	1	/* tlbiel, ISA v3.1 */
#define P9_TLBIEL	128	/* tlbiel, one per set (POWER9_TLB_SETS_RADIX) */

#define ALONE		0	/* entire_pages: not part of a larger operation */

struct flush_case {
	const char *what;
	unsigned long nr_pages;
	unsigned long entire_pages;
	unsigned long ceiling;
	unsigned long pid_cost;
	bool pid;
};

static const struct flush_case flush_cases[] = {
	/* A flush on its own: the ceiling alone decides */
	{ "global, 1 page",			1,   ALONE, GLOBAL_CEILING, TLBIE, false },
	{ "global, one 2MB PMD of 64K pages",	32,  ALONE, GLOBAL_CEILING, TLBIE, false },
	{ "global, ceiling - 1",		33,  ALONE, GLOBAL_CEILING, TLBIE, false },
	{ "global, at the ceiling",		34,  ALONE, GLOBAL_CEILING, TLBIE, true },
	{ "global, ceiling + 1",		35,  ALONE, GLOBAL_CEILING, TLBIE, true },
	{ "local P9, ceiling - 1",		256, ALONE, LOCAL_CEILING, P9_TLBIEL, false },
	{ "local P9, at the ceiling",		257, ALONE, LOCAL_CEILING, P9_TLBIEL, true },
	{ "local P10, ceiling - 1",		256, ALONE, LOCAL_CEILING, P10_TLBIEL, false },
	{ "local P10, at the ceiling",		257, ALONE, LOCAL_CEILING, P10_TLBIEL, true },
	{ "ceiling 0 flushes the PID always",	1,   ALONE, 0, TLBIE, true },
	{ "ceiling 1 flushes the PID always",	1,   ALONE, 1, TLBIE, true },
	{ "ceiling ~0 never flushes the PID",	~0UL - 1, ALONE, ~0UL, TLBIE, false },

	/* A batch of a larger operation (mmu_gather's entire range) */
	{ "global, PMD batch of a 64MB unmap",	32,  1024, GLOBAL_CEILING, TLBIE, true },
	{ "global, 2-page batch of 64MB",	2,   1024, GLOBAL_CEILING, TLBIE, true },
	{ "global, 1-page batch of 64MB",	1,   1024, GLOBAL_CEILING, TLBIE, false },
	{ "global, batch of ceiling - 1 total",	32,  33,   GLOBAL_CEILING, TLBIE, false },
	{ "global, batch of ceiling total",	32,  34,   GLOBAL_CEILING, TLBIE, true },
	{ "local P10, PMD batch of 64MB",	32,  1024, LOCAL_CEILING, P10_TLBIEL, true },
	{ "local P10, 1-page batch of 64MB",	1,   1024, LOCAL_CEILING, P10_TLBIEL, false },
	{ "local P10, batch of ceiling - 1",	32,  256,  LOCAL_CEILING, P10_TLBIEL, false },
	{ "local P10, batch of ceiling total",	32,  257,  LOCAL_CEILING, P10_TLBIEL, true },
	{ "local P9, PMD batch of 64MB",	32,  1024, LOCAL_CEILING, P9_TLBIEL, false },
	{ "local P9, batch of 128 pages",	128, 1024, LOCAL_CEILING, P9_TLBIEL, false },
	{ "local P9, batch of 129 pages",	129, 1024, LOCAL_CEILING, P9_TLBIEL, true },
	{ "batch above the ceiling, small total",	40,  10,   GLOBAL_CEILING, TLBIE, true },
};

static void flush_case_desc(const struct flush_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s: %lu of %lu pages, ceiling %lu, PID cost %lu",
		 c->what, c->nr_pages, c->entire_pages, c->ceiling, c->pid_cost);
}

KUNIT_ARRAY_PARAM(flush, flush_cases, flush_case_desc);

static void radix_flush_decision_test(struct kunit *test)
{
	const struct flush_case *c = test->param_value;
	unsigned long entire = max(c->nr_pages, c->entire_pages);

	KUNIT_EXPECT_EQ(test, radix_flush_pid_wanted(c->nr_pages, entire, c->ceiling,
						     c->pid_cost), c->pid);
}

static struct kunit_case radix_flush_test_cases[] = {
	KUNIT_CASE_PARAM(radix_flush_decision_test, flush_gen_params),
	{}
};

static struct kunit_suite radix_flush_test_suite = {
	.name = "powerpc_radix_flush",
	.test_cases = radix_flush_test_cases,
};

kunit_test_suite(radix_flush_test_suite);

MODULE_DESCRIPTION("KUnit test of the powerpc radix TLB flush decision");
MODULE_LICENSE("GPL");
