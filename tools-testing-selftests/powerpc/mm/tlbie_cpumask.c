// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mm_cpumask trimming keeps the flushes of a single-threaded process
 * local. A process that has run on several CPUs leaves its mm in their
 * mm_cpumask, but while it has a single thread, the kernel trims that
 * mask when it flushes (flush_type_needed(), exit_flush_lazy_tlbs()): an
 * IPI has each other CPU flush the whole PID with tlbiel and leave the
 * mask, and from then on the process's flushes are tlbiel on its own CPU
 * only. With a thread live on another core the same unmaps must be global;
 * once that thread has exited, the first flush trims its CPU, and local
 * again.
 *
 * The IPIs' tlbiel run on other CPUs, in whatever task was running there:
 * this test counts this process's tlbiel on every CPU (TLBIE_SCOPE_MM,
 * mm_local), besides what its own thread issues (local, global). Each
 * munmap() of PAGES pages must issue:
 *  - single-threaded: PAGES tlbiel, all on this CPU (mm_local == local),
 *    and no tlbie;
 *  - with the thread live: PAGES per-page tlbie (not measured where
 *    global flushes do not use tlbie);
 *  - first after the thread's exit: no tlbie, PAGES tlbiel here, and at
 *    least one whole-PID tlbiel on another CPU, the exited thread's.
 * Counts above these are measured again, up to TLBIE_TRIES times in all.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlbie_count.h"
#include "utils.h"

#define PAGES		4
#define MAX_CPUS_RUN	8	/* CPUs the process runs on first */

static enum tlbie_verdict judge_local(const struct tlbie_counts *c)
{
	if (c->global || c->local > PAGES || c->mm_local > c->local || c->mm_local_pid)
		return TLBIE_TOO_MANY;
	return c->local < PAGES ? TLBIE_TOO_FEW : TLBIE_PASS;
}

static enum tlbie_verdict judge_global(const struct tlbie_counts *c)
{
	if (c->global_page > PAGES || c->global_pid)
		return TLBIE_TOO_MANY;
	return c->global_page < PAGES ? TLBIE_TOO_FEW : TLBIE_PASS;
}

static int unmaps(const char *phase, bool want_global)
{
	struct tlbie_counts c;
	enum tlbie_verdict v;
	int i, tries, failed = 0;
	char label[64];

	for (i = 0; i < 3; i++) {
		snprintf(label, sizeof(label), "%s_munmap_%d", phase, i);
		tries = 0;
		do {
			if (want_global)
				FAIL_IF(tlbie_count_op_global(TLBIE_MUNMAP, PAGES, &c));
			else
				FAIL_IF(tlbie_count_op(TLBIE_MUNMAP, PAGES, &c));
			tlbie_counts_print(label, &c);
			v = want_global ? judge_global(&c) : judge_local(&c);
		} while (tlbie_measure_again(v, &tries));
		if (v != TLBIE_PASS) {
			printf("%s: want %s\n", phase, want_global ?
			       "the pages flushed with tlbie" :
			       "the pages flushed with tlbiel on this CPU only, no tlbie");
			failed = 1;
		}
	}
	return failed;
}

/*
 * Start and stop a thread on @cpu, wait until the process is single-threaded
 * again (pthread_join() returns before the thread drops its mm), and count
 * the first flush after.
 */
static int first_after_exit(int cpu)
{
	struct tlbie_sibling sibling;
	struct tlbie_counts c;
	enum tlbie_verdict v;
	int tries = 0;
	long n;

	do {
		FAIL_IF(tlbie_sibling_start(&sibling, cpu));
		tlbie_sibling_stop(&sibling);
		while ((n = tlbie_proc_value("/proc/self/status", "Threads:")) > 1)
			sched_yield();
		FAIL_IF(n != 1);

		FAIL_IF(tlbie_count_op(TLBIE_MUNMAP, PAGES, &c));
		tlbie_counts_print("first_after_exit", &c);
		if (c.global || c.local > PAGES)
			v = TLBIE_TOO_MANY;
		else if (c.local < PAGES || !c.mm_local_pid)
			v = TLBIE_TOO_FEW;
		else
			v = TLBIE_PASS;
	} while (tlbie_measure_again(v, &tries));
	if (v != TLBIE_PASS)
		printf("after the exit: want no tlbie, %d tlbiel here, %s (%d's)\n",
		       PAGES, "and a whole-PID tlbiel on another CPU", cpu);
	return v != TLBIE_PASS;
}

static int test_cpumask(void)
{
	struct tlbie_sibling sibling;
	int pair[2], *cpus, nr, i, ran = 0, failed;
	struct tlbie_counts c;
	const char *why;

	tlbie_count_set_scope(TLBIE_SCOPE_MM);
	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	SKIP_IF_MSG(tlbie_pick_cpus(pair) < 2, "needs two CPUs");
	nr = tlbie_usable_cpus(&cpus);
	FAIL_IF(nr < 2);

	/* Run, and flush, on several CPUs, each joining the mm_cpumask: pair[0] last */
	for (i = 0; i < nr && ran < MAX_CPUS_RUN - 1; i++) {
		if (cpus[i] == pair[0])
			continue;
		FAIL_IF(tlbie_bind_cpu(cpus[i]));
		FAIL_IF(tlbie_count_op(TLBIE_MPROTECT_RO, 1, &c));
		ran++;
	}
	free(cpus);
	FAIL_IF(tlbie_bind_cpu(pair[0]));
	FAIL_IF(tlbie_count_op(TLBIE_MPROTECT_RO, 1, &c));
	printf("ran on %d CPUs, now on CPU %d\n", ran + 1, pair[0]);
	/* That last flush trimmed the others away; from now on, local only. */
	failed = unmaps("single_thread", false);

	FAIL_IF(tlbie_sibling_start(&sibling, pair[1]));
	why = tlbie_global_unavailable();
	if (why)
		printf("second_thread_live not measured: %s\n", why);
	else
		failed |= unmaps("second_thread_live", true);
	tlbie_sibling_stop(&sibling);

	failed |= first_after_exit(pair[1]);
	failed |= unmaps("after_thread_exit", false);

	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_cpumask, "tlbie_cpumask");
}
