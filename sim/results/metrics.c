/*
 * metrics.c: cluster metrics of a finished simulation (metrics.h gives the
 * definitions).
 *
 * Sections follow the data: distributions, the GPUs each job held over time
 * (rebuilt from the records), utilisation bins, the number of active jobs
 * and finish-time fairness, and the per-policy and per-model summaries.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "capacity.h"   /* struct hb_capacity: the counters of a --capacity series */
#include "interrupt.h"  /* hb_interrupted: a signal stops the reference runs */
#include "metrics.h"
#include "policy.h"     /* hb_arbiter_fifo: the reference runs of rho */
#include "progress.h"
#include "strutil.h"

/* ---- distributions ------------------------------------------------------------- */

int hb_metrics_dist(const double *x, size_t n, struct hb_dist *d, struct hb_error *err)
{
	double *v = malloc(sizeof(double) * (n > 0 ? n : 1));
	size_t k = 0;

	d->n = 0;
	d->mean = d->median = d->p99 = d->max = NAN;
	if (!v)
		return hb_runtime_error(err, "metrics: out of memory");
	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			v[k++] = x[i];
	if (k > 0) {
		gsl_sort(v, 1, k);
		d->n = k;
		d->mean = gsl_stats_mean(v, 1, k);
		d->median = gsl_stats_median_from_sorted_data(v, 1, k);
		d->p99 = gsl_stats_quantile_from_sorted_data(v, 1, k, 0.99);
		d->max = v[k - 1];
	}
	free(v);
	return 0;
}

/* ---- GPUs held over time ----------------------------------------------------------- */

enum { K_OTHER = 0, K_APPLY, K_STOP };

/* What an event says about the GPUs its job holds afterwards. */
static int event_class(const char *kind)
{
	if (strcmp(kind, "start") == 0 || strcmp(kind, "restart") == 0 || strcmp(kind, "reconfig") == 0 ||
	    strcmp(kind, "move") == 0)
		return K_APPLY;
	if (strcmp(kind, "preempt") == 0 || strcmp(kind, "done") == 0)
		return K_STOP;
	return K_OTHER;
}

/* Indices of records grouped by job, keeping record order (counting sort):
 * the records of job j are idx[first[j] .. first[j + 1]). */
struct by_job {
	size_t *idx;
	size_t *first;     /* njobs + 1 entries */
};

static int group(int njobs, size_t n, const void *recs, size_t size, size_t job_off, int (*keep)(const void *),
		 struct by_job *g)
{
	size_t *fill;

	g->idx = malloc(sizeof(size_t) * (n > 0 ? n : 1));
	g->first = calloc((size_t)njobs + 1, sizeof(size_t));
	fill = calloc((size_t)njobs + 1, sizeof(size_t));
	if (!g->idx || !g->first || !fill) {
		free(fill);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const char *r = (const char *)recs + i * size;
		int job;

		memcpy(&job, r + job_off, sizeof(int));
		if (job >= 0 && job < njobs && (!keep || keep(r)))
			g->first[job + 1]++;
	}
	for (int j = 0; j < njobs; j++)
		g->first[j + 1] += g->first[j];
	for (size_t i = 0; i < n; i++) {
		const char *r = (const char *)recs + i * size;
		int job;

		memcpy(&job, r + job_off, sizeof(int));
		if (job >= 0 && job < njobs && (!keep || keep(r)))
			g->idx[g->first[job] + fill[job]++] = i;
	}
	free(fill);
	return 0;
}

static void group_free(struct by_job *g)
{
	free(g->idx);
	free(g->first);
}

static int keep_event(const void *r)
{
	return event_class(((const struct hb_sim_event_rec *)r)->kind) != K_OTHER;
}

