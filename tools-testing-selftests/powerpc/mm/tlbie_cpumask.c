// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mm_cpumask trimming keeps the flushes of a single-threaded process
 * local. A process that has run on several CPUs leaves its mm in their
 * mm_cpumask, but while it has a single thread, the kernel trims that
 * mask when it flushes (flush_type_needed(), exit_flush_lazy_tlbs()) and
 * uses tlbiel, never tlbie. With a thread live on another CPU the same
 * unmaps must be global; once that thread has exited, local again.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "tlbie_count.h"
#include "utils.h"

#define PAGES	4

static int unmaps(const char *phase, bool want_global)
{
	struct tlbie_counts c;
	char label[64];
	int i, failed = 0;

	for (i = 0; i < 3; i++) {
		if (want_global)
			FAIL_IF(tlbie_count_op_global(TLBIE_MUNMAP, PAGES, &c));
		else
			FAIL_IF(tlbie_count_op(TLBIE_MUNMAP, PAGES, &c));
		snprintf(label, sizeof(label), "%s_munmap_%d", phase, i);
		tlbie_counts_print(label, &c);
		if (want_global ? c.global_page != PAGES : c.global != 0) {
			printf("%s: want %s\n", phase, want_global ?
			       "the pages flushed with tlbie" : "no tlbie at all");
			failed = 1;
		}
	}
	return failed;
}

static int test_cpumask(void)
{
	struct tlbie_sibling sibling;
	struct tlbie_counts c;
	int cpus[4], nr, i, failed;
	const char *why;

	why = tlbie_count_unavailable();
	SKIP_IF_MSG(why, why);
	nr = tlbie_online_cpus(cpus, 4);
	SKIP_IF_MSG(nr < 2, "needs two online CPUs");

	/* Run, and touch memory, on every CPU: each joins the mm_cpumask. */
	for (i = nr - 1; i >= 0; i--) {
		FAIL_IF(bind_to_cpu(cpus[i]) != cpus[i]);
		FAIL_IF(tlbie_count_op(TLBIE_MPROTECT_RO, 1, &c));
	}
	/* That last flush trimmed the others away; from now on, local only. */
	failed = unmaps("single_thread", false);

	FAIL_IF(tlbie_sibling_start(&sibling, cpus[1]));
	why = tlbie_global_unavailable();
	SKIP_IF_MSG(why, why);
	failed |= unmaps("second_thread_live", true);
	tlbie_sibling_stop(&sibling);

	/* The first flush after the exit trims the thread's CPU away. */
	FAIL_IF(tlbie_count_op(TLBIE_MUNMAP, PAGES, &c));
	tlbie_counts_print("first_after_exit", &c);
	failed |= unmaps("after_thread_exit", false);

	tlbie_count_close();
	FAIL_IF(failed);
	return 0;
}

int main(void)
{
	return test_harness(test_cpumask, "tlbie_cpumask");
}
