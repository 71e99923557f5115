/* What a newcomer meets at the command line ($HETBATCH), issue 17:
 *  - misspelled subcommands and options get the closest names and the list
 *    of subcommands; abbreviations that fit several options say which;
 *  - policy, cluster, model and GPU names match in any case (same bytes
 *    out as lower case), unknown ones get "did you mean";
 *  - small messages: `catalog models` says GFLOP per sample, counts of one
 *    are singular, `version --help`, a single job's arrival event names
 *    who decides instead of "asks for 0 GPUs, B_G 0";
 *  - `sim -j N` writes the same bytes for any N, for single-job studies and
 *    trace replays (stdout, --json, every --out file); `sweep --dry-run --json`
 *    prints the points as JSON; `--status-line` off a terminal (these
 *    tests' stderr is a file): nothing for a short run under auto, lines
 *    with $HETBATCH_STATUS_SECONDS=0 or always, none under never or -q;
 *  - -q: a successful run prints nothing at all on stderr;
 *  - -v: each run's decisions at a summary level and the files written
 *    (profile sources are tests/import's; sweep's are here: every GPU type
 *    x model of its clusters and replays). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "../cli_run.h"

#define QUICK "--cluster demo --model resnet50 --interval 1000"

/* stderr (or stdout) of the last run holds want. */
static void err_has(const char *want)
{
	size_t len;
	char *s = slurp(errf, &len);

	if (!strstr(s, want))
		fail_msg("stderr lacks \"%s\":\n%s", want, s);
	free(s);
}

static void out_has(const char *want)
{
	size_t len;
	char *s = slurp(outf, &len);

	if (!strstr(s, want))
		fail_msg("stdout lacks \"%s\":\n%s", want, s);
	free(s);
}

static void test_subcommand_typos(void **state)
{
	(void)state;
	assert_int_equal(run("simm"), 2);
	err_has("unknown subcommand 'simm'; did you mean 'sim'?");
	err_has("Subcommands: catalog, profile, import, plan, forecast, version, sim, sweep, live");
	assert_int_equal(run("help swep"), 2);
	err_has("unknown subcommand 'swep'; did you mean 'sweep'?");
	/* nothing close: the list alone */
	assert_int_equal(run("frobnicate"), 2);
	err_has("unknown subcommand 'frobnicate'\nSubcommands: catalog,");
	assert_int_equal(run("hlep"), 2);
	err_has("unknown subcommand 'hlep'; did you mean 'help'?");
	/* the words after a subcommand */
	assert_int_equal(run("catalog modles"), 2);
	err_has("unknown list 'modles' (expected gpus, models or clusters); did you mean 'models'?");
	assert_int_equal(run("import jabs nowhere"), 2);
	err_has("unknown kind 'jabs' (pollux, sia, jabas or nccl-tests); did you mean 'jabas'?");
	assert_int_equal(run("--verbos sim"), 2);
	err_has("unknown option '--verbos'; did you mean '--verbose'?");
}

static void test_option_typos(void **state)
{
	(void)state;
	assert_int_equal(run("sim " QUICK " --polcy jabas"), 2);
	/* one form for every error line (issue 39): hetbatch: error: CMD: ... */
	err_has("hetbatch: error: sim: unknown option '--polcy'; did you mean '--policy'?");
	err_has("Try 'hetbatch sim --help'.");
	/* a long option written with one dash: getopt reads -p -o -l ... */
	assert_int_equal(run("sim " QUICK " -policy jabas"), 2);
	err_has("unknown option '-policy'; did you mean '--policy'?");
	assert_int_equal(run("sim " QUICK " --re 1"), 2);
	err_has("option '--re' is ambiguous; it could be ");
	err_has("--restart-cost");
	err_has("--replay");
	assert_int_equal(run("sim " QUICK " --db"), 2);
	err_has("option '--db' needs a value");
	assert_int_equal(run("plan --cluster demo --model resnet50 --gbs 256 --clustr demo"), 2);
	err_has("unknown option '--clustr'; did you mean '--cluster'?");
	assert_int_equal(run("profile --analytic --modles resnet50"), 2);
	err_has("unknown option '--modles'; did you mean '--models'?");
	assert_int_equal(run("catalog models --jsn"), 2);
	err_has("unknown option '--jsn'; did you mean '--json'?");
	assert_int_equal(run("forecast --hlep"), 2);
	err_has("unknown option '--hlep'; did you mean '--help'?");
}