static int push_interval(struct hb_gpu_interval **iv, size_t *n, size_t *cap, int job, double t0, double t1,
			 int gpus, const unsigned short *types)
{
	if (!(t1 > t0) || gpus <= 0)
		return 0;
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct hb_gpu_interval *ni = realloc(*iv, ncap * sizeof(**iv));

		if (!ni)
			return -1;
		*iv = ni;
		*cap = ncap;
	}
	(*iv)[*n] = (struct hb_gpu_interval){ .t0_s = t0, .t1_s = t1, .job = job, .gpus = gpus };
	memcpy((*iv)[*n].type_gpus, types, sizeof((*iv)[*n].type_gpus));
	(*n)++;
	return 0;
}

/* Stretches of one job from its samples s[] and relevant events e[]
 * (both in record order, hence in time order). */
static int job_intervals(const struct hb_sim *sim, int j, const size_t *s, size_t ns, const size_t *e, size_t ne,
			 struct hb_gpu_interval **iv, size_t *n, size_t *cap)
{
	const struct hb_sim_job *job = &sim->jobs[j];
	size_t a = 0, b = 0;
	int cur = 0;
	unsigned short cur_types[HB_SIM_TYPE_SLOTS] = { 0 };
	double since = 0.0, end;

	while (a < ns || b < ne) {
		double ta = a < ns ? sim->samples[s[a]].t : INFINITY;
		double tb = b < ne ? sim->events[e[b]].t : INFINITY;
		double t = ta < tb ? ta : tb;
		int v = cur, last_class = K_OTHER;
		const struct hb_sim_sample *sample = NULL;

		for (; a < ns && sim->samples[s[a]].t == t; a++)
			sample = &sim->samples[s[a]];
		for (; b < ne && sim->events[e[b]].t == t; b++)
			last_class = event_class(sim->events[e[b]].kind);
		if (last_class == K_STOP)
			v = 0;
		else if (sample)
			v = sample->ngpus;
		/* a change of types at the same count is a new stretch too */
		if (v != cur || (v > 0 && sample && memcmp(sample->type_gpus, cur_types, sizeof(cur_types)) != 0)) {
			if (push_interval(iv, n, cap, j, since, t, cur, cur_types) < 0)
				return -1;
			cur = v;
			if (v > 0 && sample)
				memcpy(cur_types, sample->type_gpus, sizeof(cur_types));
			else
				memset(cur_types, 0, sizeof(cur_types));
			since = t;
		}
	}
	end = job->state == HB_JOB_DONE ? job->finish_s : job->t_last;
	if (cur > 0 && end > since)
		return push_interval(iv, n, cap, j, since, end, cur, cur_types);
	return 0;
}

int hb_metrics_gpu_intervals(const struct hb_sim *sim, struct hb_gpu_interval **iv, size_t *n,
			     struct hb_error *err)
{
	struct by_job gs = { 0 }, ge = { 0 };
	size_t cap = 0;
	int rc = 0;

	*iv = NULL;
	*n = 0;
	if (sim->njobs == 0)
		return 0;
	if (group(sim->njobs, sim->nsamples, sim->samples, sizeof(*sim->samples),
		  offsetof(struct hb_sim_sample, job), NULL, &gs) < 0 ||
	    group(sim->njobs, sim->nevents, sim->events, sizeof(*sim->events), offsetof(struct hb_sim_event_rec, job),
		  keep_event, &ge) < 0) {
		rc = -1;
	}
	for (int j = 0; rc == 0 && j < sim->njobs; j++)
		rc = job_intervals(sim, j, gs.idx + gs.first[j], gs.first[j + 1] - gs.first[j], ge.idx + ge.first[j],
				   ge.first[j + 1] - ge.first[j], iv, n, &cap);
	group_free(&gs);
	group_free(&ge);
	if (rc < 0) {
		free(*iv);
		*iv = NULL;
		*n = 0;
		return hb_runtime_error(err, "metrics: out of memory");
	}
	return 0;
}

/* ---- GPUs held over time, streamed --------------------------------------------------- */

/* One job's state: the GPUs it holds since `since`, and what the records at
 * instant t said so far (job_intervals decides an instant once all its
 * records are in; here it is decided when the job's next instant begins). */
