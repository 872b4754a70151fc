// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pause: a TCG plugin that stalls a vCPU each time it executes one of the
 * given guest addresses, so that the other vCPUs run through a window the
 * guest normally closes at once. For tlbie_rmap (scripts/mutants/
 * rmap-before-flush): with a pause at radix__tlb_flush()'s entry, a kernel
 * that drops a zap's rmaps before its flush keeps the stale translations
 * for the whole pause; a kernel that flushes first opens no window.
 *
 * Arguments: addr=0xADDR (up to MAX_ADDRS times: guest virtual addresses,
 * e.g. a kernel function's global and local entry), us=N (microseconds,
 * 20000). Prints the addresses at start and the number of pauses at exit.
 *
 * Needs multi-threaded TCG (one host thread per vCPU): with -accel
 * tcg,thread=single or -icount every vCPU stops with the paused one and
 * nothing runs in the window. The stalled vCPU also delays work that must
 * run with every vCPU stopped (a global TLB flush): timing changes, what
 * the guest computes does not.
 *
 * Built by PLUGINS=1 scripts/build-qemu as pause.so beside the binary.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_ADDRS 8

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

        for (unsigned int j = 0; j < naddrs; j++) {
            if (va == addrs[j]) {
                qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_pause,
                                                       QEMU_PLUGIN_CB_NO_REGS,
                                                       NULL);
            }
        }
    }
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    g_autofree char *s = g_strdup_printf("pause: %" PRIu64 " pauses of %lu us\n",
                                         __atomic_load_n(&pauses, __ATOMIC_RELAXED),
                                         pause_us);

    qemu_plugin_outs(s);
}

/* NAME=VALUE's number, or false where VALUE is not one */
static bool parse_number(const char *arg, const char *value, uint64_t *n)
{
    char *end;

    *n = strtoull(value, &end, 0);
    if (!*value || *end) {
        fprintf(stderr, "pause: %s: not a number\n", arg);
        return false;
    }
    return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    uint64_t n;

    if (!info->system_emulation) {
        fprintf(stderr, "pause: for system emulation only\n");
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "addr=", 5)) {
            if (naddrs == MAX_ADDRS) {
                fprintf(stderr, "pause: more than %d addr=\n", MAX_ADDRS);
                return -1;
            }
            if (!parse_number(argv[i], argv[i] + 5, &n)) {
                return -1;
            }
            addrs[naddrs++] = n;
        } else if (!strncmp(argv[i], "us=", 3)) {
            if (!parse_number(argv[i], argv[i] + 3, &n)) {
                return -1;
            }
            pause_us = n;
        } else {
            fprintf(stderr, "pause: unknown argument '%s' (addr=, us=)\n", argv[i]);
            return -1;
        }
    }
    if (!naddrs) {
        fprintf(stderr, "pause: no addr= given\n");
        return -1;
    }
    for (unsigned int j = 0; j < naddrs; j++) {
        g_autofree char *s = g_strdup_printf("pause: at 0x%" PRIx64 "\n", addrs[j]);

        qemu_plugin_outs(s);
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
