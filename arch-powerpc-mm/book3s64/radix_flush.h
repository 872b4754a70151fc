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
	 * Core mm flushes a zap of shared dirty memory at the end of every
	 * page table, before it drops the page table lock: with 64K pages a
	 * batch of 32 pages, under the ceiling, however large the zap. Such
	 * a batch flushes the PID when the zap's range is above the ceiling
	 * (its batches together are) and the batch is more than half the
	 * ceiling (so a page or two of sparse dirty memory stay per page,
	 * and an operation that adds up to no more than the ceiling has at
	 * most one such batch), if that takes fewer instructions than its
	 * pages (not a POWER9 local flush, 128 tlbiel). What it costs the
	 * mm's other threads is bounded by radix_batch_rule_on().
	 */
	return range_pages > ceiling && nr_pages > ceiling / 2 &&
	       nr_pages > pid_cost;
}

/*
 * The most users of an mm, besides the task that zaps it, that the batch
 * rule lets a whole-PID flush cost a refill: each can lose up to the time
 * between two batches of the zap refilling what it held, and at 200 cycles
 * a refill three can outweigh the per-page tlbie the flush saves (a 64MB
 * hole punch, 256MB working sets of 64K pages, in a model of the POWER10
 * TLB).
 */
#define RADIX_BATCH_MAX_OTHER_THREADS	2

/**
 * radix_batch_rule_on - may the batches of this mm's zaps flush the PID?
 * @enabled:   the debugfs switch powerpc/tlb_batch_flush_pid
 * @users:     the mm's mm_users (its threads, and any kernel references,
 *             which only turn the rule off)
 * @in_mm:     the zapping task is one of them (current->mm == mm; not so
 *             for a truncation from another process, or the OOM reaper)
 * @escalated: its whole-PID flushes also flush the page walk and process
 *             table caches (mm_needs_flush_escalation(): POWER9 with a
 *             coprocessor attached), which the rule does not price
 *
 * Return: true if radix_batch_flush_pid_wanted() may decide its batches.
 */
static inline bool radix_batch_rule_on(bool enabled, int users, bool in_mm,
				       bool escalated)
{
	return enabled && !escalated &&
	       users - in_mm <= RADIX_BATCH_MAX_OTHER_THREADS;
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
 * @batch_rule: the rule is on for its mm (radix_batch_rule_on())
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