static void test_names_any_case(void **state)
{
	size_t la, lb;
	char *a, *b;

	(void)state;
	assert_int_equal(run("sim " QUICK " --policy jabas,static --out lower"), 0);
	assert_int_equal(run("sim --cluster DEMO --model ResNet50 --interval 1000 --policy JABAS,Static --out upper"), 0);
	a = slurp_in("lower", "summary.csv", &la);
	b = slurp_in("upper", "summary.csv", &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
	/* the same policy twice in two spellings is still twice */
	assert_int_equal(run("sim " QUICK " --policy jabas,JABAS"), 2);
	err_has("'JABAS' is listed twice");
	assert_int_equal(run("catalog gpus V100"), 0);
	out_has("v100");
}

static void test_unknown_names(void **state)
{
	(void)state;
	assert_int_equal(run("sim " QUICK " --policy jabs"), 2);
	err_has("unknown policy 'jabs'; known policies: jabas, ");
	err_has("; did you mean 'jabas'?");
	assert_int_equal(run("sim --cluster demo --model resnet5 --interval 1000"), 2);
	err_has("unknown model 'resnet5'");
	err_has("did you mean 'resnet50' or 'resnet50-cifar100'?");
	assert_int_equal(run("sim --cluster jabas-z --model resnet50 --interval 1000"), 2);
	err_has("did you mean 'jabas-a', 'jabas-b' or 'jabas-c'?");
	assert_int_equal(run("catalog gpus v10"), 2);
	err_has("did you mean 'v100'");
	assert_int_equal(run("profile --analytic --db p.db --gpus v10"), 2);
	err_has("--gpus: unknown GPU 'v10'");
	err_has("did you mean 'v100'");
	assert_false(exists_in("p.db", NULL));
}

static void test_small_messages(void **state)
{
	size_t len;
	char *s;

	(void)state;
	/* GFLOP per sample, not a rate */
	assert_int_equal(run("catalog models"), 0);
	s = slurp(outf, &len);
	assert_non_null(strstr(s, "GFLOP/SAMPLE"));
	assert_null(strstr(s, "GFLOP/S "));
	free(s);
	assert_int_equal(run("version --help"), 0);
	out_has("usage: hetbatch version");
	out_has("Exit status:");
	assert_int_equal(run("help version"), 0);
	out_has("usage: hetbatch version");
	assert_int_equal(run("version extra"), 2);
	err_has("takes no arguments, got 'extra'");
	/* one run, one node, one GPU: singular */
	write_file("one.json", "{\"name\": \"solo\", \"display\": \"one GPU\", \"intra_link\": \"pcie3-x16\", "
			       "\"intra_bw\": 15.75e9, \"inter_link\": \"ib-100g\", \"inter_bw\": 12.5e9, "
			       "\"storage_bw\": 1.25e9, \"restart_latency_s\": 20, \"source\": \"test\", "
			       "\"groups\": [{\"gpu\": \"v100\", \"nodes\": 1, \"gpus_per_node\": 1}]}");
	assert_int_equal(run("catalog clusters one.json"), 0);
	out_has("1 node, 1 GPU: ");
	assert_int_equal(run("sim " QUICK " --policy jabas --out one --events all --csv"), 0);
	out_has("1 of 1 run ran;");
	/* the single job's arrival: who decides, not "asks for 0 GPUs, B_G 0" */
	s = slurp_in("one", "events.csv", &len);
	assert_null(strstr(s, "asks for 0 GPUs"));
	assert_non_null(strstr(s, ",arrival,\"GPUs by the dedicated arbiter, B_G by the policy in "));
	free(s);
}

#define SIX "sim --cluster demo --model resnet50,gnmt --policy jabas,simigrad,optperf --interval 1000"

static void test_sim_jobs_same_bytes(void **state)
{
	static const char *const files[] = { "results.db", "summary.csv", "timeseries.csv", "events.csv",
					     "summary.json", NULL };

	(void)state;
	assert_int_equal(run(SIX " -j 1 --out j1 --csv"), 0);
	assert_int_equal(run(SIX " -j 3 --out j3 --csv"), 0);
	assert_int_equal(run(SIX " --jobs=6 --out j6 --csv"), 0);
	for (int i = 0; files[i]; i++) {
		size_t l1, l3, l6;
		char *a = slurp_in("j1", files[i], &l1), *b = slurp_in("j3", files[i], &l3), *c = slurp_in("j6", files[i], &l6);

		assert_true(l1 > 0);
		assert_int_equal(l1, l3);
		assert_memory_equal(a, b, l1);
		assert_int_equal(l1, l6);
		assert_memory_equal(a, c, l1);
		free(a);
		free(b);
		free(c);
	}
	assert_int_equal(run(SIX " -j 0"), 2);
	err_has("-j: '0' is not a thread count");
}

/* A trace replay's table without what differs from one run to the next:
 * the policy rows' last two columns (ms/round and wall(s), wall-clock
 * times) and the closing line's wall time.  In place; returns s. */
static char *mask_wall(char *s)
{
	char *line = s, *w = s;
	int in_table = 0;

	while (*line) {
		char *end = strchr(line, '\n'), *cut;
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len == 0)
			in_table = 0;
		else if (strncmp(line, "policy ", 7) == 0)
			in_table = 1;
		else if (in_table)
			for (int k = 0; k < 2; k++) { /* drop the last two fields */
				while (len > 0 && line[len - 1] == ' ')
					len--;
				while (len > 0 && line[len - 1] != ' ')
					len--;
			}
		if ((cut = strstr(line, "; wall time ")) && (!end || cut < end))
			len = (size_t)(cut - line);
		memmove(w, line, len);
		w += len;
		*w++ = '\n';
		if (!end)
			break;
		line = end + 1;
	}
	*w = '\0';
	return s;
}

