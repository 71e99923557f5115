/* The policies' options (sim/policy_knob.h, the registry's knob tables):
 * a value read from text and refused with the option, the value and what is
 * accepted; settings replaced by name; the defaults of every table equal to
 * the defaults hb_sim_opts had before they moved into the policies (and to
 * what a policy reads from a run without options); every table well formed
 * and the registry's knobs within HB_PKNOB_MAX. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "easyscale_opts.h"
#include "elastic_opts.h"
#include "policy.h"
#include "policy_knob.h"
#include "sim.h"
#include "yarn_cs_opts.h"

static const struct hb_pknob *knob(const char *name)
{
	const struct hb_pknob *k = hb_policy_knob_find(name, NULL);

	if (!k)
		fail_msg("no policy knob %s", name);
	return k;
}

/* text is refused, with a message holding want */
static void refused(const char *name, const char *text, const char *want)
{
	struct hb_error err = { 0 };
	double v = -1;

	if (hb_pknob_parse(knob(name), text, &v, &err) == 0)
		fail_msg("--%s '%s' accepted (%g)", name, text ? text : "(none)", v);
	assert_int_equal(err.code, HB_EINPUT);
	if (!strstr(err.msg, want))
		fail_msg("--%s '%s': message '%s' lacks '%s'", name, text ? text : "(none)", err.msg, want);
}

static double parsed(const char *name, const char *text)
{
	struct hb_error err = { 0 };
	double v = -1;

	if (hb_pknob_parse(knob(name), text, &v, &err) < 0)
		fail_msg("%s", err.msg);
	return v;
}

static void test_parse(void **state)
{
	(void)state;
	assert_true(parsed("elastic-interval", "300") == 300);
	assert_true(parsed("elastic-interval", "0") == 0);
	assert_true(parsed("elastic-interval", "1e7") == 1e7);
	assert_true(parsed("elastic-drop", NULL) == 1);
	assert_true(parsed("easyscale-comm", "off") == 0);
	assert_true(parsed("easyscale-comm", "on") == 1);
	assert_true(parsed("easyscale-restart", "model") == 0);
	assert_true(parsed("easyscale-restart", "artifact") == 1);
	assert_true(parsed("yarn-head-only", NULL) == 1);
	/* the messages `sim` printed before the tables, word for word */
	refused("elastic-interval", "x", "--elastic-interval: 'x' is not a number of seconds in [0, 1e7]");
	refused("elastic-interval", "-1", "'-1' is not a number of seconds in [0, 1e7]");
	refused("elastic-interval", "2e7", "'2e7' is not a number of seconds in [0, 1e7]");
	refused("elastic-interval", "nan", "'nan'");
	refused("elastic-interval", NULL, "--elastic-interval: ''");
	refused("easyscale-comm", "yes", "--easyscale-comm: 'yes' is not on or off");
	refused("easyscale-restart", "never", "--easyscale-restart: 'never' is not model or artifact");
	refused("yarn-head-only", "1", "--yarn-head-only: takes no value");
	/* unknown names */
	assert_null(hb_policy_knob_find("elastic-intervall", NULL));
	assert_null(hb_policy_knob_find("interval", NULL)); /* the simulator's own, not a policy's */
	assert_null(hb_policy_knob_find("", NULL));
}

