// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The smallest TCG plugin that shows QEMU 10.0.2's inline per-vCPU ops
 * breaking a pseries guest under -icount: each mode registers one kind of
 * instrumentation on every block or instruction and does nothing else.
 *   0 nothing            1 block inline add     2 memory callback
 *   3 insn callback      4 insn callback, regs  5 memory callback, regs
 *   6 insn inline add    7 block exec callback
 * Built against the plugin header of scripts/build-qemu's PLUGINS=1 tree:
 *   gcc -shared -fPIC -O2 -I$QP/include $(pkg-config --cflags glib-2.0) \
 *       -o inline-icount.so inline-icount.c
 * and booted with PLUGIN="inline-icount.so,mode=M" TCG=single ICOUNT=3
 * (scripts/boot); see ../README.md for what each mode did.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static int mode;
static qemu_plugin_u64 cnt;
static uint64_t tot[64];

static void tb_cb(unsigned int vcpu, void *n)
{
	tot[vcpu & 63] += (uintptr_t)n;
}

static void insn_cb(unsigned int vcpu, void *u)
{
}

static void mem_cb(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t va, void *u)
{
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	if (mode == 1)
		qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, cnt, n);
	if (mode == 7)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_cb, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)n);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (mode == 2 || mode == 5)
			qemu_plugin_register_vcpu_mem_cb(insn, mem_cb, mode == 5 ? QEMU_PLUGIN_CB_R_REGS :
							 QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
		if (mode == 3 || mode == 4)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, insn_cb, mode == 4 ? QEMU_PLUGIN_CB_R_REGS :
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
		if (mode == 6)
			qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(insn, QEMU_PLUGIN_INLINE_ADD_U64,
									    cnt, 1);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	if (argc > 0 && !strncmp(argv[0], "mode=", 5))
		mode = atoi(argv[0] + 5);
	cnt = qemu_plugin_scoreboard_u64(qemu_plugin_scoreboard_new(sizeof(uint64_t)));
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
