/*
 * plugin_api.c: the function table hetbatch hands its policy plugins
 * (struct hb_policy_api, include/hetbatch/policy.h), so that a plugin
 * reaches the engine only through these calls and the engine's structs
 * stay free to change.  Each entry is the engine's own service or a field
 * read; nothing here decides anything.
 */
#include "hetbatch/policy.h"
#include "plugin.h"
#include "sim.h"

static int api_nnodes(const struct hb_sim *sim)
{
	return sim->cl->nnodes;
}

static int api_node_gpus(const struct hb_sim *sim, int node)
{
	return node >= 0 && node < sim->cl->nnodes ? sim->cl->nodes[node].ngpus : 0;
}

static int api_node_free(const struct hb_sim *sim, int node)
{
	return node >= 0 && node < sim->cl->nnodes ? sim->free_gpus[node] : 0;
}

static int api_cluster_gpus(const struct hb_sim *sim)
{
	return sim->cl->ngpus;
}

static int api_njobs(const struct hb_sim *sim)
{
	return sim->njobs;
}

static struct hb_sim_job *api_job(struct hb_sim *sim, int id)
{
	return id >= 0 && id < sim->njobs ? &sim->jobs[id] : NULL;
}

static int api_job_id(const struct hb_sim_job *job)
{
	return job->id;
}

static const char *api_job_name(const struct hb_sim_job *job)
{
	return job->name;
}

static int api_job_state(const struct hb_sim_job *job)
{
	return job->state;
}

static double api_job_arrival_s(const struct hb_sim_job *job)
{
	return job->arrival_s;
}

static int api_job_held(const struct hb_sim_job *job)
{
	return job->ngrant;
}

static double api_job_progress(const struct hb_sim_job *job)
{
	double f = job->target > 0 ? job->progress / job->target : 0.0;

	return f < 0 ? 0 : f > 1 ? 1 : f;
}

static void api_note(struct hb_sim *sim, const struct hb_sim_job *job, const char *kind, const char *text)
{
	hb_sim_note(sim, job, kind, "%s", text ? text : "");
}

static int api_error(struct hb_error *err, const char *msg)
{
	return hb_runtime_error(err, "%s", msg ? msg : "policy plugin failed");
}

const struct hb_policy_api hb_plugin_host_api = {
	.version = HB_POLICY_API_VERSION,
	.now = hb_sim_now,
	.nnodes = api_nnodes,
	.node_gpus = api_node_gpus,
	.node_free = api_node_free,
	.cluster_gpus = api_cluster_gpus,
	.online_gpus = hb_sim_online_gpus,
	.njobs = api_njobs,
	.job = api_job,
	.job_id = api_job_id,
	.job_name = api_job_name,
	.job_state = api_job_state,
	.job_arrival_s = api_job_arrival_s,
	.job_gpus = hb_arbiter_job_gpus,
	.job_held = api_job_held,
	.job_attained_gpu_s = hb_sim_attained_gpu_s,
	.job_progress = api_job_progress,
	.place = hb_sim_place,
	.start_job = hb_sim_start_job,
	.regrant = hb_sim_regrant,
	.drop_job = hb_sim_drop_job,
	.note = api_note,
	.error = api_error,
};
