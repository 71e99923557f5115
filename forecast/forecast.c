/*
 * forecast.c: the B_G forecaster interface (see forecast.h): checks the
 * history, fits each model a requested method needs once, and combines.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forecast.h"

static const char *const method_names[HB_FC_NMETHODS] = {
	[HB_FC_ENSEMBLE] = "ensemble",
	[HB_FC_GPR] = "gpr",
	[HB_FC_SES] = "ses",
	[HB_FC_HOLT] = "holt",
	[HB_FC_LAST] = "last",
};

void hb_fc_options_default(struct hb_fc_options *o, uint64_t seed)
{
	memset(o, 0, sizeof(*o));
	o->interval = 100.0;   /* JABAS p, notes §4.1 */
	o->gpr_x_scale = 1.0;  /* raw steps, as the artifact */
	o->gpr_weight = 0.5;   /* artifact EnsembleMethod rates [0.5, 0.5] */
	hb_gpr_config_default(&o->gpr, seed);
}

const char *hb_fc_method_name(enum hb_fc_method m)
{
	return (unsigned)m < HB_FC_NMETHODS ? method_names[m] : "?";
}

int hb_fc_method_parse(const char *s, enum hb_fc_method *out, struct hb_error *err)
{
	for (int m = 0; m < HB_FC_NMETHODS; m++)
		if (strcmp(s, method_names[m]) == 0) {
			*out = (enum hb_fc_method)m;
			return 0;
		}
	return hb_input_error(err, "unknown forecast method '%s' (expected ensemble, gpr, ses, holt or last)", s);
}

int hb_fc_series_add(double **step, double **batch, size_t *n, size_t *cap, size_t epoch_start, double at,
		     double bs, struct hb_error *err)
{
	if (*n > epoch_start && at <= (*step)[*n - 1]) {
		(*batch)[*n - 1] = bs;
		return 0;
	}
	if (*n > 0 && at <= (*step)[*n - 1])
		at = (*step)[*n - 1] + 1.0;
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		double *a = realloc(*step, c * sizeof(double));

		if (!a)
			return hb_runtime_error(err, "forecast: out of memory for %zu history points", c);
		*step = a;
		a = realloc(*batch, c * sizeof(double));
		if (!a)
			return hb_runtime_error(err, "forecast: out of memory for %zu history points", c);
		*batch = a;
		*cap = c;
	}
	(*step)[*n] = at;
	(*batch)[*n] = bs;
	(*n)++;
	return 0;
}

