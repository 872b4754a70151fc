// SPDX-License-Identifier: GPL-2.0-only
/*
 * precedent: count the TLB flushes of the shared-memory zaps of the
 * 2-feature cover letter's table, on x86_64 (the tlb:tlb_flush tracepoint)
 * or on powerpc (powerpc:tlbie), so that the cover letter's precedent (x86
 * and 4K-page radix flush the whole context once per forced page-table
 * batch) is measured, not only read from the source. scripts/precedent-x86
 * runs it in an x86_64 guest.
 *
 * The process pins itself to one CPU and execs itself again there, so its
 * mm is born on that CPU alone; a second thread then spins on another CPU
 * all along, so every flush is remote, as in the powerpc table (there:
 * global tlbie; on x86 under TCG, which has no INVLPGB: an IPI).
 *
 * Operations (each on memory starting at a 2MB page-table boundary, set
 * up and filled before counting starts; one uncounted round first):
 *   shm_64M, shm_256M      shmdt() of a filled SysV segment
 *   memfd_{punch,truncate,remove,dontneed,munmap}_64M
 *                          a 64MB memfd mapped shared and filled, then
 *                          fallocate(PUNCH_HOLE) of all of it, ftruncate(0),
 *                          MADV_REMOVE, MADV_DONTNEED or munmap()
 *   dontneed_every8_64M    MADV_DONTNEED of 64MB of private memory with one
 *                          page in 8 present (the powerpc table's row)
 *   memfd_dontneed_every8_64M
 *                          the same of a shared memfd, one page in 8 dirty
 *   memfd_first_64M        MADV_DONTNEED of a 64MB memfd with only its first
 *                          page table dirty
 *   shm_sparse_64M         shmdt() of 64MB with one dirty page per page table
 *
 * Counting goes through tracefs (/sys/kernel/tracing, or under debugfs):
 * the event is enabled and the buffer emptied before each operation, and
 * every event of every CPU recorded meanwhile is read back after it (the
 * guest runs nothing else). Prints "trace: op=NAME iter=K cpu=C tid=T ..."
 * for each event, "precedent-iter: ..." per iteration, and per operation
 * the counts of the iteration with the fewest events (what disturbs a run
 * only adds), with spread= the difference to the one with the most:
 *
 * x86: "precedent: op=NAME mib=N full=F ranged=R ranged_pages=P remote=X
 *       remote_full=.. remote_pages=.. ipi=.. ipi_full=.. ipi_pages=..
 *       other=.. iters=.. spread=.."
 *   from tlb:tlb_flush (include/trace/events/tlb.h; arch/x86/mm/tlb.c):
 *   flush_tlb_mm_range() makes a range of more than
 *   tlb_single_page_flush_ceiling (33) strides a full flush
 *   (TLB_FLUSH_ALL) and runs flush_tlb_func() on every CPU that must
 *   flush, which traces "pages" with the reason TLB_LOCAL_MM_SHOOTDOWN
 *   (3) on the CPU that asked and TLB_REMOTE_SHOOTDOWN (1) on the others:
 *   -1 for a full flush, else (end - start) >> stride_shift, the
 *   invalidations of a ranged flush (its loop makes at least one; a
 *   flush of freed page tables has a 2MB stride, so a 4K range of them
 *   reads 0), or 0 where that CPU was already up to date. Once per request
 *   to other CPUs native_flush_tlb_multi() traces TLB_REMOTE_SEND_IPI (4)
 *   with the range in 4K pages, whatever the stride.
 *   full, ranged and ranged_pages: the operating CPU's reason-3 events
 *   (pages -1; pages >= 0, and their sum); remote, remote_full,
 *   remote_pages: the reason-1 events; ipi, ipi_full, ipi_pages: the
 *   reason-4 ones; other: the reason-1/3 events of tasks not ours (an
 *   idle CPU still in the mm's cpumask, or another process), which are
 *   not in full, ranged or the remote counts.
 *
 * powerpc: "precedent: op=NAME mib=N tlbie=T pid=P page=G tlbiel=L
 *       tlbiel_pid=LP fixup=F iters=.. spread=.."
 *   from powerpc:tlbie (arch/powerpc/include/asm/trace.h), decoded as
 *   tools/testing/selftests/powerpc/mm/tlbie_count.c does: host
 *   process-scoped flushes only (lpid 0, prs 1, no LPID in RS), tlbie =
 *   local 0 with a PID in RS, of which pid = IS 1 (rb & 0x400, the whole
 *   PID) and page = the rest; tlbiel = local 1 with a PID; fixup = PID 0
 *   tlbie and the POWER9 store-queue fix-up's dummy address (the POWER9
 *   repeat of the last per-page tlbie is not told apart here: compare
 *   POWER10 counts).
 *
 * Usage: precedent [-i ITERATIONS] [OP...]   (3 iterations, every op)
 * Built static with the host gcc (scripts/precedent-x86) or, for a
 * ppc64le guest, with powerpc64le-linux-gnu-gcc: -O2 -static -pthread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MB		(1UL << 20)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* Bytes one page table maps: 2MB with 4K x86 pages, 4K or 64K radix pages */
