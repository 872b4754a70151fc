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
 * The second CPU (-smp 2: another core, its own TLB) touches U, PID 1:
 *  12  cold                                    64
 *  13  tlbie of PID 1 by the first CPU         64 (a tlbie reaches it)
 *  14  tlbiel of PID 1 by the first CPU         0 (a tlbiel does not)
 *  15  tlbie of page 5 by the first CPU         1
 * The first CPU, U declared 4K pages (marker command 3):
 *  16  16 4K pages of U's page 2, cold         16
 *  17  tlbie of page 2 (AP 64K), the same      16 (it covers all 16)
 *  18  tlbie of its 4th 4K page (AP 4K)         1
 *  19  LRU: WAYS pages of a class, the first again, one more (evicts the
 *      least recently used, the second), the first again: WAYS + 1 misses
 *      (first in, first out would evict the first: WAYS + 2)
 *  20  (range: 32 pages) tlbie of PID 1, U's first 32 pages only (it drops
 *      32 in range, and 32 + WAYS - 1 outside: U's others, phase 19's)
 *                                              32, exact 32
 *  21  64 pages: what phase 20 spared in the exact TLB is not this
 *      phase's (each phase starts the exact TLB as the modelled one)
 *                                              32, exact 32
 *  22  64 pages, then tlbie of PID 1, twice: two "batch" lines, the
 *      instructions since the phase's start (TOUCH's 208 and TLBIE's 15)
 *      and since the first tlbsync (15)         64, 64 dropped in range
 * Every phase: the PID read from PIDR agrees with the one tracked from
 * mtspr (pidr-disagree 0).
 * Built with -DLE, the program switches to little-endian first (the CPU
 * starts big-endian at 0x10), for the plugin's endian=le.
 * When done, 0x7e57ed0064 at physical 0x7000 (else an interrupt's vector).
 */

#include "bare-metal.h"

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
#define ELECT	0x7100		/* the first CPU to set it runs the phases */
#define CMD	0x7200		/* to the second CPU: seq << 8 | op */
#define ACK	0x7208		/* from it: the seq done */
#define AP_4K	(0 << 5)

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

/*
 * Store r5 at (r4) big-endian, as the MMU reads its tables and as the
 * check reads the result word: byte-reversed when running little-endian.
 */
#ifdef LE
#define STORE_BE	stdbrx	5, 0, 4
#else
#define STORE_BE	std	5, 0(4)
#endif

#define PUT(addr, val)		\
	LOAD64(4, addr);	\
	LOAD64(5, val);		\
	STORE_BE

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

/* The second CPU runs op (1: its MMU registers, 2: touch U), as seq. */
#define SECOND(op, seq)		\
	LOAD64(4, CMD);		\
	li	5, ((seq) << 8) | (op); \
	sync;			\
	std	5, 0(4);	\
98:	ld	6, 8(4);	\
	cmpdi	6, seq;		\
	bne	98b;		\
	sync

/* An instruction word in big-endian byte order, whatever -m says */
#define BE_INSN(x)	.byte ((x) >> 24) & 0xff, ((x) >> 16) & 0xff, ((x) >> 8) & 0xff, (x) & 0xff

/* The MMU registers for PID 1 (LPCR HR and UPRT, PTCR) */
#define MMU_ON			\
	mfspr	3, 318;		\
	LOAD64(4, (1 << 20) | (1 << 22)); \
	or	3, 3, 4;	\
	mtspr	318, 3;		\
	LOAD64(3, PATB);	\
	mtspr	464, 3;		\
	SET_PID(1);		\
	ptesync

	.machine power9
	.section .text
	.org	0x10
#ifdef LE
	/* Big-endian: hrfid to start with MSR[LE] set. */
	BE_INSN(0x7c6000a6)		/* mfmsr 3 */
	BE_INSN(0x60630001)		/* ori 3, 3, 1 (MSR[LE]) */
	BE_INSN(0x7c7b4ba6)		/* mtspr HSRR1, 3 */
	BE_INSN(0x38802000)		/* li 4, start */
	BE_INSN(0x7c9a4ba6)		/* mtspr HSRR0, 4 */
	BE_INSN(0x4c000224)		/* hrfid */
#else
	b	start
#endif

#include "bare-metal-vectors.S"

	.org	0x2000
start:
	mfmsr	30			/* r30: MSR, DR off */
	ori	31, 30, MSR_DR		/* r31: DR on */
	/* The first CPU here runs the phases, any other serves it. */
	LOAD64(4, ELECT)
1:	lwarx	5, 0, 4
	cmpwi	5, 0
	bne	second
	li	5, 1
	stwcx.	5, 0, 4
	bne-	1b

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
	add	4, 4, 3
	STORE_BE
	addi	7, 7, 1
	bdnz	1b
	/* 64 PTEs, all at one frame. */
	LOAD64(4, PROC_PTE)
	LOAD64(5, V | L | FRAME | LEAF_BITS)
	li	3, 64
	mtctr	3
2:	STORE_BE
	addi	4, 4, 8
	bdnz	2b

	MMU_ON
	SECOND(1, 1)

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

	BEGIN(12, U, U + 64 * PAGE)
	SECOND(2, 2)
	END
	BEGIN(13, U, U + 64 * PAGE)
	TLBIE(IS_PID, 1, 0)
	SECOND(2, 3)
	END
	BEGIN(14, U, U + 64 * PAGE)
	TLBIEL(IS_PID, 1)
	SECOND(2, 4)
	END
	BEGIN(15, U, U + 64 * PAGE)
	TLBIE(U + 5 * PAGE | AP_64K, 1, 0)
	SECOND(2, 5)
	END

	MARK(3, U, U + 64 * PAGE, 12)
	BEGIN(16, U, U + 64 * PAGE)
	TOUCH(U + 2 * PAGE, 16, 4096)
	END
	BEGIN(17, U, U + 64 * PAGE)
	TLBIE(U + 2 * PAGE | AP_64K, 1, 0)
	TOUCH(U + 2 * PAGE, 16, 4096)
	END
	BEGIN(18, U, U + 64 * PAGE)
	TLBIE(U + 2 * PAGE + 3 * 4096 | AP_4K, 1, 0)
	TOUCH(U + 2 * PAGE, 16, 4096)
	END
	MARK(3, 0, 0, 0)

	BEGIN(19, U, U + (WAYS + 1) * STRIDE)
	TLBIE(IS_LPID, 0, 2)
	TOUCH(U, WAYS, STRIDE)
	TOUCH(U, 1, PAGE)
	TOUCH(U + WAYS * STRIDE, 1, PAGE)
	TOUCH(U, 1, PAGE)
	END

	TOUCH(U, 64, PAGE)
	BEGIN(20, U, U + 32 * PAGE)
	TLBIE(IS_PID, 1, 0)
	TOUCH(U, 32, PAGE)
	END
	BEGIN(21, U, U + 64 * PAGE)
	TOUCH(U, 64, PAGE)
	END
	BEGIN(22, U, U + 64 * PAGE)
	TOUCH(U, 64, PAGE)
	TLBIE(IS_PID, 1, 0)
	TLBIE(IS_PID, 1, 0)
	END

	li	4, RES
	LOAD64(5, 0x7e57ed0064)
	STORE_BE
3:	b	3b

	/* The second CPU: wait for a new seq, run its op, say it is done. */
second:
	li	29, 0			/* r29: the last seq done */
4:	LOAD64(4, CMD)
	ld	5, 0(4)
	srdi	6, 5, 8
	cmpd	6, 29
	beq	4b
	mr	29, 6
	andi.	5, 5, 0xff
	cmpdi	5, 1
	bne	5f
	MMU_ON
	b	6f
5:	TOUCH(U, 64, PAGE)
6:	sync
	LOAD64(4, ACK)
	std	29, 0(4)
	b	4b
