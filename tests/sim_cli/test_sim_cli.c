/* `hetbatch sim` as a user runs it ($HETBATCH): help, usage errors, bad
 * inputs that leave no result file, byte-identical files for one seed and a
 * different time series (same table layout) for another, a policy that
 * cannot run, figures with gnuplot and a warning without it.  Runs use the
 * small `demo` cluster and a long adaptation interval to stay quick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../cli_run.h"


#define QUICK "sim --cluster demo --model resnet50,gnmt --policy jabas,simigrad,optperf --interval 1000"

static const char *const result_files[] = { "results.db", "summary.csv", "timeseries.csv", "events.csv",
					    "summary.json", NULL };

static void test_help_and_usage(void **state)
{
	size_t len;
	char *s;

	(void)state;
	assert_int_equal(run("sim --help"), 0);
	s = slurp(outf, &len);
	assert_non_null(strstr(s, "Examples:"));
	assert_non_null(strstr(s, "Exit status:"));
	assert_non_null(strstr(s, "HETBATCH_GNUPLOT_DIR"));
	assert_non_null(strstr(s, "pollux-as"));
	free(s);
	assert_int_equal(run("help sim"), 0);
	assert_int_equal(run("--help"), 0);
	s = slurp(outf, &len);
	assert_non_null(strstr(s, "  sim "));
	free(s);
	assert_int_equal(run("sim --cluster demo"), 2);
	assert_int_equal(run("sim --model resnet50"), 2);
	assert_int_equal(run("sim --cluster demo --model resnet50 --bogus"), 2);
	assert_int_equal(run("sim --cluster demo --model resnet50 extra"), 2);
	assert_int_equal(run("sim --cluster demo --model resnet50 --plot"), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "--out"));
	free(s);
	assert_int_equal(run("sim --cluster demo --model resnet50 --interval 0"), 2);
	assert_int_equal(run("sim --cluster demo --model resnet50 --restart-cost -1"), 2);
	/* An unknown progress model names the option, the value and the valid ones. */
	assert_int_equal(run("sim --cluster demo --model resnet50 --progress jabas"), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "--progress: 'jabas' is not a progress model (valid: pollux, similarity, pollux-artifact, samples)"));
	free(s);
	/* Pollux fidelity: an unknown mode, and a progress model it does not charge. */
	assert_int_equal(run("sim --cluster demo --model resnet50 --fidelity artifact"), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "--fidelity: unknown mode 'artifact' (none, pollux, easyscale or sia)"));
	free(s);
	assert_int_equal(run("sim --cluster demo --model resnet50 --fidelity pollux --progress similarity"), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "not 'similarity'"));
	free(s);
	/* The artifact's epochs need its validation runs: a model without them is named. */
	assert_int_equal(run("sim --cluster demo --model resnet50 --fidelity pollux"), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "model 'resnet50' has no gradient statistics"));
	free(s);
	assert_int_equal(run("sim --cluster demo --model resnet50 --policy jabas,jabas"), 2);
	assert_int_equal(run("sim --cluster demo --model resnet50 --replay no-such-file.csv --out r"), 2);
	assert_false(exists_in("r", NULL));
}

/* stderr of the last run holds want */
static void err_has(const char *want)
{
	size_t len;
	char *s = slurp(errf, &len);

	if (!strstr(s, want))
		fail_msg("stderr '%s' lacks '%s'", s, want);
	free(s);
}

/* The policies' options come from their knob tables (policy_knob.h): their
 * --help lines as they were written by hand, their value errors, the
 * need for jobs sharing the cluster, and those --fidelity easyscale
 * replaces. */