#define PMD_SPAN	(2UL * MB)

#if defined(__x86_64__) || defined(__i386__)
#define X86		1
#define EVENT		"tlb/tlb_flush"
#elif defined(__powerpc64__)
#define X86		0
#define EVENT		"powerpc/tlbie"
#else
#error "x86 or powerpc64 only: the tracepoint that counts flushes is per architecture"
#endif

static size_t page_size;
static const char *tracefs;
static pid_t tids[2];		/* this process's threads: main, spinner */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "precedent: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "%s%s\n", errno ? ": " : "", errno ? strerror(errno) : "");
	va_end(ap);
	exit(1);
}

static void trace_write(const char *file, const char *text)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tracefs, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		die("open %s", path);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die("write %s to %s", text, path);
	close(fd);
}

static void find_tracefs(void)
{
	static const char * const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/events/%s/enable", dirs[i], EVENT);
		if (!access(path, W_OK)) {
			tracefs = dirs[i];
			return;
		}
	}
	die("no writable events/%s/enable in tracefs (mounted? CONFIG_TRACING?)", EVENT);
}

static void print_file(const char *label, const char *path)
{
	char buf[128];
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("%s: (no %s)\n", label, path);
		return;
	}
	if (fgets(buf, sizeof(buf), f))
		printf("%s: %s", label, buf);
	fclose(f);
}

/* The counts of one operation */
struct counts {
	/* x86: the operating CPU's flushes, the others', the requests */
	unsigned long full, ranged, ranged_pages;
	unsigned long remote, remote_full, remote_pages;
	unsigned long ipi, ipi_full, ipi_pages, other;
	/* powerpc */
	unsigned long tlbie, pid, page, tlbiel, tlbiel_pid, fixup;
	unsigned long events;	/* every event recorded, for the minimum */
};

static int ours(long tid)
{
	return tid == tids[0] || tid == tids[1];
}

#if X86
/* "pages:-1 reason:local MM shootdown (3)" */
static void count_event(struct counts *c, const char *ev, long tid)
{
	const char *p = strstr(ev, "pages:"), *r = strrchr(ev, '(');
	long pages;
	int reason;

	if (!p || !r || sscanf(p, "pages:%ld", &pages) != 1 || sscanf(r, "(%d)", &reason) != 1)
		die("cannot parse tlb_flush event \"%s\"", ev);
	if ((reason == 1 || reason == 3) && !ours(tid)) {
		c->other++;
		return;
	}
	switch (reason) {
	case 3:		/* TLB_LOCAL_MM_SHOOTDOWN */
		if (pages == -1) {
			c->full++;
		} else {
			c->ranged++;
			c->ranged_pages += pages;
		}
		break;
	case 1:		/* TLB_REMOTE_SHOOTDOWN */
		c->remote++;
		if (pages == -1)
			c->remote_full++;
		else
			c->remote_pages += pages;
		break;
	case 4:		/* TLB_REMOTE_SEND_IPI */
		c->ipi++;
		if (pages == -1)
			c->ipi_full++;
		else
			c->ipi_pages += pages;
		break;
	}
}
#else
/* "lpid=0, local=0, rb=0x..., rs=0x..., ric=0x0, prs=0x1, r=0x1" */
static void count_event(struct counts *c, const char *ev, long tid)
{
	unsigned long lpid, local, rb, rs, ric, prs, r;

	(void)tid;
	if (sscanf(ev, "lpid=%lu, local=%lu, rb=0x%lx, rs=0x%lx, ric=0x%lx, prs=0x%lx, r=0x%lx",
		   &lpid, &local, &rb, &rs, &ric, &prs, &r) != 7)
		die("cannot parse tlbie event \"%s\"", ev);
	/* Host process-scoped translations only (tlbie_count.c's HOST) */
	if (lpid != 0 || prs != 1 || (rs & 0xffffffffUL))
		return;
	/* The POWER9 store-queue fix-up flushes a dummy address */
	if (rb >= 0xffffffffff000UL && rb < 0x10000000000000UL) {
		c->fixup++;
		return;
	}
	if (local) {
		if (rs) {
			c->tlbiel++;
			c->tlbiel_pid += !!(rb & 0x400);
		}
		return;
	}
	if (!rs) {
		c->fixup++;
		return;
	}
	c->tlbie++;
	if (rb & 0x400)
		c->pid++;
	else
		c->page++;
}
#endif

