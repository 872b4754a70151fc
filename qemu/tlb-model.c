// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tlb-model: a TCG plugin that models the radix TLB of a POWER9 or POWER10
 * core, so that what a flush costs in refills can be counted exactly.
 *
 * Every translated data access (loads and stores) and every instruction
 * fetch (once per translation block and page) of a vCPU looks its
 * translation up in the modelled TLB of its core: set-associative, LRU
 * within a set, one array for all page sizes, tagged with the PID (PIDR,
 * or 0 for the kernel's quadrant 3) and the page. tlbie is applied to every
 * core's TLB, tlbiel to the executing core's only, as RIC, PRS, IS and the
 * RB/RS operands say (read at execution). A second, "exact" TLB per core
 * sees the same accesses and flushes, except that during a measured phase
 * a flush of the phase's PID drops only the entries inside the phase's
 * range: what a flush of exactly the range, page by page, would have left.
 * The difference of the two TLBs' misses is the refill the over-flush
 * costs; the entries a flush drops outside the range are its upper bound.
 *
 * A guest marks a phase with "or 24,24,24" (a no-op hint on POWER; QEMU
 * only ends the translation block at it), r3 the command:
 *   1 begin phase r6 on [r4, r5) of the current PID (counters reset)
 *   2 end phase: print its counts per vCPU and in all
 *   3 declare [r4, r5) of the current PID mapped with pages of shift r6
 *     (THP, hugetlb); up to 16 ranges, r6 = 0 forgets them all
 *
 * During a phase, each global flush sequence a vCPU ends with tlbsync
 * after at least one tlbie of a user PID prints a "batch" line: the
 * instructions that vCPU executed since its previous such sequence (or
 * the phase's start), its per-page and whole-PID tlbie, and the entries
 * of other PIDs or outside the range each core dropped meanwhile. From
 * the instructions, a cost per instruction and the tlbie's own cost, the
 * time between two batches of an operation follows at a hardware pace
 * (scripts/refill-price), not QEMU's.
 *
 * PID: tracked from mtspr PIDR for the accesses (their callbacks cannot
 * read registers), and read from the PIDR register itself wherever a
 * callback can (tlbie, tlbsync, markers); the reports count the reads
 * that disagreed with the tracked value ("pidr-disagree"), which then
 * takes the register's.
 *
 * What the plugin does not know, and assumes:
 *   - page sizes: the kernel's base page size (page=, 64K) for user
 *     memory no marker declared (3 above) and for quadrant 3 outside the
 *     linear map (0xc000... below 0xc008..., 1G pages). Kernel entries
 *     only take TLB space here: a flush of a user PID never drops them.
 *   - translation mode: every access counts as translated (a radix guest
 *     runs relocated but for early boot and RTAS calls). msr=on reads MSR
 *     at every access and counts only relocated ones: exact, and slow (the
 *     bare-metal validation runs in real mode but for its measured loads).
 *   - tlbiel with IS 1-3 drops the whole PID (or LPID, or all) on its core
 *     whatever its SET field: the set index of the hardware is not public,
 *     and Linux walks every set.
 *   - one partition: LPIDs are not compared; PRS=0 (partition-scoped)
 *     flushes drop entries only with IS 2 or 3.
 *   - no ERAT, no page walk cache, no page walk: a miss is one refill.
 *   - H_RPT_INVALIDATE (guests without GTSE) is not seen, and a tlbie
 *     that traps (a guest without GTSE may not issue it) counts as if it
 *     ran: callbacks run before the instruction.
 *   - the byte order of instructions and registers is endian= for the
 *     whole run (MSR[LE] is not followed).
 *   - the extra misses (modelled minus exact) are the refill the flushes
 *     outside the range cost; near a set's capacity it can come out
 *     slightly negative (a flush's holes keep entries LRU would evict).
 *
 * Arguments: geometry=p9|p10 (sets and ways below), sets=N, ways=N,
 * smt=N (consecutive vCPUs that share one core's TLB, as -smp threads=N),
 * endian=le|be (of the guest's instructions and registers; be for the
 * bare-metal test), msr=on|off, page=64k|4k (the guest kernel's base page
 * size). Output goes through qemu_plugin_outs(): run QEMU with -d plugin
 * -D FILE.
 */
#include <glib.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/*
 * Geometries (sources in notes/tlb-model.md; both are parameters).
 * POWER9: 128 congruence classes in radix mode (Linux's
 * POWER9_TLB_SETS_RADIX) of 4
 * ways (the user's manual's 1024-entry 4-way TLB of hash mode, 256
 * classes): 512 entries. POWER10: 4096 entries (public, not IBM's
 * manual), ways not public: 4 assumed, 1024 classes.
 */
struct geometry {
	const char *name;
	unsigned int sets, ways;
};

static const struct geometry geometries[] = {
	{ "p9", 128, 4 },
	{ "p10", 1024, 4 },
};

#define MARKER		0x7f18c378u	/* or 24,24,24 */
#define KERNEL_EA	0xc000000000000000ull
#define VMALLOC_EA	0xc008000000000000ull
#define USER_EA_END	0x0010000000000000ull
#define MAX_RANGES	16

struct entry {
	uint64_t page;		/* EA >> shift */
	uint64_t lru;
	uint32_t pid;
	uint8_t shift;
	uint8_t valid;
};

struct counts {
	uint64_t lookups, misses, exact_misses;
	uint64_t range_lookups, range_misses, range_exact_misses;
	uint64_t user_misses, kernel_misses;
	uint64_t flushes_pid, flushes_page, flushes_other;	/* applied here */
	uint64_t tlbie_page, tlbie_pid, tlbiel_page, tlbiel_pid;	/* issued here */
	uint64_t tlbie_pwc, tlbiel_pwc;	/* RIC 1: the page walk cache only */
	uint64_t dropped_range, dropped_other, dropped_kernel;
};

struct tlb {
	pthread_mutex_t lock;
	struct entry *e, *x;	/* the modelled TLB, and the exact one */
	uint64_t clock;
	struct counts c;
};

struct vcpu {
	uint32_t pid;
	struct qemu_plugin_register *gpr[32], *msr, *pidr;
	/* the batch being issued: see vcpu_tlbsync() */
	uint64_t mark_insns, mark_dropped[8];
	unsigned int batch_page, batch_pid;
};

static unsigned int nsets, nways, smt = 1;
static const char *geometry_name;
static bool big_endian, check_msr;
static uint8_t base_shift = 16;	/* page=: the kernel's base page shift */
static struct tlb *tlbs;
static unsigned int ntlbs;
static struct vcpu *vcpus;
static unsigned int nvcpus;
static uint8_t shifts_used;	/* bit n: page shift 12 + n... see shift_bit() */
static struct qemu_plugin_scoreboard *insn_board;
static qemu_plugin_u64 insns;	/* instructions executed, per vCPU */
static uint64_t pidr_disagree;

/* The phase, and the declared page sizes: changed by markers only. */
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile bool phase_on;
static uint64_t phase_start, phase_end, phase_id;
static uint32_t phase_pid;
static unsigned int nranges;
static struct { uint64_t start, end; uint32_t pid; uint8_t shift; } ranges[MAX_RANGES];

static const uint8_t page_shifts[] = { 12, 16, 21, 30 };

static unsigned int shift_bit(uint8_t shift)
{
	for (unsigned int i = 0; i < sizeof(page_shifts); i++)
		if (page_shifts[i] == shift)
			return 1u << i;
	return 0;
}

static uint64_t reg_value(const GByteArray *b)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < b->len && i < 8; i++) {
		unsigned int k = big_endian ? i : b->len - 1 - i;

		v = v << 8 | b->data[k];
	}
	return v;
}

/* A register of the current vCPU, in the guest's byte order (endian=) */
static uint64_t read_reg(struct qemu_plugin_register *handle)
{
	GByteArray *b = g_byte_array_new();
	uint64_t v;

	qemu_plugin_read_register(handle, b);
	v = reg_value(b);
	g_byte_array_free(b, TRUE);
	return v;
}

static uint64_t read_gpr(unsigned int vcpu, unsigned int r)
{
	return read_reg(vcpus[vcpu].gpr[r]);
}

/* The PID from the register, where the callback may read registers. */
static void sync_pid(unsigned int vcpu)
{
	uint32_t pid;

	if (!vcpus[vcpu].pidr)
		return;
	pid = read_reg(vcpus[vcpu].pidr);
	if (pid != vcpus[vcpu].pid) {
		__atomic_add_fetch(&pidr_disagree, 1, __ATOMIC_RELAXED);
		vcpus[vcpu].pid = pid;
	}
}

static struct tlb *tlb_of(unsigned int vcpu)
{
	return &tlbs[(vcpu / smt) % ntlbs];
}

/* The PID and page shift an access at ea translates with, or false. */
static bool classify(unsigned int vcpu, uint64_t ea, uint32_t *pid, uint8_t *shift)
{
	if (ea >= KERNEL_EA) {
		*pid = 0;
		*shift = ea < VMALLOC_EA ? 30 : base_shift;
		return true;
	}
	if (ea >= USER_EA_END)
		return false;	/* quadrants 1 and 2: a hypervisor's */
	*pid = vcpus[vcpu].pid;
	*shift = base_shift;
	for (unsigned int i = 0; i < nranges; i++) {
		if (ranges[i].pid == *pid && ea >= ranges[i].start && ea < ranges[i].end) {
			*shift = ranges[i].shift;
			break;
		}
	}
	return true;
}

/* Look up (and on a miss fill) one of a core's two TLBs. */
static bool lookup(struct entry *tlb, uint64_t *clock, uint32_t pid, uint64_t page, uint8_t shift)
{
	struct entry *set = &tlb[(page % nsets) * nways], *victim = set;

	for (unsigned int w = 0; w < nways; w++) {
		struct entry *e = &set[w];

		if (e->valid && e->page == page && e->pid == pid && e->shift == shift) {
			e->lru = ++*clock;
			return true;
		}
		if (!e->valid)
			victim = e;
		else if (victim->valid && e->lru < victim->lru)
			victim = e;
	}
	victim->valid = 1;
	victim->page = page;
	victim->pid = pid;
	victim->shift = shift;
	victim->lru = ++*clock;
	return false;
}

static bool in_phase_range(uint32_t pid, uint64_t ea)
{
	return phase_on && pid == phase_pid && ea >= phase_start && ea < phase_end;
}

static void tlb_access(unsigned int vcpu, uint64_t ea)
{
	struct tlb *t = tlb_of(vcpu);
	uint32_t pid;
	uint8_t shift;
	bool hit, xhit, in_range;

	if (!classify(vcpu, ea, &pid, &shift))
		return;
	in_range = in_phase_range(pid, ea);
	/* Before the entry exists, so a page flush probes its sets */
	if (!(__atomic_load_n(&shifts_used, __ATOMIC_ACQUIRE) & shift_bit(shift)))
		__atomic_or_fetch(&shifts_used, shift_bit(shift), __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&t->lock);
	hit = lookup(t->e, &t->clock, pid, ea >> shift, shift);
	xhit = lookup(t->x, &t->clock, pid, ea >> shift, shift);
	t->c.lookups++;
	if (!hit) {
		t->c.misses++;
		if (pid)
			t->c.user_misses++;
		else
			t->c.kernel_misses++;
	}
	if (!xhit)
		t->c.exact_misses++;
	if (in_range) {
		t->c.range_lookups++;
		t->c.range_misses += !hit;
		t->c.range_exact_misses += !xhit;
	}
	pthread_mutex_unlock(&t->lock);
}

static void vcpu_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	tlb_access(vcpu, vaddr);
}

static void vcpu_fetch(unsigned int vcpu, void *udata)
{
	tlb_access(vcpu, (uint64_t)(uintptr_t)udata);
}

/* msr=1: only relocated accesses (MSR[DR] for data, MSR[IR] for fetch). */
#define MSR_IR	0x20
#define MSR_DR	0x10

static uint64_t read_msr(unsigned int vcpu)
{
	return read_reg(vcpus[vcpu].msr);
}

static void vcpu_mem_msr(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
			 void *udata)
{
	if (read_msr(vcpu) & MSR_DR)
		tlb_access(vcpu, vaddr);
}

static void vcpu_fetch_msr(unsigned int vcpu, void *udata)
{
	if (read_msr(vcpu) & MSR_IR)
		tlb_access(vcpu, (uint64_t)(uintptr_t)udata);
}

/*
 * A flush, as it applies to one core. is: 0 a page of the PID (ea, size
 * 1 << fshift), 1 the PID, 2 and 3 everything (one partition). Entries of
 * the phase's PID outside its range stay in the exact TLB.
 */
struct flush {
	unsigned int is;
	uint32_t pid;
	uint64_t ea;
	uint8_t fshift;
	bool prs;
};

static bool flush_hits(const struct flush *f, const struct entry *e)
{
	uint64_t base, end;

	if (!e->valid)
		return false;
	if (f->is >= 2)
		return true;
	if (!f->prs || e->pid != f->pid)
		return false;
	if (f->is == 1)
		return true;
	/* One page: every entry that overlaps it, whatever its size. */
	base = e->page << e->shift;
	end = base + (1ull << e->shift);
	return base < f->ea + (1ull << f->fshift) && f->ea < end;
}

static void drop(struct tlb *t, const struct flush *f, struct entry *e, bool exact, bool count)
{
	uint64_t ea = e->page << e->shift;
	bool in_range = in_phase_range(e->pid, ea);

	if (exact && phase_on && e->pid == phase_pid && !in_range)
		return;
	if (!exact && count) {
		if (in_range)
			t->c.dropped_range++;
		else if (e->pid)
			t->c.dropped_other++;
		else
			t->c.dropped_kernel++;
	}
	e->valid = 0;
}

static void flush_tlb(struct tlb *t, const struct flush *f, bool count)
{
	pthread_mutex_lock(&t->lock);
	if (count) {
		if (f->is == 0)
			t->c.flushes_page++;
		else if (f->is == 1)
			t->c.flushes_pid++;
		else
			t->c.flushes_other++;
	}
	for (int exact = 0; exact < 2; exact++) {
		struct entry *a = exact ? t->x : t->e;

		if (f->is != 0) {
			for (unsigned int i = 0; i < nsets * nways; i++)
				if (flush_hits(f, &a[i]))
					drop(t, f, &a[i], exact, count);
			continue;
		}
		/* A page: probe the sets its entries of each size can be in. */
		for (unsigned int s = 0; s < sizeof(page_shifts); s++) {
			uint8_t shift = page_shifts[s];
			uint64_t first, last;

			if (!(__atomic_load_n(&shifts_used, __ATOMIC_ACQUIRE) & (1u << s)))
				continue;
			first = f->ea >> shift;
			last = (f->ea + (1ull << f->fshift) - 1) >> shift;
			if (last - first >= nsets)
				last = first + nsets - 1;
			for (uint64_t p = first; p <= last; p++) {
				struct entry *set = &a[(p % nsets) * nways];

				for (unsigned int w = 0; w < nways; w++)
					if (flush_hits(f, &set[w]))
						drop(t, f, &set[w], exact, count);
			}
		}
	}
	pthread_mutex_unlock(&t->lock);
}

static void issued(struct tlb *t, bool local, unsigned int ric, unsigned int is)
{
	pthread_mutex_lock(&t->lock);
	if (ric == 1)
		local ? t->c.tlbiel_pwc++ : t->c.tlbie_pwc++;
	else if (is == 0)
		local ? t->c.tlbiel_page++ : t->c.tlbie_page++;
	else if (is == 1)
		local ? t->c.tlbiel_pid++ : t->c.tlbie_pid++;
	pthread_mutex_unlock(&t->lock);
}

/* udata: the instruction word, for tlbie (global) or tlbiel (local). */
static void vcpu_tlbi(unsigned int vcpu, void *udata)
{
	uint32_t insn = (uint32_t)(uintptr_t)udata;
	bool local = ((insn >> 1) & 0x3ff) == 274;
	unsigned int rs = (insn >> 21) & 31, ric = (insn >> 18) & 3, rb = (insn >> 11) & 31;
	uint64_t vrb = read_gpr(vcpu, rb), vrs = read_gpr(vcpu, rs);
	static const uint8_t ap_shift[8] = { 12, 21, 30, 0, 0, 16, 0, 0 };
	struct flush f = {
		.is = (vrb >> 10) & 3,
		.pid = vrs >> 32,
		.ea = vrb & ~0xfffull,
		.fshift = ap_shift[(vrb >> 5) & 7],
		.prs = (insn >> 17) & 1,
	};

	if (!((insn >> 16) & 1))
		return;		/* R = 0: a hash page table's tlbie */
	sync_pid(vcpu);
	issued(tlb_of(vcpu), local, ric, f.is);
	if (!local && f.prs && f.pid && phase_on) {
		if (f.is == 0)
			vcpus[vcpu].batch_page++;
		else if (f.is == 1)
			vcpus[vcpu].batch_pid++;
	}
	if (ric == 1)
		return;		/* the page walk cache only: not modelled */
	if (f.is == 0 && !f.fshift)
		return;		/* a reserved AP: no entry matches */
	if (f.is == 0)
		f.ea &= ~((1ull << f.fshift) - 1);
	if (local) {
		flush_tlb(tlb_of(vcpu), &f, true);
		return;
	}
	for (unsigned int i = 0; i < ntlbs; i++)
		flush_tlb(&tlbs[i], &f, true);
}

static void dropped_now(uint64_t *d)
{
	for (unsigned int i = 0; i < ntlbs && i < 8; i++) {
		pthread_mutex_lock(&tlbs[i].lock);
		d[i] = tlbs[i].c.dropped_other;
		pthread_mutex_unlock(&tlbs[i].lock);
	}
}

/* Start counting a vCPU's next batch from here. */
static void batch_mark(unsigned int vcpu)
{
	struct vcpu *v = &vcpus[vcpu];

	v->mark_insns = qemu_plugin_u64_get(insns, vcpu);
	dropped_now(v->mark_dropped);
	v->batch_page = 0;
	v->batch_pid = 0;
}

/* tlbsync ends a global flush sequence: print it if it had a user tlbie. */
static void vcpu_tlbsync(unsigned int vcpu, void *udata)
{
	struct vcpu *v = &vcpus[vcpu];
	uint64_t now = qemu_plugin_u64_get(insns, vcpu), d[8] = { 0 };
	GString *s;

	sync_pid(vcpu);
	if (!phase_on || !(v->batch_page + v->batch_pid))
		return;
	dropped_now(d);
	s = g_string_new(NULL);
	g_string_printf(s, "tlb-model: batch %" PRIu64 " vcpu %u insns %" PRIu64
			" tlbie-page %u tlbie-pid %u dropped-other", phase_id, vcpu,
			now - v->mark_insns, v->batch_page, v->batch_pid);
	for (unsigned int i = 0; i < ntlbs && i < 8; i++)
		g_string_append_printf(s, "%s%" PRIu64, i ? "," : " ",
				       d[i] - v->mark_dropped[i]);
	g_string_append_c(s, '\n');
	qemu_plugin_outs(s->str);
	g_string_free(s, TRUE);
	batch_mark(vcpu);
}

static void vcpu_mtpidr(unsigned int vcpu, void *udata)
{
	vcpus[vcpu].pid = read_gpr(vcpu, (uintptr_t)udata);
}

static void print_counts(const char *what, uint64_t id, int tlb, const struct counts *c)
{
	char core[16], *s;

	if (tlb < 0)
		snprintf(core, sizeof(core), "all");
	else
		snprintf(core, sizeof(core), "core%d", tlb);
	s = g_strdup_printf("tlb-model: %s %" PRIu64 " %s lookups %" PRIu64
			    " misses %" PRIu64 " exact-misses %" PRIu64 " extra %" PRId64
			    " range-lookups %" PRIu64 " range-misses %" PRIu64
			    " range-exact-misses %" PRIu64 " user-misses %" PRIu64
			    " kernel-misses %" PRIu64 " pid-flushes %" PRIu64
			    " page-flushes %" PRIu64 " lpid-flushes %" PRIu64
			    " dropped-range %" PRIu64 " dropped-other %" PRIu64
			    " dropped-kernel %" PRIu64 " tlbie-page %" PRIu64
			    " tlbie-pid %" PRIu64 " tlbiel-page %" PRIu64 " tlbiel-pid %" PRIu64
			    " tlbie-pwc %" PRIu64 " tlbiel-pwc %" PRIu64
			    " pidr-disagree %" PRIu64 "\n",
			    what, id, core,
			    c->lookups, c->misses, c->exact_misses,
			    (int64_t)(c->misses - c->exact_misses), c->range_lookups,
			    c->range_misses, c->range_exact_misses, c->user_misses,
			    c->kernel_misses, c->flushes_pid, c->flushes_page,
			    c->flushes_other, c->dropped_range, c->dropped_other,
			    c->dropped_kernel, c->tlbie_page, c->tlbie_pid, c->tlbiel_page,
			    c->tlbiel_pid, c->tlbie_pwc, c->tlbiel_pwc,
			    __atomic_load_n(&pidr_disagree, __ATOMIC_RELAXED));
	qemu_plugin_outs(s);
	g_free(s);
}

static void report(const char *what, uint64_t id, bool reset)
{
	struct counts sum = { 0 };

	for (unsigned int i = 0; i < ntlbs; i++) {
		struct counts c;
		uint64_t *a = (uint64_t *)&c, *b = (uint64_t *)&sum;

		pthread_mutex_lock(&tlbs[i].lock);
		c = tlbs[i].c;
		if (reset)
			memset(&tlbs[i].c, 0, sizeof(tlbs[i].c));
		pthread_mutex_unlock(&tlbs[i].lock);
		print_counts(what, id, i, &c);
		for (unsigned int k = 0; k < sizeof(c) / sizeof(uint64_t); k++)
			b[k] += a[k];
	}
	print_counts(what, id, -1, &sum);
}

static void vcpu_marker(unsigned int vcpu, void *udata)
{
	uint64_t cmd = read_gpr(vcpu, 3), a = read_gpr(vcpu, 4), b = read_gpr(vcpu, 5);
	uint64_t arg = read_gpr(vcpu, 6);
	uint32_t pid;
	char *s;

	sync_pid(vcpu);
	pid = vcpus[vcpu].pid;

	pthread_mutex_lock(&phase_lock);
	switch (cmd) {
	case 1:
		/* The counts before the phase go with the phase before. */
		report("before", phase_id, true);
		/*
		 * The exact TLBs start the phase as the modelled ones are:
		 * what an earlier phase spared is not this one's.
		 */
		for (unsigned int i = 0; i < ntlbs; i++) {
			pthread_mutex_lock(&tlbs[i].lock);
			memcpy(tlbs[i].x, tlbs[i].e, sizeof(struct entry) * nsets * nways);
			pthread_mutex_unlock(&tlbs[i].lock);
		}
		phase_id = arg;
		phase_start = a;
		phase_end = b;
		phase_pid = pid;
		phase_on = true;
		for (unsigned int i = 0; i < nvcpus; i++)
			batch_mark(i);
		s = g_strdup_printf("tlb-model: begin %" PRIu64 " pid %u range 0x%" PRIx64
				    "-0x%" PRIx64 " geometry %s sets %u ways %u smt %u\n",
				    arg, pid, a, b, geometry_name, nsets, nways, smt);
		qemu_plugin_outs(s);
		g_free(s);
		break;
	case 2:
		report("phase", phase_id, true);
		phase_on = false;
		break;
	case 3:
		if (!arg) {
			nranges = 0;
		} else if (nranges < MAX_RANGES && shift_bit(arg)) {
			ranges[nranges].start = a;
			ranges[nranges].end = b;
			ranges[nranges].pid = pid;
			ranges[nranges].shift = arg;
			nranges++;
		} else {
			qemu_plugin_outs("tlb-model: page size range ignored (16 ranges, shifts 12, 16, 21, 30)\n");
		}
		break;
	default:
		s = g_strdup_printf("tlb-model: unknown marker command %" PRIu64 "\n", cmd);
		qemu_plugin_outs(s);
		g_free(s);
	}
	pthread_mutex_unlock(&phase_lock);
}

static uint32_t insn_word(const struct qemu_plugin_insn *insn)
{
	uint8_t b[4];

	if (qemu_plugin_insn_data(insn, b, 4) != 4)
		return 0;
	if (big_endian)
		return (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
	return (uint32_t)b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0];
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint64_t last_page = UINT64_MAX;

	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							  insns, n);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		uint32_t w = insn_word(insn);
		unsigned int xo = (w >> 1) & 0x3ff;

		if (va >> 12 != last_page) {
			last_page = va >> 12;
			if (check_msr)
				qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_fetch_msr,
								       QEMU_PLUGIN_CB_R_REGS,
								       (void *)(uintptr_t)va);
			else
				qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_fetch,
								       QEMU_PLUGIN_CB_NO_REGS,
								       (void *)(uintptr_t)va);
		}
		if (check_msr)
			qemu_plugin_register_vcpu_mem_cb(insn, vcpu_mem_msr, QEMU_PLUGIN_CB_R_REGS,
							 QEMU_PLUGIN_MEM_RW, NULL);
		else
			qemu_plugin_register_vcpu_mem_cb(insn, vcpu_mem, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, NULL);
		if (w >> 26 != 31)
			continue;
		if (xo == 306 || xo == 274)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_tlbi, QEMU_PLUGIN_CB_R_REGS,
							       (void *)(uintptr_t)w);
		else if (xo == 467 && (((w >> 16) & 31) | ((w >> 11) & 31) << 5) == 48)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_mtpidr, QEMU_PLUGIN_CB_R_REGS,
							       (void *)(uintptr_t)((w >> 21) & 31));
		else if (xo == 566)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_tlbsync, QEMU_PLUGIN_CB_R_REGS,
							       NULL);
		else if (w == MARKER)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_marker, QEMU_PLUGIN_CB_R_REGS,
							       NULL);
	}
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	GArray *regs = qemu_plugin_get_registers();

	if (vcpu >= nvcpus) {
		fprintf(stderr, "tlb-model: vCPU %u beyond the %u counted at start\n", vcpu, nvcpus);
		abort();
	}
	for (unsigned int i = 0; i < regs->len; i++) {
		qemu_plugin_reg_descriptor *d = &g_array_index(regs, qemu_plugin_reg_descriptor, i);
		unsigned int r;
		char end;

		if (sscanf(d->name, "r%u%c", &r, &end) == 1 && r < 32)
			vcpus[vcpu].gpr[r] = d->handle;
		else if (!strcmp(d->name, "msr"))
			vcpus[vcpu].msr = d->handle;
		else if (!strcmp(d->name, "pidr"))
			vcpus[vcpu].pidr = d->handle;
	}
	g_array_free(regs, TRUE);
	if (check_msr && !vcpus[vcpu].msr) {
		fprintf(stderr, "tlb-model: vCPU %u has no register msr\n", vcpu);
		abort();
	}
	for (unsigned int r = 0; r < 32; r++) {
		if (!vcpus[vcpu].gpr[r]) {
			fprintf(stderr, "tlb-model: vCPU %u has no register r%u\n", vcpu, r);
			abort();
		}
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	report("exit", phase_id, false);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const struct geometry *g = &geometries[0];
	int sets = -1, ways = -1;

	for (int i = 0; i < argc; i++) {
		char *v = strchr(argv[i], '=');
		size_t k;

		if (!v) {
			fprintf(stderr, "tlb-model: argument '%s' is not NAME=VALUE\n", argv[i]);
			return -1;
		}
		k = v++ - argv[i];
		if (!strncmp(argv[i], "geometry", k) && k == 8) {
			g = NULL;
			for (size_t j = 0; j < G_N_ELEMENTS(geometries); j++)
				if (!strcmp(v, geometries[j].name))
					g = &geometries[j];
			if (!g) {
				fprintf(stderr, "tlb-model: geometry '%s' unknown (p9, p10)\n", v);
				return -1;
			}
		} else if (!strncmp(argv[i], "sets", k) && k == 4) {
			sets = atoi(v);
		} else if (!strncmp(argv[i], "ways", k) && k == 4) {
			ways = atoi(v);
		} else if (!strncmp(argv[i], "smt", k) && k == 3) {
			smt = atoi(v);
		} else if (!strncmp(argv[i], "msr", k) && k == 3) {
			if (!qemu_plugin_bool_parse("msr", v, &check_msr)) {
				fprintf(stderr, "tlb-model: msr=%s: on or off\n", v);
				return -1;
			}
		} else if (!strncmp(argv[i], "page", k) && k == 4) {
			if (strcmp(v, "64k") && strcmp(v, "4k")) {
				fprintf(stderr, "tlb-model: page=%s: 64k or 4k\n", v);
				return -1;
			}
			base_shift = strcmp(v, "4k") ? 16 : 12;
		} else if (!strncmp(argv[i], "endian", k) && k == 6) {
			if (strcmp(v, "le") && strcmp(v, "be")) {
				fprintf(stderr, "tlb-model: endian=%s: le or be\n", v);
				return -1;
			}
			big_endian = !strcmp(v, "be");
		} else {
			fprintf(stderr, "tlb-model: unknown argument '%s'\n", argv[i]);
			return -1;
		}
	}
	geometry_name = g->name;
	nsets = sets > 0 ? (unsigned int)sets : g->sets;
	nways = ways > 0 ? (unsigned int)ways : g->ways;
	if (smt < 1 || smt > 8 || nsets > 1u << 20 || nways > 64) {
		fprintf(stderr, "tlb-model: smt 1-8, sets up to 2^20, ways up to 64\n");
		return -1;
	}
	nvcpus = info->system_emulation ? info->system.max_vcpus : 1;
	ntlbs = (nvcpus + smt - 1) / smt;
	vcpus = g_new0(struct vcpu, nvcpus);
	tlbs = g_new0(struct tlb, ntlbs);
	for (unsigned int i = 0; i < ntlbs; i++) {
		pthread_mutex_init(&tlbs[i].lock, NULL);
		tlbs[i].e = g_new0(struct entry, nsets * nways);
		tlbs[i].x = g_new0(struct entry, nsets * nways);
	}
	insn_board = qemu_plugin_scoreboard_new(sizeof(uint64_t));
	insns = qemu_plugin_scoreboard_u64(insn_board);
	qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