/* Every file of dir a is in dir b with the same bytes, and b has no other. */
static void same_dirs(const char *a, const char *b)
{
	char pa[512], pb[512];
	struct dirent *e;
	DIR *d;
	int na = 0, nb = 0;

	snprintf(pa, sizeof(pa), "%s/%s", tmpdir, a);
	snprintf(pb, sizeof(pb), "%s/%s", tmpdir, b);
	assert_non_null(d = opendir(pa));
	while ((e = readdir(d))) {
		size_t la, lb;
		char *x, *y;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		x = slurp_in(a, e->d_name, &la);
		y = slurp_in(b, e->d_name, &lb);
		if (la != lb || memcmp(x, y, la) != 0)
			fail_msg("%s/%s and %s/%s differ", a, e->d_name, b, e->d_name);
		free(x);
		free(y);
		na++;
	}
	closedir(d);
	assert_non_null(d = opendir(pb));
	while ((e = readdir(d)))
		nb += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	assert_int_equal(na, nb);
}

/* `sim --trace -j N`: the replays on threads, each streaming into a part of
 * its own, merged in table order; stdout (the table but for wall times,
 * --json whole) and every --out file the same bytes for any N.  pollux-as
 * has no shared arbiter: a row that cannot run between the others.  The
 * fairness reference runs go on the threads too. */
#define TRACE "sim --cluster pollux-t4 --trace '%s/data/pollux/workloads/workload-1.csv' --max-jobs 60 " \
	"--policy fifo,pollux-as,tiresias,optimus,elastic"

