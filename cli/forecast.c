/*
 * forecast.c: `hetbatch forecast FILE.csv`: JABAS's B_G forecaster on a
 * recorded trajectory.
 *
 * FILE has a header and the columns step,global_batch and optionally epoch
 * (extra columns are ignored).  The history ends at the origin; the models
 * are fitted on it as JABAS does at an epoch boundary (GPR on the current
 * epoch, SES/Holt on all of it) and predict the next epoch.  When FILE goes
 * on past the origin, the predictions are made at those rows' steps and each
 * method is scored by MAPE against them; otherwise the predictions are made
 * at JABAS's query points origin + P*i.
 *
 * Defaults (documented in --help):
 *  - origin: the last row of the next-to-last epoch when epochs are known
 *    (an epoch column, or --epoch-steps N putting step s in epoch
 *    floor((s-1)/N)), else the row at 2/3 of the file (row ceil(2n/3));
 *  - scored rows: the epoch of the first row after the origin when epochs
 *    are known, else every row after the origin;
 *  - horizon without rows past the origin: --epoch-steps N, else the length
 *    in steps of the current epoch; floor(horizon / P) points, at least one.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "csv.h"      /* defines: hb_csv_open, hb_csv_header, hb_csv_next, typed getters */
#include "forecast.h" /* defines: hb_forecast_run, hb_mape, hb_fc_query_steps, methods */
#include "json.h"     /* defines: hb_json_print */
#include "pool.h"     /* defines: hb_pool_create, hb_pool_online_cpus */
#include "strutil.h"  /* defines: hb_parse_long_range, hb_parse_double, hb_split_list */

struct series {
	size_t n, cap;
	double *step;   /* strictly increasing */
	double *batch;  /* > 0 */
	long *epoch;    /* non-decreasing; NULL when the file has no epoch column */
};

static void series_free(struct series *s)
{
	free(s->step);
	free(s->batch);
	free(s->epoch);
	memset(s, 0, sizeof(*s));
}

static int series_push(struct series *s, double step, double batch, long epoch, int has_epoch,
		       struct hb_error *err)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		double *a = realloc(s->step, cap * sizeof(double));

		if (a)
			s->step = a;
		a = a ? realloc(s->batch, cap * sizeof(double)) : NULL;
		if (a)
			s->batch = a;
		if (a && has_epoch) {
			long *e = realloc(s->epoch, cap * sizeof(long));

			if (e)
				s->epoch = e;
			else
				a = NULL;
		}
		if (!a)
			return hb_runtime_error(err, "out of memory reading %zu rows", s->n);
		s->cap = cap;
	}
	s->step[s->n] = step;
	s->batch[s->n] = batch;
	if (has_epoch)
		s->epoch[s->n] = epoch;
	s->n++;
	return 0;
}

/* Which series of a `hetbatch sim` timeseries.csv to read (--run, --job;
 * -1: the file's first row's), and what the file held. */
struct pick {
	long run, job;          /* chosen; -1 until the first row sets them */
	int runs_seen;          /* other (run, job) pairs were skipped */
	int from_sim;           /* the file has run_id and job columns */
};

/* Read and validate FILE: every error names FILE:LINE and the field.  A
 * `hetbatch sim` timeseries.csv (run_id, job, global_bs columns) holds the
 * samples of every run and job: one (pk->run, pk->job) is read, and of
 * samples at one step (an allocation change and an adaptation together)
 * the last one, the batch in force from there, is kept. */
