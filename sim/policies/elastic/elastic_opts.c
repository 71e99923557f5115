/*
 * elastic_opts.c: the elastic autoscaler's options and their knob table
 * (elastic_opts.h).  The defaults struct is the only place a default is
 * written: the table's defaults, and what a run without options reads.
 */
#include <stddef.h>

#include "elastic_opts.h"
#include "policy.h"

/* elastic.md 4: Delta is never stated; V-B calls 10-15 minutes a good value. */
static const struct hb_elastic_opts defaults = { .interval_s = 600.0, .drop = 0 };

static const struct hb_pknob knobs[] = {
	{ .name = "elastic-interval", .key = "elastic_interval_s", .sweep = "elastic_interval",
	  .type = HB_PKNOB_DOUBLE, .offset = offsetof(struct hb_elastic_opts, interval_s), .min = 0, .max = 1e7,
	  .unit = "s", .what = "a number of seconds", .metavar = "S", .flags = HB_PKNOB_SHARED_ONLY,
	  .help = "seconds between the elastic policy's scaling decisions (IBM's Delta; default 600; 0 = at every "
		  "arrival and departure)" },
	{ .name = "elastic-drop", .key = "elastic_drop", .sweep = "elastic_drop", .type = HB_PKNOB_FLAG,
	  .offset = offsetof(struct hb_elastic_opts, drop), .flags = HB_PKNOB_SHARED_ONLY,
	  .help = "elastic: reject jobs it cannot admit (drop mode) instead of queueing them" },
	{ .name = NULL },
};

const struct hb_pknob_table hb_elastic_knobs = { knobs, sizeof(struct hb_elastic_opts), &defaults };

const struct hb_elastic_opts *hb_elastic_opts(const struct hb_sim *sim)
{
	return sim->policy_opts ? sim->policy_opts : &defaults;
}
