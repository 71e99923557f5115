/*
 * agent_jabas.c: the JABAS job agent (notes/jabas.md §4).
 *
 * Three decisions, in the order of the paper's workflow (§4.4, Fig. 4):
 *
 *  ② start: enumerate the candidate allocations Q once (§4.3) and take the
 *    one with the least predicted epoch time for the constant trajectory
 *    [B_G^init] (§4.3 initial phase, §10.13: B_G^init = minB_G, as the
 *    artifact); its configuration comes from the IIDP solver with
 *    Algorithm 1's M = round(B_G/B_L/2) (§3).
 *  ④-⑥ every p iterations: observe the half-batch gradient similarity Phi
 *    and apply SimiGrad's rule (§4.1) on the current GPUs: Phi < gamma grows
 *    B_G by (1+alpha), Phi > gamma shrinks it by (1-alpha), clipped to
 *    [minB_G, maxB_G]; the solver re-plans with the run-time parity rule for
 *    M (§3 "M at run time"), and the new configuration is applied in place
 *    (VSWs, GA, B_L) when it differs.  The (step, B_G) point is kept for the
 *    forecaster.
 *  ⑦⑧ end of epoch: forecast the next epoch's B_G at its adaptation points
 *    (§4.2: 0.5 GPR on the epoch's points + 0.5 SES on all history), walk
 *    the trajectory [B_G_cur] + forecast over every G in Q with the epoch
 *    time estimate (§4.3) and move to the argmin by checkpoint-restart when
 *    it is another allocation.
 *
 * The objective is epoch time, not cost (§4.3); savings come from the
 * argmin dropping GPUs that do not shorten the epoch.  There is no
 * hysteresis against thrashing and the estimate ignores the restart cost
 * (§10.11): both as in the paper.
 *
 * Decisions where the notes leave room:
 *  - The realised B_G is the solver's 2 M B_L (§3, §10.7).  The run-time
 *    parity rule (B_L n_w must exceed the current B_G) and Algorithm 1's
 *    rounding could carry it past maxB_G by up to a B_L step (ncf reached
 *    65,536 with maxB_G 32,768); the solver therefore takes only (B_L, M)
 *    whose 2 M B_L lies inside the job's bounds (perfmodel.h min_gbs,
 *    max_gbs, set by the simulator), and when none does the step is
 *    skipped as any infeasible one (issue 16 item 8).
 *  - Learning rate: the artifact rescales it by sqrt(B_G/minB_G) (§4.1,
 *    §10.8); the simulated convergence (sim/stats.h) counts B E(B) per
 *    iteration whatever the learning rate, so it is not modelled.
 *  - Overheads (§9.9): the simulator charges the restart and the in-place
 *    reconfiguration; the agent charges the similarity measurement every p
 *    iterations.  Solver and forecaster run time are not charged: the
 *    solvers here take milliseconds (the paper's 1.06 % and 0.1 % come from
 *    its Python solver, §3, §7.6).
 *
 * In a shared cluster (any arbiter but the dedicated one; the rule of the
 * policy's arbiter is in sim/policies/jabas/arbiter_jabas.c) the three decisions stay and
 * only Q changes: it is the same construction (2-GPU units, identical
 * servers merged) over the GPUs the arbiter lets the job choose from, the
 * grant at start and hb_sim_offer's offer at each epoch end, less the
 * candidates above the offer's GPU cap.  Q is rebuilt at every decision
 * because the offer changes; the dedicated run builds it once over the
 * cluster, as before.  The agent then takes the chosen GPUs with
 * hb_sim_resize_grant, so its grant is always exactly what it runs on and
 * GPUs its argmin leaves out go back to the pool.  Decisions:
 *  - Units stay pairs (§4.3, §10.12): IIDP needs an even GPU count per node
 *    (the two similarity groups mirror each other), so 1-GPU units would
 *    not be runnable; a grant with no pair holds no candidate and the job
 *    cannot run (the jabas-share arbiter grants pairs only).
 *  - Merged candidates are in packed form (alloc.h); among identical nodes
 *    the chosen counts are moved onto the nodes the job already holds, so
 *    an argmin equivalent to the current allocation keeps it instead of
 *    restarting on an identical node.
 *  - When the offer forces a shrink (a queued job, the job above its
 *    request) and no candidate runs the whole forecast, the candidates are
 *    ranked on the current B_G alone; only if none runs even that does the
 *    job keep its GPUs (noted).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h" /* hb_agent_interval, hb_simigrad_step: shared with SimiGrad */
#include "alloc.h"      /* hb_alloc_enumerate, hb_alloc_node_units: Q */
#include "autoscale.h"  /* hb_jabas_epoch_time: the auto-scaler's estimate */
#include "catalog.h"    /* struct hb_cluster: an offer as a cluster for Q */
#include "forecast.h"   /* hb_fc_trajectory, hb_fc_series_add, hb_fc_epoch_seed */
#include "iidp.h"       /* hb_iidp_solve, hb_iidp_format_config: configurations */
#include "jabas_memo.h" /* the memos of the agent's answers, the store of shapes */
#include "policy.h"
#include "sim.h"

/* ---- knobs ------------------------------------------------------------- */

/* GPUs per allocation unit.  The paper allocates identical pairs (§4.3,
 * Q = Π(m_i/2 + 1) − 1: 80 candidates on cluster A); the artifact defaults
 * to whole 4-GPU nodes (15 on A) and uses pairs for GNMT.  We follow the
 * paper (§10.12). */
#define JABAS_UNIT_GPUS 2

/* Merge identical servers in Q (the artifact's homo_servers, §4.3): the
 * merged Q holds the same distinct allocations up to the choice of node
 * among identical ones, so the argmin is unchanged and cheaper to find. */
#define JABAS_MERGE_SERVERS 1

/* Forecaster of the next epoch's B_G.  HB_FC_ENSEMBLE is the paper's
 * (§4.2); HB_FC_LAST is its "no prediction" ablation (§4.2, Fig. 13b: the
 * last B_G held for the whole next epoch).  The trajectory built from it
 * (hb_fc_trajectory) fits the GPR with the artifact's 9 restarts and falls
 * back to SES in an epoch of fewer than 3 points (forecast.c says why). */
#define JABAS_FORECAST HB_FC_ENSEMBLE

/* ---- state --------------------------------------------------------------- */

struct jabas_state {
	struct hb_alloc_set q;   /* candidate allocations Q (§4.3) over the nodes q_node, described at
				  * start (shared: per decision): its classes only, no candidates; the
				  * items in qs, made from it, are what is kept */
	int *q_node;             /* [nq]: the cluster node of each node of q (those with GPUs to offer) */
	int nq;                  /* nodes of q */
	size_t ncand_cap;        /* candidates of q within the GPU cap (what the offer note reports) */
	struct q_shapes qs;      /* the ranking's items of q: each answer key's last candidate */
	struct shape_store store; /* every shape met, with its bounds */
	struct q_memo memo;      /* earlier offers' items by the layout of their offer */
	struct pick_memo picks;  /* earlier rankings by their inputs */
	struct adapt_memo adapt; /* the adaptation steps' answers on the current GPUs */
	uint64_t *sig;           /* [3 · nnodes + 2] scratch: the layout of the offer being built */
	int *q_offer;            /* [nnodes]: the offer q was built over (shared), to reuse q while it holds */
	int q_max, q_use;        /* and its max_gpus, use_gpus; q_max < 0: no q yet */
	int nnodes;              /* cluster nodes */
	long p;                  /* adaptation interval, iterations */
	int shared;              /* 1: a shared-cluster arbiter bounds the choice (hb_sim_offer) */
	int *work;               /* [4 · nnodes] scratch: offer, chosen allocation, counts, node order */

