/*
 * synthetic.c: the seeded workload generator (synthetic.h).
 *
 * Order of draws, which fixes the output for a seed: for each job, first
 * its arrival (stream HB_STREAM_ARRIVALS), then its size (HB_STREAM_JOBMIX:
 * one uniform for an empirical row, or one uniform + one normal per
 * parametric draw, repeated while the Pollux filter rejects it), then its
 * model (HB_STREAM_JOBMIX: at most one uniform).  Pollux's window draws its
 * rows from HB_STREAM_ARRIVALS (the rows are the arrivals) and its models
 * from HB_STREAM_JOBMIX in arrival order.  The IBM workload draws its
 * category and batch from HB_STREAM_JOBMIX after the arrival (synthetic.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "rng.h"
#include "strutil.h"
#include "synthetic.h"
#include "trace_priv.h"

#define MAX_MIX 32
#define POLLUX_MIN_DURATION_S 60.0          /* workload.py: duration >= 60 s (pollux.md 5.2) */
#define POLLUX_MAX_GPU_TIME_S (1000.0 * 3600.0) /* workload.py: gpu_time < 1000 GPU-h */
#define MAX_REJECTIONS 100000

/* hb_synth_fit_file() on $HB_SHARED/data/pollux/philly.csv, all 82,247 rows
 * (tests/traces checks these against a fresh fit of the file). */
static const struct hb_synth_fit builtin_fit = {
	.ngpu = 10,
	.gpus = { 1, 2, 4, 8, 12, 16, 24, 32, 64, 128 },
	.prob = { 76627.0 / 82247, 1818.0 / 82247, 1870.0 / 82247, 1643.0 / 82247, 7.0 / 82247,
		  199.0 / 82247, 7.0 / 82247, 67.0 / 82247, 6.0 / 82247, 3.0 / 82247 },
	.mu = { 6.718735102520754, 6.8463729183166455, 9.653826682286342, 8.942946256588153 },
	.sigma = { 1.9717587979858529, 3.7999252666642795, 2.791477183440792, 3.2023417781612076 },
	.n = 82247,
};

const struct hb_synth_fit *hb_synth_builtin_fit(void)
{
	return &builtin_fit;
}

int hb_synth_gpu_class(int gpus)
{
	return gpus <= 1 ? 0 : gpus <= 4 ? 1 : gpus <= 8 ? 2 : 3;
}

void hb_synth_options_init(struct hb_synth_options *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->arrival = HB_SYNTH_POISSON;
	o->rate_per_hour = 20.0;
	o->load = 1.0;
	o->window_s = 8 * 3600.0;
	o->njobs = 0;
	o->burst_high_s = 3600.0;
	o->burst_low_s = 3600.0;
	o->burst_low_ratio = 0.25;
	o->pollux_filter = 1;
	o->window_start_h = 2.0;
	o->window_hours = 8.0;
	o->jobs_per_window = 160;
	hb_strlcpy(o->mix, "pollux", sizeof(o->mix));
	o->ibm_pattern = HB_SYNTH_IBM_BURSTY;
	o->ibm_categories = HB_SYNTH_IBM_ALL_CATEGORIES;
	o->ibm_batch = HB_SYNTH_IBM_RANDOM_BS;
	o->ibm_kmax = HB_SYNTH_IBM_KMAX_40;
}

/* ---- the IBM workload (synthetic.h) ------------------------------------------ */

/* Table I of the paper (dataset, model, batch range), the single-GPU lengths
 * of IV-G/IV-I, and the catalog model that stands for each (models.json,
 * family "ibm"; tests/traces checks the ranges, units and epochs against
 * it).  The epochs are the catalog's target_epochs, sized there so that
 * the model alone on one P100 at its per-GPU limit runs length_min. */
