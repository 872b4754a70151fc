/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How a radix TLB range flush is carried out: page by page, or by
 * invalidating the whole PID. A pure function of its inputs, so that
 * radix_tlb_kunit.c can check it at every boundary.
 */
#ifndef _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H
#define _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H

#include <linux/types.h>

/**
 * radix_flush_pid_wanted - flush the whole PID rather than page by page?
 * @nr_pages:     pages the flush covers
 * @entire_pages: pages of the whole operation the flush is part of (the
 *                mmu_gather's entire range), or @nr_pages if it stands alone
 * @ceiling:      flush ceiling of the flush's scope (global or local): at or
 *                above this many pages, flushing the PID is cheaper overall
 *                than one invalidation per page plus the TLB entries it keeps
 * @pid_cost:     invalidation instructions a whole-PID flush takes in this
 *                scope: 1 for tlbie, and for tlbiel on ISA v3.1 (POWER10);
 *                one per TLB set for tlbiel on POWER9
 */
static inline bool radix_flush_pid_wanted(unsigned long nr_pages,
					  unsigned long entire_pages,
					  unsigned long ceiling,
					  unsigned long pid_cost)
{
	if (nr_pages >= ceiling)
		return true;
	/*
	 * Core mm cuts large operations into small flushes (at each page
	 * table, for delayed rmap of shared dirty pages), and with 64K pages
	 * a page table maps 32 pages, below the global ceiling. Had the
	 * operation been flushed at once, it would have flushed the PID;
	 * flush the PID for each of its parts too, but only where that takes
	 * fewer instructions than the pages do: never for one page, and not
	 * for a local flush on POWER9 that would iterate over 128 sets to
	 * save 32 tlbiel.
	 */
	return entire_pages >= ceiling && nr_pages > pid_cost;
}

#endif /* _ARCH_POWERPC_MM_BOOK3S64_RADIX_FLUSH_H */