	/* (step, B_G) at every adaptation point, all epochs (the SES series);
	 * the points from epoch_start on belong to the current epoch (GPR). */
	double *hist_step;
	double *hist_bs;
	size_t nhist, cap_hist;
	size_t epoch_start;

	/* The next epoch end's forecast fits, made ahead on a worker of the
	 * run's pool (hb_fc_prefit, prefit_post) once the epoch's last
	 * adaptation point is recorded, and claimed at the epoch end, where
	 * hb_fc_trajectory uses them only if they were made from the history
	 * it has then. */
	struct hb_fc_prefit pre;
	struct hb_pool_bg pre_bg; /* posted: pre is the worker's until claimed */
	int pre_posted;          /* pre_bg posted since the last epoch end's claim */
	struct hb_pool *pool;    /* the run's (borrowed), to claim pre_bg when the state is freed */
	struct hb_iidp_solver *solver; /* the job's (borrowed): the store's bounds are held from it */
};

static void state_free(struct jabas_state *st)
{
	if (!st)
		return;
	hb_pool_claim(st->pool, &st->pre_bg); /* a worker may still be fitting into pre */
	hb_fc_prefit_free(&st->pre);
	jabas_memo_clear(&st->memo);
	free(st->memo.e);
	jabas_picks_clear(&st->picks);
	free(st->sig);
	hb_alloc_free(&st->q);
	free(st->q_node);
	free(st->q_offer);
	for (size_t j = 0; j < st->store.cap; j++) {
		hb_iidp_shape_free(&st->store.sh[j]);
		hb_iidp_shape_bound_release(st->solver, &st->store.bnd[j]);
	}
	free(st->store.sh);
	free(st->store.bnd);
	free(st->store.koff);
	free(st->store.key);
	free(st->store.tab_hash);
	free(st->store.tab_idx);
	free(st->qs.ent);
	free(st->qs.units);
	free(st->qs.order);
	free(st->qs.kind);
	free(st->qs.gkind);
	free(st->qs.hist);
	free(st->adapt.alloc);
	free(st->work);
	free(st->hist_step);
	free(st->hist_bs);
	free(st);
}

static void jabas_free_job(void *state, struct hb_sim_job *job)
{
	(void)state;
	state_free(job->agent_state);
	job->agent_state = NULL;
}

/* ---- configurations -------------------------------------------------------- */

/* The job configuration for an IIDP solver result on alloc.  The similarity
 * all-reduce runs once every p iterations (§4.1 [D]); spread over the block
 * it costs its time / p per iteration. */
static int config_from_result(struct hb_sim *sim, struct hb_sim_job *job, const struct jabas_state *st,
			      const int *alloc, const struct hb_iidp_result *r, struct hb_job_config *cfg,
			      struct hb_error *err)
{
	hb_job_config_init(cfg, st->nnodes);
	if (!cfg->alloc)
		return hb_runtime_error(err, "jabas %s: out of memory for a configuration", job->name);
	memcpy(cfg->alloc, alloc, (size_t)st->nnodes * sizeof(int));
	cfg->ngpus = r->n_gpus;
	cfg->global_bs = r->global_bs;
	cfg->local_bs = r->local_bs;
	cfg->iter_s = r->iter_s;
	cfg->overhead_per_iter_s =
		sim->opts.similarity_cost ? hb_sim_similarity_cost_s(sim, job, alloc) / (double)st->p : 0.0;
	cfg->eff_factor = 1.0;
	/* A layout longer than the record keeps its head, marked as cut. */
	if (hb_iidp_format_config(job->perf, r, cfg->layout, sizeof(cfg->layout)) < 0)
		memcpy(cfg->layout + sizeof(cfg->layout) - 4, "...", 4);
	return 0;
}

/* Solve B_G on alloc as the ranking solved its first point (first; NULL:
 * Algorithm 1's M rule, any B_L) and build the configuration; *found = 0
 * when the allocation has none. */
static int config_round(struct hb_sim *sim, struct hb_sim_job *job, const struct jabas_state *st, const int *alloc,
			long global_bs, const struct hb_jabas_first *first, struct hb_job_config *cfg, int *found,
			struct hb_error *err)
{
	struct hb_iidp_request req = { .alloc = alloc, .global_bs = global_bs, .m_rule = HB_IIDP_M_ROUND };

	if (first) {
		req.m_rule = first->m_rule;
		req.local_bs = first->local_bs;
	}
	struct hb_iidp_result r;
	int rc;

	if (hb_iidp_solve(job->solver, &req, &r, err) < 0) {
		hb_error_prefix(err, "jabas %s: B_G %ld", job->name, global_bs);
		return -1;
	}
	*found = r.found;
	rc = r.found ? config_from_result(sim, job, st, alloc, &r, cfg, err) : 0;
	hb_iidp_result_free(&r);
	return rc;
}

/* Same GPUs, new B_G, B_L or per-pair VSW/GA: what an in-place change is. */
static int config_changed(const struct hb_job_config *a, const struct hb_job_config *b)
{
	return a->global_bs != b->global_bs || a->local_bs != b->local_bs || a->iter_s != b->iter_s ||
	       strcmp(a->layout, b->layout) != 0;
}

static int same_alloc(const int *a, const int *b, int n)
{
	return memcmp(a, b, (size_t)n * sizeof(int)) == 0;
}

/* ---- auto-scaler (§4.3) ---------------------------------------------------- */

/* A candidate's units per node of q as GPUs per node of q, into gpus (nq
 * entries). */
static void cand_gpus(const struct jabas_state *st, const int *u, int *gpus)
{
	for (int n = 0; n < st->nq; n++)
		gpus[n] = u[n] * st->q.unit;
}

/* The store's entry for the shape of candidate u (units per node of q)
 * whose offer histogram is row: found, or built from u. */
static int store_find(const struct hb_sim_job *job, struct jabas_state *st, const uint16_t *row, const int *u,
		      size_t i, size_t *ent, struct hb_error *err)
{
	struct shape_store *ss = &st->store;
	const struct q_shapes *qs = &st->qs;
	uint64_t key[64], *kp = key, h;
	size_t klen = 0, slot;
	int *gpus = st->work + 3 * (size_t)st->nnodes;

	/* The canonical key: (solver kind, units, nodes) words of the row,
	 * sorted (local kinds map one to one onto solver kinds). */
	if ((size_t)qs->hlen > sizeof(key) / sizeof(*key) &&
	    !(kp = malloc((size_t)qs->hlen * sizeof(*kp))))
		return hb_runtime_error(err, "jabas %s: out of memory", job->name);
	for (int k = 0; k < qs->nkind; k++)
		for (int v = 1; v <= qs->maxu; v++) {
			uint16_t c = row[k * (qs->maxu + 1) + v];
			uint64_t w;
			size_t a;

			if (!c)
				continue;
			w = (uint64_t)(uint32_t)qs->gkind[k] << 32 | (uint64_t)v << 16 | c;
			for (a = klen++; a > 0 && kp[a - 1] > w; a--)
				kp[a] = kp[a - 1];
			kp[a] = w;
		}
	h = jabas_key_hash(kp, klen);
	for (slot = ss->tcap ? h & (ss->tcap - 1) : 0; ss->tcap && ss->tab_hash[slot] != 0;
	     slot = (slot + 1) & (ss->tcap - 1)) {
		size_t j = ss->tab_idx[slot];

		if (ss->tab_hash[slot] == h && ss->koff[j + 1] - ss->koff[j] == klen &&
		    memcmp(ss->key + ss->koff[j], kp, klen * sizeof(*kp)) == 0) {
			*ent = j;
			goto out;
		}
	}
	/* A new shape: built by the solver from this candidate. */
	if (jabas_store_reserve(ss, klen) < 0) {
		hb_runtime_error(err, "jabas %s: out of memory", job->name);
		goto fail;
	}
	cand_gpus(st, u, gpus);
	if (hb_iidp_shape_of_nodes(job->solver, st->q_node, gpus, st->nq, &ss->sh[ss->n], err) < 0 ||
	    hb_iidp_shape_bound_hold(job->solver, &ss->sh[ss->n], &ss->bnd[ss->n], err) < 0) {
		hb_error_prefix(err, "jabas %s: candidate %zu", job->name, i);
		goto fail;
	}
	memcpy(ss->key + ss->koff[ss->n], kp, klen * sizeof(*kp));
	ss->koff[ss->n + 1] = ss->koff[ss->n] + klen;
	for (slot = h & (ss->tcap - 1); ss->tab_hash[slot] != 0; slot = (slot + 1) & (ss->tcap - 1))
		;
	ss->tab_hash[slot] = h;
	ss->tab_idx[slot] = ss->n;
	*ent = ss->n++;
out:
	if (kp != key)
		free(kp);
	return 0;
fail:
	if (kp != key)
		free(kp);
	return -1;
}