static void trace_start(void)
{
	trace_write("tracing_on", "0");
	trace_write("trace", "");
	trace_write("events/" EVENT "/enable", "1");
	trace_write("tracing_on", "1");
}

/* Stop, read every event back, print and count them */
static void trace_stop(const char *op, int iter, struct counts *c)
{
	char path[256], line[512];
	unsigned long in = 0, written = 0;
	FILE *f;

	trace_write("tracing_on", "0");
	trace_write("events/" EVENT "/enable", "0");
	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/trace", tracefs);
	f = fopen(path, "r");
	if (!f)
		die("open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *ev, *tag, *nl, *dash;
		long tid = -1;
		int cpu = -1;

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (line[0] == '#') {
			const char *key = "entries-in-buffer/entries-written:";
			char *e = strstr(line, key);

			if (e && sscanf(e + strlen(key), "%lu/%lu", &in, &written) != 2)
				die("cannot parse \"%s\"", line);
			continue;
		}
		/* "           comm-TID     [CPU] flags  TIME: event: fields" */
		tag = strchr(line, '[');
		ev = strstr(line, X86 ? "tlb_flush: " : "tlbie: ");
		if (!tag || !ev)
			continue;
		if (sscanf(tag, "[%d]", &cpu) != 1)
			die("cannot parse \"%s\"", line);
		*tag = '\0';
		dash = strrchr(line, '-');
		if (dash)
			tid = strtol(dash + 1, NULL, 10);
		ev = strchr(ev, ' ') + 1;
		count_event(c, ev, tid);
		c->events++;
		if (iter)	/* not the uncounted round's */
			printf("trace: op=%s iter=%d cpu=%d tid=%ld%s %s\n", op, iter, cpu, tid,
			       ours(tid) ? "" : "(other)", ev);
	}
	fclose(f);
	if (in != written)
		die("%s: the trace buffer lost events (%lu of %lu kept): raise buffer_size_kb",
		    op, in, written);
	if (in != c->events)
		die("%s: read %lu events of the %lu the buffer holds", op, c->events, in);
}

static void print_counts(const char *tag, const char *op, unsigned long mib, const struct counts *c)
{
	printf("%s: op=%s mib=%lu", tag, op, mib);
#if X86
	printf(" full=%lu ranged=%lu ranged_pages=%lu remote=%lu", c->full, c->ranged,
	       c->ranged_pages, c->remote);
	printf(" remote_full=%lu remote_pages=%lu ipi=%lu ipi_full=%lu ipi_pages=%lu other=%lu",
	       c->remote_full, c->remote_pages, c->ipi, c->ipi_full, c->ipi_pages, c->other);
#else
	printf(" tlbie=%lu pid=%lu page=%lu tlbiel=%lu tlbiel_pid=%lu fixup=%lu", c->tlbie, c->pid,
	       c->page, c->tlbiel, c->tlbiel_pid, c->fixup);
#endif
}

/*
 * A reservation of len bytes and a page table's span more; *start is its
 * first page-table boundary. Given back with unreserve(), exactly.
 */
struct room {
	char *base, *start;
	size_t len;
};

static void reserve(struct room *r, size_t len)
{
	r->len = len + PMD_SPAN;
	r->base = mmap(NULL, r->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED)
		die("mmap %zu", r->len);
	r->start = (char *)(((unsigned long)r->base + PMD_SPAN - 1) & ~(PMD_SPAN - 1));
}

