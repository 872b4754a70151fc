/*
 * Bare-metal validation of the TLB model plugin (qemu/tlb-model.c), for
 * qemu/check-tlb-model. Loaded as the firmware of a powernv machine
 * (-bios): big-endian, hypervisor real mode. It maps 64 64K pages U (PID 1
 * and PID 2 share one tree) and, for the set test, WAYS more pages SETS
 * pages apart from U's first (one congruence class), then runs phases whose
 * counts are known exactly; each phase is bracketed by the plugin's marker
 * (or 24,24,24) and only its loads run relocated (MSR[DR]): the plugin runs
 * with msr=on. SETS and WAYS are the modelled geometry's (-D).
 *   1  64 pages, cold                          64 misses
 *   2  again                                    0
 *   3  tlbie of PID 1 (RIC 2), 64 pages        64, 64 dropped in range
 *   4  tlbie of page 5, 64 pages                1
 *   5  tlbiel of page 7, 64 pages               1
 *   6  tlbie of U's first 2M (AP 2M)           32
 *   7  PID 2: 64 pages, cold                   64
 *   8  PID 2: tlbie of PID 1, 64 pages          0, 64 dropped outside
 *   9  PID 1 (range: 32 pages): tlbie of PID 1, 64 pages
 *                                              64, exact 32, 32 dropped in
 *                                              range and 32 outside
 *  10  tlbie of the LPID, WAYS+1 pages of one class twice   2 * (WAYS + 1)
 *  11  tlbie of the LPID, WAYS pages of one class twice     WAYS
 * When done, 0x7e57ed0064 at physical 0x7000 (else an interrupt's vector).
 */

#define LOAD64(r, v)				\
	lis	r, ((v) >> 48) & 0xffff;	\
	ori	r, r, ((v) >> 32) & 0xffff;	\
	sldi	r, r, 32;			\
	oris	r, r, ((v) >> 16) & 0xffff;	\
	ori	r, r, (v) & 0xffff

#define PATB	0x10000		/* partition table, 4K (PATS 0) */
#define PRTB	0x20000		/* process table, 4K (PRTS 0) */
#define PART_PGD 0x30000
#define PART_PUD 0x40000
#define PROC_PGD 0x50000	/* PIDs 1 and 2 */
#define PROC_PUD 0x60000
#define PROC_PMD 0x61000
#define PROC_PTE 0x62000	/* 2 tables of 32 64K pages */
#define FRAME	0x1000000
#define U	0x10000000	/* PMD index 128 */
#define PAGE	0x10000
#define STRIDE	(SETS * PAGE)	/* pages one class apart */
#define RES	0x7000

#define V	0x8000000000000000
#define L	0x4000000000000000
#define RTS52	0x40000000000000a0
#define LEAF_BITS 0x18f
#define AP_64K	(5 << 5)
#define AP_2M	(1 << 5)
#define IS_PID	(1 << 10)
#define IS_LPID	(2 << 10)
#define MSR_DR	0x10

/* The plugin's marker: r3 command, r4-r5 range, r6 argument. */
#define MARK(cmd, a, b, arg)	\
	li	3, cmd;		\
	LOAD64(4, a);		\
	LOAD64(5, b);		\
	LOAD64(6, arg);		\
	or	24, 24, 24
#define BEGIN(n, a, b)	MARK(1, a, b, n)
#define END		MARK(2, 0, 0, 0)

#define PUT(addr, val)		\
	LOAD64(4, addr);	\
	LOAD64(5, val);		\
	std	5, 0(4)

/* Load from n pages from base, stride bytes apart, relocated. */
#define TOUCH(base, n, stride)	\
	LOAD64(4, base);	\
	LOAD64(5, stride);	\
	li	3, n;		\
	mtctr	3;		\
	mtmsrd	31;		\
	isync;			\
99:	ld	3, 0(4);	\
	add	4, 4, 5;	\
	bdnz	99b;		\
	mtmsrd	30;		\
	isync

#define TLBIE(rb, pid, ric)	\
	LOAD64(8, rb);		\
	LOAD64(10, (pid) << 32);	\
	ptesync;		\
	tlbie	8, 10, ric, 1, 1; \
	eieio;			\
	tlbsync;		\
	ptesync

#define TLBIEL(rb, pid)		\
	LOAD64(8, rb);		\
	LOAD64(10, (pid) << 32);	\
	ptesync;		\
	tlbiel	8, 10, 0, 1, 1;	\
	ptesync

