/*
 * plot.h: drawing figures with gnuplot for the commands that offer --plot
 * (sim, sweep).  The scripts live in scripts/gnuplot/ (installed under
 * share/hetbatch/gnuplot); gnuplot is a run-time tool found on PATH, and
 * its absence is a warning, never an error: the data files are written
 * anyway.
 */
#ifndef HB_CLI_PLOT_H
#define HB_CLI_PLOT_H

#include <stddef.h>

#include "cli.h"
#include "error.h"

#define HB_GNUPLOT_ENV "HETBATCH_GNUPLOT_DIR"

/* Find gnuplot (PATH) and the script directory: $HETBATCH_GNUPLOT_DIR, else
 * the source tree's (HB_GNUPLOT_DIR at build time), else share/hetbatch/
 * gnuplot or scripts/gnuplot relative to the executable; the directory must
 * hold `probe` (a script the caller needs).  1: both found; 0: no gnuplot
 * (a warning was printed); -1: no scripts (err says where to point). */
int hb_plot_tools(const struct hb_cli *cli, const char *probe, char *gnuplot, size_t gsize, char *gpdir,
		  size_t dsize, struct hb_error *err);

/* Append the gnuplot assignment var='value'; to buf ('' escapes a quote;
 * a control character, which would end the -e command, becomes a space).
 * For text only (titles, names): a file name goes through hb_gp_data. */
void hb_gp_assign(char *buf, size_t size, const char *var, const char *value);

/* Append dat='./NAME'; for a data file NAME in the output directory.  NAME
 * must be a plain name hetbatch chose (letters, digits, '.', '-', '_', '+'):
 * gnuplot runs a file name starting with '<' or '|' as a shell command, so
 * no path from the command line ever reaches it (issue 40 item 2). */
int hb_gp_data(char *buf, size_t size, const char *name, struct hb_error *err);

/* Run GPDIR/SCRIPT (GPDIR absolute, checked by hb_plot_tools) with the
 * assignments in vars plus gpdir=GPDIR (the scripts load
 * GPDIR/palette.gp, the shared colour-blind-safe line styles) and
 * out=./OUT.tmp.PID, in DIR: gnuplot is started with DIR as its working
 * directory (a posix_spawn fchdir file action, no shell), so DIR's name,
 * whatever it holds ('<', '|', quotes, newlines), never reaches gnuplot;
 * the script writes OUT.tmp.PID.{png,svg}, renamed to DIR/OUT.{png,svg}
 * (a failed run leaves nothing). */
int hb_plot_figure(const char *gnuplot, const char *gpdir, const char *script, const char *dir, const char *out,
		   const char *vars, struct hb_error *err);

#endif
