/*
 * agent_easyscale.c: EasyScale's intra-job scheduler (notes/easyscale.md
 * §2.2 Role-1): on the GPUs its inter-job scheduler grants
 * (arbiter_easyscale.c), a job runs the best EST plan (easyscale.h,
 * solver/est_plan.h) and keeps its global batch for its whole life.
 *
 * The agent never chooses GPUs: proposals (Role-2) and fallback (Role-3)
 * are the arbiter's, since in the simulator the arbiter owns the free
 * pool.  Under the dedicated arbiter (single-job studies) the job plans on
 * the whole cluster at once, its best plan over every GPU it may use.
 *
 * Reconfiguration cost: the simulator's restart model by default (the
 * first start free, every new grant a checkpoint-restart, as for every
 * other policy); with the option artifact_restart (easyscale_opts.h) the
 * artifact's 20 s at the first start and nothing after (notes §3, §5.1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easyscale.h"
#include "easyscale_opts.h" /* hb_easyscale_opts: comm, artifact_restart */
#include "policy.h"
#include "sim.h"
#include "strutil.h"

/* ---- [A]'s measurements, keyed by the paper's eight models ----------------- */

/* overhead.csv (notes §4.4): per-iteration time normalised to official
 * PyTorch on the same GPU, D1 and D1+D2, for V100, P100, T4; and Fig. 11's
 * time per step with context switching over time without (notes §4.3). */
struct es_row {
	char paper[16];          /* the paper's model */
	double d1[3], d12[3];    /* V100, P100, T4 */
	double switch_ratio;
};

static const struct es_row es_rows[] = {
	{ "ShuffleNetv2", { 1.00, 0.91, 1.00 }, { 2.17, 2.39, 1.68 }, 1.011 },
	{ "ResNet50", { 1.07, 1.06, 1.08 }, { 2.34, 2.79, 2.01 }, 0.997 },
	{ "VGG19", { 1.52, 1.72, 1.75 }, { 4.38, 5.47, 4.21 }, 1.001 },
	{ "YOLOv3", { 0.97, 1.02, 0.94 }, { 1.16, 1.40, 1.19 }, 0.995 },
	{ "NeuMF", { 1.02, 0.96, 1.01 }, { 1.04, 0.94, 1.08 }, 0.999 },
	{ "BERT", { 1.00, 0.99, 1.00 }, { 0.99, 0.99, 0.98 }, 1.000 },
	{ "Electra", { 1.00, 1.00, 1.01 }, { 1.00, 0.98, 0.98 }, 1.020 },
	{ "Swin", { 1.00, 1.00, 0.99 }, { 1.04, 1.00, 1.02 }, 1.002 },
};

/* Catalog model -> the paper's model it stands for.  Models the paper did
 * not run take the row of their kind: a CNN ResNet50's (conv kernels are
 * what D2 slows), anything else BERT's (no D2 cost, no switch cost). */
static const struct {
	const char *catalog, *paper;
} es_models[] = {
	{ "resnet50", "ResNet50" }, { "imagenet", "ResNet50" }, { "yolov3", "YOLOv3" }, { "ncf", "NeuMF" },
	{ "bert", "BERT" },         { "bert-large", "BERT" },   { "vit", "Swin" },
};

static const struct es_row *row_of(const struct hb_model *m)
{
	const char *paper = strcmp(m->arch.cls, "cnn") == 0 ? "ResNet50" : "BERT";

	for (size_t i = 0; i < sizeof(es_models) / sizeof(es_models[0]); i++)
		if (strcmp(m->name, es_models[i].catalog) == 0)
			paper = es_models[i].paper;
	for (size_t i = 0; i < sizeof(es_rows) / sizeof(es_rows[0]); i++)
		if (strcmp(es_rows[i].paper, paper) == 0)
			return &es_rows[i];
	return &es_rows[0]; /* not reached: every paper name above is a row */
}

/* Column of a catalog GPU type: 0 V100, 1 P100, 2 T4, -1 other. */
static int gpu_col(const char *gpu)
{
	if (strcmp(gpu, "v100") == 0 || strcmp(gpu, "v100-32gb") == 0)
		return 0;
	if (strcmp(gpu, "p100") == 0)
		return 1;
	if (strcmp(gpu, "t4") == 0)
		return 2;
	return -1;
}