struct hb_gpu_acc_job {
	double since;        /* start of the current stretch */
	double t;            /* the instant being collected (valid when open) */
	int cur;             /* GPUs held since `since` */
	int sample_gpus;     /* the instant's last sample */
	unsigned short cur_types[HB_SIM_TYPE_SLOTS];    /* cur by GPU type slot */
	unsigned short sample_types[HB_SIM_TYPE_SLOTS]; /* sample_gpus by GPU type slot */
	unsigned char open;  /* records of instant t are being collected */
	unsigned char have_sample;
	unsigned char last_class; /* K_OTHER, or the class of the instant's last start/.../done event */
};

int hb_gpu_acc_init(struct hb_gpu_acc *a, int njobs, struct hb_error *err)
{
	memset(a, 0, sizeof(*a));
	a->job = calloc((size_t)(njobs > 0 ? njobs : 1), sizeof(*a->job));
	if (!a->job)
		return hb_runtime_error(err, "metrics: out of memory for %d jobs", njobs);
	a->njobs = njobs;
	return 0;
}

void hb_gpu_acc_free(struct hb_gpu_acc *a)
{
	free(a->job);
	free(a->iv);
	memset(a, 0, sizeof(*a));
}

/* Decide j's open instant, as one step of job_intervals' loop. */
static int acc_close(struct hb_gpu_acc *a, int j)
{
	struct hb_gpu_acc_job *x = &a->job[j];
	int v = x->cur;

	if (!x->open)
		return 0;
	x->open = 0;
	if (x->last_class == K_STOP)
		v = 0;
	else if (x->have_sample)
		v = x->sample_gpus;
	if (v == x->cur &&
	    !(v > 0 && x->have_sample && memcmp(x->sample_types, x->cur_types, sizeof(x->cur_types)) != 0))
		return 0;
	if (push_interval(&a->iv, &a->n, &a->cap, j, x->since, x->t, x->cur, x->cur_types) < 0)
		return -1;
	x->cur = v;
	if (v > 0 && x->have_sample)
		memcpy(x->cur_types, x->sample_types, sizeof(x->cur_types));
	else
		memset(x->cur_types, 0, sizeof(x->cur_types));
	x->since = x->t;
	return 0;
}

/* The instant of job j at time t, opened (closing the previous one). */
static struct hb_gpu_acc_job *acc_at(struct hb_gpu_acc *a, int j, double t, struct hb_error *err)
{
	struct hb_gpu_acc_job *x;

	if (j < 0 || j >= a->njobs)
		return NULL; /* cluster-wide records hold no GPUs */
	x = &a->job[j];
	if (x->open && x->t != t && acc_close(a, j) < 0) {
		hb_runtime_error(err, "metrics: out of memory");
		return NULL;
	}
	if (!x->open) {
		x->open = 1;
		x->t = t;
		x->have_sample = 0;
		x->last_class = K_OTHER;
	}
	return x;
}

int hb_gpu_acc_event(struct hb_gpu_acc *a, const struct hb_sim_event_rec *e, struct hb_error *err)
{
	int c = event_class(e->kind);
	struct hb_gpu_acc_job *x;

	if (c == K_OTHER)
		return 0; /* job_intervals never sees these (keep_event) */
	x = acc_at(a, e->job, e->t, err);
	if (!x)
		return err->code != HB_OK ? -1 : 0;
	x->last_class = (unsigned char)c;
	return 0;
}

int hb_gpu_acc_sample(struct hb_gpu_acc *a, const struct hb_sim_sample *s, struct hb_error *err)
{
	struct hb_gpu_acc_job *x = acc_at(a, s->job, s->t, err);

	if (!x)
		return err->code != HB_OK ? -1 : 0;
	x->have_sample = 1;
	x->sample_gpus = s->ngpus;
	memcpy(x->sample_types, s->type_gpus, sizeof(x->sample_types));
	return 0;
}

int hb_gpu_acc_finish(struct hb_gpu_acc *a, const struct hb_sim *sim, struct hb_gpu_interval **iv, size_t *n,
		      struct hb_error *err)
{
	struct hb_gpu_interval *out = NULL;
	size_t *first = NULL;

