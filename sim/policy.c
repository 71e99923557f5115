/*
 * policy.c: the named policies.  A policy is a cluster arbiter and a job
 * agent; on a dedicated cluster (this file's only arbiter so far) the agent
 * alone decides, so a policy is its agent.  Help text and `--policy` parsing
 * are generated from this table.
 */
#include <string.h>

#include "sim.h"

const struct hb_policy hb_policies[] = {
	{ "jabas", &hb_agent_jabas, "JABAS: IIDP configurations, similarity-driven batch, epoch auto-scaling" },
	{ "simigrad", &hb_agent_simigrad, "SimiGrad: similarity-driven batch on all GPUs, equal local batch" },
	{ "pollux", &hb_agent_pollux, "Pollux (JABAS port): goodput-driven batch per epoch on all GPUs" },
	{ "pollux-as", &hb_agent_pollux_as, "Pollux-AS: Pollux plus node-by-node auto-scaling (U 2/3, L 1/2)" },
	{ "optperf", &hb_agent_optperf, "Cannikin: OptPerf unequal local batches, goodput-chosen total batch" },
	{ "static", &hb_agent_static, "static DDP: fixed global batch, equal local batch on all GPUs" },
	{ NULL, NULL, NULL },
};

const struct hb_policy *hb_policy_find(const char *name)
{
	for (const struct hb_policy *p = hb_policies; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}
