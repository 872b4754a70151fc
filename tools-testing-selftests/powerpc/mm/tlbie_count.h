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

/* The flush ceilings, in pages, under debugfs (read_debugfs_int()) */
#define TLBIE_GLOBAL_CEILING	"powerpc/tlb_single_page_flush_ceiling"
#define TLBIE_LOCAL_CEILING	"powerpc/tlb_local_single_page_flush_ceiling"

/*
 * Invalidations seen between tlbie_count_start() and tlbie_count_stop(),
 * of process-scoped translations of the host (lpid == 0, prs == 1: a KVM
 * host's partition-scoped flushes and those it does for its guests are
 * left out), in the scope tlbie_count_set_scope() chose.
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
	/* of either kind, for user PIDs, that flush the page walk cache too (RIC != 0) */
	unsigned long long pwc;
	/* TLBIE_SCOPE_MM only: tlbiel for this process's PID on every CPU */
	unsigned long long mm_local;
	unsigned long long mm_local_pid; /* of which whole-PID */
};

/*
 * What is counted. The tracepoint fires in the context of the task that
 * issues the invalidation, so counting per task sees every tlbie and
 * tlbiel a test's own munmap() and the like issue, and nothing other
 * processes do. It does not see the tlbiel that other CPUs issue in IPI
 * handlers (mm_cpumask trimming, global flushes with tlbie disabled)
 * while running something else.
 */
enum tlbie_scope {
	/*
	 * The thread that opens counting (tlbie_count_unavailable()) and the
	 * threads it creates from then on (the default)
	 */
	TLBIE_SCOPE_TASK,
	/*
	 * The same, and in mm_local and mm_local_pid the tlbiel for this
	 * process's PID on every online CPU, IPI handlers included: where a
	 * test checks which CPUs a flush reaches (mm_cpumask trimming).
	 * Needs system-wide counting (perf_event_paranoid <= 0 or
	 * CAP_PERFMON).
	 */
	TLBIE_SCOPE_MM,
	/* Everything every online CPU issues, for every process (tlbie_bench) */
	TLBIE_SCOPE_SYSTEM,
};

/* Before the first tlbie_count_unavailable(): what to count */
void tlbie_count_set_scope(enum tlbie_scope scope);

/*
 * NULL when counting works here, else why not (for SKIP_IF_MSG()): it
 * opens the perf events, and reports why that failed.
 */
const char *tlbie_count_unavailable(void);

int tlbie_count_start(void);
int tlbie_count_stop(struct tlbie_counts *c);
void tlbie_count_close(void);
void tlbie_counts_print(const char *label, const struct tlbie_counts *c);
/* The " key=value ..." part of that line, for other line formats */
void tlbie_counts_print_fields(const struct tlbie_counts *c);

/*
 * How every test judges counts. Counts only gain from what else runs (a
 * flush NUMA balancing makes this process issue meanwhile, an IPI for
 * another mm taken while a thread of ours runs, a batch that a reschedule
 * point cut in two), and lose only where a periodic mm_cpumask trim turns
 * a global flush into an IPI and tlbiel (a test that counts tlbie treats a
 * measurement with tlbiel in it as one to take again): a measurement
 * above its bounds is taken again, up to TLBIE_TRIES times in all, and
 * one below them fails at once.
 */
#define TLBIE_TRIES	3

enum tlbie_verdict {
	TLBIE_PASS,
	TLBIE_TOO_FEW,		/* fails */
	TLBIE_TOO_MANY,		/* fails once TLBIE_TRIES measurements were */
};

/*
 * After a measurement judged @v, whether to take it again; *@tries counts
 * the measurements taken so far, less one (start it at 0):
 *
 *	do {
 *		measure, print, v = judge();
 *	} while (tlbie_measure_again(v, &tries));
 *	failed |= v != TLBIE_PASS;
 */
bool tlbie_measure_again(enum tlbie_verdict v, int *tries);

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
 * A new SysV shm segment of @size bytes, not yet touched, attached at a
 * page-table boundary (where the kernel would attach it depends on ASLR,
 * and so would the number of page tables it spans) and removed once
 * detached; NULL on failure.
 */
void *tlbie_shm_attach(size_t size);

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
 * such a one, and is taken again, up to TLBIE_TRIES times in all.
 */
int tlbie_count_op_global(enum tlbie_op op, unsigned long pages, struct tlbie_counts *c);

/*
 * The CPUs this process may run on (sched_getaffinity()) that are online,
 * ascending, in *@cpus (free() it); returns how many, or -1.
 */
int tlbie_usable_cpus(int **cpus);

/*
 * Two of those for a test: cpus[0], and in cpus[1] one on another core
 * than cpus[0] where the cores' core_id in sysfs tells them apart (the SMT
 * threads of a core share its TLB, so a flush wrongly kept local to
 * cpus[0] would still clear cpus[1]'s entries), else any other. Returns
 * how many it found (fewer than 2: the test skips, "needs two CPUs"), or
 * -1 on error.
 */
int tlbie_pick_cpus(int cpus[2]);

/* Bind the calling thread to the @nr CPUs @cpus, or to @cpu; 0 or -1 */
int tlbie_bind_cpus(const int *cpus, int nr);
int tlbie_bind_cpu(int cpu);

/*
 * What /sys/kernel/mm/transparent_hugepage/@file ("enabled",
 * "shmem_enabled") selects: 2 for "always" or "force", 1 for "madvise",
 * "advise" or "within_size", 0 for "never" or "deny"; -1 if the kernel has
 * no such file (no THP).
 */
int tlbie_thp_mode(const char *file);

/*
 * The number after @key on the first line of the file @path that begins
 * with @key followed by a number; @key includes its separator ("Threads:"
 * in /proc/self/status, "HugePages_Free:" in /proc/meminfo). -1 if @path
 * cannot be read or has no such line: for values that are never negative.
 */
long tlbie_proc_value(const char *path, const char *key);

/*
 * Write @text to the file @path (a debugfs or sysfs knob) after saving
 * what it holds, unless an earlier call saved it already. What was saved
 * is written back by tlbie_restore_files(), at exit, and on SIGTERM,
 * SIGINT and SIGALRM (a harness's timeout), with only open(), write() and
 * close() in the signal handler. 0, or -1 with errno set.
 */
int tlbie_write_restored(const char *path, const char *text);
void tlbie_restore_files(void);

/*
 * With a sibling running: NULL when a global flush must issue tlbie here,
 * else why not, from the kernel's setup: a guest without GTSE flushes
 * through the hypervisor, and with debugfs powerpc/tlbie_enabled = 0 the
 * kernel flushes with tlbiel on each CPU. Prints a one-page flush's counts.
 */
const char *tlbie_global_unavailable(void);

/*
 * A thread of the caller's process, bound to @cpu and spinning there, so
 * the mm stays active on that CPU and the kernel must flush globally.
 * tlbie_sibling_start() returns once the thread runs there, or -1 at once
 * if it could not bind to @cpu.
 */
struct tlbie_sibling {
	pthread_t thread;
	int cpu;
	int stop;		/* set by tlbie_sibling_stop() */
	int running;		/* 1 once bound, -1 if binding failed */
};

int tlbie_sibling_start(struct tlbie_sibling *s, int cpu);
void tlbie_sibling_stop(struct tlbie_sibling *s);

#endif /* _SELFTESTS_POWERPC_MM_TLBIE_COUNT_H */