	*iv = NULL;
	*n = 0;
	for (int j = 0; j < a->njobs && j < sim->njobs; j++) {
		const struct hb_sim_job *job = &sim->jobs[j];
		struct hb_gpu_acc_job *x = &a->job[j];
		double end = job->state == HB_JOB_DONE ? job->finish_s : job->t_last;

		if (acc_close(a, j) < 0 ||
		    (x->cur > 0 && end > x->since && push_interval(&a->iv, &a->n, &a->cap, j, x->since, end, x->cur, x->cur_types) < 0))
			goto oom;
		x->cur = 0;
	}
	/* Job by job, each job's stretches in time order (a stable counting
	 * sort), as hb_metrics_gpu_intervals lists them. */
	if (a->n > 0) {
		out = malloc(sizeof(*out) * a->n);
		first = calloc((size_t)a->njobs + 1, sizeof(*first));
		if (!out || !first)
			goto oom;
		for (size_t i = 0; i < a->n; i++)
			first[a->iv[i].job + 1]++;
		for (int j = 0; j < a->njobs; j++)
			first[j + 1] += first[j];
		for (size_t i = 0; i < a->n; i++)
			out[first[a->iv[i].job]++] = a->iv[i];
		free(first);
	}
	*iv = out;
	*n = a->n;
	free(a->iv);
	a->iv = NULL;
	a->n = a->cap = 0;
	return 0;
oom:
	free(out);
	free(first);
	return hb_runtime_error(err, "metrics: out of memory");
}

/* ---- utilisation ------------------------------------------------------------------- */

void hb_util_series_free(struct hb_util_series *u)
{
	free(u->t_s);
	free(u->util);
	free(u->held);
	memset(u, 0, sizeof(*u));
}

int hb_metrics_util_from_intervals(const struct hb_gpu_interval *iv, size_t n, int cluster_gpus, double t0,
				   double t1, int npoints, struct hb_util_series *u, struct hb_error *err)
{
	double w, *gs;

	memset(u, 0, sizeof(*u));
	u->t0_s = t0;
	u->t1_s = t1;
	u->cluster_gpus = cluster_gpus;
	u->mean = NAN;
	if (cluster_gpus < 1)
		return hb_input_error(err, "metrics: a cluster of %d GPUs has no utilisation", cluster_gpus);
	if (!(t1 > t0) || npoints < 1)
		return 0;
	w = (t1 - t0) / npoints;
	u->t_s = malloc(sizeof(double) * (size_t)npoints);
	u->util = calloc((size_t)npoints, sizeof(double));
	u->held = calloc((size_t)npoints * HB_SIM_TYPE_SLOTS, sizeof(double));
	gs = u->util; /* GPU-seconds per bin first, divided below */
	if (!u->t_s || !u->util || !u->held) {
		hb_util_series_free(u);
		return hb_runtime_error(err, "metrics: out of memory");
	}
	u->npoints = npoints;
	for (int k = 0; k < npoints; k++)
		u->t_s[k] = t0 + k * w;
	for (size_t i = 0; i < n; i++) {
		double a = fmax(iv[i].t0_s, t0), b = fmin(iv[i].t1_s, t1);
		int k0, k1;

		if (!(b > a))
			continue;
		u->gpu_s += (b - a) * iv[i].gpus;
		k0 = (int)floor((a - t0) / w);
		k1 = (int)floor((b - t0) / w);
		if (k0 < 0)
			k0 = 0;
		if (k1 > npoints - 1)
			k1 = npoints - 1;
		for (int k = k0; k <= k1; k++) {
			double lo = fmax(a, u->t_s[k]), hi = fmin(b, k + 1 < npoints ? u->t_s[k + 1] : t1);

			if (!(hi > lo))
				continue;
			gs[k] += (hi - lo) * iv[i].gpus;
			for (int s = 0; s < HB_SIM_TYPE_SLOTS; s++)
				u->held[k * HB_SIM_TYPE_SLOTS + s] += (hi - lo) * iv[i].type_gpus[s];
		}
	}
	for (int k = 0; k < npoints; k++) {
		double hi = k + 1 < npoints ? u->t_s[k + 1] : t1;

		u->util[k] = gs[k] / ((hi - u->t_s[k]) * cluster_gpus);
		for (int s = 0; s < HB_SIM_TYPE_SLOTS; s++)
			u->held[k * HB_SIM_TYPE_SLOTS + s] /= hi - u->t_s[k];
	}
	u->mean = u->gpu_s / ((t1 - t0) * cluster_gpus);
	return 0;
}