static void unreserve(struct room *r)
{
	if (munmap(r->base, r->len))
		die("munmap");
}

/* Small pages: a THP would take away the per-page-table batches (no THP: EINVAL) */
static void no_thp(void *p, size_t len)
{
	madvise(p, len, MADV_NOHUGEPAGE);
}

enum kind { SHM, SHM_SPARSE, MEMFD, MEMFD_EVERY8, MEMFD_FIRST, PRIVATE_EVERY8 };
enum memfd_op { NONE, PUNCH, TRUNCATE, REMOVE, DONTNEED, MUNMAP };

static const struct op {
	const char *name;
	unsigned long mib;
	enum kind kind;
	enum memfd_op mop;
} ops[] = {
	{ "shm_64M",			64,	SHM,		NONE },
	{ "shm_256M",			256,	SHM,		NONE },
	{ "memfd_punch_64M",		64,	MEMFD,		PUNCH },
	{ "memfd_truncate_64M",		64,	MEMFD,		TRUNCATE },
	{ "memfd_remove_64M",		64,	MEMFD,		REMOVE },
	{ "memfd_dontneed_64M",		64,	MEMFD,		DONTNEED },
	{ "memfd_munmap_64M",		64,	MEMFD,		MUNMAP },
	{ "dontneed_every8_64M",	64,	PRIVATE_EVERY8,	NONE },
	{ "memfd_dontneed_every8_64M",	64,	MEMFD_EVERY8,	DONTNEED },
	{ "memfd_first_64M",		64,	MEMFD_FIRST,	DONTNEED },
	{ "shm_sparse_64M",		64,	SHM_SPARSE,	NONE },
};

/* Write one byte in each of the pages to dirty: all, one in 8, ... */
static void dirty(char *p, size_t len, enum kind kind)
{
	size_t off, stride = page_size;

	if (kind == MEMFD_EVERY8 || kind == PRIVATE_EVERY8)
		stride = 8 * page_size;
	else if (kind == SHM_SPARSE)
		stride = PMD_SPAN;

	if (kind == MEMFD_FIRST)
		len = PMD_SPAN;
	for (off = 0; off < len; off += stride)
		p[off] = 1;
}

static void run_shm(const struct op *o, int iter, struct counts *c)
{
	size_t len = o->mib * MB;
	struct room r;
	char *p;
	int id;

	/* Find room, give it back, attach there: nothing else maps meanwhile */
	reserve(&r, len);
	unreserve(&r);
	id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
	if (id < 0)
		die("shmget %zu", len);
	p = shmat(id, r.start, 0);
	shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1)
		die("shmat");
	no_thp(p, len);
	dirty(p, len, o->kind);
	trace_start();
	if (shmdt(p))
		die("shmdt");
	trace_stop(o->name, iter, c);
}

static void run_memfd(const struct op *o, int iter, struct counts *c)
{
	size_t len = o->mib * MB;
	struct room r;
	int fd, rc = 0;
	char *p;

	reserve(&r, len);
	p = r.start;

	fd = memfd_create("precedent", 0);
	if (fd < 0 || ftruncate(fd, len))
		die("memfd_create/ftruncate");
	if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		die("mmap memfd");
	no_thp(p, len);
	dirty(p, len, o->kind);
	trace_start();
	switch (o->mop) {
	case PUNCH:
		rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, len);
		break;
	case TRUNCATE:
		rc = ftruncate(fd, 0);
		break;
	case REMOVE:
		rc = madvise(p, len, MADV_REMOVE);
		break;
	case DONTNEED:
		rc = madvise(p, len, MADV_DONTNEED);
		break;
	default:
		rc = munmap(p, len);
		break;
	}
	trace_stop(o->name, iter, c);
	if (rc)
		die("%s", o->name);
	unreserve(&r);
	close(fd);
}

static void run_private(const struct op *o, int iter, struct counts *c)
{
	size_t len = o->mib * MB;
	struct room r;
	char *p;

	reserve(&r, len);
	p = r.start;
	if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
	    MAP_FAILED)
		die("mmap");
	no_thp(p, len);
	dirty(p, len, o->kind);
	trace_start();
	if (madvise(p, len, MADV_DONTNEED))
		die("MADV_DONTNEED");
	trace_stop(o->name, iter, c);
	unreserve(&r);
}