#ifdef JABAS_QMEMO_VERIFY
/* Test builds: Q memo hits built and found equal to their build; ranking memo
 * hits ranked and found equal to their ranking; adaptation memo hits
 * solved and found equal to their configuration. */
long hb_jabas_qmemo_verified;
long hb_jabas_pickmemo_verified;
long hb_jabas_adaptmemo_verified;
/* ranking memo hits of one-point trajectories at a block offset other
 * than 0, which only the offset-free key makes hits (pick_allocation) */
long hb_jabas_pickmemo_onepoint_verified;
/* offers whose keys' last candidates were checked against the search of
 * every candidate, and the keys checked */
long hb_jabas_lastkey_verified;
long hb_jabas_lastkey_keys;
#endif

/* Ready st->qs for the items of a Q over the nq nodes st->q_node, whose
 * GPUs ngpus gives: the kinds of the nodes (local, in order of first
 * appearance) and the histogram's room.  build_q has emptied a full store
 * before. */
static int items_begin(const struct hb_sim_job *job, struct jabas_state *st, const int *ngpus, struct hb_error *err)
{
	struct q_shapes *qs = &st->qs;
	const size_t nq = (size_t)(st->nq > 0 ? st->nq : 1);
	int *units;

	qs->n = 0;
	free(qs->kind);
	free(qs->gkind);
	qs->gkind = NULL;
	if (!(qs->kind = malloc(nq * sizeof(int))) || !(qs->gkind = malloc(nq * sizeof(int))))
		return hb_runtime_error(err, "jabas %s: out of memory", job->name);
	qs->nkind = 0;
	qs->maxu = 0;
	for (int n = 0; n < st->nq; n++) {
		int k = hb_iidp_node_kind(job->solver, st->q_node[n]), j = 0;

		for (; j < n && hb_iidp_node_kind(job->solver, st->q_node[j]) != k; j++)
			;
		if (j < n) {
			qs->kind[n] = qs->kind[j];
		} else {
			qs->gkind[qs->nkind] = k;
			qs->kind[n] = qs->nkind++;
		}
		if (ngpus[n] / JABAS_UNIT_GPUS > qs->maxu)
			qs->maxu = ngpus[n] / JABAS_UNIT_GPUS;
	}
	qs->hlen = qs->nkind * (qs->maxu + 1);
	free(qs->hist);
	if (!(qs->hist = malloc((size_t)qs->hlen * sizeof(*qs->hist) + 1)))
		return hb_runtime_error(err, "jabas %s: out of memory", job->name);
	/* The kept block holds units of the last offer's nodes. */
	if (qs->cap) {
		if (!(units = realloc(qs->units, qs->cap * nq * sizeof(*units))))
			return hb_runtime_error(err, "jabas %s: out of memory", job->name);
		qs->units = units;
	}
	return 0;
}

/* st->qs from the keys' last candidates of st->q's first rank_units units
 * (hb_alloc_last_by_key, local kinds as the keys' kinds: they map one to
 * one onto the solver's), in Q's order, each with its store entry. */
static int items_build(const struct hb_sim_job *job, struct jabas_state *st, int rank_units, struct hb_error *err)
{
	struct q_shapes *qs = &st->qs;
	const size_t nq = (size_t)(st->nq > 0 ? st->nq : 1);
	struct hb_alloc_last last;

	if (hb_alloc_last_by_key(&st->q, rank_units, qs->kind, qs->nkind, &last, err) < 0) {
		hb_alloc_last_free(&last);
		hb_error_prefix(err, "jabas %s", job->name);
		return -1;
	}
	if (jabas_shapes_reserve(qs, last.n + 1, nq) < 0) {
		hb_alloc_last_free(&last);
		return hb_runtime_error(err, "jabas %s: out of memory", job->name);
	}
#ifdef JABAS_QMEMO_VERIFY
	/* Test builds: the node-by-node construction against the search of
	 * every candidate (alloc_last.c). */
	{
		struct hb_alloc_last all;
		int same;

		if (hb_alloc_last_by_key_search(&st->q, rank_units, qs->kind, qs->nkind, &all, err) < 0) {
			hb_alloc_last_free(&last);
			return -1;
		}
		same = all.n == last.n && memcmp(all.total, last.total, last.n * sizeof(int)) == 0 &&
		       memcmp(all.node_units, last.node_units, last.n * (size_t)st->nq * sizeof(int)) == 0;
		hb_alloc_last_free(&all);
		if (!same) {
			hb_alloc_last_free(&last);
			return hb_runtime_error(err, "jabas %s: the keys' last candidates are not the search's",
						job->name);
		}
		hb_jabas_lastkey_verified++;
		hb_jabas_lastkey_keys += (long)last.n;
	}
#endif
	for (size_t j = 0; j < last.n; j++) {
		const int *u = last.node_units + j * (size_t)st->nq;
		uint16_t *row = qs->hist;

		memset(row, 0, (size_t)qs->hlen * sizeof(*row));
		for (int n = 0; n < st->nq; n++)
			if (u[n] > 0)
				row[qs->kind[n] * (qs->maxu + 1) + u[n]]++;
		if (store_find(job, st, row, u, j, &qs->ent[j], err) < 0) {
			hb_alloc_last_free(&last);
			return -1;
		}
		memcpy(qs->units + j * nq, u, (size_t)st->nq * sizeof(*u));
	}
	qs->n = last.n;
	hb_alloc_last_free(&last);
	return 0;
}


/* hb_alloc_visit_upto's visitor when only Q's description is wanted
 * (no candidate: at most 0 units). */
static int describe_only(void *ctx, size_t i, const int *node_units, int total)
{
	(void)ctx;
	(void)i;
	(void)node_units;
	(void)total;
	return 0;
}

/* The layout of the offer whose q (its description: classes, no
 * candidates) build_q holds, ranked up to max_units units, into st->sig
 * (struct q_memo says why it names the items): q's nodes, the
 * units, then each node's solver kind, class and units.  Returns its
 * words. */