static int read_series(const char *path, struct series *s, struct pick *pk, struct hb_error *err)
{
	static const char *const cols[] = { "step", NULL };
	struct hb_csv c;
	int idx[2], ecol, rc, rcol, jcol;
	long prev_step = 0, prev_epoch = 0;

	memset(s, 0, sizeof(*s));
	if (hb_csv_open(&c, path, err) < 0)
		return -1;
	if (hb_csv_header(&c, cols, idx, err) < 0)
		goto fail;
	idx[1] = hb_csv_column(&c, "global_batch");
	if (idx[1] < 0)
		idx[1] = hb_csv_column(&c, "global_bs"); /* sim's timeseries.csv */
	if (idx[1] < 0) {
		hb_input_error(err, "%s:1: missing column 'global_batch' (or a sim timeseries.csv's 'global_bs')", path);
		goto fail;
	}
	ecol = hb_csv_column(&c, "epoch");
	rcol = hb_csv_column(&c, "run_id");
	jcol = hb_csv_column(&c, "job");
	pk->from_sim = rcol >= 0 && jcol >= 0;
	while ((rc = hb_csv_next(&c, err)) == 1) {
		long step, epoch = 0;
		double batch;
		const char *text;

		if (hb_csv_check_width(&c, err) < 0)
			goto fail;
		if (pk->from_sim) {
			long run, job;

			if (hb_csv_long(&c, rcol, &run, err) < 0 || hb_csv_long(&c, jcol, &job, err) < 0)
				goto fail;
			if (pk->run < 0)
				pk->run = run;
			if (pk->job < 0)
				pk->job = job;
			if (run != pk->run || job != pk->job) {
				pk->runs_seen = 1;
				continue;
			}
		}
		if (hb_csv_long_range(&c, idx[0], 0, LONG_MAX, &step, err) < 0 ||
		    hb_csv_double(&c, idx[1], &batch, err) < 0)
			goto fail;
		if (pk->from_sim && s->n > 0 && step == prev_step) {
			s->n--; /* the later sample at this step replaces the earlier */
			prev_step = s->n > 0 ? (long)s->step[s->n - 1] : 0;
			prev_epoch = s->n > 0 && ecol >= 0 ? s->epoch[s->n - 1] : 0;
		}
		if (s->n > 0 && step <= prev_step) {
			hb_input_error(err, "%s:%ld: field 'step': value '%ld' is not greater than the previous step %ld",
				       path, c.line, step, prev_step);
			goto fail;
		}
		if (!(batch > 0)) {
			hb_csv_str(&c, idx[1], &text, err);
			hb_input_error(err, "%s:%ld: field 'global_batch': value '%s' must be > 0", path, c.line, text);
			goto fail;
		}
		if (ecol >= 0) {
			if (hb_csv_long_range(&c, ecol, 0, LONG_MAX, &epoch, err) < 0)
				goto fail;
			if (s->n > 0 && epoch < prev_epoch) {
				hb_input_error(err, "%s:%ld: field 'epoch': value '%ld' is less than the previous epoch %ld",
					       path, c.line, epoch, prev_epoch);
				goto fail;
			}
		}
		if (series_push(s, (double)step, batch, epoch, ecol >= 0, err) < 0)
			goto fail;
		prev_step = step;
		prev_epoch = epoch;
	}
	if (rc < 0)
		goto fail;
	if (s->n == 0) {
		if (pk->from_sim && pk->run >= 0)
			hb_input_error(err, "%s: no rows of run %ld, job %ld", path, pk->run, pk->job);
		else
			hb_input_error(err, "%s: no data rows after the header", path);
		goto fail;
	}
	hb_csv_close(&c);
	return 0;
fail:
	hb_csv_close(&c);
	series_free(s);
	return -1;
}

