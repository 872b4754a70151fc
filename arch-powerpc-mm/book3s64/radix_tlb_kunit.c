// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit test of the radix TLB flush decision (radix_flush.h): for each
 * range, whether it is flushed page by page or by invalidating the whole
 * PID, at every boundary of the flush ceilings, and for whole operations
 * cut into batches as core mm cuts them. A change to the heuristic changes
 * these tables, so review sees what it does.
 */
#include <kunit/test.h>
#include <linux/sizes.h>

#include "radix_flush.h"

/* The defaults of radix_tlb.c: above 33 pages global, 256 local */
#define GLOBAL		33
#define LOCAL		256

/* Instructions a whole-PID flush takes */
#define TLBIE		1	/* tlbie, any CPU */
#define P10		1	/* tlbiel, ISA v3.1 */
#define P9		128	/* tlbiel, one per set (POWER9_TLB_SETS_RADIX) */

/* range_pages of a flush decided on its own pages: not a forced batch */
#define ALONE		0

struct flush_case {
	const char *what;
	unsigned long nr_pages;
	unsigned long range_pages;
	unsigned long ceiling;
	unsigned long pid_cost;
	bool pid;
};

static const struct flush_case flush_cases[] = {
	/* A flush on its own: the ceiling alone decides */
	{ "global, 1 page",                     1,       ALONE, GLOBAL,  TLBIE, false },
	{ "global, one 2MB PMD of 64K pages",   32,      ALONE, GLOBAL,  TLBIE, false },
	{ "global, at the ceiling",             33,      ALONE, GLOBAL,  TLBIE, false },
	{ "global, ceiling + 1",                34,      ALONE, GLOBAL,  TLBIE, true },
	{ "local P9, at the ceiling",           256,     ALONE, LOCAL,   P9,    false },
	{ "local P9, ceiling + 1",              257,     ALONE, LOCAL,   P9,    true },
	{ "local P10, at the ceiling",          256,     ALONE, LOCAL,   P10,   false },
	{ "local P10, ceiling + 1",             257,     ALONE, LOCAL,   P10,   true },
	{ "ceiling 0 flushes the PID always",   1,       ALONE, 0,       TLBIE, true },
	{ "ceiling 1, 1 page",                  1,       ALONE, 1,       TLBIE, false },
	{ "ceiling 1, 2 pages",                 2,       ALONE, 1,       TLBIE, true },
	{ "ceiling U32_MAX, U32_MAX pages",     U32_MAX, ALONE, U32_MAX, TLBIE, false },

	/* A batch of a larger operation: each condition at its boundary */
	{ "forced PMD batch of 64MB",           32,      1024,  GLOBAL,  TLBIE, true },
	{ "PMD at the end of a 64MB zap",       32,      ALONE, GLOBAL,  TLBIE, false },
	/* Only the range differs in these two: it decides */
	{ "forced PMD batch, range at ceiling", 32,      33,    GLOBAL,  TLBIE, false },
	{ "forced PMD batch, range ceiling+1",  32,      34,    GLOBAL,  TLBIE, true },
	{ "forced batch, one PMD range",        32,      32,    GLOBAL,  TLBIE, false },
	{ "forced batch, half the ceiling",     16,      1024,  GLOBAL,  TLBIE, false },
	{ "forced batch, above half",           17,      1024,  GLOBAL,  TLBIE, true },
	{ "even ceiling, batch half",           17,      1024,  34,      TLBIE, false },
	{ "even ceiling, batch above half",     18,      1024,  34,      TLBIE, true },
	{ "forced 2-page batch of 64MB",        2,       1024,  GLOBAL,  TLBIE, false },
	{ "forced 1-page batch of 64MB",        1,       1024,  GLOBAL,  TLBIE, false },
	{ "8 pages of an 8MB stack, alone",     8,       ALONE, GLOBAL,  TLBIE, false },
	{ "ceiling 1, forced 1-page batch",     1,       1024,  1,       TLBIE, false },
	{ "local P10, forced PMD batch",        32,      1024,  LOCAL,   P10,   false },
	{ "local P10, batch half the ceiling",  128,     1024,  LOCAL,   P10,   false },
	{ "local P10, batch above half",        129,     1024,  LOCAL,   P10,   true },
	{ "local P9, batch above half",         129,     1024,  LOCAL,   P9,    true },
	{ "local P10, ceiling 40, PMD batch",   32,      1024,  40,      P10,   true },
	{ "local P9, ceiling 40, PMD batch",    32,      1024,  40,      P9,    false },
	{ "local P9 tuned, PID costs more",     100,     1024,  150,     P9,    false },
	{ "local P9 tuned, PID costs less",     129,     1024,  150,     P9,    true },
	{ "batch above the ceiling, range 10",  40,      10,    GLOBAL,  TLBIE, true },
};

