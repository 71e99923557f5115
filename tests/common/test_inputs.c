/* Reading a user's files and writing JSON and numbers (issue 16 items 6
 * and 7, issue 17 item 6): common/input (directory, missing file, binary
 * data, size cap, byte-order mark), the CSV reader's limits and BOM, JSON
 * files with a BOM, JSON output that stays valid with non-UTF-8 strings,
 * and no negative zero in printed numbers; duplicate JSON keys, text after
 * a JSON value and non-decimal numbers refused (issue 40 item 8). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "csv.h"
#include "fileio.h"
#include "input.h"
#include "json.h"
#include "strutil.h"

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* Write n bytes of data to tmpdir/name; its path. */
static const char *write_bytes(const char *name, const char *data, size_t n)
{
	const char *path = tmp_path(name);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void assert_msg(const struct hb_error *err, const char *needle)
{
	if (!strstr(err->msg, needle))
		fail_msg("message '%s' lacks '%s'", err->msg, needle);
}

/* ---- opening ------------------------------------------------------------- */

static void test_open_names_directory_and_missing_file(void **state)
{
	struct hb_error err = { 0 };
	struct hb_csv c;
	char *data;
	size_t len;

	(void)state;
	assert_null(hb_open_input(tmpdir, &err));
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg(&err, ": is a directory");
	assert_msg(&err, tmpdir);
	assert_null(hb_open_input(tmp_path("absent.csv"), &err));
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg(&err, "absent.csv: no such file");
	/* every reader says the same */
	assert_int_equal(hb_csv_open(&c, tmpdir, &err), -1);
	assert_msg(&err, "is a directory");
	assert_int_equal(hb_read_file(tmpdir, &data, &len, &err), -1);
	assert_msg(&err, "is a directory");
	assert_int_equal(hb_read_text_file(tmp_path("absent.json"), 0, &data, &len, &err), -1);
	assert_msg(&err, "absent.json: no such file");
	assert_null(hb_json_load_file(tmpdir, &err));
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg(&err, "is a directory");
}

static void test_text_file_binary_cap_and_bom(void **state)
{
	struct hb_error err = { 0 };
	char *data = NULL;
	size_t len = 0;
	const char *p;

	(void)state;
	p = write_bytes("bom.txt", "\xEF\xBB\xBF{\"a\": 1}", 11);
	assert_int_equal(hb_read_text_file(p, 0, &data, &len, &err), 0);
	assert_int_equal(len, 8);
	assert_string_equal(data, "{\"a\": 1}");
	free(data);
	p = write_bytes("nul.txt", "abc\0def", 7);
	assert_int_equal(hb_read_text_file(p, 0, &data, &len, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg(&err, "binary data (NUL byte at byte 4)");
	p = write_bytes("big.txt", "0123456789", 10);
	assert_int_equal(hb_read_text_file(p, 9, &data, &len, &err), -1);
	assert_msg(&err, "larger than 9 bytes");
	assert_int_equal(hb_read_text_file(p, 10, &data, &len, &err), 0);
	assert_int_equal(len, 10);
	free(data);
	/* /dev/zero: stops at its first byte instead of reading forever */
	assert_int_equal(hb_read_text_file("/dev/zero", 0, &data, &len, &err), -1);
	assert_msg(&err, "/dev/zero: binary data (NUL byte at byte 1)");
}

/* ---- CSV ----------------------------------------------------------------- */

static void test_csv_bom_header(void **state)
{
	static const char *const cols[] = { "step", "global_batch", NULL };
	struct hb_error err = { 0 };
	struct hb_csv c;
	int idx[2];
	long v;

	(void)state;
	assert_int_equal(hb_csv_open(&c, write_bytes("bom.csv", "\xEF\xBB\xBFstep,global_batch\r\n7,256\r\n", 29), &err),
			 0);
	assert_int_equal(hb_csv_header(&c, cols, idx, &err), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(hb_csv_next(&c, &err), 1);
	assert_int_equal(hb_csv_long(&c, idx[0], &v, &err), 0);
	assert_int_equal(v, 7);
	assert_int_equal(hb_csv_next(&c, &err), 0);
	hb_csv_close(&c);
	/* only at the start of the file: elsewhere it is part of the field */
	assert_int_equal(hb_csv_open(&c, write_bytes("bom2.csv", "a\n\xEF\xBB\xBFx\n", 7), &err), 0);
	assert_int_equal(hb_csv_header(&c, NULL, NULL, &err), 0);
	assert_int_equal(hb_csv_next(&c, &err), 1);
	assert_string_equal(c.field[0], "\xEF\xBB\xBFx");
	hb_csv_close(&c);
}

static void test_csv_binary_and_long_lines(void **state)
{
	struct hb_error err = { 0 };
	struct hb_csv c;
	size_t n = (size_t)HB_CSV_MAX_LINE + 10;
	char *big = malloc(n + 16);

	(void)state;
	assert_non_null(big);
	/* /dev/zero is binary, not an empty file */
	assert_int_equal(hb_csv_open(&c, "/dev/zero", &err), 0);
	assert_int_equal(hb_csv_header(&c, NULL, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg(&err, "/dev/zero:1: binary data (NUL byte)");
	hb_csv_close(&c);
	/* a line over the cap: an error naming file and line, found before the
	 * rest of the line is read */
	memcpy(big, "a,b\n1,", 6);
	memset(big + 6, 'x', n);
	memcpy(big + 6 + n, "\n", 1);
	assert_int_equal(hb_csv_open(&c, write_bytes("long.csv", big, n + 7), &err), 0);
	assert_int_equal(hb_csv_header(&c, NULL, NULL, &err), 0);
	assert_int_equal(hb_csv_next(&c, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg(&err, "long.csv:2: line longer than 1048576 bytes");
	hb_csv_close(&c);
	/* exactly at the cap (with its newline) still reads */
	memset(big + 4, 'y', (size_t)HB_CSV_MAX_LINE - 1);
	big[4 + HB_CSV_MAX_LINE - 1] = '\n';
	assert_int_equal(hb_csv_open(&c, write_bytes("edge.csv", big, 4 + (size_t)HB_CSV_MAX_LINE), &err), 0);
	assert_int_equal(hb_csv_header(&c, NULL, NULL, &err), 0);
	assert_int_equal(hb_csv_next(&c, &err), 1);
	assert_int_equal(strlen(c.field[0]), HB_CSV_MAX_LINE - 1);
	hb_csv_close(&c);
	free(big);
}

/* ---- JSON in and out ------------------------------------------------------- */

static void test_json_file_with_bom(void **state)
{
	struct hb_error err = { 0 };
	cJSON *doc = hb_json_load_file(write_bytes("bom.json", "\xEF\xBB\xBF{\"gpus\": []}\n", 16), &err);

	(void)state;
	if (!doc)
		fail_msg("%s", err.msg);
	assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "gpus")));
	cJSON_Delete(doc);
}

/* Issue 40 item 8: a key twice in one object, anywhere in the document, is
 * an input error naming the file, the field's path and the second value;
 * text after the value too; distinct keys and the same key in different
 * objects are fine. */
static void test_json_duplicate_keys_and_trailing_text(void **state)
{
	static const struct {
		const char *text, *needle;
	} bad[] = {
		{ "{\"arrival_s\": 0, \"arrival_s\": 50}", "field 'arrival_s': value 50: duplicate key" },
		{ "{\"jobs\": [{\"a\": 1}, {\"b\": 1, \"b\": 2}]}", "field 'jobs[1].b': value 2" },
		{ "{\"node0\": {\"n\": 4}, \"node0\": {\"n\": 8}}", "field 'node0': value {\"n\":8}" },
		{ "[[{\"x\": {\"y\": 1, \"y\": \"z\"}}]]", "field '[0][0].x.y': value \"z\"" },
		{ "{\"a\": 1}\n{\"a\": 2}", "d.json:2: trailing text after the JSON value: '{\"a\": 2}'" },
	};
	struct hb_error err = { 0 };
	char big[8192];
	size_t n = 0;
	cJSON *doc;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		doc = hb_json_parse(bad[i].text, strlen(bad[i].text), "d.json", &err);
		if (doc)
			fail_msg("case %zu accepted: %s", i, bad[i].text);
		assert_int_equal(err.code, HB_EINPUT);
		assert_msg(&err, "d.json");
		assert_msg(&err, bad[i].needle);
	}
	/* the same key in sibling objects, and an empty key once, are fine */
	{
		const char *ok = "{\"a\": {\"k\": 1}, \"b\": {\"k\": 1}, \"\": 0} \n";

		doc = hb_json_parse(ok, strlen(ok), "ok.json", &err);
	}
	if (!doc)
		fail_msg("%s", err.msg);
	cJSON_Delete(doc);
	/* a large object (sorted, not pairwise): 300 distinct keys pass, then
	 * one repeated at the end is found and named */
	n += (size_t)snprintf(big + n, sizeof(big) - n, "{");
	for (int i = 0; i < 300; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%s\"node%d\": %d", i ? ", " : "", i, i);
	doc = hb_json_parse(big, n, "big.json", &err);
	assert_null(doc); /* not closed yet: a syntax error */
	snprintf(big + n, sizeof(big) - n, "}");
	doc = hb_json_parse(big, n + 1, "big.json", &err);
	if (!doc)
		fail_msg("%s", err.msg);
	cJSON_Delete(doc);
	snprintf(big + n, sizeof(big) - n, ", \"node17\": -1}");
	memset(&err, 0, sizeof(err));
	assert_null(hb_json_parse(big, strlen(big), "big.json", &err));
	assert_msg(&err, "big.json: field 'node17': value -1: duplicate key");
	/* the file reader applies it too */
	memset(&err, 0, sizeof(err));
	assert_null(hb_json_load_file(write_bytes("dup.json", "{\"x\":1,\"x\":1}", 13), &err));
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg(&err, "dup.json: field 'x'");
}

/* Numbers in files and options are decimal: strtod's hex, inf and nan are
 * refused (a CSV count of 0x10 was read as 16). */
static void test_decimal_numbers_only(void **state)
{
	static const char *const bad[] = { "0x10", "0X1p4", "inf", "-Infinity", "nan", "1e", ".", "+", "1.5.2", "e5" };
	static const char *const good[] = { "16", "-1.5", ".5", "5.", "1e3", "1E-3", " 2.5e+2 ", "+7" };
	static const char *const cols[] = { "n", "t", NULL };
	int idx[2];
	struct hb_csv c;
	struct hb_error err = { 0 };
	double d;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (hb_parse_double(bad[i], &d) == 0)
			fail_msg("'%s' accepted as %g", bad[i], d);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (hb_parse_double(good[i], &d) < 0)
			fail_msg("'%s' refused", good[i]);
	assert_int_equal(hb_parse_size("0x10M", &d), -1);
	assert_int_equal(hb_parse_size("infG", &d), -1);
	assert_int_equal(hb_parse_size("4M", &d), 0);
	assert_true(d == 4194304.0);
	/* in a CSV file the error names file, line, field and value */
	assert_int_equal(hb_csv_open(&c, write_bytes("hex.csv", "n,t\n1,0x10\n", 11), &err), 0);
	assert_int_equal(hb_csv_header(&c, cols, idx, &err), 0);
	assert_int_equal(hb_csv_next(&c, &err), 1);
	assert_int_equal(hb_csv_double(&c, idx[1], &d, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg(&err, "hex.csv:2: field 't': value '0x10' is not a number");
	hb_csv_close(&c);
}

static void test_utf8_sequences(void **state)
{
	(void)state;
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"a", 1), 1);
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\xC3\xA9", 2), 2);         /* é */
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\xE2\x82\xAC", 3), 3);     /* € */
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\xF0\x9F\x98\x80", 4), 4); /* emoji */
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\xE9", 1), 0);             /* Latin-1 é */
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\xC3\xA9", 1), 0);         /* cut */
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\x80", 1), 0);             /* continuation */
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\xC0\xAF", 2), 0);         /* overlong */
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\xE0\x80\xAF", 3), 0);     /* overlong */
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\xED\xA0\x80", 3), 0);     /* surrogate */
	assert_int_equal(hb_utf8_seq_len((const unsigned char *)"\xF4\x90\x80\x80", 4), 0); /* > U+10FFFF */
}

/* Every byte of text is ASCII or part of well-formed UTF-8. */
static void assert_utf8(const char *text)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + strlen(text);

	while (p < end) {
		size_t k = hb_utf8_seq_len(p, (size_t)(end - p));

		if (k == 0)
			fail_msg("byte 0x%02x at %ld is not UTF-8 in: %s", *p, (long)(p - (const unsigned char *)text),
				 text);
		p += k;
	}
}

static void test_json_output_is_valid_and_has_no_negative_zero(void **state)
{
	struct hb_error err = { 0 };
	cJSON *doc = cJSON_CreateObject(), *back;
	char *text;
	size_t len;
	FILE *f;
	const char *p = tmp_path("out.json");

	(void)state;
	cJSON_AddStringToObject(doc, "file", "traj_\xE9t\xE9.csv");  /* a Latin-1 file name */
	cJSON_AddStringToObject(doc, "cut", "ab\xC3");               /* a cut sequence */
	cJSON_AddStringToObject(doc, "quote\xFF", "say \"\xE2\x82\xAC\" \\"); /* key, escapes, a valid euro */
	cJSON_AddNumberToObject(doc, "neg_zero", -0.0);
	hb_json_add_num(doc, "neg_zero2", -0.0);
	cJSON_AddNumberToObject(doc, "small", -0.25);
	cJSON_AddNumberToObject(doc, "ten", -10.0);
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(hb_json_print(f, doc, &err), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(hb_read_file(p, &text, &len, &err), 0);
	assert_utf8(text);
	assert_null(strstr(text, "-0\n"));
	assert_null(strstr(text, "-0,"));
	assert_non_null(strstr(text, "\"neg_zero\":\t0,"));
	assert_non_null(strstr(text, "-0.25"));
	assert_non_null(strstr(text, "-10"));
	back = cJSON_Parse(text);
	assert_non_null(back);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(back, "file")->valuestring,
			    "traj_\xEF\xBF\xBDt\xEF\xBF\xBD.csv");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(back, "cut")->valuestring, "ab\xEF\xBF\xBD");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(back, "quote\xEF\xBF\xBD")->valuestring,
			    "say \"\xE2\x82\xAC\" \\");
	cJSON_Delete(back);
	free(text);
	/* the file writer cleans the same way */
	assert_int_equal(hb_json_write_file(tmp_path("w.json"), doc, &err), 0);
	assert_int_equal(hb_read_file(tmp_path("w.json"), &text, &len, &err), 0);
	assert_utf8(text);
	assert_non_null(strstr(text, "traj_\\ufffdt\\ufffd.csv"));
	free(text);
	cJSON_Delete(doc);
}

static void test_numbers_never_print_negative_zero(void **state)
{
	char buf[64];
	FILE *f;
	size_t n;

	(void)state;
	f = fopen(tmp_path("nums.csv"), "w+b");
	assert_non_null(f);
	hb_csv_put_num(f, -0.0);
	fputc(',', f);
	hb_csv_put_num(f, -1e-300);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, "0,-1e-300");
	/* whole numbers take a path of their own: the same text as %.9g */
	{
		static const double v[] = { 0,	       1,	  -1,	     7,		   235696,    -235696,
					    999999999, -999999999, 1e9,	      -1e9,	   1e15,      123456789012.0,
					    0.5,       -0.5,	   1e-9,      70260.0551,  4.5e8,     2.0 / 3.0 };
		char want[64], got[64];

		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			f = fopen(tmp_path("num.csv"), "w+b");
			assert_non_null(f);
			hb_csv_put_num(f, v[i]);
			rewind(f);
			n = fread(got, 1, sizeof(got) - 1, f);
			got[n] = '\0';
			fclose(f);
			snprintf(want, sizeof(want), "%.9g", v[i]);
			assert_string_equal(got, want);
		}
	}
	snprintf(buf, sizeof(buf), "%.2f %.2f %.2f %.1f", hb_no_neg_zero(-0.001, 2), hb_no_neg_zero(-0.005, 2),
		 hb_no_neg_zero(-0.0, 2), hb_no_neg_zero(-0.04, 1));
	assert_string_equal(buf, "0.00 -0.01 0.00 0.0");
	assert_true(signbit(hb_no_neg_zero(-0.0, -1)) == 0);
	assert_true(hb_no_neg_zero(-1e-300, -1) == -1e-300);
}