/* ------------------------------------------------------------------------ */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hetbatch forecast FILE.csv [--origin STEP] [--interval P] [--epoch-steps N]\n"
		"                         [--method LIST] [--gpr-x step|interval] [--threads N]\n"
		"                         [--run N] [--job J] [--json]\n"
		"\n"
		"Forecast the global batch size over the next epoch with JABAS's forecaster\n"
		"(0.5 GPR on the current epoch + 0.5 simple exponential smoothing on all history)\n"
		"and alternatives; when FILE continues past the origin, score each method by the\n"
		"mean absolute percentage error (MAPE) on those rows.\n"
		"\n"
		"FILE: CSV with a header and columns step,global_batch[,epoch]; steps strictly\n"
		"increasing, global_batch > 0, epoch non-decreasing.  A 'hetbatch sim --out DIR\n"
		"--csv' DIR/timeseries.csv works as it is: its step and global_bs columns of one run\n"
		"and job (--run, --job; default: the file's first), the last sample at a step.\n"
		"\n"
		"Options:\n"
		"  --origin STEP      forecast from this step (default: the last row of the\n"
		"                     next-to-last epoch; without epochs, the row at 2/3 of FILE)\n"
		"  --interval P       adaptation interval in steps (default 100)\n"
		"  --epoch-steps N    steps per epoch: puts step s in epoch floor((s-1)/N) when FILE\n"
		"                     has no epoch column, and is the horizon (floor(N/P) points)\n"
		"                     when FILE ends at the origin (default: the current epoch's span);\n"
		"                     at most 100000 points (horizon / P), else an error\n"
		"  --method LIST      comma-separated from ensemble,gpr,ses,holt,last (default all)\n"
		"  --gpr-x UNIT       GPR inputs: 'step' (raw steps, as JABAS's code) or 'interval'\n"
		"                     (steps / P, so the periodicity bounds 0.01..10 are in adaptations)\n"
		"  --threads N        threads for the fits (the GPR's restarts, SES beside them);\n"
		"                     1 disables (default: the online CPUs).  Same output for any N\n"
		"  --run N, --job J   with a sim timeseries.csv: the run_id and job to read\n"
		"                     (default: those of its first row)\n"
		"  --json             print JSON instead of a table\n"
		"  -h, --help         this help\n"
		"The global --seed N seeds the GPR's random restarts (default 1).\n"
		"\n"
		"Examples:\n"
		"  hetbatch forecast tests/fixtures/forecast/traj_epochs.csv\n"
		"  hetbatch forecast tests/fixtures/forecast/traj_epochs.csv --origin 2500 \\\n"
		"      --method ensemble,last --json\n"
		"  hetbatch --seed 7 forecast tests/fixtures/forecast/traj_plain.csv \\\n"
		"      --epoch-steps 2000 --gpr-x interval\n"
		"  hetbatch sim --cluster jabas-a --model resnet50 --policy jabas --out runs/a --csv\n"
		"  hetbatch forecast runs/a/timeseries.csv\n");
}

struct fc_args {
	const char *file;
	long origin;
	int origin_set;
	double interval;
	long epoch_steps;          /* 0: not given */
	enum hb_fc_method methods[HB_FC_NMETHODS];
	size_t nm;
	int gpr_x_interval;
	int json;
	int threads;               /* --threads; 0: the online CPUs */
	long run, job;             /* --run, --job (a sim timeseries.csv); -1: its first row's */
};

static int parse_args(int argc, char **argv, struct fc_args *a, struct hb_cli *cli, int *done)
{
	static const struct option opts[] = {
		{ "origin", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'p' },
		{ "epoch-steps", required_argument, NULL, 'e' },
		{ "method", required_argument, NULL, 'm' },
		{ "gpr-x", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "threads", required_argument, NULL, 't' },
		{ "run", required_argument, NULL, 'r' },
		{ "job", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(a, 0, sizeof(*a));
	a->interval = 100.0;
	a->run = a->job = -1;
	for (int m = 0; m < HB_FC_NMETHODS; m++)
		a->methods[a->nm++] = (enum hb_fc_method)m;
	*done = 0;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			if (hb_parse_long_range(optarg, 0, LONG_MAX, &a->origin) < 0)
				return hb_cli_usage(cli, "forecast", "--origin needs a step >= 0, got '%s'", optarg);
			a->origin_set = 1;
			break;
		case 'p':
			if (hb_parse_double(optarg, &a->interval) < 0 || !(a->interval > 0))
				return hb_cli_usage(cli, "forecast", "--interval needs a number > 0, got '%s'", optarg);
			break;
		case 'e':
			if (hb_parse_long_range(optarg, 1, LONG_MAX, &a->epoch_steps) < 0)
				return hb_cli_usage(cli, "forecast", "--epoch-steps needs an integer >= 1, got '%s'", optarg);
			break;
		case 'm': {
			char buf[256], *items[16];
			int k;

			if (hb_strlcpy(buf, optarg, sizeof(buf)) >= sizeof(buf) ||
			    (k = hb_split_list(buf, items, 16)) <= 0)
				return hb_cli_usage(cli, "forecast", "--method needs a list such as 'ensemble,last', got '%s'",
						    optarg);
			a->nm = 0;
			for (int i = 0; i < k; i++) {
				struct hb_error err = { 0 };
				enum hb_fc_method m;

				if (hb_fc_method_parse(items[i], &m, &err) < 0)
					return hb_cli_usage(cli, "forecast", "%s", err.msg);
				for (size_t j = 0; j < a->nm; j++)
					if (a->methods[j] == m)
						return hb_cli_usage(cli, "forecast", "--method lists '%s' twice", items[i]);
				a->methods[a->nm++] = m;
			}
			break;
		}
		case 'x':
			if (strcmp(optarg, "step") == 0)
				a->gpr_x_interval = 0;
			else if (strcmp(optarg, "interval") == 0)
				a->gpr_x_interval = 1;
			else
				return hb_cli_usage(cli, "forecast", "--gpr-x takes 'step' or 'interval', got '%s'", optarg);
			break;
		case 'j':
			a->json = 1;
			break;
		case 'r':
		case 'J':
			if (hb_parse_long_range(optarg, ch == 'r' ? 1 : 0, LONG_MAX, ch == 'r' ? &a->run : &a->job) < 0)
				return hb_cli_usage(cli, "forecast", "%s needs an integer >= %d, got '%s'",
						    ch == 'r' ? "--run" : "--job", ch == 'r' ? 1 : 0, optarg);
			break;
		case 't': {
			long n;

			if (hb_parse_long_range(optarg, 1, 1024, &n) < 0)
				return hb_cli_usage(cli, "forecast", "--threads needs a thread count in [1, 1024], got '%s'",
						    optarg);
			a->threads = (int)n;
			break;
		}
		case 'h':
			usage(stdout);
			*done = 1;
			return 0;
		case ':':
			return hb_cli_usage(cli, "forecast", "option '%s' needs a value", argv[optind - 1]);
		default:
			return hb_cli_bad_option(cli, "forecast", argc, argv, opts);
		}
	}
	if (optind != argc - 1)
		return hb_cli_usage(cli, "forecast", optind >= argc ? "needs FILE.csv" : "takes one FILE.csv, got '%s' too",
				    optind < argc - 1 ? argv[optind + 1] : "");
	a->file = argv[optind];
	return 0;
}