static size_t q_layout_sig(const struct hb_sim_job *job, struct jabas_state *st, const int *ngpus, int max_units)
{
	uint64_t *g = st->sig;
	size_t k = 0;

	g[k++] = (uint64_t)(uint32_t)st->nq;
	g[k++] = (uint64_t)(uint32_t)max_units;
	for (int n = 0; n < st->nq; n++) {
		g[k++] = (uint64_t)(uint32_t)hb_iidp_node_kind(job->solver, st->q_node[n]);
		g[k++] = (uint64_t)(uint32_t)st->q.node_class[n];
		g[k++] = (uint64_t)(uint32_t)(ngpus[n] / JABAS_UNIT_GPUS);
	}
	return k;
}

/* st->qs from a memo's items (every shape is in the store, its bounds
 * held). */
static int memo_use(struct jabas_state *st, const struct q_memo_entry *e)
{
	struct q_shapes *qs = &st->qs;
	const size_t nq = (size_t)(st->nq > 0 ? st->nq : 1);
	int *units;

	/* items_begin did not run: the kept units block holds the last
	 * offer's nodes. */
	if (qs->cap) {
		if (!(units = realloc(qs->units, qs->cap * nq * sizeof(*units))))
			return -1;
		qs->units = units;
	}
	qs->n = 0;
	if (jabas_shapes_reserve(qs, e->n + 1, nq) < 0)
		return -1;
	memcpy(qs->ent, e->ent, e->n * sizeof(*e->ent));
	memcpy(qs->units, e->units, e->n * (size_t)st->nq * sizeof(*e->units));
	qs->n = e->n;
	return 0;
}

/* Keep the items just built (st->qs) under layout sig.  Out of memory,
 * nothing is kept (the memo may forget). */
static void memo_save(struct jabas_state *st, const uint64_t *sig, size_t nsig, uint64_t h)
{
	struct q_memo *m = &st->memo;
	const struct q_shapes *qs = &st->qs;
	const size_t nu = qs->n * (size_t)st->nq, words = nsig + qs->n + nu;
	struct q_memo_entry e = { .hash = h, .nsig = nsig, .n = qs->n };

	if (words > Q_MEMO_WORDS)
		return;
	if (m->n == Q_MEMO_MAX || m->words + words > Q_MEMO_WORDS)
		jabas_memo_clear(m);
	if (!m->e && !(m->e = malloc(Q_MEMO_MAX * sizeof(*m->e))))
		return;
	e.sig = malloc(nsig * sizeof(*e.sig));
	e.ent = malloc((qs->n ? qs->n : 1) * sizeof(*e.ent));
	e.units = malloc((nu ? nu : 1) * sizeof(*e.units));
	if (!e.sig || !e.ent || !e.units) {
		free(e.sig);
		free(e.ent);
		free(e.units);
		return;
	}
	memcpy(e.sig, sig, nsig * sizeof(*sig));
	memcpy(e.ent, qs->ent, qs->n * sizeof(*e.ent));
	memcpy(e.units, qs->units, nu * sizeof(*e.units));
	m->e[m->n++] = e;
	m->words += words;
}

/* Q over avail (GPUs per node; NULL = the whole cluster), without the
 * candidates above max_gpus, as its answer keys' last candidates st->qs
 * (items_build) and its classes st->q.  A shared
 * cluster's offer becomes a copy of the cluster whose nodes hold only the
 * offered GPUs, so the candidates, their order and the merging of identical
 * servers are those of §4.3 on that smaller cluster.  The copy keeps only
 * the nodes with GPUs to offer (st->q_node): a node with none takes no unit
 * in any candidate, forms a class of its own kind and is skipped by the
 * enumeration's order, so Q is the same, in the same order, with the same
 * classes among the offered nodes; an offer spans a few of the cluster's
 * hundreds of nodes.  Only the candidates of at most use_gpus GPUs
 * (usable_gpus) are ranked, the first ones of Q; st->ncand_cap counts those
 * within max_gpus.  The items and the count are a function of (avail,
 * max_gpus, use_gpus): the
 * last ones are kept while an offer repeats (a third of a Philly replay's
 * epoch ends, and half of its candidates, were offered what they had been
 * offered the epoch before).  Another offer whose layout the job has met
 * before (struct q_memo) takes that offer's items, made only as far as q's
 * description. */
static int build_q(const struct hb_sim *sim, const struct hb_sim_job *job, struct jabas_state *st, const int *avail,
		   int max_gpus, int use_gpus, struct hb_error *err)
{
	struct hb_cluster sub = *sim->cl;
	struct hb_node *nodes = NULL;
	int rc, offered = 0, *ngpus;
	const size_t offer_bytes = (size_t)st->nnodes * sizeof(int);

	if (avail && st->q_max >= 0 && max_gpus == st->q_max && use_gpus == st->q_use &&
	    memcmp(avail, st->q_offer, offer_bytes) == 0)
		return 0;
	st->q_max = -1;
	hb_alloc_free(&st->q);
	st->nq = 0;
	sub.ngpus = 0;
	for (int n = 0; n < st->nnodes; n++) {
		int g = avail ? avail[n] : sim->cl->nodes[n].ngpus;

		offered += g > 0;
		sub.ngpus += g;
	}
	/* Room for the offered nodes only (all when none is offered, below):
	 * a node record is a few hundred bytes, and an offer spans a handful
	 * of a Philly cluster's 384 nodes. */
	nodes = malloc((size_t)(offered > 0 ? offered : (st->nnodes > 0 ? st->nnodes : 1)) * sizeof(*nodes));
	if (!nodes)
		return hb_runtime_error(err, "jabas %s: out of memory", job->name);
	if ((!st->q_node && !(st->q_node = malloc((size_t)(st->nnodes > 0 ? st->nnodes : 1) * sizeof(int)))) ||
	    (!st->sig && !(st->sig = malloc((3 * (size_t)st->nnodes + 2) * sizeof(*st->sig))))) {
		free(nodes);
		return hb_runtime_error(err, "jabas %s: out of memory", job->name);
	}
	/* q_node's GPUs, for items_begin (scratch: the chosen-allocation row). */
	ngpus = st->work + st->nnodes;
	for (int n = 0; n < st->nnodes; n++) {
		int g = avail ? avail[n] : sim->cl->nodes[n].ngpus;

		/* Nothing offered anywhere: the whole cluster, for enumerate's own
		 * message. */
		if (g <= 0 && offered > 0)
			continue;
		nodes[st->nq] = sim->cl->nodes[n];
		nodes[st->nq].ngpus = g;
		ngpus[st->nq] = g;
		st->q_node[st->nq++] = n;
	}
	sub.nodes = nodes;
	sub.nnodes = st->nq;
	/* Q is ordered by size: the candidates up to use_gpus are its first
	 * ones, ranked by their items, and the others are only counted. */
	if (st->store.n >= SHAPE_STORE_MAX) {
		/* the memo's shapes are the store's entries */
		jabas_store_clear(&st->store, st->solver);
		jabas_memo_clear(&st->memo);
		jabas_picks_clear(&st->picks);
	}
	{
		uint64_t cnt = 0, h = 0;
		const int rank_units = (use_gpus < max_gpus ? use_gpus : max_gpus) / JABAS_UNIT_GPUS;
		const struct q_memo_entry *hit = NULL;
		size_t nsig = 0;

		/* q's description (classes, no candidate), which the items are
		 * built from, then the memo (struct q_memo) by its layout. */
		rc = hb_alloc_visit_upto(&sub, sim->cat, JABAS_UNIT_GPUS, JABAS_MERGE_SERVERS, 0, 0, &st->q,
					 describe_only, NULL, err);
		if (rc == 0 && avail) {
			nsig = q_layout_sig(job, st, ngpus, rank_units);
			h = jabas_key_hash(st->sig, nsig);
			hit = jabas_memo_find(&st->memo, st->sig, nsig, h);
		}
#ifdef JABAS_QMEMO_VERIFY
		/* Test builds (tests/arbiter_jabas: test_jabas_qmemo): a hit is
		 * built too, and must be that build. */
		if (rc == 0 && hit) {
			if (items_begin(job, st, ngpus, err) < 0 || items_build(job, st, rank_units, err) < 0) {
				free(nodes);
				return -1;
			}
			if (st->qs.n != hit->n || memcmp(st->qs.ent, hit->ent, hit->n * sizeof(*hit->ent)) != 0 ||
			    memcmp(st->qs.units, hit->units, hit->n * (size_t)st->nq * sizeof(int)) != 0) {
				free(nodes);
				return hb_runtime_error(err, "jabas %s: the memo's items are not the offer's", job->name);
			}
			hb_jabas_qmemo_verified++;
		}
#endif
		if (rc == 0 && hit) {
			rc = memo_use(st, hit) < 0 ? hb_runtime_error(err, "jabas %s: out of memory", job->name) : 0;
		} else if (rc == 0) {
			rc = items_begin(job, st, ngpus, err) < 0 || items_build(job, st, rank_units, err) < 0 ? -1 : 0;
			if (rc == 0 && nsig > 0)
				memo_save(st, st->sig, nsig, h);
			if (rc < 0) {
				/* the error is the agent's own, its words in err */
				free(nodes);
				return -1;
			}
		}
		if (rc == 0)
			rc = hb_alloc_count_upto(&sub, sim->cat, JABAS_UNIT_GPUS, JABAS_MERGE_SERVERS,
						 max_gpus / JABAS_UNIT_GPUS, &cnt, err);
		st->ncand_cap = (size_t)cnt;
	}
	free(nodes);
	if (rc < 0) {
		if (avail)
			hb_error_prefix(err, "jabas %s: candidate allocations in %d GPUs of %s (JABAS runs on GPU pairs)",
					job->name, sub.ngpus, sim->cl->name);
		else
			hb_error_prefix(err, "jabas %s: candidate allocations on %s", job->name, sim->cl->name);
		return -1;
	}
	if (avail) {
		if (!st->q_offer && !(st->q_offer = malloc(offer_bytes ? offer_bytes : 1)))
			return hb_runtime_error(err, "jabas %s: out of memory", job->name);
		memcpy(st->q_offer, avail, offer_bytes);
		st->q_max = max_gpus;
		st->q_use = use_gpus;
	}
	return 0;
}

