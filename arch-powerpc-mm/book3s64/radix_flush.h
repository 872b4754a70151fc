/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How a radix TLB range flush is carried out: page by page, or by
 * invalidating the whole PID. Pure functions of their inputs, so that
 * radix_tlb_kunit.c can check them at every boundary, and check what
 * radix__tlb_flush() decides for an mmu_gather built as core mm builds it.
 */
#ifndef _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H
#define _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H

#include <linux/minmax.h>
#include <linux/types.h>
#include <asm/tlb.h>

/**
 * radix_flush_pid_wanted - flush the whole PID rather than page by page?
 * @nr_pages:     pages the flush covers
 * @entire_pages: pages of the whole operation the flush is part of (the
 *                mmu_gather's entire range), or @nr_pages if it stands alone
 * @done_pages:   pages the operation has flushed so far, this flush
 *                included, or @nr_pages if it stands alone
 * @ceiling:      flush ceiling of the flush's scope (global or local): above
 *                this many pages, flushing the PID is cheaper overall than
 *                one invalidation per page plus the TLB entries it keeps
 * @pid_cost:     invalidation instructions a whole-PID flush takes in this
 *                scope: 1 for tlbie, and for tlbiel on ISA v3.1 (POWER10);
 *                one per TLB set for tlbiel on POWER9
 */
static inline bool radix_flush_pid_wanted(unsigned long nr_pages,
					  unsigned long entire_pages,
					  unsigned long done_pages,
					  unsigned long ceiling,
					  unsigned long pid_cost)
{
	if (nr_pages > ceiling)
		return true;
	/*
	 * Core mm cuts large operations into small flushes (at each page
	 * table, for delayed rmap of shared dirty pages), and with 64K pages
	 * a page table maps 32 pages, below the global ceiling. A batch of
	 * such an operation flushes the PID when all of these hold:
	 *
	 *  - the operation is large (@entire_pages) and has flushed more
	 *    than a ceiling's worth of pages, this batch included
	 *    (@done_pages): flushed at once, it would have flushed the PID.
	 *    An operation that flushes no more than that, however large its
	 *    range (a thread's mostly unused stack, a sparse mprotect()), is
	 *    flushed page by page, as it would be on its own.
	 *  - the batch is more than half a ceiling: a whole-PID flush drops
	 *    the whole process from the TLB of every CPU in the mm, and the
	 *    ceiling rates that at a ceiling's worth of pages. Flushing the
	 *    PID only for batches of more than half that keeps an operation
	 *    below twice its per-page cost even if every one of its PID
	 *    flushes paid the full refill, while batches that follow one
	 *    another inside one operation mostly drop what the previous
	 *    batch's flush already dropped. Batches of a page or two of
	 *    sparsely dirtied shared memory stay page by page.
	 *  - it takes fewer instructions than the pages do: not a local flush
	 *    on POWER9 that would iterate over 128 sets (tuned ceilings).
	 *
	 * The first ceiling's worth of pages of an operation is flushed page
	 * by page: nothing tells, before it, how much will follow.
	 */
	return entire_pages > ceiling && done_pages > ceiling &&
	       nr_pages > ceiling / 2 && nr_pages > pid_cost;
}

/*
 * radix_tlb_batch_flush_pid - the decision for the batch @tlb gathered,
 * [tlb->start, tlb->end) in pages of 1 << @shift bytes, part of the
 * operation [tlb->entire_start, tlb->entire_end)
 */
static inline bool radix_tlb_batch_flush_pid(const struct mmu_gather *tlb,
					     unsigned int shift,
					     unsigned long ceiling,
					     unsigned long pid_cost)
{
	unsigned long nr_pages = (tlb->end - tlb->start) >> shift;
	unsigned long entire = (tlb->entire_end - tlb->entire_start) >> shift;

	return radix_flush_pid_wanted(nr_pages, max(entire, nr_pages),
				      tlb->entire_flushed + nr_pages,
				      ceiling, pid_cost);
}

/* Count the batch @tlb gathered as flushed, for the operation's next ones */
static inline void radix_tlb_batch_done(struct mmu_gather *tlb, unsigned int shift)
{
	tlb->entire_flushed += (tlb->end - tlb->start) >> shift;
}

#endif /* _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H */