/* ------------------------------------------------------------------------ */
/* What to fit and what to predict, from the file and the options. */

struct plan {
	const long *epoch;     /* per row, or NULL when epochs are unknown */
	long *derived;         /* epochs from --epoch-steps (owned) */
	size_t origin_row;     /* last history row */
	double origin;         /* sync step */
	size_t epoch_start;    /* first row of the current epoch */
	size_t first_target;   /* first scored row */
	size_t ntarget;        /* scored rows (0: predictions only) */
	double *query;         /* query steps (owned) */
	size_t nq;
};

/* A horizon of more than HB_FC_MAX_QUERY intervals, named by the option
 * that set it (--epoch-steps, else --origin or the file's epoch). */
static int horizon_error(const struct fc_args *a, const struct plan *pl, double horizon, struct hb_error *err)
{
	char what[96];

	if (a->epoch_steps > 0)
		snprintf(what, sizeof(what), "--epoch-steps %ld", a->epoch_steps);
	else if (a->origin_set)
		snprintf(what, sizeof(what), "--origin %ld: horizon %.0f steps", a->origin, horizon);
	else
		snprintf(what, sizeof(what), "the epoch ending at step %.0f: horizon %.0f steps", pl->origin, horizon);
	return hb_input_error(err,
			      "%s: %s / --interval %g = %.4g query points, more than the limit of %d (use a larger "
			      "--interval, or --epoch-steps N for a shorter horizon)",
			      a->file, what, a->interval, floor(horizon / a->interval), HB_FC_MAX_QUERY);
}