/* hb_fmt_g9 against its oracle, printf's "%.9g": random bit patterns over
 * every magnitude, short decimals (a price, a time in ms), values at and
 * beside the ties of the ninth digit, powers of ten and their neighbours. */
static void check_g9(double v)
{
	char want[64], got[HB_FMT_G9_MAX];
	int n = hb_fmt_g9(got, v);

	snprintf(want, sizeof(want), "%.9g", v);
	if (strcmp(got, want) != 0 || n != (int)strlen(want))
		fail_msg("hb_fmt_g9(%.17g) = '%s' (%d), printf '%s'", v, got, n, want);
}

static void test_fmt_g9_is_printf(void **state)
{
	uint64_t s = 0x9e3779b97f4a7c15u;
	static const double edge[] = { 0.0, -0.0, 1e-4, 9.9999999999e-5, 1e15, 999999999999999.9, 1e9, 999999999.5,
				       999999999.4, 999999999.6, 99999999.95, 0.5, 1.5, 2.5, 1e-5, 123456789.5,
				       1234567895.0, 0.000123456789, 0.0001234567895, 1e14, 9.999999995e14,
				       INFINITY, -INFINITY, NAN, 5e-324, 1.7976931348623157e308 };

	(void)state;
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		check_g9(edge[i]);
		check_g9(-edge[i]);
	}
	for (int i = 0; i < 300000; i++) {
		double u, v;
		uint64_t bits;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		u = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
		/* any bit pattern (finite) */
		bits = s;
		memcpy(&v, &bits, sizeof(v));
		if (isfinite(v))
			check_g9(v);
		/* log-uniform over 1e-6 .. 1e16 */
		v = pow(10.0, -6.0 + 22.0 * u);
		check_g9(v);
		check_g9(-v);
		/* a short decimal: k / 10^d */
		check_g9((double)(s % 100000000u) / pow(10.0, (double)(s >> 60)));
		/* a tie of the ninth digit and its neighbours: (2k + 1) / 2 * 10^p */
		v = ((double)(100000000 + (s >> 20) % 900000000u) + 0.5) * pow(10.0, (double)((int)(s >> 59) - 12));
		check_g9(v);
		check_g9(nextafter(v, 0.0));
		check_g9(nextafter(v, INFINITY));
	}
	for (int p = -6; p <= 16; p++) {
		double t = pow(10.0, p);

		check_g9(t);
		check_g9(nextafter(t, 0.0));
		check_g9(nextafter(t, INFINITY));
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-inputs-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_names_directory_and_missing_file),
		cmocka_unit_test(test_text_file_binary_cap_and_bom),
		cmocka_unit_test(test_csv_bom_header),
		cmocka_unit_test(test_csv_binary_and_long_lines),
		cmocka_unit_test(test_json_file_with_bom),
		cmocka_unit_test(test_json_duplicate_keys_and_trailing_text),
		cmocka_unit_test(test_decimal_numbers_only),
		cmocka_unit_test(test_utf8_sequences),
		cmocka_unit_test(test_json_output_is_valid_and_has_no_negative_zero),
		cmocka_unit_test(test_numbers_never_print_negative_zero),
		cmocka_unit_test(test_fmt_g9_is_printf),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