uint64_t hb_fc_epoch_seed(uint64_t seed, int job, long epoch)
{
	uint64_t z = seed ^ (0x9e3779b97f4a7c15ULL * ((uint64_t)job + 1)) ^
		     (0xbf58476d1ce4e5b9ULL * ((uint64_t)epoch + 1));

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

size_t hb_fc_query_steps(double sync_step, double interval, double epoch_steps, double *out, size_t cap)
{
	size_t count;

	if (!(interval > 0) || !(epoch_steps >= interval))
		return 0;
	count = (size_t)floor(epoch_steps / interval);
	for (size_t i = 1; i <= count && i <= cap; i++)
		out[i - 1] = sync_step + interval * (double)i;
	return count;
}

/* The GPR half of the ensemble trains on the just-finished epoch's points
 * only (§4.2).  Below this many points the periodic kernel has nothing to
 * fit (one point: a constant; two: a period chosen from a single gap), so
 * the trajectory's forecast falls back to SES on all history, which is what
 * the ensemble reduces to without its GPR half.  It also saves the fit in
 * the late, large-batch epochs that have only a couple of adaptation
 * points. */
#define TRAJ_GPR_MIN_POINTS 3

/* Random restarts of the GPR hyper-parameter fit: the artifact's 9
 * (scikit-learn n_restarts_optimizer, §4.2).  They draw from the caller's
 * seed, so they stay deterministic. */
#define TRAJ_GPR_RESTARTS 9

/* A history whose every batch is one value B (the forecasters' inputs valid
 * as hb_forecast_run checks them): every method the trajectory uses but Holt
 * forecasts exactly B there, so the fits can be skipped.  SES: the profile's
 * residuals are all exactly 0, so the initial level is y_1 + 0 and the level
 * stays y_1 whatever alpha (smoothing.c).  GPR: normalize_y gives mean B
 * (n B / n, exact for integers below 2^53) and scale 1, the targets are all
 * 0, so alpha = K^-1 0 = 0 and every prediction is B + 0.  The ensemble is
 * then w B + (1 - w) B, both products exact for w = 1/2.  The only
 * difference: a GPR fit with no positive definite start fails, and the skip
 * does not (no hyper-parameters are needed to predict 0 + B).  Most epochs
 * of a long job end with B_G pinned at a bound or held, and the fits (ten
 * BFGS starts, an SES search over the whole history) are most of an epoch
 * end's cost. */
static int flat_history(const struct hb_fc_history *h, enum hb_fc_method m, double *b)
{
	if (m == HB_FC_HOLT || h->n == 0 || !isfinite(h->batch[0]) || !(h->batch[0] > 0) ||
	    !(h->batch[0] < 9007199254740992.0) || h->batch[0] != floor(h->batch[0]) || h->epoch_start >= h->n)
		return 0;
	for (size_t i = 0; i < h->n; i++)
		if (h->batch[i] != h->batch[0] || !isfinite(h->step[i]) || (i > 0 && !(h->step[i] > h->step[i - 1])))
			return 0;
	*b = h->batch[0];
	return 1;
}

/* The ensemble's GPR half on a history whose GPR window (run_gpr: the
 * current epoch's last HB_FC_GPR_WINDOW points) holds one batch value B:
 * as in flat_history, normalize_y gives mean B (m B / m, exact while m B <
 * 2^53) and scale 1, the targets are +0, alpha = K^-1 0 = 0 and every
 * prediction is B + 0 = B, whatever hyper-parameters the fit would choose.
 * The ensemble is then w B + (1 - w) level, the same expression as
 * hb_forecast_run's on the same operands, so only the SES half needs a
 * fit.  The one difference, as for flat_history: a GPR fit with no
 * positive definite start fails, the skip does not.  Late epochs of long
 * jobs hold B_G at a bound while the history before them is not flat, and
 * their GPR fits (ten BFGS starts) were the largest single cost of a trace
 * replay. */
static int flat_gpr_window(const struct hb_fc_history *h, double *b)
{
	const size_t epoch_points = h->n - h->epoch_start;
	const size_t m = epoch_points < HB_FC_GPR_WINDOW ? epoch_points : HB_FC_GPR_WINDOW;
	const size_t first = h->n - m;
	const double v = h->batch[first];

	if (m == 0 || !isfinite(v) || !(v > 0) || v != floor(v) || !((double)m * v < 9007199254740992.0))
		return 0;
	for (size_t i = first; i < h->n; i++)
		if (h->batch[i] != v)
			return 0;
	*b = v;
	return 1;
}

static int traj_inputs(const struct hb_fc_history *h, enum hb_fc_method method, struct hb_fc_history *cur,
		       enum hb_fc_method *m);
static int prefit_matches(const struct hb_fc_prefit *p, const struct hb_fc_history *h, enum hb_fc_method method,
			  uint64_t seed);
static int forecast_run(const struct hb_fc_history *h, const struct hb_fc_options *o,
			const enum hb_fc_method *methods, size_t nm, const double *query, size_t nq, double *out,
			struct hb_fc_fit *fit_out, const struct hb_fc_prefit *pre, struct hb_error *err);

int hb_fc_trajectory(const struct hb_fc_history *h, const struct hb_fc_traj_spec *s, long **traj, size_t *ntraj,
		     struct hb_error *err)
{
	const double epoch_steps = floor(s->dataset / (double)s->cur_bs);
	size_t nq;
	double *query = NULL, *pred = NULL, flat;
	long *t = NULL;
	int beside_ran = 0; /* s->beside handed to hb_forecast, which runs it */

	*traj = NULL;
	*ntraj = 0;
	if (s->cur_bs < 1 || !(s->interval > 0) || !(s->dataset >= 0) || !isfinite(s->dataset)) {
		hb_input_error(err, "forecast: trajectory of B_G %ld, interval %g, dataset %g (B_G >= 1, "
			       "interval > 0 and a finite dataset >= 0 expected)", s->cur_bs, s->interval, s->dataset);
		goto fail;
	}
	nq = (size_t)(epoch_steps / s->interval);
	t = malloc((nq + 1) * sizeof(long));
	if (!t) {
		hb_runtime_error(err, "forecast: out of memory for %zu trajectory points", nq + 1);
		goto fail;
	}
	t[0] = s->cur_bs;
	if (nq > 0 && h->n > 0) {
		struct hb_fc_history cur = *h;
		struct hb_fc_options o;
		enum hb_fc_method m = s->method;
		const struct hb_fc_prefit *pre =
			prefit_matches(s->prefit, h, s->method, s->seed) ? s->prefit : NULL;

		query = malloc(nq * sizeof(double));
		pred = malloc(nq * sizeof(double));
		if (!query || !pred) {
			hb_runtime_error(err, "forecast: out of memory for %zu trajectory points", nq + 1);
			goto fail;
		}
		nq = hb_fc_query_steps(s->sync_step, s->interval, epoch_steps, query, nq);
		traj_inputs(h, s->method, &cur, &m);
		hb_fc_options_default(&o, s->seed);
		o.interval = s->interval;
		o.gpr.restarts = TRAJ_GPR_RESTARTS;
		o.gpr.pool = s->pool;
		o.beside = s->beside;
		o.beside_ctx = s->beside_ctx;
		if (nq > 0 && flat_history(&cur, m, &flat) && isfinite(query[0]) && isfinite(query[nq - 1])) {
			for (size_t i = 0; i < nq; i++)
				pred[i] = flat;
		} else if (m == HB_FC_ENSEMBLE && flat_gpr_window(&cur, &flat)) {
			/* hb_forecast validates the history and options as before */
			const enum hb_fc_method ses = HB_FC_SES;

			beside_ran = 1;
			if (forecast_run(&cur, &o, &ses, 1, query, nq, pred, NULL, pre, err) < 0)
				goto fail;
			for (size_t i = 0; i < nq; i++)
				pred[i] = o.gpr_weight * flat + (1.0 - o.gpr_weight) * pred[i];
		} else {
			beside_ran = 1;
			if (forecast_run(&cur, &o, &m, 1, query, nq, pred, NULL, pre, err) < 0)
				goto fail;
		}
		for (size_t i = 0; i < nq; i++) {
			double b = floor(pred[i] + 0.5);

			if (!isfinite(b))
				b = (double)s->cur_bs;
			b = fmin(fmax(b, (double)s->min_bs), (double)s->max_bs);
			t[1 + i] = (long)b;
		}
	} else {
		nq = 0;
	}
	if (s->beside && !beside_ran)
		s->beside(s->beside_ctx, 0, 0); /* no fits to run beside */
	free(query);
	free(pred);
	*traj = t;
	*ntraj = nq + 1;
	return 0;
fail:
	if (s->beside && !beside_ran)
		s->beside(s->beside_ctx, 0, 0);
	free(query);
	free(pred);
	free(t);
	return -1;
}

int hb_mape(const double *actual, const double *pred, size_t n, double *pct, struct hb_error *err)
{
	double s = 0.0;

	if (n == 0)
		return hb_input_error(err, "MAPE: no points to compare");
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(actual[i]) || actual[i] == 0.0 || !isfinite(pred[i]))
			return hb_input_error(err, "MAPE: point %zu has actual %g and prediction %g", i, actual[i],
					      pred[i]);
		s += fabs(pred[i] - actual[i]) / fabs(actual[i]);
	}
	*pct = 100.0 * s / (double)n;
	return 0;
}