#define EPOCHS_CAT1 9.6077
#define EPOCHS_CAT2 7.2503
#define EPOCHS_CAT3 177.01
#define EPOCHS_CAT4 17.646
static const struct hb_synth_ibm_category ibm_table[HB_SYNTH_IBM_NCAT] = {
	{ 1, "resnet50-cifar100", 32, 256, 8, 16.0, EPOCHS_CAT1 },
	{ 2, "alexnet-cifar100", 16, 256, 8, 21.0, EPOCHS_CAT2 },
	{ 3, "vgg11bn-cifar100", 16, 1024, 8, 41.0, EPOCHS_CAT3 },
	{ 4, "alexnet-food101", 128, 128, 16, 27.0, EPOCHS_CAT4 },
};

const struct hb_synth_ibm_category *hb_synth_ibm_categories(void)
{
	return ibm_table;
}

double hb_synth_ibm_high_rate(const struct hb_synth_options *o)
{
	double sum = 0.0;
	int n = 0;

	for (int i = 0; i < HB_SYNTH_IBM_NCAT; i++)
		if (o->ibm_categories & (1u << i)) {
			sum += o->ibm_length_min > 0 ? o->ibm_length_min : ibm_table[i].length_min;
			n++;
		}
	/* lambda = 1 / E[L] per minute; high = k_max lambda (IV-A). */
	return n > 0 ? o->ibm_kmax * 60.0 * n / sum : 0.0;
}

/* ---- fit ----------------------------------------------------------------- */

struct rows {
	double *epoch, *duration, *gpu_time;
	int *gpus;
	long n, cap;
};

static void rows_free(struct rows *r)
{
	free(r->epoch);
	free(r->duration);
	free(r->gpu_time);
	free(r->gpus);
	memset(r, 0, sizeof(*r));
}

static int rows_push(struct rows *r, const struct hb_jobspec *j)
{
	if (r->n == r->cap) {
		long ncap = r->cap ? 2 * r->cap : 4096;
		double *e = realloc(r->epoch, (size_t)ncap * sizeof(double));

		if (!e)
			return -1;
		r->epoch = e;
		if (!(e = realloc(r->duration, (size_t)ncap * sizeof(double))))
			return -1;
		r->duration = e;
		if (!(e = realloc(r->gpu_time, (size_t)ncap * sizeof(double))))
			return -1;
		r->gpu_time = e;
		int *g = realloc(r->gpus, (size_t)ncap * sizeof(int));

		if (!g)
			return -1;
		r->gpus = g;
		r->cap = ncap;
	}
	r->epoch[r->n] = j->arrival_s;
	r->duration[r->n] = j->duration_s;
	r->gpu_time[r->n] = j->gpu_time_s;
	r->gpus[r->n] = j->gpus;
	r->n++;
	return 0;
}

static int pollux_keep(double duration_s, double gpu_time_s)
{
	return duration_s >= POLLUX_MIN_DURATION_S && gpu_time_s < POLLUX_MAX_GPU_TIME_S;
}

