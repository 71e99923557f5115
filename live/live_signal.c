/*
 * live_signal.c: the signal flag of live runs (live_signal.h).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "live_signal.h"

/* Written by the handler only (live_signal.h says why they are global). */
static volatile sig_atomic_t caught, sent;

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	/* the first one counts; a second is the same request */
	if (!caught) {
		sent = info && info->si_code == SI_USER;
		caught = sig;
	}
}

int hb_live_signals_catch(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sigemptyset(&sa.sa_mask);
	/* SA_RESTART: waitpid, writes and MPI's system calls carry on; the
	 * pollers see the flag within a tenth of a second. */
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		if (sigaction(sigs[i], NULL, &old) != 0)
			return -1;
		if (old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(sigs[i], &sa, NULL) != 0)
			return -1;
	}
	return 0;
}

int hb_live_signal(void)
{
	return caught;
}

int hb_live_signal_sent(void)
{
	return sent;
}

const char *hb_live_signal_name(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	default: return "a signal";
	}
}

void hb_live_signal_stop(int rank, int say, const char *where)
{
	const struct timespec after_rank0 = { 0, 500000000 }; /* 0.5 s */
	int sig = caught;

	if (!sig)
		return;
	fflush(stdout);
	if (rank != 0) {
		/* Rank 0 goes first: mpirun, ending the job, SIGKILLs every rank
		 * as soon as one has exited, and rank 0 may still be inside an
		 * iteration (its watchdog looks every 0.1 s); this rank makes no
		 * MPI call meanwhile. */
		nanosleep(&after_rank0, NULL);
	} else if (say) {
		fprintf(stderr, "hetbatch live: interrupted by %s at %s; no results written\n", hb_live_signal_name(sig),
			where && where[0] ? where : "setup");
		fflush(stderr);
	}
	_exit(128 + sig);
}
