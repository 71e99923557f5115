/*
 * arbiter_sia.c: Sia (Subramanya et al., SOSP'23), heterogeneity-aware
 * goodput-optimised scheduling, as a hetbatch cluster arbiter over the
 * Pollux job agent (sim/policies/pollux/agent_pollux.c), which picks each
 * job's batch size for the GPUs it gets as Sia's adaptive executors do
 * (§3.1; artifact sia-simulator/job.py:Job.update_local_bsz).
 *
 * Every round (60 s, §4.3, artifact --interval):
 *  1. Configurations: per GPU type of the cluster, 1, 2, 4, ... GPUs inside
 *     one node and whole nodes beyond (§3.2, solver/sia_mip.h).
 *  2. Goodput of every active job on every configuration from its Pollux
 *     report (agent_pollux.h): theta_sys fitted on what the job ran,
 *     converted to each GPU type by the type's compute factor (without
 *     --fidelity sia, hetbatch's per-type performance model stands in for
 *     Sia's per-type fits and its 1-GPU ratio projection, §3.1
 *     "Bootstrapping"), the
 *     (m, s) argmax of hb_pollux_report_argmax at the job's gradient
 *     statistics.  Configurations beyond the 2x scale-up cap
 *     (hb_goodput_exploration_cap, §3.1 "Job Scaling policy") or without a
 *     feasible batch are invalid.  A job with nothing observed yet offers
 *     only each type's 1-GPU configuration, valued 1 (artifact sia.py
 *     SiaPolicy.optimize_mip with sia_read_throughputs_before_first_run
 *     False).
 *     Each row is normalised to a minimum of 1 (§3.3).  Under --fidelity
 *     sia the agent fits each GPU type on its own and a type without a fit
 *     is projected from the first fitted one in column order by their
 *     one-GPU rates (artifact sia.py _compute_goodputs_v2 with
 *     --project_throughputs; hb_pollux_report_projected); each running
 *     job first re-picks its batch (hb_pollux_agent_retune), and S is the
 *     artifact's get_restart_penalty.
 *  3. The program of sia_mip.h with the restart factor of Eq. 2 (S_i =
 *     the job's restart cost in this simulator unless set), jobs still
 *     restarting pinned to their configuration (artifact
 *     preserve_ckpt_allocs), solved by GLPK within a time limit; past it
 *     the incumbent is used, and with no incumbent (or a solver failure)
 *     every job keeps its allocation this round (the artifact uses a
 *     non-optimal CBC answer as is; hetbatch's choice where there is none).
 *  4. Placement per type: jobs by GPU count, largest first; multi-node
 *     jobs take whole free nodes, the rest the fullest node that fits
 *     (best fit); a job whose (type, GPUs) is unchanged prefers its own
 *     nodes, so that it keeps its grant and pays no restart.  With
 *     power-of-two node sizes this always succeeds (every free count stays
 *     a multiple of the next job's size); otherwise a job that finds no
 *     room waits a round.
 *  5. Jobs whose grant changes are re-granted (the simulator charges the
 *     restart), suspended when they got nothing, or started.
 * Arrivals and completions wait for the next round, as in the artifact's
 * time-stepped simulator.
 *
 * State: one struct sia_state, made by sia_state_new on the first
 * callback and freed by sia_free; options in struct hb_sia_opts
 * (sia_policy.h), defaults in hb_sia_opts_default.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_pollux.h"   /* hb_pollux_agent_report, hb_pollux_report_argmax */
#include "arbiter_util.h"   /* hb_type_groups, hb_arbiter_apply_grants */
#include "fidelity.h"       /* Sia fidelity: its restart penalty table */
#include "goodput.h"        /* hb_goodput_exploration_cap */
#include "policy.h"
#include "sia_mip.h"        /* the round program */
#include "sia_policy.h"
#include "sim.h"

void hb_sia_opts_default(struct hb_sia_opts *o)
{
	o->round_s = 60.0;
	o->p = -0.5;
	o->lambda_n = 1.1;
	o->clip = 3000.0;
	o->restart_penalty_s = -1.0;
	o->time_limit_s = 10.0;
	o->mip_gap = 1e-4;
}

struct sia_state {
	struct hb_sia_opts opts;
	struct hb_type_groups g; /* the cluster's GPU types */
	struct hb_sia_config *configs;
	int nconfigs;
	int *active;             /* arrived, not finished job ids, arrival order */
	int nactive;
};

static void sia_free(void *state)
{
	struct sia_state *st = state;

	if (st) {
		hb_type_groups_free(&st->g);
		free(st->configs);
		free(st->active);
		free(st);
	}
}