/* Every philly.csv row with GPUs, times in absolute Unix seconds. */
static int load_rows(const char *path, int pollux_filter, struct rows *out, struct hb_error *err)
{
	struct hb_trace_options o;
	struct hb_trace_reader *r;
	struct hb_jobspec j;
	int rc;

	memset(out, 0, sizeof(*out));
	hb_trace_options_init(&o);
	o.origin = HB_ORIGIN_FIXED;
	o.origin_s = 0.0;
	if (hb_trace_open(path, HB_TRACE_PHILLY_CSV, &o, &r, err) < 0)
		return -1;
	while ((rc = hb_trace_next(r, &j, err)) == 1) {
		if (pollux_filter && !pollux_keep(j.duration_s, j.gpu_time_s))
			continue;
		if (rows_push(out, &j) < 0) {
			rc = hb_runtime_error(err, "%s: out of memory", path);
			break;
		}
	}
	hb_trace_close(r);
	if (rc < 0) {
		rows_free(out);
		return -1;
	}
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int hb_synth_fit_file(const char *philly_csv, struct hb_synth_fit *out, struct hb_error *err)
{
	struct rows rw;
	double *logd[HB_SYNTH_DUR_CLASSES] = { 0 };
	long nd[HB_SYNTH_DUR_CLASSES] = { 0 }, ngpu = 0;
	int *sorted = NULL, rc = 0;

	memset(out, 0, sizeof(*out));
	if (load_rows(philly_csv, 0, &rw, err) < 0)
		return -1;
	sorted = malloc((size_t)(rw.n ? rw.n : 1) * sizeof(int));
	for (int c = 0; c < HB_SYNTH_DUR_CLASSES; c++)
		logd[c] = malloc((size_t)(rw.n ? rw.n : 1) * sizeof(double));
	if (!sorted || !logd[0] || !logd[1] || !logd[2] || !logd[3]) {
		rc = hb_runtime_error(err, "%s: out of memory", philly_csv);
		goto done;
	}
	for (long i = 0; i < rw.n; i++) {
		if (rw.gpus[i] <= 0)
			continue;
		sorted[ngpu++] = rw.gpus[i];
		if (rw.duration[i] > 0) {
			int c = hb_synth_gpu_class(rw.gpus[i]);

			logd[c][nd[c]++] = log(rw.duration[i]);
		}
	}
	if (ngpu == 0) {
		rc = hb_input_error(err, "%s: no row with GPUs to fit", philly_csv);
		goto done;
	}
	qsort(sorted, (size_t)ngpu, sizeof(int), cmp_int);
	for (long i = 0; i < ngpu;) {
		long j = i;

		while (j < ngpu && sorted[j] == sorted[i])
			j++;
		if (out->ngpu == HB_SYNTH_MAX_GPU_CHOICES) {
			rc = hb_input_error(err, "%s: more than %d distinct GPU counts", philly_csv,
					    HB_SYNTH_MAX_GPU_CHOICES);
			goto done;
		}
		out->gpus[out->ngpu] = sorted[i];
		out->prob[out->ngpu] = (double)(j - i) / (double)ngpu;
		out->ngpu++;
		i = j;
	}
	for (int c = 0; c < HB_SYNTH_DUR_CLASSES; c++) {
		if (nd[c] == 0) {
			/* No job of this size: borrow the nearest smaller class. */
			out->mu[c] = c ? out->mu[c - 1] : 0.0;
			out->sigma[c] = c ? out->sigma[c - 1] : 1.0;
			continue;
		}
		out->mu[c] = gsl_stats_mean(logd[c], 1, (size_t)nd[c]);
		out->sigma[c] = gsl_stats_sd_with_fixed_mean(logd[c], 1, (size_t)nd[c], out->mu[c]);
	}
	out->n = ngpu;
done:
	for (int c = 0; c < HB_SYNTH_DUR_CLASSES; c++)
		free(logd[c]);
	free(sorted);
	rows_free(&rw);
	return rc;
}

/* ---- the generator ------------------------------------------------------- */

enum { MIX_POLLUX, MIX_NONE, MIX_LIST };

struct synth {
	struct hb_synth_options opt;    /* a copy (arrivals stays borrowed) */
	struct hb_rng arr;              /* HB_STREAM_ARRIVALS */
	struct hb_rng mix;              /* HB_STREAM_JOBMIX */
	const struct hb_synth_fit *fit; /* parametric sizes */
	struct rows rows;               /* empirical sizes (philly_csv), else empty */
	int mix_kind;                   /* MIX_* */
	char mix_name[MAX_MIX][HB_JOB_MODEL_MAX];
	double mix_cum[MAX_MIX];        /* cumulative weights, normalised to 1 */
	int nmix;
	int ibm_cat[HB_SYNTH_IBM_NCAT]; /* IBM: indices into ibm_table of the chosen categories */
	int nibm;
	struct hb_jobspec *pre;         /* PHILLY_WINDOW: all jobs, sorted by arrival */
	long npre;
	double t;                       /* last arrival, s */
	long k;                         /* jobs returned */
	int done;
};

static int parse_mix(struct synth *s, struct hb_error *err)
{
	char buf[sizeof(s->opt.mix)], *items[MAX_MIX];
	int n;
	double total = 0.0;

	if (hb_strcaseeq(s->opt.mix, "pollux")) {
		s->mix_kind = MIX_POLLUX;
		return 0;
	}
	if (hb_strcaseeq(s->opt.mix, "none") || !s->opt.mix[0]) {
		s->mix_kind = MIX_NONE;
		return 0;
	}
	s->mix_kind = MIX_LIST;
	hb_strlcpy(buf, s->opt.mix, sizeof(buf));
	n = hb_split_list(buf, items, MAX_MIX);
	if (n <= 0)
		return hb_input_error(err, "synthetic option 'mix': '%s' has an empty item or more than %d items",
				      s->opt.mix, MAX_MIX);
	for (int i = 0; i < n; i++) {
		char *colon = strrchr(items[i], ':');
		double w = 1.0;

		if (colon) {
			*colon = '\0';
			if (hb_parse_double(colon + 1, &w) < 0 || !(w > 0.0))
				return hb_input_error(err, "synthetic option 'mix': item '%s': weight '%s' is not a "
						      "positive number", items[i], colon + 1);
		}
		if (hb_trace_copy(s->mix_name[i], sizeof(s->mix_name[i]), hb_trim(items[i]), 1, "synthetic option 'mix'",
				  "model", err) < 0)
			return -1;
		total += w;
		s->mix_cum[i] = total;
	}
	for (int i = 0; i < n; i++)
		s->mix_cum[i] /= total;
	s->mix_cum[n - 1] = 1.0;
	s->nmix = n;
	return 0;
}

static void assign_model(struct synth *s, struct hb_jobspec *j)
{
	double u;

	switch (s->mix_kind) {
	case MIX_POLLUX:
		hb_trace_assign_model(j, &s->mix);
		break;
	case MIX_LIST:
		u = hb_rng_uniform(&s->mix);
		for (int i = 0; i < s->nmix; i++) {
			if (u < s->mix_cum[i] || i == s->nmix - 1) {
				hb_strlcpy(j->model, s->mix_name[i], sizeof(j->model));
				break;
			}
		}
		break;
	default:
		j->model[0] = '\0';
		break;
	}
}

static void name_job(struct hb_jobspec *j, long k)
{
	snprintf(j->name, sizeof(j->name), "%.40s-%ld", j->model[0] ? j->model : "synth", k);
}

static int draw_size(struct synth *s, struct hb_jobspec *j, struct hb_error *err)
{
	for (int tries = 0; tries < MAX_REJECTIONS; tries++) {
		if (s->rows.n > 0) {
			long i = (long)hb_rng_below(&s->mix, (uint64_t)s->rows.n);

			j->gpus = s->rows.gpus[i];
			j->duration_s = s->rows.duration[i];
			j->gpu_time_s = s->rows.gpu_time[i];
		} else {
			const struct hb_synth_fit *f = s->fit;
			double u = hb_rng_uniform(&s->mix), acc = 0.0;
			int g = f->gpus[f->ngpu - 1], c;

			for (int i = 0; i < f->ngpu; i++) {
				acc += f->prob[i];
				if (u < acc) {
					g = f->gpus[i];
					break;
				}
			}
			c = hb_synth_gpu_class(g);
			j->gpus = g;
			j->duration_s = round(exp(f->mu[c] + f->sigma[c] * hb_rng_normal(&s->mix)));
			j->gpu_time_s = j->duration_s * g;
		}
		if (!s->opt.pollux_filter || pollux_keep(j->duration_s, j->gpu_time_s))
			return 0;
	}
	return hb_runtime_error(err, "synthetic: the Pollux filter rejected %d size draws in a row", MAX_REJECTIONS);
}

/* Next Poisson arrival after s->t with the bursty rate pattern (a constant
 * rate when not bursty): invert the integrated rate of a unit exponential. */
static double next_arrival(struct synth *s)
{
	double high = s->opt.rate_per_hour * s->opt.load / 3600.0;
	double e = hb_rng_exponential(&s->arr, 1.0), t = s->t;
	int bursty = s->opt.arrival == HB_SYNTH_BURSTY;

	if (s->opt.arrival == HB_SYNTH_IBM) {
		high = hb_synth_ibm_high_rate(&s->opt) * s->opt.load / 3600.0;
		if (s->opt.ibm_pattern == HB_SYNTH_IBM_LOW)
			high *= s->opt.burst_low_ratio;
		bursty = s->opt.ibm_pattern == HB_SYNTH_IBM_BURSTY;
	}
	if (!bursty)
		return t + e / high;
	for (;;) {
		double period = s->opt.burst_high_s + s->opt.burst_low_s;
		double phase = fmod(t, period), rate, left;

		if (phase < s->opt.burst_high_s) {
			rate = high;
			left = s->opt.burst_high_s - phase;
		} else {
			rate = high * s->opt.burst_low_ratio;
			left = period - phase;
		}
		if (rate > 0.0 && e <= rate * left)
			return t + e / rate;
		e -= rate * left;
		t += left;
	}
}

static void close_synth(void *state)
{
	struct synth *s = state;

	rows_free(&s->rows);
	free(s->pre);
	free(s);
}

static int cmp_pre(const void *a, const void *b)
{
	const struct hb_jobspec *x = a, *y = b;

	if (x->arrival_s != y->arrival_s)
		return x->arrival_s < y->arrival_s ? -1 : 1;
	return (x->record > y->record) - (x->record < y->record);
}

/* Pollux's construction: rows whose shifted time of day is in the window,
 * njobs of them without replacement, arrival = time into the window. */
static int build_window(struct synth *s, struct hb_error *err)
{
	double start = s->opt.window_start_h * 3600.0, len = s->opt.window_hours * 3600.0;
	long *elig = malloc((size_t)(s->rows.n ? s->rows.n : 1) * sizeof(long)), ne = 0, want;
	double *tod = malloc((size_t)(s->rows.n ? s->rows.n : 1) * sizeof(double));

	if (!elig || !tod) {
		free(elig);
		free(tod);
		return hb_runtime_error(err, "synthetic: out of memory");
	}
	for (long i = 0; i < s->rows.n; i++) {
		double d = fmod(s->rows.epoch[i] - start, 86400.0);

		if (d < 0)
			d += 86400.0;
		tod[i] = d;
		if (d < len)
			elig[ne++] = i;
	}
	want = lround(s->opt.jobs_per_window * s->opt.load);
	if (s->opt.njobs > 0 && want > s->opt.njobs)
		want = s->opt.njobs;
	if (want > ne) {
		free(elig);
		free(tod);
		return hb_input_error(err,
				      "%s: the window (hour %g, %g h) holds %ld jobs after the filters, fewer than the "
				      "%ld asked for (jobs_per_window x load)",
				      s->opt.philly_csv, s->opt.window_start_h, s->opt.window_hours, ne, want);
	}
	s->pre = calloc((size_t)(want ? want : 1), sizeof(*s->pre));
	if (!s->pre) {
		free(elig);
		free(tod);
		return hb_runtime_error(err, "synthetic: out of memory");
	}
	for (long k = 0; k < want; k++) {
		long pick = k + (long)hb_rng_below(&s->arr, (uint64_t)(ne - k)), i;
		struct hb_jobspec *j = &s->pre[k];

		i = elig[pick];
		elig[pick] = elig[k];
		elig[k] = i;
		j->arrival_s = tod[i];
		j->gpus = s->rows.gpus[i];
		j->duration_s = s->rows.duration[i];
		j->gpu_time_s = s->rows.gpu_time[i];
		j->wait_s = -1.0;
		j->record = k;
	}
	free(elig);
	free(tod);
	qsort(s->pre, (size_t)want, sizeof(*s->pre), cmp_pre);
	for (long k = 0; k < want; k++) {
		s->pre[k].record = k + 1;
		assign_model(s, &s->pre[k]);
		name_job(&s->pre[k], k);
	}
	s->npre = want;
	return 0;
}

/* An IBM job after its arrival: category, then batch setting (synthetic.h). */
static void ibm_job(struct synth *s, struct hb_jobspec *j)
{
	const struct hb_synth_ibm_category *c =
		&ibm_table[s->ibm_cat[s->nibm > 1 ? (int)hb_rng_below(&s->mix, (uint64_t)s->nibm) : 0]];
	long lo = (c->b_min + c->unit - 1) / c->unit, hi = c->b_max / c->unit;

	hb_strlcpy(j->model, c->model, sizeof(j->model));
	j->gpus = 1;
	if (s->opt.ibm_batch == HB_SYNTH_IBM_MAX_BS)
		j->batch = c->b_max;
	else if (s->opt.ibm_batch == HB_SYNTH_IBM_MIN_BS)
		j->batch = c->b_min;
	else
		j->batch = c->unit * (hi > lo ? lo + (long)hb_rng_below(&s->mix, (uint64_t)(hi - lo + 1)) : lo);
	j->duration_s = c->length_min * 60.0;
	if (s->opt.ibm_length_min > 0) {
		/* IV-A: the same single-GPU length for every category. */
		j->epochs = c->epochs * s->opt.ibm_length_min / c->length_min;
		j->duration_s = s->opt.ibm_length_min * 60.0;
	}
	j->gpu_time_s = j->duration_s;
	j->wait_s = -1.0;
}

static int next_synth(void *state, struct hb_jobspec *job, int *skip, struct hb_error *err)
{
	struct synth *s = state;

	*skip = HB_SKIP_NONE;
	if (s->done)
		return 0;
	if (s->opt.njobs > 0 && s->k >= s->opt.njobs && s->opt.arrival != HB_SYNTH_PHILLY_WINDOW) {
		s->done = 1;
		return 0;
	}
	if (s->opt.arrival == HB_SYNTH_PHILLY_WINDOW) {
		if (s->k >= s->npre) {
			s->done = 1;
			return 0;
		}
		*job = s->pre[s->k++];
		return 1;
	}
	if (s->opt.arrival == HB_SYNTH_TRACE) {
		struct hb_jobspec src;

		for (;;) {
			int rc = hb_trace_next(s->opt.arrivals, &src, err);

			if (rc <= 0) {
				s->done = 1;
				return rc;
			}
			if (s->opt.window_s <= 0 || src.arrival_s / s->opt.load < s->opt.window_s)
				break;
		}
		s->t = src.arrival_s / s->opt.load;
	} else {
		double t = next_arrival(s);

		if (s->opt.window_s > 0 && t >= s->opt.window_s) {
			s->done = 1;
			return 0;
		}
		s->t = t;
	}
	job->arrival_s = s->t;
	if (s->opt.arrival == HB_SYNTH_IBM) {
		ibm_job(s, job);
	} else {
		if (draw_size(s, job, err) < 0)
			return -1;
		assign_model(s, job);
	}
	job->record = ++s->k;
	name_job(job, s->k - 1);
	return 1;
}

static void where_synth(const void *state, char *buf, size_t size)
{
	snprintf(buf, size, "synthetic: job %ld", ((const struct synth *)state)->k);
}

static size_t buffer_synth(const void *state)
{
	(void)state;
	return 0;
}

static const struct hb_trace_ops synth_ops = {
	.open = NULL,
	.next = next_synth,
	.where = where_synth,
	.buffer = buffer_synth,
	.close = close_synth,
	.wallclock = 0,
};

static int check(const struct hb_synth_options *o, struct hb_error *err)
{
	if (o->arrival < HB_SYNTH_POISSON || o->arrival > HB_SYNTH_IBM)
		return hb_input_error(err, "synthetic option 'arrival': %d is not a known arrival pattern", o->arrival);
	if (!(o->load > 0.0) || !isfinite(o->load))
		return hb_input_error(err, "synthetic option 'load': %g must be a positive number", o->load);
	if (!(o->window_s >= 0.0) || !isfinite(o->window_s) || o->njobs < 0)
		return hb_input_error(err, "synthetic options 'window_s', 'njobs': must not be negative");
	if (o->arrival == HB_SYNTH_IBM) {
		if (o->rate_given || o->mix_given || o->philly_csv)
			return hb_input_error(err, "synthetic ibm: the paper's workload sets its own %s (rate = k_max / "
						   "E[L], the models of Table I); set kmax, categories, batch or pattern "
						   "instead", o->rate_given ? "rate" : o->mix_given ? "mix" : "sizes");
		if (!(o->ibm_kmax > 0.0) || !isfinite(o->ibm_kmax))
			return hb_input_error(err, "synthetic ibm: kmax %g must be a positive number", o->ibm_kmax);
		if (!(o->ibm_length_min >= 0.0) || !isfinite(o->ibm_length_min))
			return hb_input_error(err, "synthetic ibm: length %g must be 0 (the categories' own) or a "
						   "positive number of minutes", o->ibm_length_min);
		if ((o->ibm_categories & HB_SYNTH_IBM_ALL_CATEGORIES) == 0 || (o->ibm_categories & ~HB_SYNTH_IBM_ALL_CATEGORIES))
			return hb_input_error(err, "synthetic ibm: categories 0x%x: choose at least one of 1..%d",
					      o->ibm_categories, HB_SYNTH_IBM_NCAT);
		if (o->ibm_pattern < HB_SYNTH_IBM_HIGH || o->ibm_pattern > HB_SYNTH_IBM_BURSTY || o->ibm_batch < 0 ||
		    o->ibm_batch > HB_SYNTH_IBM_MIN_BS)
			return hb_input_error(err, "synthetic ibm: pattern %d or batch setting %d is not known", o->ibm_pattern,
					      o->ibm_batch);
		if (o->ibm_pattern == HB_SYNTH_IBM_LOW && !(o->burst_low_ratio > 0.0))
			return hb_input_error(err, "synthetic ibm: pattern low needs burst-ratio > 0 (the low rate is "
						   "k_max lambda x burst-ratio)");
	}
	if (o->arrival == HB_SYNTH_POISSON || o->arrival == HB_SYNTH_BURSTY || o->arrival == HB_SYNTH_IBM) {
		if (o->arrival != HB_SYNTH_IBM && (!(o->rate_per_hour > 0.0) || !isfinite(o->rate_per_hour)))
			return hb_input_error(err, "synthetic option 'rate_per_hour': %g must be a positive number",
					      o->rate_per_hour);
		if (o->window_s <= 0 && o->njobs <= 0)
			return hb_input_error(err, "synthetic: a Poisson stream needs 'window_s' or 'njobs' to end");
	}
	if ((o->arrival == HB_SYNTH_BURSTY || (o->arrival == HB_SYNTH_IBM && o->ibm_pattern == HB_SYNTH_IBM_BURSTY)) &&
	    (!(o->burst_high_s > 0.0) || !(o->burst_low_s > 0.0) || !(o->burst_low_ratio >= 0.0) ||
	     !(o->burst_low_ratio <= 1.0)))
		return hb_input_error(err, "synthetic: bursty periods must be positive and the low ratio in [0, 1]");
	if (o->arrival == HB_SYNTH_TRACE && !o->arrivals)
		return hb_input_error(err, "synthetic: trace-driven arrivals need a reader ('arrivals')");
	if (o->arrival == HB_SYNTH_PHILLY_WINDOW) {
		if (!o->philly_csv)
			return hb_input_error(err, "synthetic: Pollux's window construction needs 'philly_csv'");
		if (!(o->window_hours > 0.0) || o->window_hours > 24.0 || !isfinite(o->window_start_h) ||
		    o->jobs_per_window < 0)
			return hb_input_error(err, "synthetic: window needs 0 < hours <= 24 and jobs_per_window >= 0");
	}
	return 0;
}

double hb_synth_expected_jobs(const struct hb_synth_options *o)
{
	double rate, n;

	switch (o->arrival) {
	case HB_SYNTH_POISSON:
	case HB_SYNTH_BURSTY:
	case HB_SYNTH_IBM:
		rate = (o->arrival == HB_SYNTH_IBM ? hb_synth_ibm_high_rate(o) : o->rate_per_hour) * o->load;
		if (!(o->window_s > 0.0))
			return (double)o->njobs;
		n = rate * o->window_s / 3600.0;
		return o->njobs > 0 && (double)o->njobs < n ? (double)o->njobs : n;
	case HB_SYNTH_PHILLY_WINDOW:
		n = (double)o->jobs_per_window * o->load;
		return o->njobs > 0 && (double)o->njobs < n ? (double)o->njobs : n;
	default:
		return 0.0;
	}
}

int hb_synth_check_size(const struct hb_synth_options *o, struct hb_error *err)
{
	double n = hb_synth_expected_jobs(o);

	if (!(n <= (double)HB_SYNTH_MAX_JOBS)) {
		if (o->arrival == HB_SYNTH_PHILLY_WINDOW)
			return hb_input_error(err,
					      "synthetic: window-jobs %ld x load %g = %.0f jobs is more than the limit "
					      "of %ld jobs per trace",
					      o->jobs_per_window, o->load, n, HB_SYNTH_MAX_JOBS);
		if (!(o->window_s > 0.0) || (o->njobs > 0 && (double)o->njobs <= n))
			return hb_input_error(err, "synthetic: jobs %ld is more than the limit of %ld jobs per trace",
					      o->njobs, HB_SYNTH_MAX_JOBS);
		return hb_input_error(err,
				      "synthetic: rate %s%g jobs/h x load %g x %g hours = %.0f jobs is more than the "
				      "limit of %ld jobs per trace (lower the rate or hours, or cap with jobs=N)",
				      o->arrival == HB_SYNTH_IBM ? "k_max/E[L] " : "",
				      o->arrival == HB_SYNTH_IBM ? hb_synth_ibm_high_rate(o) : o->rate_per_hour, o->load,
				      o->window_s / 3600.0, n, HB_SYNTH_MAX_JOBS);
	}
	return 0;
}

int hb_synth_open(const struct hb_synth_options *opt, const struct hb_trace_options *topt,
		  struct hb_trace_reader **out, struct hb_error *err)
{
	struct synth *s;

	*out = NULL;
	if (check(opt, err) < 0 || hb_synth_check_size(opt, err) < 0)
		return -1;
	s = calloc(1, sizeof(*s));
	if (!s)
		return hb_runtime_error(err, "synthetic: out of memory");
	s->opt = *opt;
	s->fit = &builtin_fit;
	hb_rng_seed(&s->arr, opt->seed, HB_STREAM_ARRIVALS);
	hb_rng_seed(&s->mix, opt->seed, HB_STREAM_JOBMIX);
	for (int i = 0; i < HB_SYNTH_IBM_NCAT; i++)
		if (opt->ibm_categories & (1u << i))
			s->ibm_cat[s->nibm++] = i;
	if (parse_mix(s, err) < 0) {
		close_synth(s);
		return -1;
	}
	if (opt->philly_csv) {
		if (load_rows(opt->philly_csv, opt->pollux_filter, &s->rows, err) < 0) {
			close_synth(s);
			return -1;
		}
		if (s->rows.n == 0) {
			close_synth(s);
			return hb_input_error(err, "%s: no job left to sample after the filters", opt->philly_csv);
		}
	}
	if (opt->arrival == HB_SYNTH_PHILLY_WINDOW && build_window(s, err) < 0) {
		close_synth(s);
		return -1;
	}
	return hb_trace_reader_wrap(HB_TRACE_SYNTHETIC, &synth_ops, s, "synthetic", topt, out, err);
}