double hb_es_d2_factor(const struct hb_model *m, const char *gpu)
{
	const struct es_row *r = row_of(m);
	int c = gpu_col(gpu);
	double f = 0.0;

	/* D1 is always on and its overhead is not charged (§3.3: "negligible");
	 * what mixing types adds is D2 on top of it.  A GPU the paper did not
	 * measure takes the mean over the three it did. */
	if (c >= 0)
		f = r->d12[c] / r->d1[c];
	else
		for (int k = 0; k < 3; k++)
			f += r->d12[k] / r->d1[k] / 3.0;
	return f > 1.0 ? f : 1.0;
}

double hb_es_switch_ratio(const struct hb_model *m)
{
	return row_of(m)->switch_ratio;
}

/* ---- the planner view ------------------------------------------------------- */

/* Profiled local batch of GPU type g nearest target (ties to the larger)
 * whose global batch maxp x b stays inside the job's [min_gbs, max_gbs];
 * 0 when g has none that fits. */
static int nearest_lbs(const struct hb_sim_job *job, int g, int maxp, double target)
{
	const struct hb_perf *p = job->perf;
	int best = 0;

	for (int k = 0; k < p->gpus[g].nlbs; k++) {
		const struct hb_perf_lbs *l = &p->gpus[g].lbs[k];
		long gbs = (long)maxp * l->local_bs;

		if (l->n_cap < 1 || (job->min_gbs > 0 && gbs < job->min_gbs) || (job->max_gbs > 0 && gbs > job->max_gbs))
			continue;
		if (!best || fabs(l->local_bs - target) < fabs(best - target) ||
		    (fabs(l->local_bs - target) == fabs(best - target) && l->local_bs > best))
			best = l->local_bs;
	}
	return best;
}

/* The type's terms at batch b with no communication; 0, or -1 if b does not fit. */
static int type_terms(const struct hb_sim_job *job, int g, int b, struct hb_est_type *t)
{
	const struct hb_perf *p = job->perf;
	const struct hb_perf_lbs *l = hb_perf_find_lbs(p, g, b);
	struct hb_perf_comm none = { 0.0, 0.0, 0 };
	struct hb_perf_coef k;
	double copy;

	memset(t, 0, sizeof(*t));
	if (!l || l->n_cap < 1 || hb_perf_coef_eval(p, l, &none, 1, 1.0, &k, NULL) != 0)
		return -1;
	t->est_s = k.step_s;
	t->fixed_s = k.base_s - k.step_s;
	t->d2 = hb_es_d2_factor(job->model, p->gpus[g].name);
	copy = job->model->params * job->model->param_bytes / HB_ES_PCIE_BW;
	t->switch_s = fmax(0.0, hb_es_switch_ratio(job->model) - 1.0) * t->est_s +
		      fmax(0.0, copy - (k.step_s - hb_perf_data_s(l, 1)));
	return 0;
}