static void test_policy_options(void **state)
{
	size_t len;
	char *s;

	(void)state;
	assert_int_equal(run("sim --help"), 0);
	s = slurp(outf, &len);
	assert_non_null(strstr(s, "\n  --elastic-interval S seconds between the elastic policy's scaling decisions\n"
				  "                       (IBM's Delta; default 600; 0 = at every arrival and\n"
				  "                       departure)\n"
				  "  --elastic-drop       elastic: reject jobs it cannot admit (drop mode)\n"
				  "                       instead of queueing them\n"
				  "  --easyscale-comm on|off  EasyScale plans estimate the all-reduce (on, the\n"
				  "                       default) or only Eq. 1's compute (off, the paper's)\n"
				  "  --easyscale-restart model|artifact  EasyScale's reconfiguration cost: the\n"
				  "                       simulator's restart model (default) or the artifact's\n"
				  "                       20 s on the first start only\n"
				  "  --yarn-head-only     yarn-cs as the EasyScale artifact simulates it: only\n"
				  "                       the queue head may start, one job at a time\n"));
	free(s);
	assert_int_equal(run("sim --cluster demo --synthetic poisson --elastic-interval soon"), 2);
	err_has("--elastic-interval: 'soon' is not a number of seconds in [0, 1e7]");
	assert_int_equal(run("sim --cluster demo --synthetic poisson --easyscale-comm maybe"), 2);
	err_has("--easyscale-comm: 'maybe' is not on or off");
	assert_int_equal(run("sim --cluster demo --synthetic poisson --easyscale-restart never"), 2);
	err_has("--easyscale-restart: 'never' is not model or artifact");
	assert_int_equal(run("sim --cluster demo --synthetic poisson --yarn-head-only=1"), 2);
	err_has("option '--yarn-head-only' takes no value");
	assert_int_equal(run("sim --cluster demo --synthetic poisson --elastic-intervl 5"), 2);
	err_has("did you mean '--elastic-interval'?");
	assert_int_equal(run("sim --cluster demo --model resnet50 --elastic-drop"), 2);
	err_has("--elastic-drop needs --trace or --synthetic (jobs sharing the cluster)");
	assert_int_equal(run("sim --cluster demo --model resnet50 --easyscale-restart artifact"), 2);
	err_has("--easyscale-restart needs --trace or --synthetic");
	assert_int_equal(run("sim --cluster easyscale --synthetic poisson --fidelity easyscale --yarn-head-only"), 2);
	err_has("own mechanics: --easyscale-comm, --easyscale-restart, --yarn-head-only and --capacity do not apply");
}

static void test_bad_names_write_nothing(void **state)
{
	size_t len;
	char *s;

	(void)state;
	assert_int_equal(run("sim --cluster demo --model no-such-model --out bad1"), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "no-such-model"));
	assert_int_equal(count_char(s, '\n'), 1);
	free(s);
	assert_false(exists_in("bad1", NULL));
	assert_int_equal(run("sim --cluster demo --model resnet50 --policy jabas,no-such-policy --out bad2"), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "unknown policy 'no-such-policy'"));
	assert_non_null(strstr(s, "simigrad")); /* lists the known ones */
	assert_int_equal(count_char(s, '\n'), 1);
	free(s);
	assert_false(exists_in("bad2", NULL));
	assert_int_equal(run("sim --cluster no-such-cluster --model resnet50 --out bad3"), 2);
	assert_false(exists_in("bad3", NULL));
}

/* A cluster file with a GPU type the profile database lacks. */
static void test_gpu_missing_from_profiles(void **state)
{
	char path[600];
	size_t len;
	char *s;
	FILE *f;

	(void)state;
	assert_int_equal(run("-q profile --analytic --db only-v100.db --gpus v100 --models resnet50"), 0);
	snprintf(path, sizeof(path), "%s/v100-t4.json", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{ \"name\": \"v100-t4\", \"intra_link\": \"pcie3-x16\", \"intra_bw\": 15750000000.0,\n"
	      "  \"inter_link\": \"eth-25g\", \"inter_bw\": 3125000000.0, \"storage_bw\": 1250000000.0,\n"
	      "  \"restart_latency_s\": 10, \"source\": \"test\",\n"
	      "  \"groups\": [ { \"gpu\": \"v100\", \"nodes\": 1, \"gpus_per_node\": 2 },\n"
	      "              { \"gpu\": \"t4\", \"nodes\": 1, \"gpus_per_node\": 2 } ] }\n",
	      f);
	fclose(f);
	assert_int_equal(run("sim --cluster v100-t4.json --model resnet50 --db only-v100.db --out bad4 --plot"), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "'t4'"));
	assert_non_null(strstr(s, "only-v100.db"));
	assert_int_equal(count_char(s, '\n'), 1);
	free(s);
	assert_false(exists_in("bad4", NULL));
	/* the same database runs a cluster of V100s only */
	write_file("v100s.json", "{ \"name\": \"v100s\", \"intra_link\": \"pcie3-x16\", \"intra_bw\": 15750000000.0,\n"
				 "  \"inter_link\": \"eth-25g\", \"inter_bw\": 3125000000.0, \"storage_bw\": 1250000000.0,\n"
				 "  \"restart_latency_s\": 10, \"source\": \"test\",\n"
				 "  \"groups\": [ { \"gpu\": \"v100\", \"nodes\": 2, \"gpus_per_node\": 2 } ] }\n");
	assert_int_equal(run("-q sim --cluster v100s.json --model resnet50 --db only-v100.db --policy simigrad "
			     "--interval 1000"),
			 0);
}

static void test_replay_non_monotone(void **state)
{
	size_t len;
	char *s;

	(void)state;
	write_file("bad-steps.csv", "step,global_batch\n0,256\n200,512\n100,1024\n");
	assert_int_equal(run("sim --cluster demo --model resnet50 --policy jabas,simigrad --replay bad-steps.csv "
			     "--out bad5"),
			 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "bad-steps.csv"));
	assert_int_equal(count_char(s, '\n'), 1);
	free(s);
	assert_false(exists_in("bad5", NULL));
}

