/*
 * interrupt.c: the SIGINT/SIGTERM/SIGHUP flag (interrupt.h).
 */
#include <signal.h>
#include <string.h>

#include "interrupt.h"

/* The signal caught, 0 if none: written by the handler only, read by the
 * loops that poll it (interrupt.h says why it is global). */
static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	caught = sig;
}

int hb_interrupt_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* SA_RESTART: a write or waitpid in progress completes instead of
	 * failing with EINTR; the loops see the flag at their next check.
	 * SA_RESETHAND: a second signal takes the default action. */
	sa.sa_flags = SA_RESTART | SA_RESETHAND;
	/* SIGHUP (the terminal or the ssh session went away) is a request
	 * to stop like SIGTERM: without a handler it killed the writer where
	 * it stood, leaving staging directories, locks and journals. */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		int sig = sigs[i];
		struct sigaction old;

		/* A signal ignored on entry stays ignored: that is how a shell
		 * keeps a background job out of a Ctrl-C meant for the foreground. */
		if (sigaction(sig, NULL, &old) != 0)
			return -1;
		if (old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(sig, &sa, NULL) != 0)
			return -1;
	}
	return 0;
}

int hb_interrupted(void)
{
	return caught;
}

void hb_interrupt_reset(void)
{
	caught = 0;
}

const char *hb_signal_name(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	default: return "a signal";
	}
}

int hb_interrupt_error(struct hb_error *err, const char *what)
{
	return hb_fail(err, HB_EINTR, "%s: interrupted by %s", what, hb_signal_name(hb_interrupted()));
}