static int check_inputs(const struct hb_fc_history *h, const struct hb_fc_options *o,
			const enum hb_fc_method *methods, size_t nm, const double *query, size_t nq,
			struct hb_error *err)
{
	if (h->n == 0)
		return hb_input_error(err, "forecast: empty history");
	if (h->epoch_start >= h->n)
		return hb_input_error(err, "forecast: current epoch starts at point %zu but the history has %zu",
				      h->epoch_start, h->n);
	for (size_t i = 0; i < h->n; i++) {
		if (!isfinite(h->step[i]) || (i > 0 && !(h->step[i] > h->step[i - 1])))
			return hb_input_error(err, "forecast: history step %g at point %zu is not after %g",
					      h->step[i], i, i > 0 ? h->step[i - 1] : -INFINITY);
		if (!isfinite(h->batch[i]) || !(h->batch[i] > 0))
			return hb_input_error(err, "forecast: history batch %g at step %g must be > 0",
					      h->batch[i], h->step[i]);
	}
	if (!(o->interval > 0) || !(o->gpr_x_scale > 0) || !(o->gpr_weight >= 0 && o->gpr_weight <= 1))
		return hb_input_error(err, "forecast: interval %g and gpr_x_scale %g must be > 0, gpr_weight %g in [0, 1]",
				      o->interval, o->gpr_x_scale, o->gpr_weight);
	for (size_t k = 0; k < nm; k++)
		if ((unsigned)methods[k] >= HB_FC_NMETHODS)
			return hb_input_error(err, "forecast: method %d out of range", (int)methods[k]);
	for (size_t j = 0; j < nq; j++)
		if (!isfinite(query[j]))
			return hb_input_error(err, "forecast: query step %zu is not finite", j);
	return 0;
}

