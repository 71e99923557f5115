/*
 * policy_knob.h: options that belong to one policy (the IBM elastic
 * arbiter's Delta, EasyScale's restart model, ...), described once, by the
 * policy, in a knob table, as git describes a command's options in an
 * OPT_* array.  Everything that takes or shows such an option loops over
 * the tables of the registry (policy.h): `sim`'s options and --help, sweep
 * configurations, the knob rows of results (knobs_json, the table
 * header), `sweep --help`.  So a new option touches only its policy.
 *
 * A policy keeps its options in a struct of its own (struct
 * hb_elastic_opts { double interval_s; int drop; }); its table says, per
 * field, the option's names, type, range and help, and where the field is
 * (offsetof).  The defaults are one struct of that type, which the policy
 * also reads when a run was given no options (hb_sim.policy_opts NULL).
 *
 * A command line or a configuration gives settings: (knob, value) pairs,
 * by name, in struct hb_pknob_settings, carried in hb_sim_opts.knobs so
 * that every copy of a run's options carries them.  Whoever runs a policy
 * makes its options struct from its defaults and the settings of its knobs
 * (hb_policy_opts_new, policy.h) and lends it to the run.
 *
 * This header is the engine's side, with no policy in it (sim/ names no
 * policy); the registry-wide look-ups are in policy.h.
 */
#ifndef HB_POLICY_KNOB_H
#define HB_POLICY_KNOB_H

#include <stddef.h>

#include "error.h"
#include "hetbatch/policy.h" /* struct hb_pknob, struct hb_pknob_table */

/* enum hb_pknob_type, struct hb_pknob and struct hb_pknob_table are the
 * public policy API's (include/hetbatch/policy.h), so that a plugin's
 * policy declares its options as a built-in does. */

/* Settings by name, at most one per knob name; what a command line or a
 * sweep configuration gave.  All zeros: none. */
#define HB_PKNOB_MAX 16 /* distinct knobs over the registry (tests/sim_cli checks it holds them) */

struct hb_pknob_setting {
	const struct hb_pknob *knob; /* the knob as the registry found it by name (type and range) */
	double value;                /* checked against the knob's type and range */
};

struct hb_pknob_settings {
	int n;                                    /* settings in v */
	struct hb_pknob_setting v[HB_PKNOB_MAX];  /* in the order given; one per knob name */
};

/* text as a value of k (for a FLAG, NULL or "" means given: 1).  An input
 * error names the option, the text and what is accepted ("--elastic-interval:
 * 'x' is not a number of seconds in [0, 1e7]"). */
int hb_pknob_parse(const struct hb_pknob *k, const char *text, double *value, struct hb_error *err);

/* Set k to value in s, replacing an earlier setting of the same name; -1
 * (runtime error) when s is full. */
int hb_pknob_set(struct hb_pknob_settings *s, const struct hb_pknob *k, double value, struct hb_error *err);

/* The setting named name in s, or NULL. */
const struct hb_pknob_setting *hb_pknob_setting(const struct hb_pknob_settings *s, const char *name);

/* The field of k in the options struct opts, as a double; and its update. */
double hb_pknob_get(const struct hb_pknob *k, const void *opts);
void hb_pknob_put(const struct hb_pknob *k, void *opts, double value);

/* k's value in a run with settings s: the setting, else the default of t. */
double hb_pknob_value(const struct hb_pknob_table *t, const struct hb_pknob *k, const struct hb_pknob_settings *s);

/* opts (t->size bytes) at t's defaults with the settings of t's knobs applied. */
void hb_pknob_fill(const struct hb_pknob_table *t, const struct hb_pknob_settings *s, void *opts);

/* The value as results show it: "600 s", "on", "artifact". */
void hb_pknob_format(const struct hb_pknob *k, double value, char *buf, size_t size);

/* "on|off", "model|artifact", the metavar, or "" for a FLAG: what --help
 * shows after the option's name. */
void hb_pknob_metavar(const struct hb_pknob *k, char *buf, size_t size);

#endif
