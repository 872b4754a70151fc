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
 * @nr_pages:    pages the flush covers
 * @range_pages: pages of the range of the whole operation the flush is a
 *               batch of (the mmu_gather's entire range), or @nr_pages if
 *               it stands alone
 * @forced:      the batch is flushed in the middle of its operation because
 *               core mm must flush it before it drops the page table lock
 *               (delayed rmap of shared dirty pages), not because the
 *               operation has ended or gathered much
 * @ceiling:     flush ceiling of the flush's scope (global or local): above
 *               this many pages, flushing the PID is cheaper overall than
 *               one invalidation per page plus the TLB entries it keeps
 * @pid_cost:    invalidation instructions a whole-PID flush takes in this
 *               scope: 1 for tlbie, and for tlbiel on ISA v3.1 (POWER10);
 *               one per TLB set for tlbiel on POWER9
 */
static inline bool radix_flush_pid_wanted(unsigned long nr_pages,
					  unsigned long range_pages,
					  bool forced,
					  unsigned long ceiling,
					  unsigned long pid_cost)
{
	if (nr_pages > ceiling)
		return true;
	/*
	 * Core mm cuts an unmap of shared dirty memory into one flush per
	 * page table, each before the page table lock is dropped, so that
	 * the pages' rmap can be removed after it. With 64K pages a page
	 * table maps 32 pages, below the global ceiling, and the batches of
	 * the largest such unmap would each be flushed page by page. Such a
	 * batch flushes the PID instead when all of these hold:
	 *
	 *  - it is forced: a flush at the end of an operation, or of one
	 *    that gathered all it could, holds all there was to flush, and
	 *    the ceiling alone decides it, as for a flush on its own. So a
	 *    thread's exit (glibc's MADV_DONTNEED of a mostly unused stack),
	 *    a sparse mprotect() and NUMA hinting are flushed as before.
	 *  - the operation's range is above the ceiling: this batch may be
	 *    the first of many, and flushing every one of them page by page
	 *    would cost more than the ceiling says a whole-PID flush is
	 *    worth. Nothing else tells, at the first batch, how much will
	 *    follow: a batch whose range ahead is empty is flushed by PID
	 *    too, as it cannot know what the batches before it flushed.
	 *  - the batch is more than half a ceiling. A whole-PID flush drops
	 *    the whole process from the TLB of every CPU in the mm, which
	 *    the ceiling rates at a ceiling's worth of pages: flushing the
	 *    PID only for batches of more than half that costs, in the
	 *    worst case (one dense page table in a large, otherwise empty
	 *    range: an operation that flushes no more than the ceiling has
	 *    at most one such batch), less than twice its per-page flush.
	 *    Batches of a page or two of sparsely dirtied shared memory stay
	 *    page by page.
	 *  - it takes fewer instructions than the pages do: not a local flush
	 *    on POWER9 that would iterate over 128 sets (tuned ceilings).
	 */
	return forced && range_pages > ceiling &&
	       nr_pages > ceiling / 2 && nr_pages > pid_cost;
}

/*
 * radix_tlb_batch_flush_pid - the decision for the batch @tlb gathered,
 * [tlb->start, tlb->end) in pages of 1 << @shift bytes, part of the
 * operation [tlb->entire_start, tlb->entire_end). @batch_rule false (the
 * debugfs switch) decides the batch on its own pages, as a flush on its
 * own.
 */
static inline bool radix_tlb_batch_flush_pid(const struct mmu_gather *tlb,
					     unsigned int shift, bool batch_rule,
					     unsigned long ceiling,
					     unsigned long pid_cost)
{
	unsigned long nr_pages = (tlb->end - tlb->start) >> shift;
	unsigned long range_pages = (tlb->entire_end - tlb->entire_start) >> shift;

	/* Pending delayed rmap: core mm flushes now, before the PTL is dropped */
	return radix_flush_pid_wanted(nr_pages, range_pages,
				      batch_rule && tlb->delayed_rmap,
				      ceiling, pid_cost);
}

#endif /* _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H */