/* First arrival and last end (finish, or last integrated time). */
static void window(const struct hb_sim *sim, double *t0, double *t1)
{
	*t0 = INFINITY;
	*t1 = -INFINITY;
	for (int j = 0; j < sim->njobs; j++) {
		const struct hb_sim_job *job = &sim->jobs[j];
		double end = job->state == HB_JOB_DONE ? job->finish_s : job->t_last;

		if (job->arrival_s < *t0)
			*t0 = job->arrival_s;
		if (end > *t1)
			*t1 = end;
	}
}

int hb_metrics_utilisation_iv(const struct hb_sim *sim, const struct hb_gpu_interval *iv, size_t n, int npoints,
			      struct hb_util_series *u, struct hb_error *err)
{
	double t0, t1;

	window(sim, &t0, &t1);
	if (sim->njobs == 0)
		t0 = t1 = 0.0;
	if (hb_metrics_util_from_intervals(iv, n, sim->cl->ngpus, t0, t1, npoints, u, err) < 0)
		return -1;
	u->ntypes = hb_cluster_type_slots(sim->cl, NULL, u->type_gpu);
	return 0;
}

int hb_metrics_utilisation(const struct hb_sim *sim, int npoints, struct hb_util_series *u, struct hb_error *err)
{
	struct hb_gpu_interval *iv;
	size_t n;
	int rc;

	if (hb_metrics_gpu_intervals(sim, &iv, &n, err) < 0)
		return -1;
	rc = hb_metrics_utilisation_iv(sim, iv, n, npoints, u, err);
	free(iv);
	return rc;
}

/* ---- active jobs and finish-time fairness --------------------------------------------- */

/* Integral over [0, x] of the number of intervals [a_k, f_k) covering t:
 * sum over a_k < x of (x - a_k) minus sum over f_k < x of (x - f_k), from
 * sorted a[], f[] and their prefix sums (pa[k] = a[0] + ... + a[k-1]). */
static double covered(double x, const double *a, const double *pa, const double *f, const double *pf, size_t n)
{
	size_t lo = 0, hi = n, na, nf;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	na = lo;
	lo = 0;
	hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	nf = lo;
	return ((double)na * x - pa[na]) - ((double)nf * x - pf[nf]);
}

int hb_metrics_javg(const double *arrival, const double *finish, size_t n, double *javg, struct hb_error *err)
{
	double *a = malloc(sizeof(double) * (n + 1)), *f = malloc(sizeof(double) * (n + 1));
	double *pa = malloc(sizeof(double) * (n + 1)), *pf = malloc(sizeof(double) * (n + 1));
	size_t m = 0;

	if (!a || !f || !pa || !pf) {
		free(a);
		free(f);
		free(pa);
		free(pf);
		return hb_runtime_error(err, "metrics: out of memory");
	}
	/* A job that did not finish has no J_avg of its own, but it is active
	 * from its arrival on for every other job: its interval ends at +inf. */
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(arrival[i]))
			continue;
		a[m] = arrival[i];
		f[m] = isfinite(finish[i]) && finish[i] > arrival[i] ? finish[i] : INFINITY;
		m++;
	}
	gsl_sort(a, 1, m);
	gsl_sort(f, 1, m);
	pa[0] = pf[0] = 0.0;
	for (size_t k = 0; k < m; k++) {
		pa[k + 1] = pa[k] + a[k];
		/* an infinite finish is never < x: its prefix term is never used */
		pf[k + 1] = pf[k] + (isfinite(f[k]) ? f[k] : 0.0);
	}
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(arrival[i]) || !isfinite(finish[i]) || !(finish[i] > arrival[i])) {
			javg[i] = NAN;
			continue;
		}
		javg[i] = (covered(finish[i], a, pa, f, pf, m) - covered(arrival[i], a, pa, f, pf, m)) /
			  (finish[i] - arrival[i]);
	}
	free(a);
	free(f);
	free(pa);
	free(pf);
	return 0;
}