int hb_es_job_init(const struct hb_sim *sim, const struct hb_sim_job *job, struct hb_es_job *ej, struct hb_error *err)
{
	const struct hb_perf *p = job->perf;
	long batch = job->req_batch > 0 ? job->req_batch : job->min_gbs;
	double best_s = 0.0;

	memset(ej, 0, sizeof(*ej));
	ej->maxp = hb_arbiter_job_gpus(sim, job);
	ej->ntypes = p->ngpus;
	ej->pref = -1;
	if (ej->ntypes > HB_EST_MAX_TYPES)
		return hb_input_error(err, "easyscale %s: cluster %s has %d GPU types, at most %d", job->name,
				      sim->cl->name, ej->ntypes, HB_EST_MAX_TYPES);
	if (ej->maxp > HB_EST_MAX_P)
		return hb_input_error(err, "easyscale %s: maxP %d above %d", job->name, ej->maxp, HB_EST_MAX_P);
	if (job->pref_gpu[0]) {
		for (int g = 0; g < p->ngpus; g++)
			if (strcmp(p->gpus[g].name, job->pref_gpu) == 0)
				ej->pref = g;
		if (ej->pref < 0)
			return hb_input_error(err, "easyscale %s: preferred GPU type '%s' is not in cluster %s", job->name,
					      job->pref_gpu, sim->cl->name);
	}
	/* The per-EST batch: nearest B / maxP on the preferred type, else on
	 * the fastest type that has one. */
	for (int pass = 0; pass < 2 && !ej->est_bs; pass++)
		for (int g = 0; g < p->ngpus; g++) {
			struct hb_est_type t;
			int b;

			if ((pass == 0 && g != ej->pref) || !(b = nearest_lbs(job, g, ej->maxp, (double)batch / ej->maxp)))
				continue;
			if (type_terms(job, g, b, &t) == 0 && (!ej->est_bs || t.est_s < best_s)) {
				ej->est_bs = b;
				best_s = t.est_s;
			}
		}
	if (!ej->est_bs)
		return hb_input_error(err, "easyscale %s: no GPU type of %s fits a per-EST batch near %ld / %d with a global "
					   "batch in [%ld, %ld]", job->name, sim->cl->name, batch, ej->maxp, job->min_gbs,
				      job->max_gbs);
	ej->global_bs = (long)ej->maxp * ej->est_bs;
	for (int g = 0; g < p->ngpus; g++)
		if (type_terms(job, g, ej->est_bs, &ej->types[g]) == 0)
			ej->usable |= 1u << g;
		else
			ej->types[g] = (struct hb_est_type){ .est_s = 1.0, .d2 = 1.0 }; /* never used: avail 0 */
	/* No preference: the type where one EST runs fastest. */
	for (int g = 0; g < p->ngpus && ej->pref < 0; g++)
		for (int h = 0; h < p->ngpus; h++)
			if (((ej->usable >> h) & 1u) && (ej->pref < 0 || ej->types[h].est_s < ej->types[ej->pref].est_s))
				ej->pref = h;
	if (!((ej->usable >> ej->pref) & 1u))
		return hb_input_error(err, "easyscale %s: per-EST batch %d does not fit its preferred GPU type %s",
				      job->name, ej->est_bs, p->gpus[ej->pref].name);
	/* D2 from the model when the trace does not say: the automatic scan of
	 * §3.3 finds hardware-specific (convolution) kernels in CNNs, and [A]'s
	 * workload marks every CNN job not eligible (notes §3). */
	ej->d2 = job->d2 >= 0 ? job->d2 : strcmp(job->model->arch.cls, "cnn") != 0;
	return 0;
}

/* Step time of the split (n, a) with the types' terms (mixed: D2 factors). */
static double split_step(const struct hb_est_type *t, int ntypes, const int *n, const int *a, int mixed)
{
	double worst = 0.0;

	for (int i = 0; i < ntypes; i++) {
		double s;

		if (n[i] == 0)
			continue;
		s = hb_est_gpu_step(&t[i], mixed, a[i]);
		if (s > worst)
			worst = s;
	}
	return worst;
}

/* The counts per type of alloc and the true terms of its types: each
 * type's fixed_s plus the worst exposed all-reduce of its nodes. */
static int alloc_terms(const struct hb_sim_job *job, const struct hb_es_job *ej, const int *alloc,
		       struct hb_est_type *truth, int *n, int *total, struct hb_error *err)
{
	const struct hb_perf *p = job->perf;

