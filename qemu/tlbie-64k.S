/*
 * Bare-metal test of QEMU's radix tlbie with 64K pages, for qemu/check-tlbie.
 * Loaded as the firmware of a powernv10 machine (-bios): it starts at 0x10,
 * big-endian, hypervisor real mode. It maps two 64K pages with the radix
 * MMU (LPID 0, PID 1), reads pages A and B through the TLB, points A's
 * PTE at another frame, invalidates the wrong page (B, A's neighbour),
 * reads A again, then invalidates A and reads it once more; with tlbie
 * (global), then with tlbiel (local). Results at physical 0x7000, as 64-bit words:
 *   0x7000 magic 0x7e57ed0064 when done, or the vector of an interrupt
 *   0x7008 A's first read (frame 1: 0x1111)
 *   0x7010 after tlbie of B: 0x1111 (stale: exact flush) or 0x2222
 *   0x7018 after tlbie of A: 0x2222
 *   0x7020 after tlbiel of B: 0x2222 (stale: exact flush) or 0x1111
 *   0x7028 after tlbiel of A: 0x1111
 *   0x7030 a 2M page C, read first: 0x4444
 *   0x7038 C after its PMD leaf changed and a tlbie of C (AP 2M): 0x5555
 * A is read at offset 0x2000, in its third 4K subpage, so that the flush of
 * A (at its first address) must reach its other 4K subpages.
 */

#include "bare-metal.h"

#define PATB	0x10000		/* partition table, 4K (PATS 0) */
#define PRTB	0x20000		/* process table, 4K (PRTS 0) */
#define PART_PGD 0x30000	/* partition tree root: 2^13 entries */
#define PART_PUD 0x40000
#define PROC_PGD 0x50000	/* PID 1's tree */
#define PROC_PUD 0x60000
#define PROC_PMD 0x61000
#define PROC_PTE 0x62000	/* 32 entries of 64K pages */
#define FRAME1	0x1000000
#define FRAME2	0x1010000
#define FRAME3	0x1020000
#define VA_A	0x10000000	/* PTE index 0 */
#define VA_B	0x10010000	/* PTE index 1 */
#define VA_C	0x10200000	/* a 2M page: PMD index 129 */
#define FRAME4	0x2000000	/* 2M frames */
#define FRAME5	0x2200000
#define PMD_C	(PROC_PMD + 8 * ((VA_C >> 21) & 0x1ff))
#define OFF	0x2000
#define RES	0x7000

#define V	0x8000000000000000	/* valid */
#define L	0x4000000000000000	/* leaf */
#define RTS52	0x40000000000000a0	/* radix tree size 52 bits */
#define LEAF_BITS 0x18f			/* R, C, privileged, RWX */
#define AP_64K	(5 << 5)		/* RB 56:58 */
#define AP_2M	(1 << 5)
#define MSR_DR	0x10

	.machine power9
	.section .text
	.org	0x10
	b	start

#include "bare-metal-vectors.S"

/* r: scratch, value. Store a 64-bit constant at a physical address. */
#define PUT(addr, val)		\
	LOAD64(4, addr);	\
	LOAD64(5, val);		\
	std	5, 0(4)

/* Read A + OFF through the MMU into register r. */
#define READ_A(r)		\
	mtmsrd	7;		\
	isync;			\
	LOAD64(4, VA_A + OFF);	\
	ld	r, 0(4);	\
	mtmsrd	6;		\
	isync

/* Read B + OFF through the MMU (into r3). */
#define READ_B			\
	mtmsrd	7;		\
	isync;			\
	LOAD64(4, VA_B + OFF);	\
	ld	3, 0(4);	\
	mtmsrd	6;		\
	isync

	.org	0x2000
start:
	mfmsr	6			/* r6: MSR, DR off */
	ori	7, 6, MSR_DR		/* r7: DR on */

	PUT(PATB, V | RTS52 | PART_PGD | 13)
	PUT(PATB + 8, PRTB)
	PUT(PRTB + 16, RTS52 | PROC_PGD | 13)
	/* LPID 0's partition tree maps the first 1G at itself (1G leaf). */
	PUT(PART_PGD, V | PART_PUD | 9)
	PUT(PART_PUD, V | L | 0 | LEAF_BITS)
	PUT(PROC_PGD, V | PROC_PUD | 9)
	PUT(PROC_PUD, V | PROC_PMD | 9)
	PUT(PROC_PMD + 8 * ((VA_A >> 21) & 0x1ff), V | PROC_PTE | 5)
	PUT(PROC_PTE, V | L | FRAME1 | LEAF_BITS)
	PUT(PROC_PTE + 8, V | L | FRAME3 | LEAF_BITS)
	PUT(FRAME1 + OFF, 0x1111)
	PUT(FRAME2 + OFF, 0x2222)
	PUT(FRAME3 + OFF, 0x3333)
	PUT(PMD_C, V | L | FRAME4 | LEAF_BITS)
	PUT(FRAME4 + OFF, 0x4444)
	PUT(FRAME5 + OFF, 0x5555)

	mfspr	3, 318			/* LPCR: HR (host radix), UPRT */
	LOAD64(4, (1 << 20) | (1 << 22))
	or	3, 3, 4
	mtspr	318, 3
	LOAD64(3, PATB)			/* PTCR: PATS 0 */
	mtspr	464, 3
	li	3, 1			/* PIDR */
	mtspr	48, 3
	isync
	ptesync

	LOAD64(8, VA_A | AP_64K)	/* RB for A */
	LOAD64(9, VA_B | AP_64K)	/* RB for B */
	LOAD64(10, 1 << 32)		/* RS: PID 1 */

	/*
	 * Each round: A and B in the TLB (as pages next to each other are in
	 * a workload), A -> the other frame, flush B (the wrong page), read
	 * A, flush A, read A.
	 */
	READ_A(20)
	READ_B
	PUT(PROC_PTE, V | L | FRAME2 | LEAF_BITS)
	ptesync
	tlbie	9, 10, 0, 1, 1		/* RB, RS, RIC 0, PRS 1, R 1 */
	eieio
	tlbsync
	ptesync
	READ_A(21)
	tlbie	8, 10, 0, 1, 1
	eieio
	tlbsync
	ptesync
	READ_A(22)

	/* The same with tlbiel, A back to frame 1. */
	READ_B
	PUT(PROC_PTE, V | L | FRAME1 | LEAF_BITS)
	ptesync
	tlbiel	9, 10, 0, 1, 1
	ptesync
	READ_A(23)
	tlbiel	8, 10, 0, 1, 1
	ptesync
	READ_A(24)

	/* A 2M page is still flushed whole by a tlbie of it. */
	mtmsrd	7
	isync
	LOAD64(4, VA_C + OFF)
	ld	26, 0(4)
	mtmsrd	6
	isync
	PUT(PMD_C, V | L | FRAME5 | LEAF_BITS)
	ptesync
	LOAD64(11, VA_C | AP_2M)
	tlbie	11, 10, 0, 1, 1
	eieio
	tlbsync
	ptesync
	mtmsrd	7
	isync
	LOAD64(4, VA_C + OFF)
	ld	25, 0(4)
	mtmsrd	6
	isync

	li	4, RES
	std	20, 8(4)
	std	21, 16(4)
	std	22, 24(4)
	std	23, 32(4)
	std	24, 40(4)
	std	26, 48(4)
	std	25, 56(4)
	LOAD64(3, 0x7e57ed0064)
	std	3, 0(4)
3:	b	3b