/* Isolated runs already done: identical (model, agent, GPUs, batch) share one. */
struct ref_run {
	const struct hb_model *model;
	const struct hb_agent_ops *agent;
	int gpus;
	long batch;
	double target;       /* the job's progress target (per-job epochs) */
	double duration_s;   /* its stop (--duration-from-trace), 0 = none */
	const char *pref;    /* its preferred GPU type and D2 flag (EasyScale) */
	int d2;
	double jct_s;        /* NAN if it failed */
};

/* The job alone on `gpus` GPUs (see metrics.h); NAN and why on failure. */
static double isolated_jct(const struct hb_sim *sim, const struct hb_sim_job *job, int gpus, char *why,
			   size_t wsize)
{
	struct hb_sim ref;
	struct hb_sim_opts o = sim->opts;
	struct hb_error err = { 0 };
	double jct = NAN;
	int id;

	o.quiet = 1;
	o.capacity = NULL; /* alone on its share with every GPU online: no withdrawal to wait out */
	if (hb_sim_init(&ref, sim->cat, sim->cl, sim->db, sim->policy, &o, &err) < 0) {
		hb_strlcpy(why, err.msg, wsize);
		return NAN;
	}
	ref.policy_opts = sim->policy_opts; /* the same policy's agent, with the same options */
	hb_sim_set_arbiter(&ref, &hb_arbiter_fifo);
	hb_sim_stream(&ref, NULL); /* only its finish time is read: keep no record */
	/* The same models as the shared run: loading them per job was most of
	 * a trace replay's time on a large cluster. */
	hb_sim_borrow_models(&ref, sim);
	if (hb_sim_add_job(&ref, job->model, job->agent, 0.0, &id, &err) == 0) {
		hb_sim_job_request(&ref.jobs[id], gpus, job->req_batch);
		/* The same job: its own epochs and EasyScale attributes. */
		hb_sim_job_prefs(&ref.jobs[id], job->pref_gpu, job->d2);
		ref.jobs[id].target = job->target;
		ref.jobs[id].duration_s = job->duration_s; /* alone, it stops at the same run time */
		if (hb_sim_run(&ref, &err) == 0)
			jct = ref.jobs[id].finish_s - ref.jobs[id].arrival_s;
	}
	if (isnan(jct))
		snprintf(why, wsize, "%s alone on %d GPUs: %.400s", job->name, gpus, err.msg);
	hb_sim_free(&ref);
	return jct;
}