	memcpy(truth, ej->types, sizeof(*truth) * (size_t)ej->ntypes);
	memset(n, 0, sizeof(*n) * (size_t)ej->ntypes);
	*total = 0;
	for (int i = 0; i < p->nnodes; i++) {
		const struct hb_perf_lbs *l;
		struct hb_perf_comm c, zero = { 0.0, 0.0, 0 };
		struct hb_perf_coef with, none;
		int g = p->nodes[i].gpu;

		if (alloc[i] <= 0)
			continue;
		if (!((ej->usable >> g) & 1u))
			return hb_input_error(err, "easyscale %s: node %s's GPU type %s cannot run a per-EST batch of %d",
					      job->name, p->nodes[i].name, p->gpus[g].name, ej->est_bs);
		n[g] += alloc[i];
		*total += alloc[i];
		l = hb_perf_find_lbs(p, g, ej->est_bs);
		if (hb_perf_comm_eval(p, alloc, i, &c, err) != 0 || hb_perf_coef_eval(p, l, &c, 1, 1.0, &with, err) != 0 ||
		    hb_perf_coef_eval(p, l, &zero, 1, 1.0, &none, err) != 0)
			return -1;
		if (ej->types[g].fixed_s + (with.base_s - none.base_s) > truth[g].fixed_s)
			truth[g].fixed_s = ej->types[g].fixed_s + (with.base_s - none.base_s);
	}
	return 0;
}

int hb_es_eval(const struct hb_sim *sim, const struct hb_sim_job *job, const struct hb_es_job *ej, const int *alloc,
	       struct hb_es_eval *out, struct hb_error *err)
{
	struct hb_est_type truth[HB_EST_MAX_TYPES];
	int n[HB_EST_MAX_TYPES], total;

	if (alloc_terms(job, ej, alloc, truth, n, &total, err) < 0)
		return -1;
	if (total < 1 || total > ej->maxp)
		return hb_input_error(err, "easyscale %s: a plan on %d GPUs (maxP %d)", job->name, total, ej->maxp);
	memset(out, 0, sizeof(*out));
	/* The planner splits by its estimate; the job then runs that split. */
	if (hb_est_split(hb_easyscale_opts(sim)->comm ? truth : ej->types, ej->ntypes, n, ej->maxp, &out->plan) != 1)
		return hb_runtime_error(err, "easyscale %s: no EST split on %d GPUs", job->name, total);
	out->est_step_s = out->plan.step_s;
	out->true_step_s = split_step(truth, ej->ntypes, out->plan.n, out->plan.a, out->plan.mixed);
	out->est_thp = ej->maxp / out->est_step_s;
	out->true_thp = ej->maxp / out->true_step_s;
	return 0;
}

int hb_es_place(const struct hb_perf *p, const int *pool, const int *prefer, int g, int k, int *alloc)
{
	int left = k;

	/* Nodes already used first (fewer nodes, cheaper all-reduce), then the
	 * nodes with the most GPUs in the pool; ties to the lower index. */
	for (int pass = 0; pass < 2 && left > 0; pass++) {
		for (;;) {
			int best = -1;

			for (int i = 0; i < p->nnodes; i++) {
				int room = pool[i] - alloc[i];

				if (p->nodes[i].gpu != g || room <= 0 || (pass == 0 && (!prefer || prefer[i] <= 0)))
					continue;
				if (best < 0 || room > pool[best] - alloc[best])
					best = i;
			}
			if (best < 0 || left == 0)
				break;
			{
				int take = pool[best] - alloc[best] < left ? pool[best] - alloc[best] : left;

				alloc[best] += take;
				left -= take;
			}
		}
	}
	return left == 0 ? 0 : -1;
}

struct best_ctx {
	const struct hb_sim *sim;
	const struct hb_sim_job *job;
	const struct hb_es_job *ej;
	const int *within;
	int *alloc;              /* scratch: the count vector placed */
};

/* Place n inside `within` and set each type's exposed all-reduce. */
static int place_counts(const struct best_ctx *c, const int *n)
{
	const struct hb_perf *p = c->job->perf;

	memset(c->alloc, 0, sizeof(int) * (size_t)p->nnodes);
	for (int g = 0; g < c->ej->ntypes; g++)
		if (n[g] > 0 && hb_es_place(p, c->within, NULL, g, n[g], c->alloc) < 0)
			return -1;
	return 0;
}

static int best_adjust(void *ctx, const int *n, struct hb_est_type *t, int ntypes)
{
	const struct best_ctx *c = ctx;
	struct hb_est_type truth[HB_EST_MAX_TYPES];
	int cnt[HB_EST_MAX_TYPES], total;

	if (place_counts(c, n) < 0)
		return -1;
	if (!hb_easyscale_opts(c->sim)->comm)
		return 0; /* the estimate leaves the all-reduce out */
	if (alloc_terms(c->job, c->ej, c->alloc, truth, cnt, &total, NULL) < 0)
		return -1;
	for (int g = 0; g < ntypes; g++)
		t[g].fixed_s = truth[g].fixed_s;
	return 0;
}

