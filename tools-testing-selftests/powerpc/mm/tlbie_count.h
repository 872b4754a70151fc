/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Count the TLB invalidations the radix MMU code issues, with the
 * powerpc:tlbie tracepoint (pmu/event.c), for the flush tests and
 * tlbie_bench; and what those tests share.
 */
#ifndef _SELFTESTS_POWERPC_MM_TLBIE_COUNT_H
#define _SELFTESTS_POWERPC_MM_TLBIE_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* debugfs knobs */
#define TLBIE_GLOBAL_CEILING	"powerpc/tlb_single_page_flush_ceiling"
#define TLBIE_LOCAL_CEILING	"powerpc/tlb_local_single_page_flush_ceiling"
#define TLBIE_BATCH_RULE	"powerpc/tlb_batch_flush_pid"

/*
 * Invalidations for user PIDs between tlbie_count_start() and
 * tlbie_count_stop(). The kernel's own flushes (PID 0) and POWER9's errata
 * fix-ups (fixup_tlbie_*()) are only in kernel, fixup and raw_*: the rest
 * reads the same on POWER9 and POWER10.
 */
struct tlbie_counts {
	unsigned long long global;	/* tlbie */
	unsigned long long global_pid;	/* of which whole-PID (IS = 1) */
	unsigned long long global_page;	/* of which per page */
	unsigned long long local;	/* tlbiel */
	unsigned long long local_pid;	/* of which whole-PID: 128 a flush on POWER9 */
	unsigned long long pwc;		/* either, flushing the page walk cache */
	unsigned long long pwc_only;	/* of which that alone (RIC 1) */
	unsigned long long kernel;	/* _tlbie_pid(0, RIC_FLUSH_ALL), DEBUG_PAGEALLOC's */
	unsigned long long fixup;	/* fix-up tlbie of the user flushes */
	unsigned long long raw_global;	/* every tlbie */
};

enum tlbie_scope {
	TLBIE_SCOPE_TASK,	/* this thread and those it creates (default) */
	TLBIE_SCOPE_SYSTEM,	/* every online CPU, every process */
};

/* Before tlbie_count_unavailable(), which opens the counters */
void tlbie_count_set_scope(enum tlbie_scope scope);
/*
 * NULL, or why counting cannot be done here. It learns POWER9's fix-ups with
 * a thread on a second CPU: call it before binding to one
 */
const char *tlbie_count_unavailable(void);
int tlbie_count_start(void);
int tlbie_count_stop(struct tlbie_counts *c);
void tlbie_count_close(void);
/* "tlbie: @label" (none if NULL), " key=value ..." and a newline */
void tlbie_counts_print(const char *label, const struct tlbie_counts *c);

struct event;
/* A powerpc:tlbie event with @filter, for @pid on @cpu as perf_event_open() */
int tlbie_event_open(struct event *e, pid_t pid, int cpu, const char *filter);

/* Fix-up tlbie a flush sequence, 0 to 2, learnt by tlbie_count_unavailable() */
int tlbie_fixups_per_flush(void);

/* What a flush must issue */
struct tlbie_want {
	bool local;		/* tlbiel, else tlbie */
	bool fixups;		/* and fix-ups for each whole-PID flush, none else */
	long pid, page, pwc;	/* whole-PID flushes, per-page ones, of the PWC */
	long ceiling;		/* of the zap's forced batches (0: none) */
};

/*
 * 0 if @c holds what @w wants, -1 (fail) below it, 1 (again, up to
 * TLBIE_TRIES times) above it: counts only gain from what else runs, but
 * where the mm_cpumask trim makes a flush local, or a reschedule cuts one
 * or two forced batches in two (ceiling / 2 + 1 or more per-page flushes
 * for a whole-PID one).
 */
int tlbie_judge(const struct tlbie_counts *c, const struct tlbie_want *w);
#define TLBIE_TRIES	3

/* Why a global flush does not issue tlbie here, or NULL */
const char *tlbie_global_unavailable(void);

/*
 * Up to @max CPUs this process may run on, in @cpu, one a core first (a
 * core's SMT threads share its TLB, which hides a local flush); how many
 */
int tlbie_usable_cpus(int *cpu, int max);
/* Binds the calling thread to @cpu, quietly: 0 or -1 */
int tlbie_bind(int cpu);
/* A thread spinning on @cpu (TLBIE_MAX_SIBLINGS at most): flushes are global */
#define TLBIE_MAX_SIBLINGS	3
int tlbie_sibling_start(int cpu);
/* Stops the newest; returns once it has left the mm */
void tlbie_sibling_stop(void);

/* AnonHugePages of this process, in kB */
long tlbie_anon_huge_kb(void);
/* MADV_NOHUGEPAGE, where the kernel has THP */
int tlbie_nohugepage(void *p, size_t len);

/* The knobs above, saved in main() and restored after test_harness() (SIGTERM too) */
int tlbie_set_knob(const char *knob, const char *val);
void tlbie_knobs_save(void);
void tlbie_knobs_restore(void);

#endif /* _SELFTESTS_POWERPC_MM_TLBIE_COUNT_H */
