/*
 * policy.c: the named policies.  A policy is a cluster arbiter and a job
 * agent: on a dedicated cluster (single-job studies) the agent alone decides;
 * when jobs share a cluster (trace replay) the policy's shared arbiter decides
 * which GPUs each job holds.  Help text and `--policy` parsing are generated
 * from this table.
 */
#include <string.h>

#include "easyscale_artifact.h"
#include "fidelity.h"
#include "policy.h"
#include "strutil.h"
#include "suggest.h"

const struct hb_policy hb_policies[] = {
	{ "jabas", &hb_agent_jabas, &hb_arbiter_jabas, "JABAS: IIDP configs, similarity-driven batch, epoch auto-scaling; shared, jabas-share lending" },
	{ "simigrad", &hb_agent_simigrad, &hb_arbiter_fifo, "SimiGrad: similarity-driven batch, equal local batch on all GPUs (shared: its FIFO grant)" },
	{ "pollux", &hb_agent_pollux, &hb_arbiter_pollux, "Pollux: goodput agent; alone, the JABAS port (all GPUs, batch per epoch); shared, PolluxSched" },
	{ "pollux-as", &hb_agent_pollux_as, NULL, "Pollux-AS: Pollux plus node-by-node auto-scaling (U 2/3, L 1/2)" },
	{ "optperf", &hb_agent_optperf, &hb_arbiter_fifo, "Cannikin: OptPerf unequal local batches, goodput-chosen batch (shared: its FIFO grant)" },
	{ "lbbsp", &hb_agent_lbbsp, &hb_arbiter_fifo, "LB-BSP: fixed global batch, delta = 5 re-balancing slowest -> fastest per epoch, overlap ignored (shared: its FIFO grant)" },
	{ "static", &hb_agent_static, &hb_arbiter_fifo, "static DDP: fixed global batch, equal local batch on all GPUs" },
	{ "fifo", &hb_agent_static, &hb_arbiter_fifo, "FIFO with gang placement; jobs keep their requested GPUs and batch" },
	{ "tiresias", &hb_agent_static, &hb_arbiter_tiresias, "Tiresias 2D-LAS (2 queues, 16 GPU-h); fixed GPUs and batch" },
	{ "optimus", &hb_agent_static, &hb_arbiter_optimus, "Optimus+Oracle: GPUs by marginal gain (oracle); fixed batch" },
	{ "elastic", &hb_agent_elastic, &hb_arbiter_elastic, "IBM elastic DP: FIFO admission every Delta; GPUs and batch by throughput scaling" },
	{ "elastic-fixed", &hb_agent_elastic_fixed, &hb_arbiter_elastic, "IBM IV-B baseline: the elastic DP for GPUs, each job's batch fixed at its request (none: Min-BS)" },
	{ "elastic-fixed-max", &hb_agent_elastic_fixed_max, &hb_arbiter_elastic, "IBM IV-B baseline, Max-BS: the elastic DP for GPUs, batch fixed at the job's maximum" },
	{ "elastic-fixed-min", &hb_agent_elastic_fixed_min, &hb_arbiter_elastic, "IBM IV-B baseline, Min-BS: the elastic DP for GPUs, batch fixed at the job's minimum" },
	{ "elastic-fixed-random", &hb_agent_elastic_fixed_random, &hb_arbiter_elastic, "IBM IV-B baseline, Random-BS: the elastic DP for GPUs, batch a seeded uniform draw per job" },
	{ "easyscale", &hb_agent_easyscale, &hb_arbiter_easyscale, "EasyScale: fixed batch, maxP ESTs on heterogeneous GPUs (D2 jobs), growth by speedup per GPU" },
	{ "easyscale-homo", &hb_agent_easyscale, &hb_arbiter_easyscale_homo, "EasyScale_homo: as easyscale, every job on its preferred GPU type only" },
	{ "yarn-cs", &hb_agent_static, &hb_arbiter_yarn_cs, "YARN-CS: FIFO gang scheduling, each job on one GPU type; fixed GPUs and batch" },
	{ "sia", &hb_agent_pollux, &hb_arbiter_sia, "Sia: per-round integer program (GLPK) choosing GPU type, nodes and GPUs per job over normalised goodputs; Pollux agent's batch" },
	{ "gavel", &hb_agent_static, &hb_arbiter_gavel, "Gavel max-min fairness (heterogeneity-aware LP, GLPK), 360 s rounds; fixed GPUs and batch" },
	{ "gavel-tput", &hb_agent_static, &hb_arbiter_gavel_tput, "Gavel max-sum throughput LP (Sia's Gavel baseline), 360 s rounds; fixed GPUs and batch" },
	{ "gavel-fifo", &hb_agent_static, &hb_arbiter_gavel_fifo, "Gavel FIFO (fifo_perf: fastest type that fits, in arrival order), 360 s rounds; fixed GPUs and batch" },
	{ NULL, NULL, NULL, NULL },
};

int hb_policy_fidelity(const struct hb_policy *p, int fidelity, const struct hb_agent_ops **agent,
		       const struct hb_arbiter_ops **shared, const char **why)
{
	*agent = p->agent;
	*shared = p->shared;
	*why = NULL;
	if (fidelity != HB_FIDELITY_EASYSCALE)
		return 0;
	*agent = &hb_agent_esa;
	if (p->shared == &hb_arbiter_easyscale)
		*shared = &hb_arbiter_esa;
	else if (p->shared == &hb_arbiter_easyscale_homo)
		*shared = &hb_arbiter_esa_homo;
	else if (p->shared == &hb_arbiter_yarn_cs)
		*shared = &hb_arbiter_esa_fifo;
	else {
		*agent = p->agent;
		*why = "--fidelity easyscale runs the policies of EasyScale's artifact: easyscale, easyscale-homo "
		       "and yarn-cs";
		return -1;
	}
	return 0;
}

const struct hb_policy *hb_policy_find(const char *name)
{
	for (const struct hb_policy *p = hb_policies; p->name; p++)
		if (hb_strcaseeq(p->name, name)) /* "JABAS" is jabas, as catalog names are */
			return p;
	return NULL;
}

char *hb_policy_suggest(const char *name, char *buf, size_t size)
{
	struct hb_suggest s;

	hb_suggest_init(&s, name);
	for (const struct hb_policy *p = hb_policies; p->name; p++)
		hb_suggest_add(&s, p->name);
	hb_suggest_format(&s, "", buf, size);
	return buf;
}