/* The most GPUs a candidate can hold and still run B_G bs: IIDP gives each
 * of its N_H = GPUs / 2 pairs at least one of the M = round(B_G / B_L / 2)
 * workers, and M only falls as B_L grows from minB_L (Algorithm 1 stops at
 * the first B_L with M < N_H), so a candidate above 2 round(B_G / minB_L / 2)
 * GPUs has no configuration at bs.  The estimate always visits its
 * trajectory's first point, so with bs that point such a candidate is
 * infeasible and never the argmin: the offer is bounded by what the job's
 * batch can use (a large offer to a job at a small B_G held 10^5 candidates
 * of which a few hundred could run). */
static int usable_gpus(const struct hb_sim_job *job, long bs)
{
	long m = hb_iidp_round_m(bs, job->perf->min_lbs);

	return m > INT_MAX / 2 ? INT_MAX : (int)(2 * m);
}

/* Item i's candidate as GPUs per cluster node, into alloc (nnodes
 * entries): i is what a ranking answers, the item's last. */
static int *cand_expand(const struct jabas_state *st, size_t i, int *alloc)
{
	const int *u = st->qs.units + i * (size_t)st->nq;

	memset(alloc, 0, (size_t)st->nnodes * sizeof(int));
	for (int n = 0; n < st->nq; n++)
		alloc[st->q_node[n]] = u[n] * st->q.unit;
	return alloc;
}

static int alloc_ngpus(const int *alloc, int n)
{
	int g = 0;

	for (int i = 0; i < n; i++)
		g += alloc[i];
	return g;
}

/* Among the identical nodes of each class of st->q, give the largest counts
 * of alloc to the nodes where cur holds the most GPUs (ties to the lower
 * index): the same allocation up to identical servers, with the most GPUs
 * in common with cur (pairing both in descending order maximises the sum
 * of minima).  alloc is rewritten in place. */
static void keep_nodes(struct jabas_state *st, const int *cur, int *alloc)
{
	int *count = st->work + 2 * (size_t)st->nnodes, *order = st->work + 3 * (size_t)st->nnodes;

	/* Only q's nodes: the others are in no class of q. */
	for (int c = 0; c < st->q.nclasses; c++) {
		int k = 0;

		for (int n = 0; n < st->nq; n++)
			if (st->q.node_class[n] == c)
				order[k++] = st->q_node[n];
		/* Insertion sorts: classes are a handful of nodes. */
		for (int a = 0; a < k; a++)
			count[a] = alloc[order[a]];
		for (int a = 1; a < k; a++)
			for (int b = a; b > 0 && count[b] > count[b - 1]; b--) {
				int t = count[b];

				count[b] = count[b - 1];
				count[b - 1] = t;
			}
		for (int a = 1; a < k; a++)
			for (int b = a; b > 0 && cur[order[b]] > cur[order[b - 1]]; b--) {
				int t = order[b];

				order[b] = order[b - 1];
				order[b - 1] = t;
			}
		for (int a = 0; a < k; a++)
			alloc[order[a]] = count[a];
	}
}

/* argmin over Q of the predicted epoch time of traj; ties go to the later
 * candidate ("<=", §4.3 [C]: Q grows in units, so ties go to more GPUs).
 * *best = -1 when no candidate can run every trajectory point.  Ranked by
 * answer key (st->qs), each estimated at most once: the candidates of a
 * key share its estimate, so of tied candidates the later is the one whose
 * key's last candidate comes later, and the least (epoch time, -last) over
 * the items is the very candidate a visit of every candidate would pick.
 * hb_jabas_rank_shapes skips (exactly) the items whose epoch lower bound
 * exceeds the best time found.  A ranking of the same inputs as one of the
 * job's last ones is that one's answer (struct pick_memo). */