static int make_plan(const struct series *s, const struct fc_args *a, struct plan *pl, struct hb_error *err)
{
	const size_t n = s->n;

	memset(pl, 0, sizeof(*pl));
	pl->epoch = s->epoch;
	if (!pl->epoch && a->epoch_steps > 0) {
		pl->derived = malloc(n * sizeof(long));
		if (!pl->derived)
			return hb_runtime_error(err, "out of memory");
		for (size_t i = 0; i < n; i++)
			pl->derived[i] = s->step[i] > 0 ? ((long)s->step[i] - 1) / a->epoch_steps : 0;
		pl->epoch = pl->derived;
	}
	if (a->origin_set) {
		if ((double)a->origin < s->step[0])
			return hb_input_error(err, "%s: --origin %ld is before the first step %.0f", a->file, a->origin,
					      s->step[0]);
		while (pl->origin_row + 1 < n && s->step[pl->origin_row + 1] <= (double)a->origin)
			pl->origin_row++;
		pl->origin = (double)a->origin;
	} else {
		if (pl->epoch && pl->epoch[0] != pl->epoch[n - 1]) {
			while (pl->epoch[pl->origin_row + 1] != pl->epoch[n - 1])
				pl->origin_row++;
		} else {
			pl->origin_row = (2 * n + 2) / 3 - 1; /* row ceil(2n/3), 0-based */
		}
		pl->origin = s->step[pl->origin_row];
	}
	if (pl->epoch)
		for (pl->epoch_start = pl->origin_row;
		     pl->epoch_start > 0 && pl->epoch[pl->epoch_start - 1] == pl->epoch[pl->origin_row];)
			pl->epoch_start--;
	pl->first_target = pl->origin_row + 1;
	for (size_t j = pl->first_target; j < n; j++) {
		if (pl->epoch && pl->epoch[j] != pl->epoch[pl->first_target])
			break;
		pl->ntarget++;
	}
	if (pl->ntarget > 0) {
		pl->nq = pl->ntarget;
		pl->query = malloc(pl->nq * sizeof(double));
		if (!pl->query)
			return hb_runtime_error(err, "out of memory");
		memcpy(pl->query, s->step + pl->first_target, pl->nq * sizeof(double));
	} else {
		double horizon = a->epoch_steps > 0 ? (double)a->epoch_steps
				 : pl->origin - (pl->epoch_start > 0 ? s->step[pl->epoch_start - 1] : 0.0);
		size_t count;

		if (floor(horizon / a->interval) > HB_FC_MAX_QUERY)
			return horizon_error(a, pl, horizon, err);
		count = hb_fc_query_steps(pl->origin, a->interval, horizon, NULL, 0);
		pl->nq = count > 0 ? count : 1;
		pl->query = malloc(pl->nq * sizeof(double));
		if (!pl->query)
			return hb_runtime_error(err, "out of memory");
		if (count > 0)
			hb_fc_query_steps(pl->origin, a->interval, horizon, pl->query, pl->nq);
		else
			pl->query[0] = pl->origin + a->interval;
	}
	return 0;
}

static void plan_free(struct plan *pl)
{
	free(pl->derived);
	free(pl->query);
}

/* A prediction that is not finite (global_batch values near DBL_MAX
 * overflow the fits: 1e300 squared) is refused naming the file, the method
 * and the largest value, not printed as "-nan". */
static int check_finite(const struct fc_args *a, const struct series *s, const struct plan *pl, const double *pred,
			struct hb_error *err)
{
	double top = 0;

	for (size_t i = 0; i < s->n; i++)
		top = fmax(top, s->batch[i]);
	for (size_t k = 0; k < a->nm; k++)
		for (size_t i = 0; i < pl->nq; i++)
			if (!isfinite(pred[k * pl->nq + i]))
				return hb_input_error(err,
						      "%s: the %s forecast at step %.0f is not a finite number (field "
						      "'global_batch' up to %g is too large to fit)",
						      a->file, hb_fc_method_name(a->methods[k]), pl->query[i], top);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Output */

static void print_table(const struct series *s, const struct fc_args *a, const struct plan *pl,
			const double *pred, const double *mape, const struct hb_fc_fit *fit)
{
	const size_t nh = pl->origin_row + 1;

	printf("forecast of %s from step %.0f (interval %g)\n", a->file, pl->origin, a->interval);
	printf("history: %zu points from step %.0f; current epoch from step %.0f (%zu points, the GPR fits the last %zu)\n",
	       nh, s->step[0], s->step[pl->epoch_start], nh - pl->epoch_start,
	       fit->have_gpr ? fit->gpr_points : nh - pl->epoch_start);
	if (fit->have_gpr)
		printf("gpr:  c %.6g  length_scale %.6g  periodicity %.6g (%s)  log-likelihood %.6g\n",
		       fit->gpr_hyper.c, fit->gpr_hyper.length, fit->gpr_hyper.period,
		       a->gpr_x_interval ? "adaptations" : "steps", fit->gpr_lml);
	if (fit->have_ses)
		printf("ses:  alpha %.6g  level %.6g\n", fit->ses.alpha, fit->ses.level);
	if (fit->have_holt)
		printf("holt: alpha %.6g  beta %.6g  level %.6g  trend %.6g per interval\n", fit->holt.alpha,
		       fit->holt.beta, fit->holt.level, fit->holt.trend);
	if (pl->ntarget)
		printf("scored on %zu rows after the origin (steps %.0f..%.0f)\n\n", pl->ntarget, pl->query[0],
		       pl->query[pl->nq - 1]);
	else
		printf("%s ends at the origin: predictions at origin + %g*i, i = 1..%zu\n\n", a->file, a->interval,
		       pl->nq);
	printf("%10s", "step");
	if (pl->ntarget)
		printf(" %10s", "actual");
	for (size_t k = 0; k < a->nm; k++)
		printf(" %10s", hb_fc_method_name(a->methods[k]));
	printf("\n");
	for (size_t j = 0; j < pl->nq; j++) {
		printf("%10.0f", pl->query[j]);
		if (pl->ntarget)
			printf(" %10.1f", s->batch[pl->first_target + j]);
		for (size_t k = 0; k < a->nm; k++)
			printf(" %10.1f", pred[k * pl->nq + j]);
		printf("\n");
	}
	if (pl->ntarget) {
		printf("%-21s", "MAPE %");
		for (size_t k = 0; k < a->nm; k++)
			printf(" %10.2f", mape[k]);
		printf("\n");
	}
}

static cJSON *json_array(const double *v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[i]));
	return arr;
}

