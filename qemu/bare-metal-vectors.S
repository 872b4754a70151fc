/*
 * Every interrupt vector of a bare-metal test program: store the vector's
 * address at RES (the program's result word) and stop. Included at 0x100
 * of qemu/tlbie-64k.S and qemu/tlb-model.S, after RES is defined.
 */
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