int hb_metrics_rho(const struct hb_sim *sim, int show_progress, struct hb_rho_job *out, struct hb_rho_stats *st,
		   struct hb_error *err)
{
	double *arr = malloc(sizeof(double) * (size_t)(sim->njobs + 1));
	double *fin = malloc(sizeof(double) * (size_t)(sim->njobs + 1));
	double *jv = malloc(sizeof(double) * (size_t)(sim->njobs + 1));
	struct ref_run *cache = calloc((size_t)sim->njobs + 1, sizeof(*cache));
	struct hb_rho_stats local = { 0 };
	struct hb_progress bar;
	int ncache = 0, G = sim->cl->ngpus, rc = 0;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	if (!arr || !fin || !jv || !cache) {
		free(arr);
		free(fin);
		free(jv);
		free(cache);
		return hb_runtime_error(err, "metrics: out of memory");
	}
	for (int j = 0; j < sim->njobs; j++) {
		arr[j] = sim->jobs[j].arrival_s;
		fin[j] = sim->jobs[j].state == HB_JOB_DONE ? sim->jobs[j].finish_s : NAN;
	}
	if (hb_metrics_javg(arr, fin, (size_t)sim->njobs, jv, err) < 0) {
		free(arr);
		free(fin);
		free(jv);
		free(cache);
		return -1;
	}
	{
		char label[48];

		snprintf(label, sizeof(label), "rho %.40s", sim->policy ? sim->policy : "");
		hb_progress_start(&bar, label, sim->njobs, show_progress);
	}
	for (int j = 0; j < sim->njobs; j++) {
		const struct hb_sim_job *job = &sim->jobs[j];
		struct hb_rho_job *r = &out[j];
		struct ref_run *c = NULL;

		/* A signal stops the reference runs (hb_sim_run), which would
		 * read as jobs without a rho: the metrics of a run that was
		 * interrupted are no results at all. */
		if (hb_interrupted()) {
			rc = hb_interrupt_error(err, "fairness (rho)");
			break;
		}
		hb_progress_update(&bar, j);
		r->javg = jv[j];
		r->ref_gpus = 0;
		r->ref_jct_s = r->rho = NAN;
		if (isnan(jv[j]))
			continue;
		r->ref_gpus = (int)lround(G / jv[j]);
		if (r->ref_gpus < 1)
			r->ref_gpus = 1;
		for (int k = 0; k < ncache && !c; k++)
			if (cache[k].model == job->model && cache[k].agent == job->agent && cache[k].gpus == r->ref_gpus &&
			    cache[k].batch == job->req_batch && cache[k].target == job->target &&
			    cache[k].duration_s == job->duration_s && strcmp(cache[k].pref, job->pref_gpu) == 0 && cache[k].d2 == job->d2)
				c = &cache[k];
		if (!c) {
			char why[512];

			c = &cache[ncache++];
			c->model = job->model;
			c->agent = job->agent;
			c->gpus = r->ref_gpus;
			c->batch = job->req_batch;
			c->target = job->target;
			c->duration_s = job->duration_s;
			c->pref = job->pref_gpu;
			c->d2 = job->d2;
			c->jct_s = isolated_jct(sim, job, r->ref_gpus, why, sizeof(why));
			st->ref_runs++;
			if (isnan(c->jct_s) && !st->why[0])
				snprintf(st->why, sizeof(st->why), "%s", why);
		}
		r->ref_jct_s = c->jct_s;
		if (isnan(c->jct_s)) {
			st->failed++;
			continue;
		}
		r->rho = (fin[j] - arr[j]) / c->jct_s;
	}
	if (rc == 0 && hb_interrupted()) /* the last reference run was cut short */
		rc = hb_interrupt_error(err, "fairness (rho)");
	hb_progress_update(&bar, sim->njobs);
	hb_progress_finish(&bar);
	free(arr);
	free(fin);
	free(jv);
	free(cache);
	return rc;
}

/* ---- summaries ------------------------------------------------------------------------- */

void hb_cluster_summary(const struct hb_sim *sim, const struct hb_rho_job *rho, const struct hb_util_series *u,
			struct hb_cluster_summary *s)
{
	double *jct = malloc(sizeof(double) * (size_t)(sim->njobs + 1));
	double *q = malloc(sizeof(double) * (size_t)(sim->njobs + 1));
	double *rh = malloc(sizeof(double) * (size_t)(sim->njobs + 1));
	struct hb_error err = { 0 };
	long restarts = 0, preempt = 0;