static int pick_allocation(struct hb_sim_job *job, struct jabas_state *st, const long *traj, size_t ntraj,
			   long done_in_block, const struct hb_jabas_first *first, long *best, double *best_s,
			   struct hb_error *err)
{
	static const struct hb_jabas_first none = { HB_IIDP_M_ROUND, 0 }; /* the memo's key of NULL */
	const struct hb_jabas_first *fk = first ? first : &none;
	struct q_shapes *qs = &st->qs;
	/* A trajectory of one point runs it to the end of the data
	 * (hb_jabas_epoch_time_shape: the last point's steps are
	 * floor(rem / B_G) + 1 whatever the block's done iterations), so the
	 * ranking does not read done_in_block then, and the memo keys it as 0:
	 * epochs shorter than p end at a different point of their block each
	 * time (8.5 % of the rankings on two Philly days, whose hits rose
	 * from 83 to 8.5 k). */
	const long done = ntraj == 1 ? 0 : done_in_block;
	const uint64_t h = jabas_pick_hash(qs, traj, ntraj, done, fk);
	const struct pick_memo_entry *hit = jabas_pick_find(&st->picks, qs, h, traj, ntraj, done, fk);

#ifndef JABAS_QMEMO_VERIFY
	if (hit) {
		*best = hit->best;
		*best_s = hit->best_s;
		return 0;
	}
#endif
	for (size_t j = 0; j < qs->n; j++) {
		qs->order[j].shape = &st->store.sh[qs->ent[j]];
		qs->order[j].bound = &st->store.bnd[qs->ent[j]];
		qs->order[j].last = j;
	}
	if (hb_jabas_rank_shapes(job->solver, qs->order, qs->n, traj, (int)ntraj, st->p, done_in_block,
				 job->model->dataset_size, first, best, best_s, NULL, err) < 0) {
		hb_error_prefix(err, "jabas %s", job->name);
		return -1;
	}
#ifdef JABAS_QMEMO_VERIFY
	/* Test builds (tests/arbiter_jabas: test_jabas_qmemo): a hit is
	 * ranked too, and must be that ranking. */
	if (hit) {
		if (hit->best != *best || memcmp(&hit->best_s, best_s, sizeof(double)) != 0)
			return hb_runtime_error(err, "jabas %s: the ranking memo's answer (%ld, %.17g) is not the "
						"ranking's (%ld, %.17g)", job->name, hit->best, hit->best_s, *best, *best_s);
		hb_jabas_pickmemo_verified++;
		hb_jabas_pickmemo_onepoint_verified += ntraj == 1 && done_in_block != 0;
		return 0;
	}
#endif
	jabas_pick_save(&st->picks, qs, h, traj, ntraj, done, fk, *best, *best_s);
	return 0;
}

static int jabas_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct jabas_state *st = calloc(1, sizeof(*st));
	struct hb_job_config cfg;
	long init_bs = job->min_gbs, best;
	const struct hb_jabas_first exact = { HB_IIDP_M_EXACT, 0 }, *first = &exact;
	double best_s;
	int found, rc;

	(void)state;
	if (!st)
		return hb_runtime_error(err, "jabas %s: out of memory", job->name);
	job->agent_state = st;
	st->nnodes = sim->cl->nnodes;
	st->q_max = -1;
	st->pool = sim->pool;
	st->solver = job->solver;
	hb_fc_prefit_init(&st->pre);
	/* Under the dedicated arbiter Q spans the cluster, built once; under a
	 * shared one it spans the grant now and the offer at each epoch end. */
	st->shared = sim->arbiter != &hb_arbiter_dedicated;
	st->work = malloc(4 * (size_t)(st->nnodes > 0 ? st->nnodes : 1) * sizeof(int));
	if (!st->work)
		return hb_runtime_error(err, "jabas %s: out of memory", job->name);
	st->p = hb_agent_interval(sim, NULL, job);
	if (st->p < 1)
		return hb_input_error(err, "jabas %s: adaptation interval %ld must be >= 1", job->name, st->p);
	if (init_bs < 1)
		return hb_input_error(err, "jabas %s: minimum global batch %ld must be >= 1", job->name, init_bs);
	if (build_q(sim, job, st, st->shared ? job->grant : NULL, st->shared ? job->ngrant : sim->cl->ngpus,
		    st->shared ? usable_gpus(job, init_bs) : sim->cl->ngpus, err) < 0)
		return -1;

	/* Initial phase (§4.3, §10.13): B_G^init for the whole epoch.  A
	 * one-point trajectory is that constant trajectory: the estimate's last
	 * point runs to the end of the epoch.  Every candidate runs B_G^init
	 * itself (autoscale.h struct hb_jabas_first: the artifact's initial
	 * configuration solver), so the argmin is the fastest iteration at that
	 * batch.  Only where no candidate can (no B_L gives B_G^init = 2 M B_L
	 * with M >= N_H, which the artifact answers "No solution") is
	 * B_G^init rounded as Algorithm 1 rounds it. */
	if (pick_allocation(job, st, &init_bs, 1, 0, &exact, &best, &best_s, err) < 0)
		return -1;
	if (best < 0) {
		first = NULL;
		if (pick_allocation(job, st, &init_bs, 1, 0, NULL, &best, &best_s, err) < 0)
			return -1;
		if (best >= 0)
			hb_sim_note(sim, job, "autoscale", "no allocation runs B_G^init %ld exactly (B_G = 2 M B_L, M >= N_H): "
				    "rounded as Algorithm 1", init_bs);
	}
	if (best < 0)
		return hb_input_error(err, "jabas %s: no allocation of %s can run B_G %ld", job->name,
				      sim->cl->name, init_bs);
	if (config_round(sim, job, st, cand_expand(st, (size_t)best, st->work + st->nnodes), init_bs, first, &cfg,
			 &found, err) < 0)
		return -1;
	if (!found)
		return hb_runtime_error(err, "jabas %s: candidate %ld has an epoch estimate but no configuration",
					job->name, best);
	/* Shared: GPUs of the grant the argmin leaves out go back to the pool. */
	if (st->shared && hb_sim_resize_grant(sim, job, cfg.alloc, err) < 0) {
		hb_job_config_free(&cfg);
		return -1;
	}
	rc = hb_sim_apply(sim, job, &cfg, HB_APPLY_START, "initial phase: least epoch time at B_G^init", err);
	hb_job_config_free(&cfg);
	return rc;
}

/* ---- adaptive batching (§4.1) ---------------------------------------------- */

/* SimiGrad's rule (§4.1) on the realised B_G, as the artifact applies it:
 * B_G' = B_G (1 ± α) clipped to the bounds, rounded to the nearest integer
 * (the paper and artifact do not say how; the solver rounds it again to
 * 2 M B_L, §3).  Unlike the SimiGrad baseline (agent_simigrad.c), no
 * unrounded target is carried: the run-time parity rule always moves the
 * realised B_G strictly in the direction asked for (or skips the step), and
 * IIDP's steps of 2 B_L are finer than α once B_G is a few hundred. */
static long simigrad_next(const struct hb_sim_job *job, long bs, double phi)
{
	const struct hb_simigrad_params sp = {
		.gamma = job->gamma,
		.alpha = job->model->adapt_rate,
		.min_gbs = job->min_gbs,
		.max_gbs = job->max_gbs,
	};

	return (long)floor(hb_simigrad_step(&sp, (double)bs, phi, NULL) + 0.5);
}

static int history_add(struct jabas_state *st, double step, double bs, struct hb_error *err)
{
	return hb_fc_series_add(&st->hist_step, &st->hist_bs, &st->nhist, &st->cap_hist, st->epoch_start, step, bs,
				err);
}

static void prefit_task(void *ctx, int task, int worker)
{
	(void)task;
	(void)worker;
	hb_fc_prefit_run(ctx);
}

/* After an adaptation point: when the engine will end the epoch before the
 * next one (sim.c's schedule_next: iterations to the epoch's end against
 * those to the next point, the epoch's end handled first when they meet)
 * and the job will not finish first, the history the epoch end forecasts
 * from is final, so its fits are posted to the run's pool, for a worker
 * to make while the simulation goes on.  Only a guess that saves time:
 * jabas_on_epoch_end uses them only if they match (hb_fc_prefit), and
 * claims back fits no worker has started, to make them itself. */
static int prefit_post(struct hb_sim *sim, const struct hb_sim_job *job, struct jabas_state *st,
		       struct hb_error *err)
{
	const double D = job->model->dataset_size, b = (double)job->cfg.global_bs;
	const struct hb_fc_history h = { .step = st->hist_step, .batch = st->hist_bs, .n = st->nhist,
					 .epoch_start = st->epoch_start };
	double to_end;

