/*
 * live_signal.h: SIGINT, SIGTERM and SIGHUP in live runs.
 *
 * A live rank cannot stop at the safe points the other commands poll
 * (interrupt.h): it may be inside an iteration that takes seconds, and
 * Open MPI's mpirun, when it is signalled itself, sends its ranks SIGCONT
 * and SIGTERM and SIGKILLs them once one has exited (or about a second
 * later).  So a rank acts on the signal within a tenth of a second
 * wherever it is: the rank's watchdog thread (live.c) and every poll of a
 * collective's wait (allreduce.h's watch) call hb_live_signal_stop, which,
 * once a signal has been caught, prints one line on rank 0 and _exits 128
 * + the signal (130 SIGINT, 129 SIGHUP, 143 SIGTERM), rank 0 first.  Nothing a live rank writes is
 * half-written by that: results and the database are written by rank 0
 * after the run, when nothing stops it any more, and checkpoints are
 * written to "*.tmp.PID" and renamed (the next run removes what is left).
 *
 * The driver of `live --policy` and `live --schedule` (live_driver.h) is a
 * process around mpirun: on a signal from another process (kill) it
 * passes it on to its mpirun, whose ranks are silent about it; one that
 * came from the terminal reached mpirun and the ranks already.  When the
 * launch has ended it prints the one line and exits 128 + the signal.
 *
 * The flag is this module's own (the handler only stores the signal's
 * number and whether another process sent it, in `volatile sig_atomic_t`
 * variables, the one thing a handler may do), so SIGHUP is caught here
 * for live whatever common/interrupt.c does with it.
 */
#ifndef HB_LIVE_SIGNAL_H
#define HB_LIVE_SIGNAL_H

/* Catch SIGINT, SIGTERM and SIGHUP from now on (one already ignored on
 * entry stays ignored, as nohup wants); 0, or -1 with errno. */
int hb_live_signals_catch(void);
/* The signal caught, 0 if none. */
int hb_live_signal(void);
/* 1 when the signal caught came from another process (kill), 0 when from
 * the kernel (the terminal's Ctrl-C or hang-up, which reached the whole
 * foreground process group). */
int hb_live_signal_sent(void);
/* "SIGINT", "SIGTERM", "SIGHUP" or "a signal". */
const char *hb_live_signal_name(int sig);
/* If a signal was caught: rank 0, when say, prints "hetbatch live:
 * interrupted by SIG at WHERE; no results written" on stderr; every rank
 * then _exits 128 + sig, the others half a second after rank 0 would (so
 * mpirun, which SIGKILLs the job at the first exit, lets rank 0 say it).
 * Otherwise it returns.  Any thread may call it. */
void hb_live_signal_stop(int rank, int say, const char *where);

#endif