#define SET_PID(pid)		\
	li	3, pid;		\
	mtspr	48, 3;		\
	isync

	.machine power9
	.section .text
	.org	0x10
	b	start

	.org	0x100
	.rept	(0x1800 - 0x100) / 0x20
	mflr	0
	bl	1f
1:	mflr	3
	subi	3, 3, 8
	b	fail
	.balign	0x20
	.endr

fail:	li	4, RES
	std	3, 0(4)
2:	b	2b

	.org	0x2000
start:
	mfmsr	30			/* r30: MSR, DR off */
	ori	31, 30, MSR_DR		/* r31: DR on */

	PUT(PATB, V | RTS52 | PART_PGD | 13)
	PUT(PATB + 8, PRTB)
	PUT(PRTB + 16, RTS52 | PROC_PGD | 13)
	PUT(PRTB + 32, RTS52 | PROC_PGD | 13)
	PUT(PART_PGD, V | PART_PUD | 9)
	PUT(PART_PUD, V | L | 0 | LEAF_BITS)
	PUT(PROC_PGD, V | PROC_PUD | 9)
	PUT(PROC_PUD, V | PROC_PMD | 9)
	/* U: PMD entries 128 and 129; the class test's pages share table 0. */
	PUT(PROC_PMD + 8 * 128, V | PROC_PTE | 5)
	PUT(PROC_PMD + 8 * 129, V | (PROC_PTE + 0x100) | 5)
	li	7, 1
	li	3, WAYS
	mtctr	3
	LOAD64(5, V | PROC_PTE | 5)
1:	LOAD64(4, STRIDE >> 21)		/* PMD entries per stride */
	mulld	4, 4, 7
	addi	4, 4, 128
	sldi	4, 4, 3
	LOAD64(3, PROC_PMD)
	stdx	5, 3, 4
	addi	7, 7, 1
	bdnz	1b
	/* 64 PTEs, all at one frame. */
	LOAD64(4, PROC_PTE)
	LOAD64(5, V | L | FRAME | LEAF_BITS)
	li	3, 64
	mtctr	3
2:	std	5, 0(4)
	addi	4, 4, 8
	bdnz	2b

	mfspr	3, 318			/* LPCR: HR, UPRT */
	LOAD64(4, (1 << 20) | (1 << 22))
	or	3, 3, 4
	mtspr	318, 3
	LOAD64(3, PATB)
	mtspr	464, 3
	SET_PID(1)
	ptesync

	BEGIN(1, U, U + 64 * PAGE)
	TOUCH(U, 64, PAGE)
	END
	BEGIN(2, U, U + 64 * PAGE)
	TOUCH(U, 64, PAGE)
	END
	BEGIN(3, U, U + 64 * PAGE)
	TLBIE(IS_PID, 1, 2)
	TOUCH(U, 64, PAGE)
	END
	BEGIN(4, U, U + 64 * PAGE)
	TLBIE(U + 5 * PAGE | AP_64K, 1, 0)
	TOUCH(U, 64, PAGE)
	END
	BEGIN(5, U, U + 64 * PAGE)
	TLBIEL(U + 7 * PAGE | AP_64K, 1)
	TOUCH(U, 64, PAGE)
	END
	BEGIN(6, U, U + 64 * PAGE)
	TLBIE(U | AP_2M, 1, 0)
	TOUCH(U, 64, PAGE)
	END

	SET_PID(2)
	BEGIN(7, U, U + 64 * PAGE)
	TOUCH(U, 64, PAGE)
	END
	BEGIN(8, U, U + 64 * PAGE)
	TLBIE(IS_PID, 1, 0)
	TOUCH(U, 64, PAGE)
	END

	SET_PID(1)
	TOUCH(U, 64, PAGE)
	BEGIN(9, U, U + 32 * PAGE)
	TLBIE(IS_PID, 1, 0)
	TOUCH(U, 64, PAGE)
	END

	BEGIN(10, U, U + (WAYS + 1) * STRIDE)
	TLBIE(IS_LPID, 0, 2)
	TOUCH(U, WAYS + 1, STRIDE)
	TOUCH(U, WAYS + 1, STRIDE)
	END
	BEGIN(11, U, U + (WAYS + 1) * STRIDE)
	TLBIE(IS_LPID, 0, 2)
	TOUCH(U, WAYS, STRIDE)
	TOUCH(U, WAYS, STRIDE)
	END

	li	4, RES
	LOAD64(3, 0x7e57ed0064)
	std	3, 0(4)
3:	b	3b
