/*
 * interrupt.h: stopping long work at a safe point on SIGINT, SIGTERM or
 * SIGHUP.
 *
 * hb_interrupt_catch() installs one handler for SIGINT, SIGTERM and SIGHUP
 * (a closed terminal or ssh session: handled like SIGTERM) that
 * only stores the signal's number in a `volatile sig_atomic_t` (interrupt.c).
 * That flag is the one piece of process-wide mutable state hetbatch keeps:
 * a signal handler has no other place to write, and nothing else is safe to
 * do inside one.  The loops that can run for long poll hb_interrupted() at
 * points where stopping leaves nothing inconsistent (the simulator between
 * events, sweep workers between points, the analytic generator between
 * pairs, importers between files, the profiler between measurements) and
 * return -1 with hb_interrupt_error() (code HB_EINTR).  Their callers' error
 * paths then remove what this process created (staging directories,
 * "*.tmp.PID" files, rolled-back transactions), and cli/ prints one line
 * and exits 128 + the signal: 130 for SIGINT, 143 for SIGTERM, 129 for
 * SIGHUP.
 *
 * A signal already ignored when the command starts (a background job of a
 * shell, nohup) stays ignored.  The handler is installed with SA_RESETHAND:
 * a second Ctrl-C kills the process at once.  What it leaves behind carries
 * its PID in the name and is removed by the next run that owns the place
 * (tmpfiles.h).  Commands that do not poll never call hb_interrupt_catch,
 * so a signal stops them at once as before.
 */
#ifndef HB_INTERRUPT_H
#define HB_INTERRUPT_H

#include "error.h"

/* Catch SIGINT, SIGTERM and SIGHUP from now on (0, or -1 with errno). */
int hb_interrupt_catch(void);

/* The signal caught (SIGINT, SIGTERM or SIGHUP), 0 if none. */
int hb_interrupted(void);

/* Forget a caught signal: for a program that runs many commands in one
 * process (api/hetbatch.c), where one call's Ctrl-C must not stop the next
 * call.  The executable never calls it: it exits after a signal. */
void hb_interrupt_reset(void);

/* Fill err with code HB_EINTR: "WHAT: interrupted by SIGINT"; returns -1. */
int hb_interrupt_error(struct hb_error *err, const char *what);

/* "SIGINT", "SIGTERM", "SIGHUP" or "a signal". */
const char *hb_signal_name(int sig);

#endif
