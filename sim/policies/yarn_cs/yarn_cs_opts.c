/*
 * yarn_cs_opts.c: YARN-CS's option and its knob table (yarn_cs_opts.h).
 * The defaults struct is the only place a default is written: the table's
 * defaults, and what a run without options reads.
 */
#include <stddef.h>

#include "policy.h"
#include "yarn_cs_opts.h"

static const struct hb_yarn_cs_opts defaults = { .head_only = 0 };

static const struct hb_pknob knobs[] = {
	{ .name = "yarn-head-only", .key = "yarn_head_only", .type = HB_PKNOB_FLAG,
	  .offset = offsetof(struct hb_yarn_cs_opts, head_only), .flags = HB_PKNOB_SHARED_ONLY,
	  .help = "yarn-cs as the EasyScale artifact simulates it: only the queue head may start, one job at a "
		  "time" },
	{ .name = NULL },
};

const struct hb_pknob_table hb_yarn_cs_knobs = { knobs, sizeof(struct hb_yarn_cs_opts), &defaults };

const struct hb_yarn_cs_opts *hb_yarn_cs_opts(const struct hb_sim *sim)
{
	return sim->policy_opts ? sim->policy_opts : &defaults;
}
