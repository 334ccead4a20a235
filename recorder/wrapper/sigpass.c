/* sigpass.c - the guardian's signals, passed on once (sigpass.h). */
#define _GNU_SOURCE
#include "sigpass.h"

#include <string.h>
#include <unistd.h>

#define MS 1000000ull
/* how long a signal waits for the recorder's report: the kernel queues a
 * group's signal to all of it in one call; systemd kills a cgroup's
 * processes one by one, microseconds apart */
#define HOLD_MS 30
/* how much longer while the recorder has it pending (busy sampling) */
#define PENDING_MAX_MS 1000
/* a report with no signal of the guardian's to cancel is kept this long */
#define SEEN_KEEP_MS 2000

static int guard_owned(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
	       sig == SIGTRAP || sig == SIGABRT || sig == SIGSYS || sig == SIGVTALRM;
}

void rt_sigpass_guardian_set(sigset_t *set)
{
	sigemptyset(set);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD && (s < 32 || s >= SIGRTMIN))
			sigaddset(set, s);
}

void rt_sigpass_witness_set(sigset_t *set)
{
	rt_sigpass_guardian_set(set);
	for (int s = 1; s < NSIG; s++)
		if (guard_owned(s))
			sigdelset(set, s);
}

int rt_sigpass_sent(int code, pid_t from)
{
	return code != SI_KERNEL && code <= 0 && from != getpid();
}

static void drop(struct rt_sigpass_sig *a, unsigned *n, unsigned i)
{
	memmove(&a[i], &a[i + 1], (*n - i - 1) * sizeof(*a));
	(*n)--;
}

static int find(const struct rt_sigpass_sig *a, unsigned n, int sig, pid_t from)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].sig == sig && a[i].from == from)
			return (int)i;
	return -1;
}

static void expire_seen(struct rt_sigpass *p, uint64_t now)
{
	for (unsigned i = 0; i < p->nseen;)
		if (now - p->seen[i].at > SEEN_KEEP_MS * MS)
			drop(p->seen, &p->nseen, i);
		else
			i++;
}

int rt_sigpass_got(struct rt_sigpass *p, int sig, pid_t from, int witnessed, uint64_t now)
{
	expire_seen(p, now);
	int i = find(p->seen, p->nseen, sig, from);
	if (i >= 0) {
		drop(p->seen, &p->nseen, (unsigned)i); /* the job got this one */
		return 0;
	}
	if (!witnessed || p->nheld == RT_SIGPASS_SLOTS)
		return 1;
	p->held[p->nheld++] = (struct rt_sigpass_sig){
	    .sig = sig, .from = from, .at = now, .until = now + HOLD_MS * MS};
	return 0;
}

void rt_sigpass_reported(struct rt_sigpass *p, int sig, pid_t from, uint64_t now)
{
	int i = find(p->held, p->nheld, sig, from);
	if (i >= 0) {
		drop(p->held, &p->nheld, (unsigned)i);
		return;
	}
	expire_seen(p, now);
	if (p->nseen == RT_SIGPASS_SLOTS)
		drop(p->seen, &p->nseen, 0);
	p->seen[p->nseen++] = (struct rt_sigpass_sig){.sig = sig, .from = from, .at = now};
}

int rt_sigpass_due(struct rt_sigpass *p, uint64_t now, int (*pending)(int sig, void *), void *ctx,
                   pid_t *from)
{
	for (unsigned i = 0; i < p->nheld; i++) {
		struct rt_sigpass_sig *h = &p->held[i];
		if (now < h->until)
			continue;
		if (now - h->at < PENDING_MAX_MS * MS && pending && pending(h->sig, ctx)) {
			h->until = now + HOLD_MS * MS; /* its report is on the way */
			continue;
		}
		int sig = h->sig;
		*from = h->from;
		drop(p->held, &p->nheld, i);
		return sig;
	}
	return 0;
}

int rt_sigpass_wait_ms(const struct rt_sigpass *p, uint64_t now)
{
	int best = -1;
	for (unsigned i = 0; i < p->nheld; i++) {
		uint64_t u = p->held[i].until;
		int ms = u <= now ? 0 : (int)((u - now + MS - 1) / MS);
		if (best < 0 || ms < best)
			best = ms;
	}
	return best;
}