static int print_json(const struct series *s, const struct fc_args *a, const struct plan *pl,
		      const double *pred, const double *mape, const struct hb_fc_fit *fit, uint64_t seed,
		      struct hb_error *err)
{
	cJSON *root = cJSON_CreateObject(), *methods, *fits;
	int rc;

	cJSON_AddStringToObject(root, "file", a->file);
	cJSON_AddNumberToObject(root, "origin", pl->origin);
	cJSON_AddNumberToObject(root, "interval", a->interval);
	cJSON_AddNumberToObject(root, "history_points", (double)(pl->origin_row + 1));
	cJSON_AddNumberToObject(root, "epoch_start_step", s->step[pl->epoch_start]);
	cJSON_AddStringToObject(root, "gpr_x", a->gpr_x_interval ? "interval" : "step");
	cJSON_AddNumberToObject(root, "seed", (double)seed);
	cJSON_AddBoolToObject(root, "scored", pl->ntarget > 0);
	cJSON_AddItemToObject(root, "steps", json_array(pl->query, pl->nq));
	if (pl->ntarget)
		cJSON_AddItemToObject(root, "actual", json_array(s->batch + pl->first_target, pl->ntarget));
	methods = cJSON_AddArrayToObject(root, "methods");
	for (size_t k = 0; k < a->nm; k++) {
		cJSON *m = cJSON_CreateObject();

		cJSON_AddStringToObject(m, "name", hb_fc_method_name(a->methods[k]));
		cJSON_AddItemToObject(m, "predictions", json_array(pred + k * pl->nq, pl->nq));
		if (pl->ntarget)
			cJSON_AddNumberToObject(m, "mape_pct", mape[k]);
		cJSON_AddItemToArray(methods, m);
	}
	fits = cJSON_AddObjectToObject(root, "fits");
	if (fit->have_gpr) {
		cJSON *g = cJSON_AddObjectToObject(fits, "gpr");

		cJSON_AddNumberToObject(g, "points", (double)fit->gpr_points);
		cJSON_AddNumberToObject(g, "epoch_points", (double)fit->gpr_epoch_points);
		cJSON_AddNumberToObject(g, "c", fit->gpr_hyper.c);
		cJSON_AddNumberToObject(g, "length_scale", fit->gpr_hyper.length);
		cJSON_AddNumberToObject(g, "periodicity", fit->gpr_hyper.period);
		cJSON_AddNumberToObject(g, "log_marginal_likelihood", fit->gpr_lml);
	}
	if (fit->have_ses) {
		cJSON *o = cJSON_AddObjectToObject(fits, "ses");

		cJSON_AddNumberToObject(o, "alpha", fit->ses.alpha);
		cJSON_AddNumberToObject(o, "level0", fit->ses.level0);
		cJSON_AddNumberToObject(o, "level", fit->ses.level);
		cJSON_AddNumberToObject(o, "sse", fit->ses.sse);
	}
	if (fit->have_holt) {
		cJSON *o = cJSON_AddObjectToObject(fits, "holt");

		cJSON_AddNumberToObject(o, "alpha", fit->holt.alpha);
		cJSON_AddNumberToObject(o, "beta", fit->holt.beta);
		cJSON_AddNumberToObject(o, "level", fit->holt.level);
		cJSON_AddNumberToObject(o, "trend", fit->holt.trend);
		cJSON_AddNumberToObject(o, "sse", fit->holt.sse);
	}
	rc = hb_json_print(stdout, root, err);
	cJSON_Delete(root);
	return rc;
}