static int sia_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	const struct hb_cluster *cl = sim->cl;
	struct sia_state *st = calloc(1, sizeof(*st));

	(void)opts;
	if (!st)
		goto oom;
	hb_sia_opts_default(&st->opts);
	st->active = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), sizeof(int));
	if (!st->active)
		goto oom;
	if (hb_type_groups_init(&st->g, cl, err) < 0) {
		sia_free(st);
		return -1;
	}
	for (int t = 0; t < st->g.ntypes; t++)
		st->nconfigs += hb_sia_type_nconfigs(st->g.types[t].nnodes, st->g.types[t].per_node);
	st->configs = calloc((size_t)(st->nconfigs > 0 ? st->nconfigs : 1), sizeof(*st->configs));
	if (!st->configs)
		goto oom;
	st->nconfigs = 0;
	for (int t = 0; t < st->g.ntypes; t++)
		hb_sia_type_configs(t, st->g.types[t].nnodes, st->g.types[t].per_node, st->configs, &st->nconfigs);
	*state = st;
	return 0;
oom:
	sia_free(st);
	return hb_runtime_error(err, "sia: out of memory");
}

static int sia_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct sia_state *st = state;

	if (job->agent != &hb_agent_pollux)
		return hb_input_error(err, "sia: job %s runs agent %s; Sia needs the pollux agent (it schedules on "
				      "the goodput functions the agents report)", job->name, job->agent->name);
	if (st->nactive >= sim->njobs)
		return hb_runtime_error(err, "sia: job %s was added after the run started", job->name);
	st->active[st->nactive++] = job->id;
	return 0; /* it waits for the next round */
}

static double sia_round_s(const struct hb_sim *sim, const void *state)
{
	const struct sia_state *st = state;

	(void)sim;
	return st->opts.round_s;
}

/* The configuration a job holds now (-1: none, or none of the set). */
static int current_config(const struct sia_state *st, const struct hb_sim *sim, const struct hb_sim_job *job)
{
	int type = -1, nodes = 0;

	if (!hb_arbiter_holds_gpus(job) || job->ngrant <= 0)
		return -1;
	for (int n = 0; n < sim->cl->nnodes; n++)
		if (job->grant[n] > 0) {
			if (type >= 0 && st->g.node_type[n] != type)
				return -1;
			type = st->g.node_type[n];
			nodes++;
		}
	for (int c = 0; c < st->nconfigs; c++)
		if (st->configs[c].type == type && st->configs[c].gpus == job->ngrant && st->configs[c].nodes == nodes)
			return c;
	return -1;
}

/* Row i of G: the job's goodput on every configuration, normalised. */
static int goodput_row(struct hb_sim *sim, const struct sia_state *st, struct hb_sim_job *job, double *row,
		       struct hb_error *err)
{
	struct hb_pollux_report rep;
	struct hb_goodput_limits lim;
	long min_local = 0;
	int cap, src = -1, src_per_node = 0; /* src: the projection's perf GPU type */

	if (hb_pollux_agent_report(sim, job, &rep, err) < 0)
		return -1;
	/* Sia fidelity: a type without a fit borrows the first fitted type's,
	 * in the cluster's column order (sia.py _compute_goodputs_v2 with
	 * --project_throughputs) */
	for (int k = 0; rep.per_type && rep.fitted && k < st->g.ntypes && src < 0; k++) {
		int pt = job->perf->nodes[st->g.types[k].nodes[0]].gpu;

		if (pt >= 0 && pt < rep.ntypes && rep.types[pt].usable && rep.types[pt].fitted) {
			src = pt;
			src_per_node = st->g.types[k].per_node;
		}
	}
	for (int t = 0; t < rep.ntypes; t++)
		if (rep.types[t].usable && (min_local == 0 || rep.types[t].min_local_bsz < min_local))
			min_local = rep.types[t].min_local_bsz;
	lim = rep.limits;
	lim.min_local_bsz = min_local > 0 ? min_local : 1;
	cap = hb_goodput_exploration_cap(rep.max_replicas_seen, &lim);
	if (rep.replica_cap > 0 && cap > rep.replica_cap)
		cap = rep.replica_cap;
	for (int c = 0; c < st->nconfigs; c++) {
		const struct hb_sia_config *k = &st->configs[c];
		int ptype = job->perf->nodes[st->g.types[k->type].nodes[0]].gpu;
		struct hb_goodput_config gc;

		row[c] = 0.0;
		if (ptype < 0 || ptype >= rep.ntypes || !rep.types[ptype].usable || k->gpus > cap)
			continue;
		if (!rep.fitted) {
			row[c] = k->gpus == 1 ? 1.0 : 0.0; /* every type's 1-GPU column ties */
			continue;
		}
		if (rep.per_type && !rep.types[ptype].fitted) {
			/* goodput_B(ceil(K / R_B) nodes, K) x rate(A) / rate(B) */
			if (src < 0)
				continue;
			if (hb_pollux_report_projected(&rep, ptype, src, src_per_node, k->gpus, &gc, err) < 0)
				return -1;
			row[c] = gc.feasible && gc.goodput > 0 ? gc.goodput : 0.0;
			continue;
		}
		if (hb_pollux_report_argmax(&rep, ptype, k->nodes, k->gpus, &gc, err) < 0)
			return -1;
		row[c] = gc.feasible && gc.goodput > 0 ? gc.goodput : 0.0;
	}
	hb_sia_normalise_row(row, st->nconfigs);
	return 0;
}