static void test_trace_jobs_same_bytes(void **state)
{
	const char *shared = getenv("HB_SHARED");
	char *out[3], *json[2];
	size_t len;

	(void)state;
	assert_non_null(shared);
	for (int k = 0; k < 3; k++) {
		static const char *const args[] = { " -j 1 --out w1 --plot --csv", " -j 3 --out w3 --plot --csv",
						    " --jobs=8 --out w8 --plot --csv" };

		assert_int_equal(run(TRACE "%s", shared, args[k]), 0);
		out[k] = mask_wall(slurp(outf, &len));
	}
	assert_non_null(strstr(out[0], "4 of 5 policies ran\n"));
	assert_string_equal(out[0], out[1]);
	assert_string_equal(out[0], out[2]);
	assert_true(exists_in("w1", "results.db") && exists_in("w1", "trace-util.dat") && exists_in("w1", "events.csv"));
	same_dirs("w1", "w3");
	same_dirs("w1", "w8");
	for (int k = 0; k < 2; k++) {
		assert_int_equal(run(TRACE " --json -j %d", shared, k ? 3 : 1), 0);
		json[k] = slurp(outf, &len);
	}
	assert_string_equal(json[0], json[1]);
	/* one status line at a time, about all the replays */
	assert_int_equal(run_env("HETBATCH_STATUS_SECONDS=0", TRACE " -j 3", shared), 0);
	err_has("sim: 0 of 4 replays done: ");
	err_has("sim: 4 of 4 replays done: 100.0 %");
	err_has("sim: ended after ");
	/* -q: nothing */
	assert_int_equal(run_env("HETBATCH_STATUS_SECONDS=0", "-q " TRACE " -j 3 --out q", shared), 0);
	free(slurp(errf, &len));
	assert_int_equal(len, 0);
	for (int k = 0; k < 3; k++)
		free(out[k]);
	free(json[0]);
	free(json[1]);
}

static void test_sweep_dry_run_json(void **state)
{
	const char *root = getenv("HB_SOURCE_ROOT");
	cJSON *doc, *rows, *r;
	size_t len;
	char *s;
	int n = 0;

	(void)state;
	assert_non_null(root);
	assert_int_equal(run("sweep '%s/examples/sweep-demo.json' --dry-run --json", root), 0);
	s = slurp(outf, &len);
	doc = cJSON_Parse(s);
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(doc, "format")->valuestring, "hetbatch-sweep-plan/1");
	assert_string_equal(cJSON_GetObjectItem(doc, "name")->valuestring, "demo-plus-t4");
	rows = cJSON_GetObjectItem(doc, "point_rows");
	assert_true(cJSON_IsArray(rows));
	cJSON_ArrayForEach(r, rows) {
		assert_int_equal(cJSON_GetObjectItem(r, "id")->valueint, n);
		assert_non_null(cJSON_GetObjectItem(r, "cluster"));
		assert_non_null(cJSON_GetObjectItem(r, "policy"));
		assert_non_null(cJSON_GetObjectItem(r, "seed"));
		assert_true(cJSON_GetObjectItem(r, "jobs")->valueint > 0);
		n++;
	}
	/* 2 clusters x 1 load x 2 policies x 2 seeds, as the table says */
	assert_int_equal(n, 8);
	assert_int_equal(cJSON_GetObjectItem(doc, "points")->valueint, 8);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "clusters")), 2);
	cJSON_Delete(doc);
	free(s);
	/* nothing ran: no output directory either */
	assert_int_equal(run("sweep '%s/examples/sweep-demo.json' --dry-run --json --out never", root), 0);
	assert_false(exists_in("never", NULL));
}

static void test_status_lines(void **state)
{
	size_t len;
	char *s;

	(void)state;
	/* auto off a terminal, a run shorter than the period: nothing */
	assert_int_equal(run(SIX), 0);
	s = slurp(errf, &len);
	assert_null(strstr(s, "elapsed"));
	free(s);
	/* a period of 0: a line per finished run, and the end */
	assert_int_equal(run_env("HETBATCH_STATUS_SECONDS=0", SIX " -j 2"), 0);
	err_has("sim resnet50/");
	err_has("6 of 6, 100.0 %, ");
	err_has("sim: ended after ");
	/* always: a line at the start even with the default period */
	assert_int_equal(run("--status-line always " SIX), 0);
	err_has("sim: 0 of 6, 0.0 %, 0 s elapsed\n");
	err_has("sim: ended after ");
	/* the global option may follow the subcommand */
	assert_int_equal(run(SIX " --status-line=always"), 0);
	err_has("sim: ended after ");
	/* never, and -q, whatever the period */
	assert_int_equal(run_env("HETBATCH_STATUS_SECONDS=0", "--status-line never " SIX), 0);
	s = slurp(errf, &len);
	assert_null(strstr(s, "elapsed"));
	free(s);
	/* bad values */
	assert_int_equal(run("--status-line sometimes " SIX), 2);
	err_has("--status-line needs auto, always or never, got 'sometimes'");
	assert_int_equal(run_env("HETBATCH_STATUS_SECONDS=soon", SIX), 2);
	err_has("$HETBATCH_STATUS_SECONDS: 'soon' is not a number of seconds");
}

