/*
 * What the bare-metal test programs (qemu/tlbie-64k.S, qemu/tlb-model.S)
 * share, through the C preprocessor their check scripts run them through.
 */
#ifndef QEMU_BARE_METAL_H
#define QEMU_BARE_METAL_H

/* r = a 64-bit constant */
#define LOAD64(r, v)				\
	lis	r, ((v) >> 48) & 0xffff;	\
	ori	r, r, ((v) >> 32) & 0xffff;	\
	sldi	r, r, 32;			\
	oris	r, r, ((v) >> 16) & 0xffff;	\
	ori	r, r, (v) & 0xffff

#endif
