/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How a radix TLB range flush is carried out: page by page, or by
 * invalidating the whole PID. Pure functions of their inputs, so that
 * radix_tlb_kunit.c can check them at every boundary, and check what
 * radix__tlb_flush() decides for an mmu_gather built as core mm builds it.
 */
#ifndef _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H
#define _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H

#include <linux/types.h>
#include <asm/tlb.h>

/**
 * radix_flush_pid_wanted - flush the whole PID rather than page by page?
 * @nr_pages: pages the flush covers
 * @ceiling:  flush ceiling of the flush's scope (global or local): above
 *            this many pages, flushing the PID is cheaper overall than one
 *            invalidation per page plus the TLB entries it keeps
 *
 * Return: true to invalidate the whole PID, false to flush page by page.
 */
static inline bool radix_flush_pid_wanted(unsigned long nr_pages,
					  unsigned long ceiling)
{
	return nr_pages > ceiling;
}

/**
 * radix_batch_flush_pid_wanted - flush the PID for a batch of a larger zap?
 * @nr_pages:    pages the batch covers, no more than @ceiling
 * @range_pages: pages of the range of the whole operation
 * @ceiling:     flush ceiling of the batch's scope (global or local)
 * @pid_cost:    invalidation instructions a whole-PID flush takes in this
 *               scope: 1 for tlbie, and for tlbiel on ISA v3.1 (POWER10);
 *               one per TLB set for tlbiel on POWER9
 *
 * For a batch that core mm flushes before the operation is done
 * (radix_tlb_batch_range() is not 0), whose own pages are not above the
 * ceiling.
 *
 * Return: true to invalidate the whole PID, false to flush page by page.
 */
static inline bool radix_batch_flush_pid_wanted(unsigned long nr_pages,
						unsigned long range_pages,
						unsigned long ceiling,
						unsigned long pid_cost)
{
	/*
	 * Core mm cuts a zap of shared dirty memory into one flush per page
	 * table, each before the page table lock is dropped, so that the
	 * pages' rmap can be removed after it. With 64K pages a page table
	 * maps 32 pages, below the global ceiling, and every batch of the
	 * largest such zap would be flushed page by page. Such a batch
	 * flushes the PID instead when all of these hold:
	 *
	 *  - the operation's range is above the ceiling: the batch may be
	 *    the first of many, which flushed page by page would together
	 *    cost more than the ceiling rates a whole-PID flush. At the
	 *    first page table nothing else tells how much will follow, and
	 *    a batch with nothing ahead of it in the range cannot know what
	 *    the batches before it flushed: it is decided the same way.
	 *  - the batch is more than half a ceiling. A whole-PID flush drops
	 *    the whole process from the TLB of every CPU in the mm, which
	 *    the ceiling rates at a ceiling's worth of pages. A batch flushes
	 *    differently from before only if it is forced, its pages are in
	 *    (ceiling / 2, ceiling] and its range is above the ceiling; an
	 *    operation whose batches add up to no more than the ceiling (one
	 *    dense page table in a large, otherwise clean range) has at most
	 *    one such batch, at less than twice its per-page cost. Batches of
	 *    a page or two of sparsely dirtied shared memory stay page by
	 *    page.
	 *  - it takes fewer instructions than the pages do: not a local flush
	 *    on POWER9 that would iterate over 128 sets (tuned ceilings).
	 *
	 * A flush that holds all the operation gathered (its end, a thread's
	 * exit with a mostly unused stack, a sparse mprotect()) is decided
	 * by radix_flush_pid_wanted() alone, as before.
	 */
	return range_pages > ceiling && nr_pages > ceiling / 2 &&
	       nr_pages > pid_cost;
}

/**
 * radix_range_flush_pid - the decision for a range flush
 * @nr_pages:    pages the flush covers
 * @range_pages: pages of the range of the zap it is a forced batch of, or 0
 *               if it is decided on its own pages
 * @ceiling:     flush ceiling of the flush's scope (global or local)
 * @pid_cost:    invalidation instructions a whole-PID flush takes
 *
 * Return: true to invalidate the whole PID, false to flush page by page.
 */
static inline bool radix_range_flush_pid(unsigned long nr_pages,
					 unsigned long range_pages,
					 unsigned long ceiling,
					 unsigned long pid_cost)
{
	if (radix_flush_pid_wanted(nr_pages, ceiling))
		return true;
	return range_pages &&
	       radix_batch_flush_pid_wanted(nr_pages, range_pages, ceiling, pid_cost);
}

/**
 * radix_tlb_batch_range - the range that decides the batch @tlb gathered
 * @tlb:        the mmu_gather being flushed
 * @batch_rule: the rule is on (debugfs powerpc/tlb_batch_flush_pid)
 *
 * Return: the bytes of the operation's range, if core mm flushes this batch
 * before the operation is done (early_flush) and the rule is on; else 0:
 * the batch is decided on its own pages.
 */
static inline unsigned long radix_tlb_batch_range(const struct mmu_gather *tlb,
						  bool batch_rule)
{
	if (!batch_rule || !tlb->early_flush)
		return 0;
	return tlb->entire_end - tlb->entire_start;
}

#endif /* _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H */