/* Compare every result file of two directories byte for byte. */
static void assert_same_files(const char *a, const char *b, const char *const *names)
{
	for (int i = 0; names[i]; i++) {
		size_t la, lb;
		char *da = slurp_in(a, names[i], &la), *db = slurp_in(b, names[i], &lb);

		if (la != lb || memcmp(da, db, la) != 0)
			fail_msg("%s differs between %s and %s", names[i], a, b);
		free(da);
		free(db);
	}
}

/* The first n comma-separated fields of each line, and the field count. */
static void csv_layout(const char *s, char *out, size_t size, int nkeep)
{
	size_t len = 0;

	while (*s && len + 2 < size) {
		int field = 0;

		for (; *s && *s != '\n'; s++) {
			if (*s == ',')
				field++;
			if (field < nkeep && len + 2 < size)
				out[len++] = *s;
		}
		len += (size_t)snprintf(out + len, size - len, "|%d\n", field + 1);
		if (*s)
			s++;
	}
	out[len < size ? len : size - 1] = '\0';
}

/* Each line's number of blank-separated words, with its first word. */
static void table_layout(const char *s, char *out, size_t size)
{
	size_t len = 0;

	while (*s && len + 2 < size) {
		int words = 0, in = 0;
		char first[64] = "";

		for (; *s && *s != '\n'; s++) {
			if (*s != ' ' && !in) {
				words++;
				if (words == 1)
					sscanf(s, "%63s", first);
			}
			in = *s != ' ';
		}
		/* the wall-time column and the final line vary; the layout does not */
		len += (size_t)snprintf(out + len, size - len, "%s:%d\n", first, words);
		if (*s)
			s++;
	}
}

static void test_reproducible(void **state)
{
	static char la[65536], lb[65536];
	size_t len, n1, n2;
	char *s1, *s2, *t1, *t2;

	(void)state;
	assert_int_equal(run("--seed 3 " QUICK " --out rep-a --csv"), 0);
	t1 = slurp(outf, &len);
	assert_int_equal(run("--seed 3 " QUICK " --out rep-b --csv"), 0);
	assert_same_files("rep-a", "rep-b", result_files);
	assert_no_temporaries("rep-a");

	/* another seed: the similarity noise moves the trajectories, the table
	 * keeps its rows and columns */
	assert_int_equal(run("--seed 4 " QUICK " --out rep-c --csv"), 0);
	t2 = slurp(outf, &len);
	s1 = slurp_in("rep-a", "timeseries.csv", &n1);
	s2 = slurp_in("rep-c", "timeseries.csv", &n2);
	assert_true(n1 != n2 || memcmp(s1, s2, n1) != 0);
	free(s1);
	free(s2);
	s1 = slurp_in("rep-a", "summary.csv", &n1);
	s2 = slurp_in("rep-c", "summary.csv", &n2);
	assert_true(n1 != n2 || memcmp(s1, s2, n1) != 0);
	csv_layout(s1, la, sizeof(la), 3);
	csv_layout(s2, lb, sizeof(lb), 3);
	assert_string_equal(la, lb);
	assert_int_equal(count_char(s1, '\n'), 1 + 2 * 3);
	free(s1);
	free(s2);
	table_layout(t1, la, sizeof(la));
	table_layout(t2, lb, sizeof(lb));
	assert_string_equal(la, lb);
	assert_non_null(strstr(t1, "cluster demo, model resnet50, seed 3; interval=1000*"));
	assert_non_null(strstr(t2, "cluster demo, model gnmt, seed 4; interval=1000*"));
	assert_non_null(strstr(t1, "\njabas "));
	assert_non_null(strstr(t1, "\noptperf "));
	assert_non_null(strstr(t1, "6 of 6 runs ran; wall time"));
	free(t1);
	free(t2);

	/* no wall time, timestamp or absolute path in the files */
	s1 = slurp_in("rep-a", "summary.json", &n1);
	assert_null(strstr(s1, tmpdir));
	assert_null(strstr(s1, "wall"));
	free(s1);
}

