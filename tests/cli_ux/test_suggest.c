/* common/suggest.c: the edit distance against a brute-force recursion of
 * its definition on every pair of short strings over a small alphabet, and
 * the closest-names list (threshold, prefix completions, order, at most
 * HB_SUGGEST_MAX, the formatted hint); the library's name lookups in any
 * case (policies, live policies, catalog) and their "did you mean". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "catalog.h"
#include "live_policy.h"
#include "policy.h"
#include "suggest.h"

/* The optimal-string-alignment distance straight from its definition: the
 * cheapest of deleting, inserting, substituting the last characters, or
 * swapping the last two (each 1), recursing on what is left. */
static int oracle(const char *a, int la, const char *b, int lb)
{
	int best, d;
	int ca = la ? a[la - 1] | 0x20 : 0, cb = lb ? b[lb - 1] | 0x20 : 0; /* letters only: | 0x20 lowers */

	if (la == 0)
		return lb;
	if (lb == 0)
		return la;
	best = oracle(a, la - 1, b, lb) + 1;
	if ((d = oracle(a, la, b, lb - 1) + 1) < best)
		best = d;
	if ((d = oracle(a, la - 1, b, lb - 1) + (ca != cb)) < best)
		best = d;
	if (la > 1 && lb > 1 && ca == (b[lb - 2] | 0x20) && (a[la - 2] | 0x20) == cb &&
	    (d = oracle(a, la - 2, b, lb - 2) + 1) < best)
		best = d;
	return best;
}

/* Every string of length 0..4 over {a, b, C} (the capital checks the case). */
static int all_strings(char out[][5])
{
	static const char alpha[] = "abC";
	int n = 0;

	for (int len = 0; len <= 4; len++) {
		int total = 1;

		for (int i = 0; i < len; i++)
			total *= 3;
		for (int k = 0; k < total; k++) {
			int v = k;

			for (int i = 0; i < len; i++, v /= 3)
				out[n][i] = alpha[v % 3];
			out[n][len] = '\0';
			n++;
		}
	}
	return n;
}

static void test_distance_oracle(void **state)
{
	static char s[121][5];
	int n = all_strings(s);

	(void)state;
	assert_int_equal(n, 121);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			assert_int_equal(hb_edit_distance(s[i], s[j]), oracle(s[i], (int)strlen(s[i]), s[j], (int)strlen(s[j])));
}

static void test_distance_cases(void **state)
{
	char big[80];

	(void)state;
	assert_int_equal(hb_edit_distance("simm", "sim"), 1);
	assert_int_equal(hb_edit_distance("polciy", "policy"), 1); /* one transposition */
	assert_int_equal(hb_edit_distance("JABAS", "jabas"), 0);
	assert_int_equal(hb_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(hb_edit_distance("", "sweep"), 5);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_true(hb_edit_distance(big, "x") > 1000); /* past 64 bytes: not a typo */
}

static void test_suggest(void **state)
{
	static const char *const cmds[] = { "catalog", "profile", "import", "plan", "forecast", "version", "sim", "sweep", "live" };
	struct hb_suggest s;
	char buf[256];

	(void)state;
	hb_suggest_init(&s, "simm");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		hb_suggest_add(&s, cmds[i]);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.best[0], "sim");
	hb_suggest_format(&s, "", buf, sizeof(buf));
	assert_string_equal(buf, "; did you mean 'sim'?");

	/* nothing close: no hint at all */
	hb_suggest_init(&s, "zzzzzz");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		hb_suggest_add(&s, cmds[i]);
	assert_int_equal(s.n, 0);
	assert_int_equal(hb_suggest_format(&s, "", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");

	/* nearest first, prefix completions after the near misses, a name once */
	hb_suggest_init(&s, "resnet5");
	hb_suggest_add(&s, "resnet50-cifar100");
	hb_suggest_add(&s, "resnet50");
	hb_suggest_add(&s, "resnet50");
	hb_suggest_add(&s, "vit");
	assert_int_equal(s.n, 2);
	assert_string_equal(s.best[0], "resnet50");
	assert_string_equal(s.best[1], "resnet50-cifar100");
	hb_suggest_format(&s, "--", buf, sizeof(buf));
	assert_string_equal(buf, "; did you mean '--resnet50' or '--resnet50-cifar100'?");

	/* the threshold grows with the word: 2 edits on 6+ letters, 1 below */
	hb_suggest_init(&s, "jbs");
	hb_suggest_add(&s, "jabas");
	assert_int_equal(s.n, 0);
	hb_suggest_init(&s, "jbaass");
	hb_suggest_add(&s, "jabas");
	assert_int_equal(s.n, 1);

	/* at most HB_SUGGEST_MAX, the nearest kept */
	hb_suggest_init(&s, "elastic-fixed");
	hb_suggest_add(&s, "elastic-fixed-random");
	hb_suggest_add(&s, "elastic-fixed-max");
	hb_suggest_add(&s, "elastic-fixed-min");
	hb_suggest_add(&s, "elastic-fixd");
	assert_int_equal(s.n, HB_SUGGEST_MAX);
	assert_string_equal(s.best[0], "elastic-fixd");
	hb_suggest_format(&s, "", buf, sizeof(buf));
	assert_string_equal(buf, "; did you mean 'elastic-fixd', 'elastic-fixed-random' or 'elastic-fixed-max'?");

	/* a short buffer is cut, never overrun */
	assert_int_equal(hb_suggest_format(&s, "", buf, 10), 9);
	assert_int_equal(strlen(buf), 9);
}

static void test_lookups_any_case(void **state)
{
	struct hb_catalog cat;
	struct hb_error err = { 0 };
	const struct hb_policy *k;
	char buf[256];

	(void)state;
	assert_non_null(hb_policy_find("jabas"));
	assert_ptr_equal(hb_policy_find("JaBaS"), hb_policy_find("jabas"));
	assert_ptr_equal(hb_policy_find("POLLUX-AS"), hb_policy_find("pollux-as"));
	assert_null(hb_policy_find("jabass"));
	assert_string_equal(hb_policy_suggest("jabass", buf, sizeof(buf)), "; did you mean 'jabas'?");
	assert_string_equal(hb_policy_suggest("zzzzzzzz", buf, sizeof(buf)), "");
	assert_int_equal(hb_live_policy_parse("STATIC", &k, &err), 0);
	assert_ptr_equal(k, hb_policy_find("static"));
	assert_int_equal(hb_live_policy_parse("SimiGrad", &k, &err), 0);
	assert_ptr_equal(k, hb_policy_find("simigrad"));
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	assert_ptr_equal(hb_catalog_model(&cat, "ResNet50"), hb_catalog_model(&cat, "resnet50"));
	assert_ptr_equal(hb_catalog_cluster(&cat, "JABAS-A"), hb_catalog_cluster(&cat, "jabas-a"));
	assert_ptr_equal(hb_catalog_gpu(&cat, "V100"), hb_catalog_gpu(&cat, "v100"));
	assert_string_equal(hb_catalog_suggest(&cat, 'm', "gmt", buf, sizeof(buf)), "; did you mean 'gnmt'?");
	assert_string_equal(hb_catalog_suggest(&cat, 'c', "pollux-t5", buf, sizeof(buf)), "; did you mean 'pollux-t4'?");
	hb_catalog_free(&cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance_oracle),
		cmocka_unit_test(test_distance_cases),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_lookups_any_case),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