/* SES on the history's last smooth_n points, as a task: beside the GPR's
 * starts (run_gpr), or alone. */
struct ses_task {
	const double *y;
	size_t n;
	struct hb_pool *pool;   /* for its grid when it runs alone (in a batch it runs serially) */
	struct hb_ses *out;
	int rc;
	struct hb_error err;
};

static void ses_task_run(void *ctx, int task, int worker)
{
	struct ses_task *t = ctx;

	(void)task;
	(void)worker;
	t->rc = hb_ses_fit_on(t->y, t->n, t->pool, t->out, &t->err);
}

/* The tasks that run beside the GPR's starts, in this order: the caller's
 * (hb_fc_options beside; first, as the longest), then SES's fit. */
struct side_tasks {
	hb_pool_fn *beside;
	void *beside_ctx;
	int beside_ran;         /* set by the task, read once the batch is over */
	struct ses_task *ses;   /* NULL: no SES fit */
};

static int side_count(const struct side_tasks *t)
{
	return (t->beside != NULL) + (t->ses != NULL);
}

static void side_task_run(void *ctx, int task, int worker)
{
	struct side_tasks *t = ctx;

	if (t->beside && task-- == 0) {
		t->beside(t->beside_ctx, 0, worker);
		t->beside_ran = 1;
		return;
	}
	ses_task_run(t->ses, 0, worker);
}

/* The caller's task, if it has not run yet: serially, on this thread. */
static void beside_finish(struct side_tasks *t)
{
	if (t->beside && !t->beside_ran) {
		t->beside(t->beside_ctx, 0, 0);
		t->beside_ran = 1;
	}
}

/* The GPR fitted on the current epoch's last HB_FC_GPR_WINDOW points into
 * *g (the caller frees it), side's tasks run as more tasks of the starts'
 * batch (NULL: none); *window and *epoch_points: the points it saw and
 * the current epoch's. */
static int gpr_fit_window(const struct hb_fc_history *h, const struct hb_fc_options *o, struct hb_gpr *g,
			  struct side_tasks *side, size_t *window, size_t *epoch_points, struct hb_error *err)
{
	const size_t ep = h->n - h->epoch_start;
	const size_t m = ep < HB_FC_GPR_WINDOW ? ep : HB_FC_GPR_WINDOW;
	const size_t first = h->n - m;
	double *x = malloc((m ? m : 1) * sizeof(double));
	const int nside = side ? side_count(side) : 0;

	*window = m;
	*epoch_points = ep;
	if (!x) {
		if (side)
			beside_finish(side);
		return hb_runtime_error(err, "forecast: out of memory for %zu points", m);
	}
	for (size_t i = 0; i < m; i++)
		x[i] = h->step[first + i] / o->gpr_x_scale;
	if (hb_gpr_fit_beside(g, x, h->batch + first, m, &o->gpr, nside ? side_task_run : NULL, nside, side, err) <
	    0) {
		free(x);
		hb_error_prefix(err, "forecast: GPR on the current epoch's %zu points", m);
		return -1;
	}
	free(x);
	return 0;
}