static void test_json_and_knobs(void **state)
{
	size_t n1, n2;
	char *s1, *s2;

	(void)state;
	assert_int_equal(run("sim --cluster demo --model gnmt --policy simigrad,optperf --interval 1000 "
			     "--restart-cost 30 --no-similarity-cost --progress similarity --json --out js"),
			 0);
	s1 = slurp(outf, &n1);
	s2 = slurp_in("js", "summary.json", &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(s1, s2, n1);
	assert_non_null(strstr(s1, "\"restart_cost_s\":\t30"));
	assert_non_null(strstr(s1, "\"progress\":\t\"similarity\""));
	assert_non_null(strstr(s1, "\"similarity_cost\":\tfalse"));
	/* no JABAS run: relative to the first policy that ran */
	assert_non_null(strstr(s1, "\"reference\":\t\"simigrad\""));
	free(s1);
	free(s2);
	assert_int_equal(run("sim --cluster demo --model gnmt --policy simigrad --interval 1000 --restart-cost 30 "
			     "--gns-overhead 0.143 --unequal-penalty 0.5 --reconfig-cost 2"),
			 0);
	s1 = slurp(outf, &n1);
	assert_non_null(strstr(s1, "interval=1000*, restart-cost=30 s*, reconfig-cost=2 s*, gns-overhead=0.143*, "
				   "similarity-cost=on, unequal-penalty=0.5*, replay=none, progress=pollux"));
	assert_non_null(strstr(s1, "t/simig"));
	free(s1);
}

static void test_cannot_run(void **state)
{
	size_t len;
	char *s;

	(void)state;
	/* Pollux's GNS buffer does not fit LLaMA2-7B (JABAS §7.2): a row, exit 0 */
	assert_int_equal(run("sim --cluster jabas-c --model llama2-7b --policy pollux,simigrad --out cr"), 0);
	s = slurp(outf, &len);
	assert_non_null(strstr(s, "\npollux       cannot run: "));
	assert_non_null(strstr(s, "OOM"));
	assert_non_null(strstr(s, "\nsimigrad "));
	assert_non_null(strstr(s, "1 of 2 runs ran"));
	free(s);
	s = slurp_in("cr", "summary.csv", &len);
	assert_non_null(strstr(s, "1,llama2-7b,pollux,,cannot run,"));
	free(s);
	/* nothing ran: exit 1 and no file */
	assert_int_equal(run("sim --cluster jabas-c --model llama2-7b --policy pollux,pollux-as --out cr2"), 1);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "pollux-as"));
	free(s);
	assert_false(exists_in("cr2", NULL));
}

static void test_plots_without_gnuplot(void **state)
{
	size_t len;
	char *s;

	(void)state;
	assert_int_equal(run_env("PATH=/nonexistent", "sim --cluster demo --model gnmt --policy jabas,simigrad "
						       "--interval 1000 --out np --plot"),
			 0);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "warning: gnuplot is not on PATH"));
	free(s);
	assert_true(exists_in("np", "gnmt-series.dat"));
	assert_true(exists_in("np", "gnmt-bars.dat"));
	assert_true(exists_in("np", "summary.csv"));
	assert_false(exists_in("np", "gnmt-batch.png"));
}

static void test_plots(void **state)
{
	static const char *const figs[] = { "resnet50-batch.png", "resnet50-batch.svg", "resnet50-gpus.png",
					    "resnet50-gpus.svg", "resnet50-bars.png", "resnet50-bars.svg",
					    "gnmt-batch.png", "gnmt-gpus.svg", "gnmt-bars.png", NULL };
	const char *root = getenv("HB_SOURCE_ROOT");
	char env[1200];
	size_t len;
	char *s;

	(void)state;
	if (system("command -v gnuplot >/dev/null 2>&1") != 0 || !root) {
		skip();
		return;
	}
	assert_int_equal(run_env("HETBATCH_GNUPLOT_DIR=/nonexistent", QUICK " --out pl0 --plot"), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "HETBATCH_GNUPLOT_DIR"));
	free(s);
	assert_false(exists_in("pl0", NULL));

	snprintf(env, sizeof(env), "HETBATCH_GNUPLOT_DIR='%s/scripts/gnuplot'", root);
	assert_int_equal(run_env(env, QUICK " --out pl --plot"), 0);
	for (int i = 0; figs[i]; i++) {
		s = slurp_in("pl", figs[i], &len);
		if (strstr(figs[i], ".png"))
			assert_memory_equal(s, "\x89PNG\r\n", 6);
		else
			assert_non_null(strstr(s, "<svg"));
		assert_true(len > 2000);
		free(s);
	}
	s = slurp_in("pl", "resnet50-series.dat", &len);
	assert_non_null(strstr(s, "# jabas\n"));
	assert_non_null(strstr(s, "\n\n\n# optperf\n"));
	free(s);
	assert_no_temporaries("pl");
}

static int setup(void **state)
{
	(void)state;
	return cli_setup("simcli");
}

static int teardown(void **state)
{
	(void)state;
	return cli_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_and_usage),
		cmocka_unit_test(test_policy_options),
		cmocka_unit_test(test_bad_names_write_nothing),
		cmocka_unit_test(test_gpu_missing_from_profiles),
		cmocka_unit_test(test_replay_non_monotone),
		cmocka_unit_test(test_reproducible),
		cmocka_unit_test(test_json_and_knobs),
		cmocka_unit_test(test_cannot_run),
		cmocka_unit_test(test_plots_without_gnuplot),
		cmocka_unit_test(test_plots),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