/* Place choice[] on the nodes: grant[i * N + n] (zeroed first).  Returns
 * how many chosen jobs found no room (they get nothing this round). */
static int place(struct hb_sim *sim, const struct sia_state *st, struct hb_sim_job **jobs, int J, const int *choice,
		 int *grant, int *order)
{
	int N = sim->cl->nnodes, failed = 0, *free_n = malloc(sizeof(int) * (size_t)(N > 0 ? N : 1));

	if (!free_n)
		return -1;
	memset(grant, 0, sizeof(int) * (size_t)J * (size_t)N);
	for (int n = 0; n < N; n++)
		free_n[n] = hb_sim_node_online(sim, n);
	/* Largest first, then job order (insertion sort: J is small). */
	int k = 0;
	for (int i = 0; i < J; i++) {
		int a;

		if (choice[i] < 0)
			continue;
		for (a = k; a > 0 && st->configs[choice[order[a - 1]]].gpus < st->configs[choice[i]].gpus; a--)
			order[a] = order[a - 1];
		order[a] = i;
		k++;
	}
	for (int q = 0; q < k; q++) {
		int i = order[q];
		const struct hb_sia_config *c = &st->configs[choice[i]];
		const struct hb_type_group *ty = &st->g.types[c->type];
		const int *cur = jobs[i]->grant;
		int keep = hb_arbiter_holds_gpus(jobs[i]) && current_config(st, sim, jobs[i]) == choice[i];
		int *g = grant + (size_t)i * N;

		if (c->nodes > 1) {
			int got = 0;

			/* Its own whole nodes first when it keeps its configuration. */
			for (int pass = keep ? 0 : 1; pass < 2 && got < c->nodes; pass++)
				for (int a = 0; a < ty->nnodes && got < c->nodes; a++) {
					int n = ty->nodes[a];

					if (g[n] || free_n[n] < ty->per_node || (pass == 0 && cur[n] == 0))
						continue;
					g[n] = ty->per_node;
					free_n[n] -= ty->per_node;
					got++;
				}
			if (got < c->nodes) {
				for (int a = 0; a < ty->nnodes; a++) {
					free_n[ty->nodes[a]] += g[ty->nodes[a]];
					g[ty->nodes[a]] = 0;
				}
				failed++;
			}
		} else {
			int best = -1;

			for (int a = 0; a < ty->nnodes; a++) {
				int n = ty->nodes[a];

				if (free_n[n] < c->gpus)
					continue;
				if (keep && cur[n] == c->gpus) {
					best = n;
					break;
				}
				if (best < 0 || free_n[n] < free_n[best])
					best = n;
			}
			if (best < 0) {
				failed++;
				continue;
			}
			g[best] = c->gpus;
			free_n[best] -= c->gpus;
		}
	}
	free(free_n);
	return failed;
}