int cmd_forecast(int argc, char **argv, struct hb_cli *cli)
{
	struct fc_args a;
	struct series s;
	struct plan pl;
	struct hb_fc_options o;
	struct hb_fc_history h;
	struct hb_fc_fit fit;
	struct hb_error err = { 0 };
	struct hb_pool *pool = NULL;
	double *pred = NULL, mape[HB_FC_NMETHODS] = { 0 };
	int done, rc;

	if ((rc = parse_args(argc, argv, &a, cli, &done)) != 0 || done)
		return rc;
	{
		struct pick pk = { .run = a.run, .job = a.job };

		if (read_series(a.file, &s, &pk, &err) < 0)
			return hb_cli_fail(cli, &err);
		if (!pk.from_sim && (a.run >= 0 || a.job >= 0))
			hb_warn(&cli->log, "forecast: %s has no run_id and job columns; --run and --job are ignored",
				a.file);
		else if (pk.runs_seen)
			hb_info(&cli->log, "forecast: %s: run %ld, job %ld (the file holds others: --run, --job)", a.file,
				pk.run, pk.job);
	}
	if (make_plan(&s, &a, &pl, &err) < 0) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	hb_fc_options_default(&o, cli->seed);
	o.interval = a.interval;
	o.gpr_x_scale = a.gpr_x_interval ? a.interval : 1.0;
	if (hb_pool_create(&pool, a.threads > 0 ? a.threads : hb_pool_online_cpus(), &err) < 0) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	o.gpr.pool = pool;
	h = (struct hb_fc_history){ .step = s.step, .batch = s.batch, .n = pl.origin_row + 1,
				    .epoch_start = pl.epoch_start };
	pred = malloc(a.nm * pl.nq * sizeof(double));
	if (!pred) {
		hb_runtime_error(&err, "out of memory");
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	if (hb_forecast_run(&h, &o, a.methods, a.nm, pl.query, pl.nq, pred, &fit, &err) < 0) {
		hb_error_prefix(&err, "%s: forecast from step %.0f", a.file, pl.origin);
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	if (check_finite(&a, &s, &pl, pred, &err) < 0) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	/* The window is a bound of the method, not of the file: say what was
	 * left out (on stderr, so --json stays one document). */
	if (fit.have_gpr && fit.gpr_epoch_points > fit.gpr_points)
		hb_warn(&cli->log,
			"forecast: the GPR fits the last %zu of the current epoch's %zu points (steps %.0f..%.0f); "
			"the %zu before step %.0f are skipped (window %d: JABAS fits one epoch's adaptation points, "
			"and the fit costs O(n^3))",
			fit.gpr_points, fit.gpr_epoch_points, s.step[pl.origin_row + 1 - fit.gpr_points],
			s.step[pl.origin_row], fit.gpr_epoch_points - fit.gpr_points,
			s.step[pl.origin_row + 1 - fit.gpr_points], HB_FC_GPR_WINDOW);
	if ((fit.have_ses || fit.have_holt) && fit.smooth_points < h.n)
		hb_warn(&cli->log, "forecast: SES/Holt fit the last %zu of %zu history points (from step %.0f; window %d)",
			fit.smooth_points, h.n, s.step[h.n - fit.smooth_points], HB_FC_SMOOTH_WINDOW);
	for (size_t k = 0; pl.ntarget && k < a.nm; k++)
		if (hb_mape(s.batch + pl.first_target, pred + k * pl.nq, pl.ntarget, &mape[k], &err) < 0) {
			rc = hb_cli_fail(cli, &err);
			goto out;
		}
	if (a.json) {
		if (print_json(&s, &a, &pl, pred, mape, &fit, cli->seed, &err) < 0) {
			rc = hb_cli_fail(cli, &err);
			goto out;
		}
	} else {
		print_table(&s, &a, &pl, pred, mape, &fit);
	}
	rc = 0;
out:
	hb_pool_destroy(pool);
	free(pred);
	plan_free(&pl);
	series_free(&s);
	return rc;
}
