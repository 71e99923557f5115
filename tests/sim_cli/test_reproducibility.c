/* What "byte-identical" promises is stated in the outputs (issue 16 item
 * 9): results.db meta.reproducibility and summary.json "reproducibility"
 * hold the same sentence, which names the binary, the CPU's libm code paths
 * and --seed; two runs of one binary on one machine give identical files;
 * and the build passes -ffp-contract=off (no FMA contraction that differs
 * by target), checked in the compile commands meson wrote. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "../cli_run.h"

static int setup(void **state)
{
	(void)state;
	return cli_setup("repro");
}

static int teardown(void **state)
{
	(void)state;
	return cli_teardown();
}

static char *file_in(const char *dir, const char *name)
{
	char path[1024];
	size_t len;

	snprintf(path, sizeof(path), "%s/%s/%s", tmpdir, dir, name);
	return slurp(path, &len);
}

static void test_promise_in_meta_and_summary(void **state)
{
	char path[1024], *text, *again;
	cJSON *doc;
	const cJSON *promise;
	sqlite3 *db;
	sqlite3_stmt *st;

	(void)state;
	assert_int_equal(run("-q sim --cluster jabas-a --model resnet50 --policy static,jabas --out r1 --csv"), 0);
	assert_int_equal(run("-q sim --cluster jabas-a --model resnet50 --policy static,jabas --out r2 --csv"), 0);
	text = file_in("r1", "summary.json");
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	promise = cJSON_GetObjectItemCaseSensitive(doc, "reproducibility");
	assert_true(cJSON_IsString(promise));
	assert_non_null(strstr(promise->valuestring, "same inputs, --seed and binary"));
	assert_non_null(strstr(promise->valuestring, "libm"));
	snprintf(path, sizeof(path), "%s/r1/results.db", tmpdir);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'reproducibility'", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), promise->valuestring);
	sqlite3_finalize(st);
	sqlite3_close(db);
	/* the promise itself: same binary, same machine, same bytes */
	again = file_in("r2", "summary.json");
	assert_string_equal(text, again);
	free(again);
	free(text);
	text = file_in("r1", "events.csv");
	again = file_in("r2", "events.csv");
	assert_string_equal(text, again);
	free(again);
	free(text);
	cJSON_Delete(doc);
}

static const char *build_root; /* argv[1]: meson's build directory */

static void test_build_does_not_contract_fma(void **state)
{
	const char *root = build_root;
	char path[1024], *cc;
	size_t len;

	(void)state;
	if (!root)
		skip();
	snprintf(path, sizeof(path), "%s/compile_commands.json", root);
	cc = slurp(path, &len);
	assert_non_null(strstr(cc, "-ffp-contract=off"));
	free(cc);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_promise_in_meta_and_summary),
		cmocka_unit_test(test_build_does_not_contract_fma),
	};

	build_root = argc > 1 ? argv[1] : NULL;
	return cmocka_run_group_tests(tests, setup, teardown);
}