static int sia_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct sia_state *st = state;
	struct hb_sia_problem pb;
	struct hb_milp_opts mo;
	struct hb_sim_job **jobs = NULL;
	int J = 0, C, N = sim->cl->nnodes, rc = -1, status, changed = 0, unplaced;
	int *prev = NULL, *choice = NULL, *grant = NULL, *order = NULL, *cap = NULL;
	double *G = NULL, *restart = NULL;
	unsigned char *pinned = NULL;

	for (int a = 0; a < st->nactive; a++) /* drop finished jobs */
		if (sim->jobs[st->active[a]].state != HB_JOB_DONE)
			st->active[J++] = st->active[a];
	st->nactive = J;
	if (J == 0)
		return 0;
	C = st->nconfigs;
	jobs = malloc(sizeof(*jobs) * (size_t)J);
	prev = malloc(sizeof(int) * (size_t)J);
	choice = malloc(sizeof(int) * (size_t)J);
	order = malloc(sizeof(int) * (size_t)J);
	grant = malloc(sizeof(int) * (size_t)J * (size_t)(N > 0 ? N : 1));
	cap = malloc(sizeof(int) * (size_t)st->g.ntypes);
	G = malloc(sizeof(double) * (size_t)J * (size_t)C);
	restart = malloc(sizeof(double) * (size_t)J);
	pinned = malloc((size_t)J);
	if (!jobs || !prev || !choice || !order || !grant || !cap || !G || !restart || !pinned) {
		hb_runtime_error(err, "sia: out of memory");
		goto out;
	}
	for (int t = 0; t < st->g.ntypes; t++) {
		cap[t] = 0;
		for (int a = 0; a < st->g.types[t].nnodes; a++)
			cap[t] += hb_sim_node_online(sim, st->g.types[t].nodes[a]);
	}
	for (int i = 0; i < J; i++) {
		struct hb_sim_job *job = &sim->jobs[st->active[i]];
		double S = st->opts.restart_penalty_s >= 0	   ? st->opts.restart_penalty_s
			   : sim->opts.fidelity == HB_FIDELITY_SIA ? hb_fid_sia_restart_penalty_s(job->model->name)
								   : hb_sim_restart_s(sim, job);

		jobs[i] = job;
		/* Sia fidelity: the executor re-picks its batch after every step */
		if (hb_pollux_agent_retune(sim, job, err) < 0 || goodput_row(sim, st, job, G + (size_t)i * C, err) < 0)
			goto out;
		prev[i] = current_config(st, sim, job);
		if (prev[i] >= 0 && !(G[(size_t)i * C + prev[i]] > 0))
			G[(size_t)i * C + prev[i]] = 1.0; /* what it holds stays possible (past the cap after a shrink) */
		pinned[i] = job->state == HB_JOB_RESTARTING && prev[i] >= 0;
		/* Eq. 2: a job that holds nothing now is not charged (artifact). */
		restart[i] = prev[i] >= 0 ? hb_sia_restart_factor(hb_sim_now(sim) - job->arrival_s, job->restarts, S)
					  : 1.0;
	}
	hb_sia_problem_default(&pb);
	pb.njobs = J;
	pb.nconfigs = C;
	pb.ntypes = st->g.ntypes;
	pb.configs = st->configs;
	pb.capacity = cap;
	pb.goodput = G;
	pb.prev = prev;
	pb.restart = restart;
	pb.pinned = pinned;
	pb.p = st->opts.p;
	pb.lambda_n = st->opts.lambda_n;
	pb.clip = st->opts.clip;
	hb_milp_opts_default(&mo);
	mo.time_limit_s = st->opts.time_limit_s;
	mo.mip_gap = st->opts.mip_gap;
	if (hb_sia_solve(&pb, &mo, choice, NULL, &status, err) < 0) {
		/* Keep every allocation this round (the top, item 3); a malformed
		 * problem is a bug, not the solver's outcome. */
		if (status == HB_MILP_NO_SOLUTION || status == HB_MILP_ERROR) {
			hb_sim_note(sim, NULL, "sched", "sia: solver: %s; allocations kept", err->msg);
			hb_error_clear(err);
			rc = 0;
		}
		goto out;
	}
	if (status == HB_MILP_FEASIBLE)
		hb_sim_note(sim, NULL, "sched", "sia: solver stopped at its %.0f s limit; using its incumbent",
			    st->opts.time_limit_s);
	unplaced = place(sim, st, jobs, J, choice, grant, order);
	if (unplaced < 0) {
		hb_runtime_error(err, "sia: out of memory");
		goto out;
	}
	if (unplaced > 0)
		hb_sim_note(sim, NULL, "sched", "sia: %d jobs found no room on their GPU type this round", unplaced);
	if (hb_arbiter_apply_grants(sim, jobs, J, grant, "sia", &changed, err) < 0)
		goto out;
	if (changed > 0)
		hb_sim_note(sim, NULL, "sched", "sia: %d of %d jobs re-allocated", changed, J);
	rc = 0;
out:
	free(jobs);
	free(prev);
	free(choice);
	free(order);
	free(grant);
	free(cap);
	free(G);
	free(restart);
	free(pinned);
	return rc;
}

const struct hb_arbiter_ops hb_arbiter_sia = {
	.name = "sia",
	.summary = "Sia: 60 s rounds, one configuration (GPU type, nodes, GPUs) per job by an integer program "
		   "over normalised goodputs (p = -0.5, lambda 1.1, restart factor), GLPK",
	.init = sia_init,
	.free = sia_free,
	.on_arrival = sia_arrival,
	.on_finish = NULL,       /* freed GPUs are reassigned at the next round */
	.round_s = sia_round_s,
	.on_round = sia_round,
	.on_requeue = hb_arbiter_requeue_round,
	.no_capacity = "sia's configuration set is built from the whole cluster's nodes; it does not follow "
		       "capacity that comes and goes yet",
};