	if (hb_pool_threads(sim->pool) < 2 || !(b > 0) || st->nhist == 0)
		return 0;
	to_end = ceil((D - job->epoch_samples) / b - 1e-9);
	if (!(to_end <= job->next_adapt_iter - job->iters + 1e-9))
		return 0; /* another adaptation point comes first */
	if (job->eff > 0 && (job->target - job->progress) / (b * job->eff) < to_end)
		return 0; /* the job finishes first */
	if (floor(floor(D / b) / (double)st->p) < 1 || !hb_fc_prefit_wanted(&h, JABAS_FORECAST))
		return 0; /* an epoch shorter than p, or a flat history: no fit (hb_fc_trajectory) */
	hb_pool_claim(sim->pool, &st->pre_bg); /* a guess made before, wrong */
	if (hb_fc_prefit_set(&st->pre, &h, JABAS_FORECAST, hb_fc_epoch_seed(sim->opts.seed, job->id, job->epoch + 1),
			     sim->pool, err) < 0) {
		hb_error_prefix(err, "jabas %s", job->name);
		return -1;
	}
	st->pre_posted = hb_pool_post(sim->pool, &st->pre_bg, prefit_task, &st->pre);
	return 0;
}

/* The adaptation step from B_G cur to next on the job's GPUs: *found and,
 * when found, *cfg (the caller frees it), from the memo (struct
 * adapt_memo) or from the solver, then kept. */
static int adapt_step(struct hb_sim *sim, struct hb_sim_job *job, struct jabas_state *st, long cur, long next,
		      struct hb_job_config *cfg, int *found, struct hb_error *err)
{
	struct adapt_memo *m = &st->adapt;
	const size_t abytes = (size_t)st->nnodes * sizeof(int);
	struct hb_iidp_request req = {
		.alloc = job->cfg.alloc,
		.global_bs = next,
		.m_rule = HB_IIDP_M_RUNTIME,
		.cur_global_bs = cur,
	};
	struct hb_iidp_result r;
	struct adapt_memo_entry *e;
	int rc = 0;
#ifdef JABAS_QMEMO_VERIFY
	const struct adapt_memo_entry *hit = NULL;
#endif

	*found = 0;
	if (m->alloc && memcmp(m->alloc, job->cfg.alloc, abytes) == 0) {
		for (int i = 0; i < m->n; i++) {
			e = &m->e[i];
			if (e->cur != cur || e->next != next)
				continue;
#ifdef JABAS_QMEMO_VERIFY
			/* Test builds: a hit is solved too, and must be that
			 * answer (below). */
			hit = e;
			break;
#endif
			*found = e->found;
			if (e->found) {
				struct hb_job_config kept = e->cfg;

				kept.alloc = m->alloc; /* the job's GPUs */
				memset(cfg, 0, sizeof(*cfg));
				if (hb_job_config_copy(cfg, &kept, st->nnodes) < 0) {
					hb_job_config_free(cfg);
					return hb_runtime_error(err, "jabas %s: out of memory for a configuration",
								job->name);
				}
			}
			return 0;
		}
	} else {
		/* new GPUs: the answers of the old ones go */
		if (!m->alloc && !(m->alloc = malloc(abytes ? abytes : 1)))
			return hb_runtime_error(err, "jabas %s: out of memory", job->name);
		memcpy(m->alloc, job->cfg.alloc, abytes);
		m->n = m->next = 0;
	}
	if (hb_iidp_solve(job->solver, &req, &r, err) < 0) {
		hb_error_prefix(err, "jabas %s: adaptation to B_G %ld", job->name, next);
		return -1;
	}
	*found = r.found;
	if (r.found)
		rc = config_from_result(sim, job, st, job->cfg.alloc, &r, cfg, err);
	hb_iidp_result_free(&r);
	if (rc < 0)
		return -1;
#ifdef JABAS_QMEMO_VERIFY
	if (hit) {
		if (hit->found != *found ||
		    (*found && (hit->cfg.ngpus != cfg->ngpus || hit->cfg.global_bs != cfg->global_bs ||
				hit->cfg.local_bs != cfg->local_bs ||
				memcmp(&hit->cfg.iter_s, &cfg->iter_s, sizeof(double)) != 0 ||
				memcmp(&hit->cfg.overhead_per_iter_s, &cfg->overhead_per_iter_s, sizeof(double)) != 0 ||
				strcmp(hit->cfg.layout, cfg->layout) != 0))) {
			if (*found)
				hb_job_config_free(cfg);
			return hb_runtime_error(err, "jabas %s: the adaptation memo's answer to B_G %ld -> %ld is not "
						"the solver's", job->name, cur, next);
		}
		hb_jabas_adaptmemo_verified++;
		return 0;
	}
#endif
	e = &m->e[m->next];
	e->cur = cur;
	e->next = next;
	e->found = *found;
	if (*found) {
		e->cfg = *cfg;
		e->cfg.alloc = NULL;
		e->cfg.gpu_local_bs = NULL; /* an IIDP configuration has none */
	}
	m->next = (m->next + 1) % ADAPT_MEMO_MAX;
	if (m->n < ADAPT_MEMO_MAX)
		m->n++;
	return 0;
}

static int jabas_on_adapt(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct jabas_state *st = job->agent_state;
	const long cur = job->cfg.global_bs;
	double phi = 0.0;
	long next;
	int rc = 0;

	(void)state;
	/* Replay mode: the recorded schedule replaces the similarity rule. */
	if (!hb_sim_replay_gbs(sim, job, &next)) {
		phi = hb_sim_observe_similarity(sim, job);
		next = simigrad_next(job, cur, phi);
	}

	if (next != cur) {
		struct hb_job_config cfg;
		int found = 0;

		if (adapt_step(sim, job, st, cur, next, &cfg, &found, err) < 0)
			return -1;
		/* No feasible configuration (every B_L fails the parity rule or
		 * memory): keep the current one (§4.1: the step is skipped). */
		if (found) {
			char why[160];

			if (config_changed(&cfg, &job->cfg)) {
				snprintf(why, sizeof(why), "similarity %.4f %s gamma %.4g: B_G %ld -> %ld (target %ld)",
					 phi, phi < job->gamma ? "<" : ">", job->gamma, cur, cfg.global_bs, next);
				rc = hb_sim_apply(sim, job, &cfg, HB_APPLY_INPLACE, why, err);
			}
			hb_job_config_free(&cfg);
		}
		if (rc < 0)
			return -1;
	}
	/* ⑦: the realised B_G at this adaptation point feeds the forecaster. */
	if (history_add(st, floor(job->iters + 0.5), (double)job->cfg.global_bs, err) < 0)
		return -1;
	return prefit_post(sim, job, st, err);
}

/* ---- end of epoch: forecast and auto-scale (§4.2, §4.3) --------------------- */

/* Iterations already run in the current p-block (§4.3: the first trajectory
 * point only has p − (sync_step mod p) steps left). */
static long done_in_block(const struct hb_sim_job *job, long p)
{
	double left = job->next_adapt_iter - job->iters;
	long done;

	if (!(left > 0.0) || left > (double)p)
		return 0;
	done = p - (long)ceil(left - 1e-9);
	return done < 0 ? 0 : (done >= p ? p - 1 : done);
}

/* build_q as a pool task (jabas_on_epoch_end): Q over the offer in st->work,
 * bounded by what B_G now can use.  It reads the job, the cluster and the
 * catalog and writes st's Q and shape store and the model's IIDP cache,
 * none of which the forecast running beside it touches; the engine waits
 * for the batch, so nothing else runs. */