static void test_settings(void **state)
{
	struct hb_pknob_settings s;
	struct hb_error err = { 0 };
	struct hb_elastic_opts eo;
	const struct hb_pknob_table *t;
	char text[64];

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(hb_pknob_set(&s, knob("elastic-interval"), 60, &err), 0);
	assert_int_equal(hb_pknob_set(&s, knob("yarn-head-only"), 1, &err), 0);
	assert_int_equal(hb_pknob_set(&s, knob("elastic-interval"), 120, &err), 0); /* the last one wins */
	assert_int_equal(s.n, 2);
	assert_true(hb_pknob_setting(&s, "elastic-interval")->value == 120);
	assert_null(hb_pknob_setting(&s, "elastic-drop"));
	/* a table takes its own knobs only */
	hb_pknob_fill(&hb_elastic_knobs, &s, &eo);
	assert_true(eo.interval_s == 120);
	assert_int_equal(eo.drop, 0);
	assert_non_null(hb_policy_knob_find("elastic-interval", &t));
	assert_ptr_equal(t, &hb_elastic_knobs);
	assert_true(hb_pknob_value(t, knob("elastic-interval"), &s) == 120);
	assert_true(hb_pknob_value(t, knob("elastic-drop"), &s) == 0);
	/* results' texts */
	hb_pknob_format(knob("elastic-interval"), 120, text, sizeof(text));
	assert_string_equal(text, "120 s");
	hb_pknob_format(knob("easyscale-restart"), 1, text, sizeof(text));
	assert_string_equal(text, "artifact");
	hb_pknob_format(knob("easyscale-comm"), 0, text, sizeof(text));
	assert_string_equal(text, "off");
	hb_pknob_metavar(knob("easyscale-restart"), text, sizeof(text));
	assert_string_equal(text, "model|artifact");
	hb_pknob_metavar(knob("elastic-drop"), text, sizeof(text));
	assert_string_equal(text, "");
	/* full */
	memset(&s, 0, sizeof(s));
	s.n = HB_PKNOB_MAX;
	for (int i = 0; i < HB_PKNOB_MAX; i++)
		s.v[i].knob = knob("elastic-drop"); /* names are not looked at below n */
	s.v[0].knob = knob("yarn-head-only");
	assert_int_equal(hb_pknob_set(&s, knob("easyscale-comm"), 0, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
}

/* The defaults sim.c's hb_sim_opts_default set before the options moved:
 * elastic_interval_s 600, elastic_drop 0, easyscale_comm 1,
 * easyscale_artifact_restart 0, yarn_head_only 0. */
static void test_defaults(void **state)
{
	const struct hb_policy *elastic = hb_policy_find("elastic"), *es = hb_policy_find("easyscale-homo"),
			       *yarn = hb_policy_find("yarn-cs"), *fifo = hb_policy_find("fifo");
	struct hb_pknob_settings none;
	struct hb_error err = { 0 };
	struct hb_sim sim;
	void *o;

	(void)state;
	memset(&none, 0, sizeof(none));
	assert_int_equal(hb_policy_opts_new(elastic, &none, &o, &err), 0);
	assert_true(((struct hb_elastic_opts *)o)->interval_s == 600.0);
	assert_int_equal(((struct hb_elastic_opts *)o)->drop, 0);
	free(o);
	assert_int_equal(hb_policy_opts_new(es, &none, &o, &err), 0);
	assert_int_equal(((struct hb_easyscale_opts *)o)->comm, 1);
	assert_int_equal(((struct hb_easyscale_opts *)o)->artifact_restart, 0);
	free(o);
	assert_int_equal(hb_policy_opts_new(yarn, &none, &o, &err), 0);
	assert_int_equal(((struct hb_yarn_cs_opts *)o)->head_only, 0);
	free(o);
	assert_int_equal(hb_policy_opts_new(fifo, &none, &o, &err), 0);
	assert_null(o); /* no options */
	/* a run lent none reads the same defaults */
	memset(&sim, 0, sizeof(sim));
	assert_true(hb_elastic_opts(&sim)->interval_s == 600.0);
	assert_int_equal(hb_elastic_opts(&sim)->drop, 0);
	assert_int_equal(hb_easyscale_opts(&sim)->comm, 1);
	assert_int_equal(hb_easyscale_opts(&sim)->artifact_restart, 0);
	assert_int_equal(hb_yarn_cs_opts(&sim)->head_only, 0);
	/* and a run lent some reads them */
	{
		struct hb_yarn_cs_opts y = { .head_only = 1 };

		sim.policy_opts = &y;
		assert_int_equal(hb_yarn_cs_opts(&sim)->head_only, 1);
	}
	/* the rows that share an arbiter or agent share its table */
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p)) {
		if (p->shared == &hb_arbiter_elastic)
			assert_ptr_equal(p->options, &hb_elastic_knobs);
		if (p->agent == &hb_agent_easyscale)
			assert_ptr_equal(p->options, &hb_easyscale_knobs);
		if (p->shared == &hb_arbiter_yarn_cs)
			assert_ptr_equal(p->options, &hb_yarn_cs_knobs);
	}
}

/* Every table well formed; the registry walk yields each name once, in
 * table order, as many as HB_PKNOB_MAX holds; a name in two tables means
 * one option (same key, type, range and default). */
static void test_tables(void **state)
{
	static const char *const order[] = { "elastic-interval", "elastic-drop", "easyscale-comm", "easyscale-restart",
					     "yarn-head-only", NULL };
	const struct hb_pknob_table *t;
	const struct hb_pknob *k;
	int n = 0;

	(void)state;
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p)) {
		if (!p->options)
			continue;
		assert_non_null(p->options->defaults);
		for (k = p->options->knobs; k->name; k++) {
			const struct hb_pknob *first = hb_policy_knob_find(k->name, &t);
			size_t width = k->type == HB_PKNOB_DOUBLE ? sizeof(double) : sizeof(int);
			double d = hb_pknob_get(k, p->options->defaults);

			assert_non_null(k->key);
			assert_non_null(k->help);
			assert_true(k->type >= HB_PKNOB_FLAG && k->type <= HB_PKNOB_INT);
			assert_true(k->offset + width <= p->options->size);
			if (k->type == HB_PKNOB_DOUBLE || k->type == HB_PKNOB_INT)
				assert_true(k->min <= d && d <= k->max);
			if (k->type == HB_PKNOB_WORDS) {
				int nw = 0;

				assert_non_null(k->words);
				while (k->words[nw])
					nw++;
				assert_true(d >= 0 && d < nw);
			}
			if (k->type == HB_PKNOB_FLAG || k->type == HB_PKNOB_SWITCH)
				assert_true(d == 0 || d == 1);
			assert_non_null(first);
			assert_string_equal(first->key, k->key);
			assert_int_equal(first->type, k->type);
			assert_true(first->min == k->min && first->max == k->max);
			assert_true(hb_pknob_get(first, t->defaults) == d);
		}
	}
	for (int i = 0; (k = hb_policy_knob(i, NULL)); i++, n++) {
		if (order[i])
			assert_string_equal(k->name, order[i]);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(hb_policy_knob(j, NULL)->name, k->name);
	}
	assert_int_equal(n, 5);
	assert_true(n <= HB_PKNOB_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