/* GPR on the current epoch's last HB_FC_GPR_WINDOW points, predicting at
 * every query; side's tasks (the caller's work, SES's fit: all are needed,
 * none reads another) run as more tasks of the GPR starts' batch, SES's
 * outcome left in *side->ses.  pre: the fit made ahead (hb_fc_prefit_run,
 * on this history), predicted from instead of fitting; side's tasks are
 * then left to the caller. */
static int run_gpr(const struct hb_fc_history *h, const struct hb_fc_options *o, const double *query,
		   size_t nq, double *pred, struct hb_fc_fit *fit, struct side_tasks *side,
		   const struct hb_fc_prefit *pre, struct hb_error *err)
{
	struct hb_gpr own;
	const struct hb_gpr *g = &own;
	double *xq = malloc((nq ? nq : 1) * sizeof(double));
	size_t m, epoch_points;

	if (!xq)
		return hb_runtime_error(err, "forecast: out of memory for %zu points", nq);
	if (pre) {
		if (pre->gpr_rc < 0) {
			free(xq);
			*err = pre->gpr_err;
			return -1;
		}
		g = &pre->gpr;
		m = pre->gpr_points;
		epoch_points = pre->gpr_epoch_points;
	} else if (gpr_fit_window(h, o, &own, side, &m, &epoch_points, err) < 0) {
		free(xq);
		return -1;
	}
	for (size_t j = 0; j < nq; j++)
		xq[j] = query[j] / o->gpr_x_scale;
	hb_gpr_predict(g, xq, nq, pred);
	fit->have_gpr = 1;
	fit->gpr_hyper = g->hyper;
	fit->gpr_lml = g->lml;
	fit->gpr_points = m;
	fit->gpr_epoch_points = epoch_points;
	if (!pre)
		hb_gpr_free(&own);
	free(xq);
	return 0;
}

/* hb_forecast_run, with the GPR and SES fits taken from pre when it holds
 * every one the methods need (NULL: fitted here). */
static int forecast_run(const struct hb_fc_history *h, const struct hb_fc_options *o,
			const enum hb_fc_method *methods, size_t nm, const double *query, size_t nq, double *out,
			struct hb_fc_fit *fit_out, const struct hb_fc_prefit *pre, struct hb_error *err)
{
	struct hb_fc_fit fit;
	struct ses_task ses;
	struct side_tasks side = { .beside = o->beside, .beside_ctx = o->beside_ctx };
	int need[HB_FC_NMETHODS] = { 0 };
	double *gpr = NULL;
	const double last = h->n ? h->batch[h->n - 1] : 0.0;
	const size_t smooth_n = h->n < HB_FC_SMOOTH_WINDOW ? h->n : HB_FC_SMOOTH_WINDOW;
	int rc = -1;