	memset(s, 0, sizeof(*s));
	s->njobs = sim->njobs;
	s->first_arrival_s = s->last_finish_s = s->makespan_s = NAN;
	s->util_mean = u ? u->mean : NAN;
	s->sched_rounds = sim->sched_rounds;
	s->sched_ms_per_round = sim->sched_rounds > 0 ? 1e3 * sim->sched_wall_s / (double)sim->sched_rounds : NAN;
	if (sim->capacity) {
		s->capacity = 1;
		s->capacity_withdrawn = sim->capacity->withdrawn_gpus;
		s->capacity_preemptions = sim->capacity->preemptions;
		s->capacity_shrinks = sim->capacity->shrinks;
	}
	for (int j = 0; j < sim->njobs; j++) {
		const struct hb_sim_job *job = &sim->jobs[j];
		int done = job->state == HB_JOB_DONE;
		int started = done || job->started;

		if (j == 0 || job->arrival_s < s->first_arrival_s)
			s->first_arrival_s = job->arrival_s;
		if (done && (isnan(s->last_finish_s) || job->finish_s > s->last_finish_s))
			s->last_finish_s = job->finish_s;
		s->completed += done;
		s->gpu_hours += job->gpu_s / 3600.0;
		s->cost_usd += job->cost_usd;
		restarts += job->restarts;
		preempt += job->preemptions;
		if (jct)
			jct[j] = done ? job->finish_s - job->arrival_s : NAN;
		if (q)
			q[j] = started ? job->start_s - job->arrival_s : NAN;
		if (rh)
			rh[j] = rho ? rho[j].rho : NAN;
	}
	s->unfinished = s->njobs - s->completed;
	if (!isnan(s->last_finish_s))
		s->makespan_s = s->last_finish_s - s->first_arrival_s;
	if (sim->njobs > 0) {
		s->restarts_per_job = (double)restarts / sim->njobs;
		s->preemptions_per_job = (double)preempt / sim->njobs;
	}
	/* Out of memory leaves the distributions empty (n = 0, NAN). */
	if (jct && q && rh) {
		hb_metrics_dist(jct, (size_t)sim->njobs, &s->jct_s, &err);
		hb_metrics_dist(q, (size_t)sim->njobs, &s->queue_s, &err);
		hb_metrics_dist(rh, (size_t)sim->njobs, &s->rho, &err);
	} else {
		hb_metrics_dist(NULL, 0, &s->jct_s, &err);
		hb_metrics_dist(NULL, 0, &s->queue_s, &err);
		hb_metrics_dist(NULL, 0, &s->rho, &err);
	}
	free(jct);
	free(q);
	free(rh);
}

static int by_name(const void *a, const void *b)
{
	const struct hb_model_jct *x = a, *y = b;

	return strcmp(x->model, y->model);
}

int hb_metrics_by_model(const struct hb_sim *sim, struct hb_model_jct **rows, int *n, struct hb_error *err)
{
	int nm = sim->cat->nmodels, k = 0;
	int *count = calloc((size_t)nm + 1, sizeof(int));
	double *jct = malloc(sizeof(double) * (size_t)(sim->njobs + 1));
	struct hb_model_jct *out = calloc((size_t)nm + 1, sizeof(*out));

	*rows = NULL;
	*n = 0;
	if (!count || !jct || !out) {
		free(count);
		free(jct);
		free(out);
		return hb_runtime_error(err, "metrics: out of memory");
	}
	for (int j = 0; j < sim->njobs; j++)
		count[sim->jobs[j].model - sim->cat->models]++;
	for (int m = 0; m < nm; m++) {
		struct hb_dist d;
		size_t c = 0;

		if (count[m] == 0)
			continue;
		for (int j = 0; j < sim->njobs; j++) {
			const struct hb_sim_job *job = &sim->jobs[j];

			if (job->model - sim->cat->models == m)
				jct[c++] = job->state == HB_JOB_DONE ? job->finish_s - job->arrival_s : NAN;
		}
		if (hb_metrics_dist(jct, c, &d, err) < 0) {
			free(count);
			free(jct);
			free(out);
			return -1;
		}
		out[k].model = sim->cat->models[m].name;
		out[k].njobs = count[m];
		out[k].completed = (int)d.n;
		out[k].jct_mean_s = d.mean;
		out[k].jct_median_s = d.median;
		k++;
	}
	qsort(out, (size_t)k, sizeof(*out), by_name);
	free(count);
	free(jct);
	*rows = out;
	*n = k;
	return 0;
}