struct q_task {
	const struct hb_sim *sim;
	const struct hb_sim_job *job;
	struct jabas_state *st;
	int max_gpus;
	int rc;
	struct hb_error err;
};

static void q_task_run(void *ctx, int task, int worker)
{
	struct q_task *q = ctx;

	(void)task;
	(void)worker;
	q->rc = build_q(q->sim, q->job, q->st, q->st->work, q->max_gpus, usable_gpus(q->job, q->job->cfg.global_bs),
			&q->err);
}

/* traj[0] = B_G_cur, then the forecast at the next epoch's adaptation points
 * (§4.2 "Query points"), clipped to the bounds (hb_fc_trajectory), with
 * beside(beside_ctx, 0, worker) run once on the run's threads beside the
 * fits (NULL: nothing), or serially when the fits were made ahead; the
 * caller frees *traj. */
static int build_trajectory(struct hb_sim *sim, struct hb_sim_job *job, struct jabas_state *st,
			    hb_pool_fn *beside, void *beside_ctx, long **traj, size_t *ntraj, struct hb_error *err)
{
	/* the fits made ahead (prefit_post), if a worker made them; else
	 * they are withdrawn and made here, on all the run's threads */
	const int pre = hb_pool_claim(sim->pool, &st->pre_bg);
	const struct hb_fc_history h = { .step = st->hist_step, .batch = st->hist_bs, .n = st->nhist,
					 .epoch_start = st->epoch_start };
	const struct hb_fc_traj_spec spec = {
		.method = JABAS_FORECAST,
		.seed = hb_fc_epoch_seed(sim->opts.seed, job->id, job->epoch),
		.interval = (double)st->p,
		.sync_step = floor(job->iters + 0.5),
		.dataset = job->model->dataset_size,
		.cur_bs = job->cfg.global_bs,
		.min_bs = job->min_gbs,
		.max_bs = job->max_gbs,
		.pool = sim->pool, /* the run's threads: the same trajectory, sooner */
		.beside = beside,
		.beside_ctx = beside_ctx,
		.prefit = pre ? &st->pre : NULL,
	};

	st->pre_posted = 0;
	if (hb_fc_trajectory(&h, &spec, traj, ntraj, err) < 0) {
		hb_error_prefix(err, "jabas %s: forecast after epoch %ld", job->name, job->epoch);
		return -1;
	}
	return 0;
}

static int jabas_on_epoch_end(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct jabas_state *st = job->agent_state;
	long *traj = NULL, best;
	size_t ntraj = 0;
	int rc = -1, max_gpus = 0;
	double best_s;
	const long done = done_in_block(job, st->p);
	/* The current B_G itself on every candidate (autoscale.h struct
	 * hb_jabas_first: the artifact preserves it, not rounded), at any B_L
	 * (the artifact also pins B_L: autoscale.h says why not); the restart
	 * runs it. */
	static const struct hb_jabas_first keep = { HB_IIDP_M_EXACT, 0 };
	const struct hb_jabas_first *first = &keep;
	struct q_task q = { sim, job, st, 0, 0, { 0 } };

	(void)state;
	/* The offer bounds this decision: Q over it, built beside the
	 * trajectory's fits (its bound, the trajectory's first point, is B_G
	 * now, known before the forecast).  Neither emits a note. */
	if (st->shared)
		hb_sim_offer(sim, job, st->work, &max_gpus);
	q.max_gpus = max_gpus;
	if (st->shared && st->pre_posted) {
		/* A worker has the forecast's fits (prefit_post): Q now, on this
		 * thread, while it makes them. */
		q_task_run(&q, 0, 0);
		if (build_trajectory(sim, job, st, NULL, NULL, &traj, &ntraj, err) < 0)
			goto out;
	} else if (build_trajectory(sim, job, st, st->shared ? q_task_run : NULL, &q, &traj, &ntraj, err) < 0) {
		goto out;
	}
	if (st->shared) {
		if (q.rc < 0) {
			*err = q.err;
			goto out;
		}
		hb_sim_note(sim, job, "offer", "epoch %ld: %d of %d GPUs offered, at most %d, holds %d: %zu candidates",
			    job->epoch, alloc_ngpus(st->work, st->nnodes), sim->cl->ngpus, max_gpus, job->ngrant,
			    st->ncand_cap);
	}
	if (pick_allocation(job, st, traj, ntraj, done, first, &best, &best_s, err) < 0)
		goto out;
	if (best < 0 && st->shared && job->cfg.ngpus > max_gpus) {
		/* Must shrink: rank on the current B_G alone, run exactly, else
		 * rounded (the job must leave GPUs it cannot keep). */
		hb_sim_note(sim, job, "autoscale", "epoch %ld: no allocation within %d GPUs runs the forecast (B_G %ld..%ld): "
			    "ranking on B_G %ld", job->epoch, max_gpus, traj[0], traj[ntraj - 1], traj[0]);
		ntraj = 1;
		if (pick_allocation(job, st, traj, ntraj, done, first, &best, &best_s, err) < 0)
			goto out;
		if (best < 0) {
			first = NULL;
			if (pick_allocation(job, st, traj, ntraj, done, NULL, &best, &best_s, err) < 0)
				goto out;
		}
	}
	if (best < 0) {
		hb_sim_note(sim, job, "autoscale", "epoch %ld: no allocation runs the forecast (B_G %ld..): keep",
			    job->epoch, traj[0]);
	} else {
		int *alloc = cand_expand(st, (size_t)best, st->work + st->nnodes);

		if (st->shared)
			keep_nodes(st, job->cfg.alloc, alloc);
		hb_sim_note(sim, job, "autoscale",
			    "epoch %ld: trajectory of %zu points, B_G %ld..%ld, best %d GPUs (%.1f s/epoch)%s",
			    job->epoch, ntraj, traj[0], traj[ntraj - 1], alloc_ngpus(alloc, st->nnodes),
			    best_s, same_alloc(alloc, job->cfg.alloc, st->nnodes) ? ", keep" : "");
		if (!same_alloc(alloc, job->cfg.alloc, st->nnodes)) {
			struct hb_job_config cfg;
			int found;
			char why[160];

			if (config_round(sim, job, st, alloc, traj[0], first, &cfg, &found, err) < 0)
				goto out;
			if (found) {
				snprintf(why, sizeof(why), "auto-scale: %d -> %d GPUs, predicted epoch %.1f s",
					 job->cfg.ngpus, cfg.ngpus, best_s);
				rc = st->shared ? hb_sim_resize_grant(sim, job, cfg.alloc, err) : 0;
				if (rc == 0)
					rc = hb_sim_apply(sim, job, &cfg, HB_APPLY_RESTART, why, err);
				hb_job_config_free(&cfg);
				if (rc < 0)
					goto out;
			}
		}
	}
	/* The next epoch's points train the next GPR (§4.2). */
	st->epoch_start = st->nhist;
	rc = 0;
out:
	free(traj);
	return rc;
}

const struct hb_agent_ops hb_agent_jabas = {
	.name = "jabas",
	.summary = "IIDP configurations, similarity-driven B_G every p iterations, forecast-driven auto-scaling per epoch",
	.interval = hb_agent_interval,
	.round_s = NULL,      /* no periodic rounds: decisions follow iterations and epochs */
	.start = jabas_start,
	.on_adapt = jabas_on_adapt,
	.on_epoch_end = jabas_on_epoch_end,
	.on_round = NULL,
	.free_job = jabas_free_job,
};