/* -q: a successful run says nothing on stderr, whatever else would. */
static void test_quiet_is_silent(void **state)
{
	const char *root = getenv("HB_SOURCE_ROOT");
	size_t len;
	char *s;

	(void)state;
	const char *const cmds[] = {
		"-q --status-line always " SIX " --out q1",
		"-q -v " SIX " --out q2", /* -q wins over -v whatever the order */
		"-q plan --cluster demo --model resnet50 --gbs 256",
		"-q catalog models",
		NULL,
	};

	for (int i = 0; cmds[i]; i++) {
		assert_int_equal(run_env("HETBATCH_STATUS_SECONDS=0", "%s", cmds[i]), 0);
		s = slurp(errf, &len);
		if (len != 0)
			fail_msg("'%s' printed on stderr:\n%s", cmds[i], s);
		free(s);
	}
	assert_int_equal(run_env("HETBATCH_STATUS_SECONDS=0", "-q -v sweep '%s/examples/sweep-demo.json' --out q3", root), 0);
	s = slurp(errf, &len);
	if (len != 0)
		fail_msg("sweep -q printed on stderr:\n%s", s);
	free(s);
}

static void test_verbose(void **state)
{
	const char *root = getenv("HB_SOURCE_ROOT");

	(void)state;
	assert_int_equal(run("-v sim --cluster demo --model resnet50 --policy jabas,static --interval 1000 --out v"), 0);
	/* a line per run: batch and GPUs first to last, restarts, decisions by kind */
	err_has("info: resnet50/jabas: job resnet50-0: B_G ");
	err_has("info: resnet50/static: job resnet50-0: B_G ");
	err_has("; events: arrival 1, start 1, ");
	err_has(", 1 job\n");
	err_has("info: sim: wrote v/summary.csv (");
	err_has("info: sim: wrote v/results.db (");
	/* a trace replay: one line per policy, a line per job with -vv */
	assert_int_equal(run("-v sim --cluster demo --synthetic poisson --policy fifo --out t1"), 0);
	err_has("info: fifo: ");
	err_has(" done, 0 dropped, 0 unfinished; ");
	err_has("(-vv: a line per job)");
	assert_int_equal(run("-vv sim --cluster demo --synthetic poisson --policy fifo --out t2"), 0);
	err_has("debug: fifo: job ");
	assert_int_equal(run("-v sweep '%s/examples/sweep-demo.json' --out sw", root), 0);
	err_has("info: sweep: wrote sw/sweep.csv (");
	/* the profile sources of every GPU type x model the sweep uses: the
	 * GPU types of its clusters (demo's v100 and t4), the models of its
	 * replays */
	err_has("info: profile database: ");
	err_has("info: profile v100 x cifar10: analytic (run 1, ");
	err_has("info: profile t4 x cifar10: analytic (run 1, ");
	err_has("info: profile t4 x ncf: analytic (run 1, ");
	/* without -v, none of them */
	assert_int_equal(run("sweep '%s/examples/sweep-demo.json' --out sw2", root), 0);
	{
		size_t len;
		char *s = slurp(errf, &len);

		assert_null(strstr(s, "profile "));
		free(s);
	}
}

static int setup(void **state)
{
	(void)state;
	return cli_setup("cli-ux");
}

static int teardown(void **state)
{
	(void)state;
	return cli_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subcommand_typos),
		cmocka_unit_test(test_option_typos),
		cmocka_unit_test(test_names_any_case),
		cmocka_unit_test(test_unknown_names),
		cmocka_unit_test(test_small_messages),
		cmocka_unit_test(test_sim_jobs_same_bytes),
		cmocka_unit_test(test_trace_jobs_same_bytes),
		cmocka_unit_test(test_sweep_dry_run_json),
		cmocka_unit_test(test_status_lines),
		cmocka_unit_test(test_quiet_is_silent),
		cmocka_unit_test(test_verbose),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