int hb_es_best_alloc(const struct hb_sim *sim, const struct hb_sim_job *job, const struct hb_es_job *ej,
		     const int *within, unsigned allowed, int *alloc, struct hb_error *err)
{
	struct hb_est_type t[HB_EST_MAX_TYPES];
	struct hb_est_plan best;
	struct best_ctx c = { sim, job, ej, within, alloc };
	int rc;

	memcpy(t, ej->types, sizeof(t));
	for (int g = 0; g < ej->ntypes; g++)
		t[g].avail = 0;
	for (int i = 0; i < job->perf->nnodes; i++)
		if ((ej->usable >> job->perf->nodes[i].gpu) & 1u)
			t[job->perf->nodes[i].gpu].avail += within[i];
	allowed = (allowed ? allowed : ~0u) & ej->usable;
	if (!allowed)
		return hb_input_error(err, "easyscale %s: no GPU type it may use", job->name);
	rc = hb_est_best(t, ej->ntypes, ej->maxp, allowed, best_adjust, &c, &best);
	if (rc < 0)
		return hb_runtime_error(err, "easyscale %s: plan search failed", job->name);
	if (rc == 0)
		return hb_input_error(err, "easyscale %s: no GPU it may use among those offered", job->name);
	if (place_counts(&c, best.n) < 0)
		return hb_runtime_error(err, "easyscale %s: the best plan does not place", job->name);
	return 0;
}

/* ---- the agent ------------------------------------------------------------------ */

struct es_agent {
	struct hb_es_job ej;     /* the planner view, made at the first start */
};

static void es_free(void *state, struct hb_sim_job *job)
{
	(void)state;
	free(job->agent_state);
	job->agent_state = NULL;
}

static struct es_agent *agent_state(const struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	struct es_agent *st = job->agent_state;

	if (st)
		return st;
	if (!(st = calloc(1, sizeof(*st)))) {
		hb_runtime_error(err, "easyscale %s: out of memory", job->name);
		return NULL;
	}
	if (hb_es_job_init(sim, job, &st->ej, err) < 0) {
		free(st);
		return NULL;
	}
	job->agent_state = st;
	return st;
}

/* "V100 x4 (3 ESTs) + T4 x2 (1 EST)" */
static void layout_text(const struct hb_perf *p, const struct hb_es_job *ej, const struct hb_es_eval *ev, char *buf,
			size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int g = 0; g < ej->ntypes; g++)
		if (ev->plan.n[g] > 0)
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s x%d (%d EST%s)",
						len ? " + " : "", p->gpus[g].name, ev->plan.n[g], ev->plan.a[g],
						ev->plan.a[g] == 1 ? "" : "s");
	if (len < size)
		snprintf(buf + len, size - len, ", maxP %d x b %d%s", ej->maxp, ej->est_bs,
			 ev->plan.mixed ? ", D2" : "");
}

/* Apply the plan on alloc (every GPU of it). */
static int apply_plan(struct hb_sim *sim, struct hb_sim_job *job, const int *alloc, int how, struct hb_error *err)
{
	struct es_agent *st = agent_state(sim, job, err);
	struct hb_job_config cfg;
	struct hb_es_eval ev;
	char why[160];
	double pause = -1.0;
	int rc;

	if (!st)
		return -1;
	if (hb_es_eval(sim, job, &st->ej, alloc, &ev, err) < 0)
		return -1;
	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!cfg.alloc)
		return hb_runtime_error(err, "easyscale %s: out of memory", job->name);
	memcpy(cfg.alloc, alloc, sizeof(int) * (size_t)job->perf->nnodes);
	cfg.ngpus = ev.plan.ngpus;
	cfg.global_bs = st->ej.global_bs;
	cfg.local_bs = st->ej.est_bs;
	cfg.iter_s = ev.true_step_s;
	layout_text(job->perf, &st->ej, &ev, cfg.layout, sizeof(cfg.layout));
	if (hb_easyscale_opts(sim)->artifact_restart)
		pause = how == HB_APPLY_START && !job->started ? HB_ES_ARTIFACT_START_S : 0.0;
	snprintf(why, sizeof(why), "easyscale: plan %.3f mini-batches/s estimated, %.3f simulated, waste %.0f %%",
		 ev.est_thp, ev.true_thp, 100.0 * ev.plan.waste_frac);
	rc = hb_sim_apply_cost(sim, job, &cfg, how, pause, why, err);
	hb_job_config_free(&cfg);
	return rc;
}

