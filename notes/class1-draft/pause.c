// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A TCG plugin that stalls a vCPU for a while each time it executes one of
 * the given guest addresses, so that the other vCPUs keep running through
 * a window the kernel normally closes at once. Used to widen the window
 * between the two steps of a zap's forced flush (flush the TLB, then drop
 * the rmaps) for tlbie_rmap: with pause at radix__tlb_flush()'s entry, a
 * kernel that drops the rmaps first holds its stale translations for the
 * pause; a kernel that flushes first holds nothing more than before.
 *
 * Arguments: addr=0xADDR (up to 8 times: guest virtual addresses, e.g. a
 * kernel function's entry from System.map), us=N (microseconds, 20000).
 * Prints how many pauses it made at exit.
 *
 * Build: gcc -shared -fPIC -I DIR-OF-qemu-plugin.h $(pkg-config --cflags
 * glib-2.0) -o pause.so pause.c
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_ADDRS	8

static uint64_t addrs[MAX_ADDRS];
static unsigned int naddrs;
static unsigned long pause_us = 20000;
static uint64_t pauses;

static void vcpu_pause(unsigned int vcpu, void *udata)
{
	__atomic_add_fetch(&pauses, 1, __ATOMIC_RELAXED);
	g_usleep(pause_us);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);

		for (unsigned int j = 0; j < naddrs; j++)
			if (va == addrs[j])
				qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_pause,
								       QEMU_PLUGIN_CB_NO_REGS,
								       NULL);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	char *s = g_strdup_printf("pause: %" PRIu64 " pauses of %lu us\n",
				  pauses, pause_us);

	qemu_plugin_outs(s);
	g_free(s);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "addr=", 5) && naddrs < MAX_ADDRS) {
			addrs[naddrs++] = strtoull(argv[i] + 5, NULL, 0);
		} else if (!strncmp(argv[i], "us=", 3)) {
			pause_us = strtoul(argv[i] + 3, NULL, 0);
		} else {
			fprintf(stderr, "pause: unknown argument '%s' (addr=, us=)\n", argv[i]);
			return -1;
		}
	}
	if (!naddrs) {
		fprintf(stderr, "pause: no addr= given\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