static void run(const struct op *o, int iter, struct counts *c)
{
	switch (o->kind) {
	case SHM:
	case SHM_SPARSE:
		run_shm(o, iter, c);
		break;
	case PRIVATE_EVERY8:
		run_private(o, iter, c);
		break;
	default:
		run_memfd(o, iter, c);
		break;
	}
}

static int stop;

static void *spin(void *arg)
{
	int cpu = *(int *)arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("bind the spinning thread to CPU %d", cpu);
	__atomic_store_n(&tids[1], (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* The first two CPUs this process may run on */
static void pick_cpus(int cpus[2])
{
	cpu_set_t set;
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity");
	for (i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	if (n < 2)
		die("needs two CPUs (one to operate, one to keep the mm live elsewhere)");
}

int main(int argc, char **argv)
{
	int iterations = 3, cpus[2], opt, i, k, nsel = 0;
	const char *sel[ARRAY_SIZE(ops)];
	char *pinned = getenv("PRECEDENT_CPUS");
	pthread_t thread;
	unsigned int j;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "i:")) != -1) {
		if (opt == 'i')
			iterations = atoi(optarg);
		if (opt != 'i' || iterations < 1) {
			fprintf(stderr, "usage: precedent [-i ITERATIONS] [OP...]\n");
			return 2;
		}
	}
	for (; optind < argc && nsel < (int)ARRAY_SIZE(sel); optind++)
		sel[nsel++] = argv[optind];
	page_size = sysconf(_SC_PAGESIZE);

	/*
	 * Pin, then exec again: the new mm starts on this CPU alone, so that
	 * no idle CPU the program happened to start on stays in its cpumask
	 * (x86 sends a flush that frees page tables to every CPU there).
	 */
	if (!pinned) {
		cpu_set_t set;
		char num[32];

		pick_cpus(cpus);
		CPU_ZERO(&set);
		CPU_SET(cpus[0], &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("bind to CPU %d", cpus[0]);
		snprintf(num, sizeof(num), "%d,%d", cpus[0], cpus[1]);
		setenv("PRECEDENT_CPUS", num, 1);
		execv("/proc/self/exe", argv);
		die("exec /proc/self/exe");
	}
	if (sscanf(pinned, "%d,%d", &cpus[0], &cpus[1]) != 2)
		die("PRECEDENT_CPUS=%s: CPU,CPU", pinned);

	find_tracefs();
	printf("precedent: %s, page size %zu, tracefs %s, ", EVENT, page_size, tracefs);
	printf("operating on CPU %d, spinning on CPU %d, %d iterations\n", cpus[0], cpus[1],
	       iterations);
	if (X86)
		print_file("precedent: tlb_single_page_flush_ceiling",
			   "/sys/kernel/debug/x86/tlb_single_page_flush_ceiling");
	else
		print_file("precedent: tlb_single_page_flush_ceiling",
			   "/sys/kernel/debug/powerpc/tlb_single_page_flush_ceiling");
	/* Room for per-page tlbie of 256MB at 4K pages, 65536 events a CPU */
	trace_write("buffer_size_kb", "8192");
	trace_write("events/enable", "0");

	tids[0] = syscall(SYS_gettid);
	if (pthread_create(&thread, NULL, spin, &cpus[1]))
		die("pthread_create");
	while (!__atomic_load_n(&tids[1], __ATOMIC_ACQUIRE))
		sched_yield();

	for (j = 0; j < ARRAY_SIZE(ops); j++) {
		const struct op *o = &ops[j];
		struct counts c, best;
		unsigned long most = 0;

		for (k = 0; k < nsel && strcmp(sel[k], o->name); k++)
			;
		if (nsel && k == nsel)
			continue;
		/* Uncounted: the first run of each op touches what later ones find */
		run(o, 0, &c);
		for (i = 1; i <= iterations; i++) {
			run(o, i, &c);
			print_counts("precedent-iter", o->name, o->mib, &c);
			printf(" iter=%d events=%lu\n", i, c.events);
			if (i == 1 || c.events < best.events)
				best = c;
			if (c.events > most)
				most = c.events;
		}
		print_counts("precedent", o->name, o->mib, &best);
		printf(" iters=%d spread=%lu\n", iterations, most - best.events);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	printf("precedent: done\n");
	return 0;
}