/* Role-1 on the grant.  EasyScale's own arbiters grant exactly a plan's
 * GPUs: the plan uses them all.  A grant from elsewhere (the dedicated
 * arbiter's whole cluster, FIFO's reference runs of rho) may hold more
 * than maxP GPUs, types the per-EST batch does not fit, or several types
 * for a job without D2: the job then runs the best plan inside it (on one
 * type, its preferred one when the grant has it, else the best of the
 * others) and leaves the rest idle. */
static int plan_on_grant(struct hb_sim *sim, struct hb_sim_job *job, int how, struct hb_error *err)
{
	struct es_agent *st = agent_state(sim, job, err);
	const struct hb_perf *p = job->perf;
	unsigned present = 0;
	int *alloc, n = 0, rc = 0;

	if (!st)
		return -1;
	for (int i = 0; i < p->nnodes; i++)
		if (job->grant[i] > 0) {
			present |= 1u << p->nodes[i].gpu;
			n += job->grant[i];
		}
	if (n <= st->ej.maxp && !(present & ~st->ej.usable) && (st->ej.d2 || !(present & (present - 1))))
		return apply_plan(sim, job, job->grant, how, err);
	if (!(alloc = calloc((size_t)p->nnodes, sizeof(int))))
		return hb_runtime_error(err, "easyscale %s: out of memory", job->name);
	if (st->ej.d2) {
		rc = hb_es_best_alloc(sim, job, &st->ej, job->grant, 0u, alloc, err);
	} else if (present & (1u << st->ej.pref)) {
		rc = hb_es_best_alloc(sim, job, &st->ej, job->grant, 1u << st->ej.pref, alloc, err);
	} else {
		/* No GPU of its type in the grant: the best single type of it. */
		int *cand = calloc((size_t)p->nnodes, sizeof(int));
		double best = 0.0;

		rc = cand ? 0 : hb_runtime_error(err, "easyscale %s: out of memory", job->name);
		for (int g = 0; rc == 0 && g < st->ej.ntypes; g++) {
			struct hb_es_eval ev;

			if (!((present & st->ej.usable) >> g & 1u))
				continue;
			if (hb_es_best_alloc(sim, job, &st->ej, job->grant, 1u << g, cand, err) < 0 ||
			    hb_es_eval(sim, job, &st->ej, cand, &ev, err) < 0)
				rc = -1;
			else if (ev.est_thp > best) {
				best = ev.est_thp;
				memcpy(alloc, cand, sizeof(int) * (size_t)p->nnodes);
			}
		}
		free(cand);
		if (rc == 0 && !(best > 0))
			rc = hb_input_error(err, "easyscale %s: no GPU of its grant fits a per-EST batch of %d", job->name,
					    st->ej.est_bs);
	}
	if (rc == 0)
		rc = apply_plan(sim, job, alloc, how, err);
	free(alloc);
	return rc;
}

static int es_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)state;
	return plan_on_grant(sim, job, HB_APPLY_START, err);
}

static int es_on_grant(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)state;
	return plan_on_grant(sim, job, HB_APPLY_RESTART, err);
}

const struct hb_agent_ops hb_agent_easyscale = {
	.name = "easyscale",
	.summary = "EasyScale: maxP ESTs at a fixed global batch, best EST plan on the granted GPUs",
	.start = es_start,
	.on_grant = es_on_grant,
	.free_job = es_free,
};
