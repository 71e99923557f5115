/*
 * easyscale_opts.c: EasyScale's options and their knob table
 * (easyscale_opts.h).  The defaults struct is the only place a default is
 * written: the table's defaults, and what a run without options reads.
 */
#include <stddef.h>

#include "easyscale_opts.h"
#include "policy.h"

static const struct hb_easyscale_opts defaults = { .comm = 1, .artifact_restart = 0 };

/* --easyscale-restart's words: the index is artifact_restart */
static const char *const restart_words[] = { "model", "artifact", NULL };

static const struct hb_pknob knobs[] = {
	{ .name = "easyscale-comm", .key = "easyscale_comm", .type = HB_PKNOB_SWITCH,
	  .offset = offsetof(struct hb_easyscale_opts, comm), .flags = HB_PKNOB_SHARED_ONLY,
	  .help = "EasyScale plans estimate the all-reduce (on, the default) or only Eq. 1's compute (off, the "
		  "paper's)" },
	{ .name = "easyscale-restart", .key = "easyscale_restart", .type = HB_PKNOB_WORDS,
	  .offset = offsetof(struct hb_easyscale_opts, artifact_restart), .words = restart_words,
	  .flags = HB_PKNOB_SHARED_ONLY,
	  .help = "EasyScale's reconfiguration cost: the simulator's restart model (default) or the artifact's 20 s "
		  "on the first start only" },
	{ .name = NULL },
};

const struct hb_pknob_table hb_easyscale_knobs = { knobs, sizeof(struct hb_easyscale_opts), &defaults };

const struct hb_easyscale_opts *hb_easyscale_opts(const struct hb_sim *sim)
{
	return sim->policy_opts ? sim->policy_opts : &defaults;
}