	memset(&fit, 0, sizeof(fit));
	if (check_inputs(h, o, methods, nm, query, nq, err) < 0) {
		beside_finish(&side);
		return -1;
	}
	ses = (struct ses_task){ .y = h->batch + (h->n - smooth_n), .n = smooth_n, .pool = o->gpr.pool,
				 .out = &fit.ses };
	for (size_t k = 0; k < nm; k++)
		need[methods[k]] = 1;
	if (need[HB_FC_ENSEMBLE])
		need[HB_FC_GPR] = need[HB_FC_SES] = 1;
	if (pre && ((need[HB_FC_GPR] && !pre->gpr_fitted) || (need[HB_FC_SES] && !pre->ses_fitted)))
		pre = NULL;
	if (need[HB_FC_GPR]) {
		gpr = malloc((nq ? nq : 1) * sizeof(double));
		if (!gpr) {
			hb_runtime_error(err, "forecast: out of memory for %zu queries", nq);
			goto out;
		}
		side.ses = need[HB_FC_SES] && !pre ? &ses : NULL;
		/* the GPR's error first, as when SES ran after it */
		if (run_gpr(h, o, query, nq, gpr, &fit, &side, pre, err) < 0)
			goto out;
	}
	beside_finish(&side); /* no GPR batch to run in */
	if (need[HB_FC_SES]) {
		if (pre) {
			fit.ses = pre->ses;
			ses.rc = pre->ses_rc;
			ses.err = pre->ses_err;
		} else if (!need[HB_FC_GPR]) {
			ses_task_run(&ses, 0, 0);
		}
		if (ses.rc < 0) {
			*err = ses.err;
			goto out;
		}
		fit.have_ses = 1;
	}
	/* Holt needs two points for a trend; with one it is the flat last value */
	if (need[HB_FC_HOLT] && h->n >= 2) {
		if (hb_holt_fit(h->batch + (h->n - smooth_n), smooth_n, &fit.holt, err) < 0)
			goto out;
		fit.have_holt = 1;
	}
	for (size_t k = 0; k < nm; k++) {
		double *row = out + k * nq;

		for (size_t j = 0; j < nq; j++) {
			switch (methods[k]) {
			case HB_FC_ENSEMBLE:
				row[j] = o->gpr_weight * gpr[j] + (1.0 - o->gpr_weight) * hb_ses_forecast(&fit.ses);
				break;
			case HB_FC_GPR:
				row[j] = gpr[j];
				break;
			case HB_FC_SES:
				row[j] = hb_ses_forecast(&fit.ses);
				break;
			case HB_FC_HOLT:
				if (fit.have_holt) {
					double hz = floor((query[j] - h->step[h->n - 1]) / o->interval + 0.5);

					row[j] = hb_holt_forecast(&fit.holt, hz < 1.0 ? 1.0 : hz);
				} else {
					row[j] = last;
				}
				break;
			case HB_FC_LAST:
			case HB_FC_NMETHODS:
				row[j] = last;
				break;
			}
		}
	}
	fit.smooth_points = smooth_n;
	if (fit_out)
		*fit_out = fit;
	rc = 0;
out:
	beside_finish(&side);
	free(gpr);
	return rc;
}

int hb_forecast_run(const struct hb_fc_history *h, const struct hb_fc_options *o,
		    const enum hb_fc_method *methods, size_t nm, const double *query, size_t nq,
		    double *out, struct hb_fc_fit *fit_out, struct hb_error *err)
{
	return forecast_run(h, o, methods, nm, query, nq, out, fit_out, NULL, err);
}

int hb_forecast(enum hb_fc_method m, const struct hb_fc_history *h, const struct hb_fc_options *o,
		const double *query, size_t nq, double *out, struct hb_error *err)
{
	return hb_forecast_run(h, o, &m, 1, query, nq, out, NULL, err);
}

/* ---- fits made ahead (hb_fc_prefit) --------------------------------------- */

void hb_fc_prefit_init(struct hb_fc_prefit *p)
{
	memset(p, 0, sizeof(*p));
}

/* Forget the fits (the history copy's buffers are kept for the next). */
static void prefit_clear(struct hb_fc_prefit *p)
{
	if (p->gpr_fitted && p->gpr_rc == 0)
		hb_gpr_free(&p->gpr);
	p->gpr_fitted = p->ses_fitted = 0;
	p->gpr_rc = p->ses_rc = 0;
}

void hb_fc_prefit_free(struct hb_fc_prefit *p)
{
	prefit_clear(p);
	free(p->step);
	free(p->batch);
	hb_fc_prefit_init(p);
}

int hb_fc_prefit_set(struct hb_fc_prefit *p, const struct hb_fc_history *h, enum hb_fc_method method,
		     uint64_t seed, struct hb_pool *pool, struct hb_error *err)
{
	prefit_clear(p);
	p->n = 0;
	if (h->n > p->cap) {
		size_t cap = p->cap ? p->cap : 64;
		double *a, *b;

		while (cap < h->n)
			cap *= 2;
		a = realloc(p->step, cap * sizeof(double));
		if (a)
			p->step = a;
		b = a ? realloc(p->batch, cap * sizeof(double)) : NULL;
		if (!a || !b)
			return hb_runtime_error(err, "forecast: out of memory for a copy of %zu history points", h->n);
		p->batch = b;
		p->cap = cap;
	}
	if (h->n) {
		memcpy(p->step, h->step, h->n * sizeof(double));
		memcpy(p->batch, h->batch, h->n * sizeof(double));
	}
	p->n = h->n;
	p->epoch_start = h->epoch_start;
	p->method = method;
	p->seed = seed;
	p->pool = pool;
	return 0;
}

