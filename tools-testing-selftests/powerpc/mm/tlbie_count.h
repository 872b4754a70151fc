/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Count the TLB invalidations the kernel issues, through the powerpc:tlbie
 * tracepoint, so tests can check how the radix MMU code flushes.
 */
#ifndef _SELFTESTS_POWERPC_MM_TLBIE_COUNT_H
#define _SELFTESTS_POWERPC_MM_TLBIE_COUNT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Invalidations seen between tlbie_count_start() and tlbie_count_stop(),
 * on all online CPUs.
 *
 * The raw_* fields are what the tracepoint reports. POWER9 has errata
 * work-arounds (fixup_tlbie_*() in radix_tlb.c) that follow each global
 * invalidation sequence with a tlbie to PID 0 and a second tlbie either to
 * a dummy address (after a whole-PID flush) or to the last address flushed
 * (after per-page flushes). The other fields leave those out, so they read
 * the same on POWER9 and POWER10, and leave out the kernel's own flushes
 * (PID 0: vunmap, and every page freed with DEBUG_PAGEALLOC), which the
 * raw_* fields count.
 */
struct tlbie_counts {
	unsigned long long global;	/* tlbie for user PIDs */
	unsigned long long global_pid;	/* of which whole-PID (IS = 1) */
	unsigned long long global_page;	/* of which per-page (IS = 0) */
	unsigned long long local;	/* tlbiel, any kind */
	unsigned long long local_pid;	/* tlbiel whole-PID, one per TLB set */
	unsigned long long fixup;	/* left out: PID 0 and POWER9 fix-ups */
	unsigned long long raw_global;	/* local == 0 */
	unsigned long long raw_global_pid; /* local == 0 && rb & 1024 */
};

/* NULL when counting works here, else why not (for SKIP_IF_MSG()). */
const char *tlbie_count_unavailable(void);

int tlbie_count_start(void);
int tlbie_count_stop(struct tlbie_counts *c);
void tlbie_count_close(void);
void tlbie_counts_print(const char *label, const struct tlbie_counts *c);
/* The " key=value ..." part of that line, for other line formats */
void tlbie_counts_print_fields(const struct tlbie_counts *c);

/* What a test does to a range of pages: the first three need a flush. */
enum tlbie_op {
	TLBIE_MUNMAP,
	TLBIE_DONTNEED,
	TLBIE_MPROTECT_RO,	/* read-write to read-only */
	TLBIE_MPROTECT_RW,	/* read-only (after a write) to read-write */
	NR_TLBIE_OPS
};

extern const char * const tlbie_op_name[NR_TLBIE_OPS];

/* Bytes one page table maps (2MB with 64K or 4K radix pages). */
#define TLBIE_PMD_SPAN	(2UL << 20)

/* @len bytes of private anonymous memory, filled, without THP; NULL on error */
char *tlbie_map_filled(size_t len);

/* The first page-table boundary at or above @p */
static inline char *tlbie_pmd_align(void *p)
{
	return (char *)(((unsigned long)p + TLBIE_PMD_SPAN - 1) & ~(TLBIE_PMD_SPAN - 1));
}

/*
 * @len bytes of dirty shared memory as @nr adjacent VMAs, starting at a
 * page-table boundary so no VMA straddles one (which would split its
 * flush in two); NULL on failure
 */
char *tlbie_map_shared(size_t len, int nr);

/*
 * Attach a SysV shm segment of @size bytes, fill it, and count the
 * invalidations its detach causes; *@addr is where it was attached.
 */
int tlbie_count_shmdt(size_t size, struct tlbie_counts *c, void **addr);

/*
 * Apply @op to @pages populated private pages that start one page past a
 * page-table boundary (so the range frees no page table and no page walk
 * cache flush is due) and count the invalidations it causes.
 */
int tlbie_count_op(enum tlbie_op op, unsigned long pages, struct tlbie_counts *c);

/*
 * tlbie_count_op() for a process with a thread live on another CPU, where
 * every flush should be global. About once per 1073 flushes on a CPU the
 * kernel trims mm_cpumask instead (IPI, tlbiel on each CPU, then a local
 * flush: see tick_and_test_trim_clock()); a measurement that saw tlbiel is
 * such a one, and is taken again, up to 3 times.
 */
int tlbie_count_op_global(enum tlbie_op op, unsigned long pages, struct tlbie_counts *c);

/* The online CPUs, ascending; returns how many were stored, or -1. */
int tlbie_online_cpus(int *cpus, int max);

/*
 * A thread of the caller's process, bound to @cpu and spinning there, so
 * the mm stays active on that CPU and the kernel must flush globally.
 */
/*
 * With a sibling running: NULL when a global flush issues tlbie here, else
 * why not (a guest without GTSE flushes through the hypervisor, and
 * debugfs powerpc/tlbie_enabled = 0 flushes with tlbiel on each CPU).
 */
const char *tlbie_global_unavailable(void);

struct tlbie_sibling {
	pthread_t thread;
	int cpu;
	int stop;		/* set by tlbie_sibling_stop() */
	int running;		/* 1 once bound, -1 if binding failed */
};

int tlbie_sibling_start(struct tlbie_sibling *s, int cpu);
void tlbie_sibling_stop(struct tlbie_sibling *s);

#endif /* _SELFTESTS_POWERPC_MM_TLBIE_COUNT_H */