static void flush_case_desc(const struct flush_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE,
		 "%s: %lu pages, range %lu, ceiling %lu, PID cost %lu",
		 c->what, c->nr_pages, c->range_pages, c->ceiling, c->pid_cost);
}

KUNIT_ARRAY_PARAM(flush, flush_cases, flush_case_desc);

static void radix_flush_decision_test(struct kunit *test)
{
	const struct flush_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, radix_range_flush_pid(c->nr_pages, c->range_pages,
						    c->ceiling, c->pid_cost), c->pid);
	/* On its own, the ceiling alone decides */
	KUNIT_EXPECT_EQ(test, radix_range_flush_pid(c->nr_pages, ALONE, c->ceiling, c->pid_cost),
			radix_flush_pid_wanted(c->nr_pages, c->ceiling));
}

/*
 * The wiring: what radix__tlb_flush() decides for a sequence of batches of
 * one operation, with the mmu_gather set up as core mm sets it up
 * (tlb_gather_mmu() with the operation's range, then per batch the
 * gathered range, and early_flush for a batch flushed before its page
 * table lock is dropped).
 */
struct op_case {
	const char *what;
	unsigned int shift;		/* page size of the batches */
	unsigned long entire;		/* bytes of the operation's range */
	unsigned long batch;		/* bytes gathered per batch */
	unsigned long stride;		/* bytes from one batch to the next */
	unsigned int nr_batches;
	bool forced;			/* each batch an early flush */
	bool rule_off;			/* the debugfs switch off */
	unsigned int want_pid;		/* whole-PID flushes expected */
};

#define FORCED		true	/* zap_pte_range() flushes before the PTL drop */
#define LAST		false	/* a flush that holds all the operation gathered */

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
		.early_flush = c->forced,
	};
	unsigned int i, pid = 0;

	for (i = 0; i < c->nr_batches; i++) {
		unsigned long range = radix_tlb_batch_range(&tlb, !c->rule_off);

		tlb.start = tlb.entire_start + i * c->stride;
		tlb.end = tlb.start + c->batch;
		/* As __radix__flush_tlb_range_psize() does with its arguments */
		if (radix_range_flush_pid((tlb.end - tlb.start) >> c->shift, range >> c->shift,
					  GLOBAL, TLBIE))
			pid++;
	}
	KUNIT_EXPECT_EQ(test, pid, c->want_pid);
}

/* The bound on the rule: the mm's other threads, a coprocessor, the switch */
struct rule_case {
	const char *what;
	bool enabled;
	int users;
	bool in_mm;
	bool escalated;
	bool on;
};

static const struct rule_case rule_cases[] = {
	{ "one thread",                  true,  1, true,  false, true },
	{ "two other threads",           true,  3, true,  false, true },
	{ "three other threads",         true,  4, true,  false, false },
	{ "other process, two users",    true,  2, false, false, true },
	{ "other process, three users",  true,  3, false, false, false },
	{ "switched off",                false, 1, true,  false, false },
	{ "coprocessor, one thread",     true,  1, true,  true,  false },
	{ "coprocessor, two threads",    true,  2, true,  true,  false },
};

static void rule_case_desc(const struct rule_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s: users %d", c->what, c->users);
}

KUNIT_ARRAY_PARAM(rule, rule_cases, rule_case_desc);

static void radix_batch_rule_test(struct kunit *test)
{
	const struct rule_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, radix_batch_rule_on(c->enabled, c->users, c->in_mm,
						  c->escalated), c->on);
}

static struct kunit_case radix_flush_test_cases[] = {
	KUNIT_CASE_PARAM(radix_batch_rule_test, rule_gen_params),
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