/* The history, the clamp of epoch_start and the method as hb_fc_trajectory
 * makes them; 0 when there is nothing to fit ahead. */
static int traj_inputs(const struct hb_fc_history *h, enum hb_fc_method method, struct hb_fc_history *cur,
		       enum hb_fc_method *m)
{
	if (h->n == 0)
		return 0;
	*cur = *h;
	if (cur->epoch_start >= cur->n)
		cur->epoch_start = cur->n - 1;
	*m = method;
	if (*m == HB_FC_ENSEMBLE && cur->n - cur->epoch_start < TRAJ_GPR_MIN_POINTS)
		*m = HB_FC_SES;
	return 1;
}

/* The fits hb_fc_trajectory makes on h with method: *gpr and *ses set, or
 * 0 when it makes none (a flat history; a history hb_forecast_run refuses,
 * whose trajectory reports why; Holt and "last"). */
static int fits_needed(const struct hb_fc_history *h, enum hb_fc_method method, int *gpr, int *ses)
{
	struct hb_fc_history cur;
	enum hb_fc_method m;
	double flat;

	*gpr = *ses = 0;
	if (!traj_inputs(h, method, &cur, &m))
		return 0;
	for (size_t i = 0; i < cur.n; i++)
		if (!isfinite(cur.step[i]) || (i > 0 && !(cur.step[i] > cur.step[i - 1])) || !isfinite(cur.batch[i]) ||
		    !(cur.batch[i] > 0))
			return 0;
	if (flat_history(&cur, m, &flat))
		return 0;
	if (m == HB_FC_ENSEMBLE && flat_gpr_window(&cur, &flat)) {
		*ses = 1;
	} else {
		*gpr = m == HB_FC_ENSEMBLE || m == HB_FC_GPR;
		*ses = m == HB_FC_ENSEMBLE || m == HB_FC_SES;
	}
	return *gpr || *ses;
}

int hb_fc_prefit_wanted(const struct hb_fc_history *h, enum hb_fc_method method)
{
	int gpr, ses;

	return fits_needed(h, method, &gpr, &ses);
}

void hb_fc_prefit_run(struct hb_fc_prefit *p)
{
	const struct hb_fc_history h = { .step = p->step, .batch = p->batch, .n = p->n,
					 .epoch_start = p->epoch_start };
	struct hb_fc_history cur;
	struct hb_fc_options o;
	enum hb_fc_method m;
	int gpr, ses;

	prefit_clear(p);
	if (!fits_needed(&h, p->method, &gpr, &ses))
		return;
	traj_inputs(&h, p->method, &cur, &m);
	hb_fc_options_default(&o, p->seed);
	o.gpr.restarts = TRAJ_GPR_RESTARTS; /* as hb_fc_trajectory */
	o.gpr.pool = p->pool;                /* the same bits on any pool */
	{
		const size_t smooth_n = cur.n < HB_FC_SMOOTH_WINDOW ? cur.n : HB_FC_SMOOTH_WINDOW;
		struct ses_task st = { .y = cur.batch + (cur.n - smooth_n), .n = smooth_n, .pool = p->pool,
				       .out = &p->ses };
		struct side_tasks side = { .ses = ses ? &st : NULL };

		if (gpr) {
			/* SES beside the GPR's starts, as hb_forecast_run */
			p->gpr_rc = gpr_fit_window(&cur, &o, &p->gpr, &side, &p->gpr_points, &p->gpr_epoch_points,
						   &p->gpr_err);
			p->gpr_fitted = 1;
		} else {
			ses_task_run(&st, 0, 0);
		}
		if (ses) {
			p->ses_rc = st.rc;
			p->ses_err = st.err;
			p->ses_fitted = 1;
		}
	}
}

/* 1 when p was made from exactly this history, method and seed. */
static int prefit_matches(const struct hb_fc_prefit *p, const struct hb_fc_history *h, enum hb_fc_method method,
			  uint64_t seed)
{
	return p && p->n == h->n && p->epoch_start == h->epoch_start && p->method == method && p->seed == seed &&
	       (p->gpr_fitted || p->ses_fitted) && memcmp(p->step, h->step, h->n * sizeof(double)) == 0 &&
	       memcmp(p->batch, h->batch, h->n * sizeof(double)) == 0;
}
