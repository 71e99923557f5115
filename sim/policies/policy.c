/*
 * policy.c: the named policies.  A policy is a cluster arbiter and a job
 * agent: on a dedicated cluster (single-job studies) the agent alone decides;
 * when jobs share a cluster (trace replay) the policy's shared arbiter decides
 * which GPUs each job holds.  Help text and `--policy` parsing are generated
 * from this table, and the policies' options from the knob tables its rows
 * name (policy_knob.h).
 */
#include <stdlib.h>
#include <string.h>

#include "easyscale_artifact.h"
#include "fidelity.h"
#include "policy.h"
#include "strutil.h"
#include "suggest.h"

const struct hb_policy hb_policies[] = {
	{ "jabas", &hb_agent_jabas, &hb_arbiter_jabas, "JABAS: IIDP configs, similarity-driven batch, epoch auto-scaling; shared, jabas-share lending", NULL, NULL },
	{ "simigrad", &hb_agent_simigrad, &hb_arbiter_fifo, "SimiGrad: similarity-driven batch, equal local batch on all GPUs (shared: its FIFO grant)", NULL, NULL },
	{ "pollux", &hb_agent_pollux, &hb_arbiter_pollux, "Pollux: goodput agent; alone, the JABAS port (all GPUs, batch per epoch); shared, PolluxSched", NULL, NULL },
	{ "pollux-as", &hb_agent_pollux_as, NULL, "Pollux-AS: Pollux plus node-by-node auto-scaling (U 2/3, L 1/2)", NULL, NULL },
	{ "optperf", &hb_agent_optperf, &hb_arbiter_fifo, "Cannikin: OptPerf unequal local batches, goodput-chosen batch (shared: its FIFO grant)", NULL, NULL },
	{ "lbbsp", &hb_agent_lbbsp, &hb_arbiter_fifo, "LB-BSP: fixed global batch, delta = 5 re-balancing slowest -> fastest per epoch, overlap ignored (shared: its FIFO grant)", NULL, NULL },
	{ "static", &hb_agent_static, &hb_arbiter_fifo, "static DDP: fixed global batch, equal local batch on all GPUs", NULL, NULL },
	{ "fifo", &hb_agent_static, &hb_arbiter_fifo, "FIFO with gang placement; jobs keep their requested GPUs and batch", NULL, NULL },
	{ "tiresias", &hb_agent_static, &hb_arbiter_tiresias, "Tiresias 2D-LAS (2 queues, 16 GPU-h); fixed GPUs and batch", NULL, NULL },
	{ "optimus", &hb_agent_static, &hb_arbiter_optimus, "Optimus+Oracle: GPUs by marginal gain (oracle); fixed batch", NULL, NULL },
	{ "elastic", &hb_agent_elastic, &hb_arbiter_elastic, "IBM elastic DP: FIFO admission every Delta; GPUs and batch by throughput scaling", &hb_elastic_knobs, NULL },
	{ "elastic-fixed", &hb_agent_elastic_fixed, &hb_arbiter_elastic, "IBM IV-B baseline: the elastic DP for GPUs, each job's batch fixed at its request (none: Min-BS)", &hb_elastic_knobs, NULL },
	{ "elastic-fixed-max", &hb_agent_elastic_fixed_max, &hb_arbiter_elastic, "IBM IV-B baseline, Max-BS: the elastic DP for GPUs, batch fixed at the job's maximum", &hb_elastic_knobs, NULL },
	{ "elastic-fixed-min", &hb_agent_elastic_fixed_min, &hb_arbiter_elastic, "IBM IV-B baseline, Min-BS: the elastic DP for GPUs, batch fixed at the job's minimum", &hb_elastic_knobs, NULL },
	{ "elastic-fixed-random", &hb_agent_elastic_fixed_random, &hb_arbiter_elastic, "IBM IV-B baseline, Random-BS: the elastic DP for GPUs, batch a seeded uniform draw per job", &hb_elastic_knobs, NULL },
	{ "easyscale", &hb_agent_easyscale, &hb_arbiter_easyscale, "EasyScale: fixed batch, maxP ESTs on heterogeneous GPUs (D2 jobs), growth by speedup per GPU", &hb_easyscale_knobs, NULL },
	{ "easyscale-homo", &hb_agent_easyscale, &hb_arbiter_easyscale_homo, "EasyScale_homo: as easyscale, every job on its preferred GPU type only", &hb_easyscale_knobs, NULL },
	{ "yarn-cs", &hb_agent_static, &hb_arbiter_yarn_cs, "YARN-CS: FIFO gang scheduling, each job on one GPU type; fixed GPUs and batch", &hb_yarn_cs_knobs, NULL },
	{ "sia", &hb_agent_pollux, &hb_arbiter_sia, "Sia: per-round integer program (GLPK) choosing GPU type, nodes and GPUs per job over normalised goodputs; Pollux agent's batch", NULL, NULL },
	{ "gavel", &hb_agent_static, &hb_arbiter_gavel, "Gavel max-min fairness (heterogeneity-aware LP, GLPK), 360 s rounds; fixed GPUs and batch", NULL, NULL },
	{ "gavel-tput", &hb_agent_static, &hb_arbiter_gavel_tput, "Gavel max-sum throughput LP (Sia's Gavel baseline), 360 s rounds; fixed GPUs and batch", NULL, NULL },
	{ "gavel-fifo", &hb_agent_static, &hb_arbiter_gavel_fifo, "Gavel FIFO (fifo_perf: fastest type that fits, in arrival order), 360 s rounds; fixed GPUs and batch", NULL, NULL },
	{ "gavel-ftf", &hb_agent_static, &hb_arbiter_gavel_ftf, "Gavel finish-time fairness (min max rho vs the isolated 1/n share, bisection on GLPK LPs), 360 s rounds; fixed GPUs and batch", NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
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

/* Policies of plugins, after the built-ins: blocks of entries that
 * plugin.c owns, one per plugin, in load order.  The registry is the
 * process's (plugin.h: loaded before any run starts). */
struct extra_block {
	const struct hb_policy *p;
	int n;
};
static struct extra_block *extra;
static int nextra;

/* Built-in policies: the table less its terminator. */
#define NBUILTIN ((int)(sizeof(hb_policies) / sizeof(hb_policies[0])) - 1)

const struct hb_policy *hb_policy_at(int i)
{
	if (i < 0)
		return NULL;
	if (i < NBUILTIN)
		return &hb_policies[i];
	i -= NBUILTIN;
	for (int b = 0; b < nextra; b++) {
		if (i < extra[b].n)
			return &extra[b].p[i];
		i -= extra[b].n;
	}
	return NULL;
}

/* p's place found by its address in its own block (one pass, no
 * hb_policy_at per entry), the next entry by that place. */
const struct hb_policy *hb_policy_next(const struct hb_policy *p)
{
	int base = NBUILTIN;

	for (int i = 0; i < NBUILTIN; i++)
		if (&hb_policies[i] == p)
			return hb_policy_at(i + 1);
	for (int b = 0; b < nextra; base += extra[b].n, b++)
		for (int i = 0; i < extra[b].n; i++)
			if (&extra[b].p[i] == p)
				return hb_policy_at(base + i + 1);
	return NULL;
}

int hb_policy_register(const struct hb_policy *p, int n, struct hb_error *err)
{
	struct extra_block *grown = realloc(extra, (size_t)(nextra + 1) * sizeof(*extra));

	if (!grown)
		return hb_runtime_error(err, "policy registry: out of memory");
	extra = grown;
	extra[nextra].p = p;
	extra[nextra].n = n;
	nextra++;
	return 0;
}

void hb_policy_unregister(const struct hb_policy *p)
{
	for (int b = 0; b < nextra; b++)
		if (extra[b].p == p) {
			free((void *)extra[b].p);
			memmove(&extra[b], &extra[b + 1], (size_t)(nextra - b - 1) * sizeof(*extra));
			nextra--;
			return;
		}
}

void hb_policy_unregister_plugins(void)
{
	for (int b = 0; b < nextra; b++)
		free((void *)extra[b].p);
	free(extra);
	extra = NULL;
	nextra = 0;
}

const struct hb_policy *hb_policy_find(const char *name)
{
	const struct hb_policy *p;

	for (int i = 0; (p = hb_policy_at(i)); i++)
		if (hb_strcaseeq(p->name, name)) /* "JABAS" is jabas, as catalog names are */
			return p;
	return NULL;
}

char *hb_policy_suggest(const char *name, char *buf, size_t size)
{
	struct hb_suggest s;
	const struct hb_policy *p;

	hb_suggest_init(&s, name);
	for (int i = 0; (p = hb_policy_at(i)); i++)
		hb_suggest_add(&s, p->name);
	hb_suggest_format(&s, "", buf, size);
	return buf;
}

/* ---- the knobs of every policy ------------------------------------------------------------- */

/* 1 when an earlier row has the same table (rows that share an agent or
 * arbiter share one). */
static int table_seen(const struct hb_policy *row)
{
	for (const struct hb_policy *p = hb_policy_at(0); p && p != row; p = hb_policy_next(p))
		if (p->options == row->options)
			return 1;
	return 0;
}

/* 1 when a knob of k's name comes before k in the walk: in an earlier
 * table, or earlier in k's own (row's) table. */
static int name_seen(const struct hb_policy *row, const struct hb_pknob *k)
{
	for (const struct hb_policy *p = hb_policy_at(0); p && p != row; p = hb_policy_next(p))
		if (p->options && !table_seen(p))
			for (const struct hb_pknob *q = p->options->knobs; q->name; q++)
				if (strcmp(q->name, k->name) == 0)
					return 1;
	for (const struct hb_pknob *q = row->options->knobs; q < k; q++)
		if (strcmp(q->name, k->name) == 0)
			return 1;
	return 0;
}

const struct hb_pknob *hb_policy_knob(int i, const struct hb_pknob_table **table)
{
	int n = 0;

	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p)) {
		if (!p->options || table_seen(p))
			continue;
		for (const struct hb_pknob *k = p->options->knobs; k->name; k++) {
			if (name_seen(p, k))
				continue;
			if (n++ == i) {
				if (table)
					*table = p->options;
				return k;
			}
		}
	}
	return NULL;
}

const struct hb_pknob *hb_policy_knob_find(const char *name, const struct hb_pknob_table **table)
{
	const struct hb_pknob *k;

	for (int i = 0; (k = hb_policy_knob(i, table)); i++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

int hb_policy_opts_new(const struct hb_policy *p, const struct hb_pknob_settings *s, void **opts,
		       struct hb_error *err)
{
	*opts = NULL;
	if (!p->options)
		return 0;
	if (!(*opts = malloc(p->options->size)))
		return hb_runtime_error(err, "policy %s: out of memory for its options", p->name);
	hb_pknob_fill(p->options, s, *opts);
	return 0;
}
