/*
 * test_checkpoint.c: checkpoints of live runs (profiler/checkpoint.c) on
 * the cpu backend.
 *
 * The specification: a run that trains 5 iterations, checkpoints, and
 * trains 5 more ends with exactly the weights and optimizer state (memcmp,
 * not a tolerance) of a fresh state that loads the checkpoint and trains
 * the same 5 iterations from the saved data position: SGD with momentum
 * over two VSWs, and Adam (whose bias correction needs the restored step).
 * Every corrupted byte and every truncation is refused with the file named
 * and the state left alone; a checkpoint of another model, local batch,
 * VSW count, rank count, scale or rank is refused with both values named;
 * a save leaves no temporary file, and a failed save leaves the previous
 * checkpoint intact.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "checkpoint.h"
#include "device.h"
#include "fileio.h"
#include "rng.h"
#include "workload.h"
#include "wl_specs.h"     /* defines: spec_transformer, spec_cnn */

static const struct hb_device_ops *ops = &hb_device_cpu;

/* ------------------------------------------------------------------------ */
/* Small specs and a cpu state (as in tests/workload)                       */

struct rig {
	const struct hb_workload *w;
	struct hb_device *dev;
	struct hb_stream *s[4];
	struct hb_wl_state *st;
	int B, n;
};

/* Seed 7 always: hb_wl_data's batches derive from the state's seed, so a
 * restart must create its state with the run's seed (meta.seed) for the
 * data to continue; the fresh state's weights and optimizer state are
 * scrambled instead (scramble()). */
static void rig_open(struct rig *r, const struct hb_workload *w, int B, int n)
{
	struct hb_device_config cfg = { .mem_limit_bytes = 64e6 };
	struct hb_error err = { 0 };

	memset(r, 0, sizeof(*r));
	r->w = w;
	r->B = B;
	r->n = n;
	assert_int_equal(ops->open(&cfg, &r->dev, &err), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(ops->stream_create(r->dev, &r->s[i], &err), 0);
	assert_int_equal(hb_wl_state_create(ops, r->dev, w, B, n, r->s, 7, &r->st, &err), 0);
}

static void rig_close(struct rig *r)
{
	hb_wl_state_free(r->st);
	for (int i = 0; i < r->n; i++)
		ops->stream_destroy(r->s[i]);
	ops->close(r->dev);
}

/* Iterations [from, from + count), deterministic: every VSW loads batch
 * `it`, runs forward and backward; aggregate, update, weight copy. */
static void train(struct rig *r, long from, long count)
{
	struct hb_error err = { 0 };

	for (long it = from; it < from + count; it++) {
		for (int i = 0; i < r->n; i++) {
			assert_int_equal(hb_wl_data(r->st, i, it, &err), 0);
			assert_int_equal(hb_wl_forward(r->st, i, &err), 0);
			assert_int_equal(hb_wl_backward(r->st, i, &err), 0);
			assert_int_equal(ops->stream_sync(r->s[i], &err), 0);
		}
		assert_int_equal(hb_wl_aggregate(r->st, &err), 0);
		assert_int_equal(hb_wl_update(r->st, &err), 0);
		assert_int_equal(ops->stream_sync(r->s[0], &err), 0);
		for (int i = 1; i < r->n; i++) {
			assert_int_equal(hb_wl_copy(r->st, i, &err), 0);
			assert_int_equal(ops->stream_sync(r->s[i], &err), 0);
		}
	}
}

/* Everything a checkpoint restores: every VSW's weights, the optimizer
 * state, the step. */
struct snap {
	long np, no, step;
	int n;
	float *w[4];
	float *opt;
};

static void snap_take(struct rig *r, struct snap *s)
{
	struct hb_error err = { 0 };

	s->np = hb_wl_param_floats(r->st);
	s->no = hb_wl_opt_floats(r->st);
	s->step = hb_wl_step(r->st);
	s->n = r->n;
	for (int i = 0; i < r->n; i++) {
		s->w[i] = malloc((size_t)s->np * sizeof(float));
		assert_non_null(s->w[i]);
		assert_int_equal(hb_wl_read_weights(r->st, i, s->w[i], (size_t)s->np, &err), 0);
	}
	s->opt = malloc((size_t)s->no * sizeof(float));
	assert_non_null(s->opt);
	assert_int_equal(hb_wl_read_opt_state(r->st, s->opt, (size_t)s->no, &err), 0);
}

static void snap_free(struct snap *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->w[i]);
	free(s->opt);
}

/* Bit-identical, every VSW. */
static void snap_assert_equal(const struct snap *a, const struct snap *b, const char *what)
{
	assert_int_equal(a->np, b->np);
	assert_int_equal(a->no, b->no);
	assert_int_equal(a->n, b->n);
	if (a->step != b->step)
		fail_msg("%s: step %ld != %ld", what, a->step, b->step);
	for (int i = 0; i < a->n; i++)
		if (memcmp(a->w[i], b->w[i], (size_t)a->np * sizeof(float)) != 0)
			fail_msg("%s: weights of VSW %d differ", what, i);
	if (memcmp(a->opt, b->opt, (size_t)a->no * sizeof(float)) != 0)
		fail_msg("%s: optimizer state differs", what);
}

/* Overwrite every VSW's weights, the optimizer state and the step, so a
 * load that forgets any of them shows. */
static void scramble(struct rig *r)
{
	struct hb_error err = { 0 };
	long np = hb_wl_param_floats(r->st), no = hb_wl_opt_floats(r->st);
	float *junk = malloc((size_t)(np > no ? np : no) * sizeof(float));

	assert_non_null(junk);
	for (long j = 0; j < (np > no ? np : no); j++)
		junk[j] = 0.25f * (float)((j * 7919) % 13) - 1.0f;
	for (int i = 0; i < r->n; i++)
		assert_int_equal(hb_wl_write_weights(r->st, i, junk, (size_t)np, &err), 0);
	assert_int_equal(hb_wl_write_opt_state(r->st, junk, (size_t)no, &err), 0);
	hb_wl_set_step(r->st, 99);
	free(junk);
}

/* The metadata of rig r at data position pos. */
static struct hb_ckpt_meta meta_for(const struct rig *r, long pos)
{
	struct hb_ckpt_meta m = { 0 };

	snprintf(m.model, sizeof(m.model), "%s", r->w->model);
	m.scale = r->w->scale;
	m.local_bs = r->B;
	m.n_vsw = r->n;
	m.nranks = 1;
	m.iteration = pos;
	m.data_pos = pos;
	m.seed = 7;
	snprintf(m.config, sizeof(m.config), "model=%s bs=%d vsw=%d", r->w->model, r->B, r->n);
	return m;
}

/* What a restarting rank knows about itself before the load. */
static struct hb_ckpt_meta expect_for(const struct rig *r)
{
	struct hb_ckpt_meta m = { 0 };

	snprintf(m.model, sizeof(m.model), "%s", r->w->model);
	m.local_bs = r->B;
	m.n_vsw = r->n;
	return m;
}

/* ------------------------------------------------------------------------ */
/* Files                                                                    */

static void tmpdir_make(char *buf, size_t size)
{
	const char *t = getenv("TMPDIR");

	snprintf(buf, size, "%s/hbckptXXXXXX", t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(buf));
}

static void rm_tree(const char *path)
{
	struct stat sb;
	DIR *d;
	struct dirent *e;
	char sub[4096];

	if (lstat(path, &sb) != 0)
		return;
	if (!S_ISDIR(sb.st_mode)) {
		remove(path);
		return;
	}
	chmod(path, 0755);
	d = opendir(path);
	if (d) {
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			rm_tree(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

/* Entries of dir other than . and ..; *tmp counts names with ".tmp.". */
static int dir_entries(const char *dir, int *tmp)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	*tmp = 0;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		if (strstr(e->d_name, ".tmp."))
			(*tmp)++;
	}
	closedir(d);
	return n;
}

static void write_bytes(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void assert_msg_has(const struct hb_error *err, const char *needle)
{
	if (!strstr(err->msg, needle))
		fail_msg("expected \"%s\" in the error: %s", needle, err->msg);
}

/* ------------------------------------------------------------------------ */
/* Restart                                                                  */

static void check_restart(void (*spec)(struct hb_workload *, struct hb_wl_layer *), int n_vsw)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_error err = { 0 };
	struct hb_ckpt_meta meta, in;
	struct snap at_ckpt, end1, restored, end2;
	struct rig a, b;
	char dir[256];

	spec(&w, ls);
	tmpdir_make(dir, sizeof(dir));

	/* Run 1: 5 iterations, checkpoint, 5 more. */
	rig_open(&a, &w, 2, n_vsw);
	train(&a, 0, 5);
	meta = meta_for(&a, 5);
	assert_int_equal(hb_ckpt_save(dir, 0, a.st, &meta, &err), 0);
	snap_take(&a, &at_ckpt);
	assert_int_equal(at_ckpt.step, 5);
	train(&a, 5, 5);
	snap_take(&a, &end1);
	assert_int_equal(end1.step, 10);
	rig_close(&a);

	/* Run 2: a fresh state, trained elsewhere and scrambled, loads the
	 * checkpoint and continues from its data position. */
	rig_open(&b, &w, 2, n_vsw);
	train(&b, 40, 3);
	scramble(&b);
	in = expect_for(&b);
	in.nranks = 1;
	in.scale = 1;
	assert_int_equal(hb_ckpt_load(dir, 0, b.st, &in, &err), 0);
	assert_string_equal(in.model, w.model);
	assert_int_equal(in.step, 5);
	assert_int_equal(in.iteration, 5);
	assert_int_equal(in.data_pos, 5);
	assert_int_equal(in.local_bs, 2);
	assert_int_equal(in.n_vsw, n_vsw);
	assert_int_equal(in.rank, 0);
	assert_int_equal(in.nranks, 1);
	assert_int_equal(in.seed, 7);
	assert_string_equal(in.config, meta.config);
	snap_take(&b, &restored);
	snap_assert_equal(&at_ckpt, &restored, "just after the load");
	train(&b, in.data_pos, 5);
	snap_take(&b, &end2);
	snap_assert_equal(&end1, &end2, "5 iterations after the restart");
	/* The continuation did train: the weights moved past the checkpoint. */
	assert_memory_not_equal(end2.w[0], at_ckpt.w[0], (size_t)end2.np * sizeof(float));
	rig_close(&b);

	snap_free(&at_ckpt);
	snap_free(&end1);
	snap_free(&restored);
	snap_free(&end2);
	rm_tree(dir);
}

static void test_restart_sgd_two_vsws(void **state)
{
	(void)state;
	check_restart(spec_cnn, 2);
}

static void test_restart_sgd_one_vsw(void **state)
{
	(void)state;
	check_restart(spec_cnn, 1);
}

static void test_restart_adam(void **state)
{
	(void)state;
	check_restart(spec_transformer, 1);
}

static void test_restart_adam_two_vsws(void **state)
{
	(void)state;
	check_restart(spec_transformer, 2);
}

/* Every metadata field comes back; restored RNG streams (spare normal
 * included) continue the saved sequences. */
static void test_meta_roundtrip(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_error err = { 0 };
	struct hb_ckpt_meta m, in;
	struct rig r;
	char dir[256];

	(void)state;
	spec_cnn(&w, ls);
	tmpdir_make(dir, sizeof(dir));
	rig_open(&r, &w, 2, 1);
	m = meta_for(&r, 123456789012L);
	m.iteration = 98765;
	m.seed = 0xfedcba9876543210ull;
	m.nranks = 3;
	m.nrng = 3;
	for (int k = 0; k < m.nrng; k++) {
		hb_rng_seed(&m.rng[k], m.seed, (uint64_t)k);
		for (int j = 0; j <= k; j++)
			(void)hb_rng_normal(&m.rng[k]);
	}
	assert_int_equal(m.rng[0].have_spare, 1);
	hb_wl_set_step(r.st, 31);
	assert_int_equal(hb_ckpt_save(dir, 2, r.st, &m, &err), 0);
	assert_true(hb_ckpt_exists(dir, 2));
	assert_false(hb_ckpt_exists(dir, 0));

	in = expect_for(&r);
	in.nranks = 3;
	assert_int_equal(hb_ckpt_load(dir, 2, r.st, &in, &err), 0);
	assert_string_equal(in.model, m.model);
	assert_true(in.scale == m.scale);
	assert_int_equal(in.local_bs, m.local_bs);
	assert_int_equal(in.n_vsw, m.n_vsw);
	assert_int_equal(in.rank, 2);
	assert_int_equal(in.nranks, 3);
	assert_int_equal(in.step, 31);
	assert_int_equal(in.iteration, 98765);
	assert_int_equal(in.data_pos, 123456789012L);
	assert_true(in.seed == m.seed);
	assert_string_equal(in.config, m.config);
	assert_int_equal(in.nrng, 3);
	for (int k = 0; k < m.nrng; k++) {
		assert_memory_equal(in.rng[k].s, m.rng[k].s, sizeof(m.rng[k].s));
		assert_int_equal(in.rng[k].have_spare, m.rng[k].have_spare);
		for (int j = 0; j < 5; j++) {
			double x = hb_rng_normal(&m.rng[k]), y = hb_rng_normal(&in.rng[k]);

			assert_memory_equal(&x, &y, sizeof(x));
		}
	}
	for (int k = m.nrng; k < HB_CKPT_MAX_RNG; k++)
		assert_int_equal(in.rng[k].s[0], 0);
	assert_int_equal(hb_wl_step(r.st), 31);
	rig_close(&r);
	rm_tree(dir);
}

/* ------------------------------------------------------------------------ */
/* Refused files                                                            */

/* A saved CNN checkpoint, its bytes, and a state to load into. */
struct fixture {
	struct hb_workload w;
	struct hb_wl_layer ls[8];
	struct rig r;
	char dir[256], path[512];
	char *bytes;
	size_t len;
	struct snap before;       /* the state before any refused load */
};

static void fixture_open(struct fixture *fx)
{
	struct hb_error err = { 0 };
	struct hb_ckpt_meta m;

	memset(fx, 0, sizeof(*fx));
	spec_cnn(&fx->w, fx->ls);
	tmpdir_make(fx->dir, sizeof(fx->dir));
	snprintf(fx->path, sizeof(fx->path), "%s/rank-0.ckpt", fx->dir);
	rig_open(&fx->r, &fx->w, 2, 1);
	train(&fx->r, 0, 2);
	m = meta_for(&fx->r, 2);
	assert_int_equal(hb_ckpt_save(fx->dir, 0, fx->r.st, &m, &err), 0);
	assert_int_equal(hb_read_file(fx->path, &fx->bytes, &fx->len, &err), 0);
	assert_int_equal(fx->len, 64 + 576 + 4 * (hb_wl_param_floats(fx->r.st) + hb_wl_opt_floats(fx->r.st)) + 8);
	assert_memory_equal(fx->bytes, "HBCKPT1", 8);
	/* The loading state differs from the file, so a partial load shows. */
	train(&fx->r, 2, 1);
	snap_take(&fx->r, &fx->before);
}

static void fixture_close(struct fixture *fx)
{
	struct snap now;

	/* No refused load touched the state. */
	snap_take(&fx->r, &now);
	snap_assert_equal(&fx->before, &now, "after refused loads");
	snap_free(&now);
	snap_free(&fx->before);
	free(fx->bytes);
	rig_close(&fx->r);
	rm_tree(fx->dir);
}

/* Load must fail with an input error that names the file and says `what`. */
static void assert_refused(struct fixture *fx, struct hb_ckpt_meta in, const char *what)
{
	struct hb_error err = { 0 };

	if (hb_ckpt_load(fx->dir, 0, fx->r.st, &in, &err) != -1)
		fail_msg("loaded a file that should be refused for \"%s\"", what);
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg_has(&err, fx->path);
	if (what)
		assert_msg_has(&err, what);
}

/* Every single flipped byte is refused: the magic as not a checkpoint,
 * the rest of the header by its checksum, the payload by the file's. */
static void test_corrupt_every_byte(void **state)
{
	struct fixture fx;

	(void)state;
	fixture_open(&fx);
	for (size_t off = 0; off < fx.len; off++) {
		fx.bytes[off] ^= 0x5a;
		write_bytes(fx.path, fx.bytes, fx.len);
		fx.bytes[off] ^= 0x5a;
		assert_refused(&fx, expect_for(&fx.r),
			       off < 8 ? "not a hetbatch checkpoint"
			       : off < 64 ? "header checksum mismatch"
			       : "checksum mismatch");
	}
	/* One bit in a weight: still caught. */
	fx.bytes[64 + 576 + 13] ^= 0x01;
	write_bytes(fx.path, fx.bytes, fx.len);
	assert_refused(&fx, expect_for(&fx.r), "the file is corrupted");
	fx.bytes[64 + 576 + 13] ^= 0x01;
	fixture_close(&fx);
}

/* FNV-1a 64, as checkpoint.h specifies the header's checksum. */
static uint64_t fnv1a(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Well-formed headers the build cannot read: another format version
 * (checksum made to match), another host's byte order. */
static void test_foreign_header(void **state)
{
	struct fixture fx;
	uint32_t version = 2, bom = 0x04030201u;
	uint64_t sum;

	(void)state;
	fixture_open(&fx);
	memcpy(fx.bytes + 8, &version, 4);
	sum = fnv1a(fx.bytes, 56);
	memcpy(fx.bytes + 56, &sum, 8);
	write_bytes(fx.path, fx.bytes, fx.len);
	assert_refused(&fx, expect_for(&fx.r), "format version 2, this build reads version 1");
	memcpy(fx.bytes + 12, &bom, 4);
	write_bytes(fx.path, fx.bytes, fx.len);
	assert_refused(&fx, expect_for(&fx.r), "other byte order");
	fixture_close(&fx);
}

/* Truncated anywhere: "truncated at byte N"; longer: trailing data. */
static void test_truncated(void **state)
{
	struct fixture fx;
	char want[64];

	(void)state;
	fixture_open(&fx);
	for (size_t len = 0; len < fx.len; len += (len < 80 ? 1 : 37)) {
		write_bytes(fx.path, fx.bytes, len);
		snprintf(want, sizeof(want), "truncated at byte %zu", len);
		assert_refused(&fx, expect_for(&fx.r), want);
	}
	write_bytes(fx.path, fx.bytes, fx.len - 1);
	snprintf(want, sizeof(want), "truncated at byte %zu of %zu", fx.len - 1, fx.len);
	assert_refused(&fx, expect_for(&fx.r), want);
	fx.bytes = realloc(fx.bytes, fx.len + 1);
	fx.bytes[fx.len] = 0;
	write_bytes(fx.path, fx.bytes, fx.len + 1);
	assert_refused(&fx, expect_for(&fx.r), "trailing data");
	fixture_close(&fx);
}

/* Another configuration: refused, naming both values. */
static void test_mismatch(void **state)
{
	struct fixture fx;
	struct hb_ckpt_meta in;
	struct hb_error err = { 0 };
	char other[512];

	(void)state;
	fixture_open(&fx);
	in = expect_for(&fx.r);
	snprintf(in.model, sizeof(in.model), "resnet50");
	assert_refused(&fx, in, "model 't-cnn' != 'resnet50'");
	in = expect_for(&fx.r);
	in.local_bs = 3;
	assert_refused(&fx, in, "local batch 2 != 3");
	in = expect_for(&fx.r);
	in.n_vsw = 2;
	assert_refused(&fx, in, "1 VSWs != 2");
	in = expect_for(&fx.r);
	in.nranks = 4;
	assert_refused(&fx, in, "1 ranks != 4");
	in = expect_for(&fx.r);
	in.scale = 0.5;
	assert_refused(&fx, in, "scale 1 != 0.5");

	/* The file of rank 0 renamed to rank 1. */
	snprintf(other, sizeof(other), "%s/rank-1.ckpt", fx.dir);
	write_bytes(other, fx.bytes, fx.len);
	in = expect_for(&fx.r);
	assert_int_equal(hb_ckpt_load(fx.dir, 1, fx.r.st, &in, &err), -1);
	assert_msg_has(&err, other);
	assert_msg_has(&err, "written by rank 0, not rank 1");

	/* A local batch-3 state of the same model, and a state of another
	 * model whose caller claims the checkpoint's model: the sizes say. */
	{
		struct rig r3, rt;
		struct hb_workload wt = { 0 };
		struct hb_wl_layer lst[8];
		struct snap s0, s1;

		rig_open(&r3, &fx.w, 3, 1);
		snap_take(&r3, &s0);
		in = expect_for(&r3);
		assert_int_equal(hb_ckpt_load(fx.dir, 0, r3.st, &in, &err), -1);
		assert_msg_has(&err, fx.path);
		assert_msg_has(&err, "local batch 2 != 3");
		snap_take(&r3, &s1);
		snap_assert_equal(&s0, &s1, "after a refused load");
		snap_free(&s0);
		snap_free(&s1);
		rig_close(&r3);

		spec_transformer(&wt, lst);
		rig_open(&rt, &wt, 2, 1);
		in = expect_for(&rt);
		assert_int_equal(hb_ckpt_load(fx.dir, 0, rt.st, &in, &err), -1);
		assert_msg_has(&err, "model 't-cnn' != 't-transformer'");
		snprintf(in.model, sizeof(in.model), "t-cnn");
		assert_int_equal(hb_ckpt_load(fx.dir, 0, rt.st, &in, &err), -1);
		assert_msg_has(&err, fx.path);
		assert_msg_has(&err, "parameter floats");
		rig_close(&rt);
	}
	fixture_close(&fx);
}

/* No directory, no file, no expectation: clear errors, nothing loaded. */
static void test_missing(void **state)
{
	struct fixture fx;
	struct hb_ckpt_meta in;
	struct hb_error err = { 0 };
	char nodir[512];

	(void)state;
	fixture_open(&fx);
	snprintf(nodir, sizeof(nodir), "%s/nope/deeper", fx.dir);
	assert_false(hb_ckpt_exists(nodir, 0));
	in = expect_for(&fx.r);
	assert_int_equal(hb_ckpt_load(nodir, 0, fx.r.st, &in, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg_has(&err, nodir);
	assert_msg_has(&err, "does not exist");

	assert_false(hb_ckpt_exists(fx.dir, 5));
	assert_int_equal(hb_ckpt_load(fx.dir, 5, fx.r.st, &in, &err), -1);
	assert_msg_has(&err, "rank-5.ckpt: no checkpoint");

	/* The loader must be told what this rank is. */
	in.model[0] = '\0';
	assert_int_equal(hb_ckpt_load(fx.dir, 0, fx.r.st, &in, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_msg_has(&err, "this run's model");

	/* A directory where the file should be. */
	snprintf(nodir, sizeof(nodir), "%s/rank-6.ckpt", fx.dir);
	assert_int_equal(mkdir(nodir, 0755), 0);
	assert_false(hb_ckpt_exists(fx.dir, 6));
	in = expect_for(&fx.r);
	assert_int_equal(hb_ckpt_load(fx.dir, 6, fx.r.st, &in, &err), -1);
	assert_msg_has(&err, nodir);
	fixture_close(&fx);
}

/* ------------------------------------------------------------------------ */
/* Atomic saves                                                             */

/* DIR is created; saves leave exactly one file; a save that cannot create
 * its temporary file fails and leaves the previous checkpoint loadable. */
static void test_atomic(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_error err = { 0 };
	struct hb_ckpt_meta m, in;
	struct snap good, back;
	struct rig r;
	char root[256], dir[512], blocker[1024];
	int tmp;

	(void)state;
	spec_cnn(&w, ls);
	tmpdir_make(root, sizeof(root));
	snprintf(dir, sizeof(dir), "%s/a/b", root);
	rig_open(&r, &w, 2, 1);
	train(&r, 0, 1);
	m = meta_for(&r, 1);
	assert_int_equal(hb_ckpt_save(dir, 0, r.st, &m, &err), 0);
	assert_true(hb_ckpt_exists(dir, 0));
	assert_int_equal(dir_entries(dir, &tmp), 1);
	assert_int_equal(tmp, 0);
	train(&r, 1, 1);
	m = meta_for(&r, 2);
	assert_int_equal(hb_ckpt_save(dir, 0, r.st, &m, &err), 0);
	assert_int_equal(dir_entries(dir, &tmp), 1);
	assert_int_equal(tmp, 0);
	snap_take(&r, &good);

	/* The temporary file's name taken by a directory: even root cannot
	 * create it, so the save fails before touching the checkpoint. */
	snprintf(blocker, sizeof(blocker), "%s/rank-0.ckpt.tmp.%ld", dir, (long)getpid());
	assert_int_equal(mkdir(blocker, 0755), 0);
	train(&r, 2, 1);
	m = meta_for(&r, 3);
	assert_int_equal(hb_ckpt_save(dir, 0, r.st, &m, &err), -1);
	assert_msg_has(&err, "rank-0.ckpt.tmp.");
	assert_int_equal(rmdir(blocker), 0);
	assert_int_equal(dir_entries(dir, &tmp), 1);
	assert_int_equal(tmp, 0);
	in = expect_for(&r);
	assert_int_equal(hb_ckpt_load(dir, 0, r.st, &in, &err), 0);
	assert_int_equal(in.data_pos, 2);
	snap_take(&r, &back);
	snap_assert_equal(&good, &back, "the checkpoint before the failed save");
	snap_free(&back);

	/* DIR is a file: mkdir -p fails, naming it. */
	snprintf(blocker, sizeof(blocker), "%s/file", root);
	write_bytes(blocker, "x", 1);
	assert_int_equal(hb_ckpt_save(blocker, 0, r.st, &m, &err), -1);
	assert_msg_has(&err, blocker);

	/* Bad metadata is refused before anything is written. */
	m = meta_for(&r, 3);
	m.model[0] = '\0';
	assert_int_equal(hb_ckpt_save(dir, 0, r.st, &m, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	m = meta_for(&r, 3);
	m.nranks = 0;
	assert_int_equal(hb_ckpt_save(dir, 0, r.st, &m, &err), -1);
	m = meta_for(&r, 3);
	m.nrng = HB_CKPT_MAX_RNG + 1;
	assert_int_equal(hb_ckpt_save(dir, 0, r.st, &m, &err), -1);
	assert_int_equal(dir_entries(dir, &tmp), 1);

	snap_free(&good);
	rig_close(&r);
	rm_tree(root);
}

/* A read-only DIR: the save fails cleanly and the old checkpoint stays.
 * Root ignores permissions, so this is skipped there. */
static void test_readonly_dir(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_error err = { 0 };
	struct hb_ckpt_meta m, in;
	struct snap good, back;
	struct rig r;
	char dir[256];
	int tmp;

	(void)state;
	if (geteuid() == 0)
		skip();
	spec_transformer(&w, ls);
	tmpdir_make(dir, sizeof(dir));
	rig_open(&r, &w, 2, 1);
	train(&r, 0, 2);
	m = meta_for(&r, 2);
	assert_int_equal(hb_ckpt_save(dir, 0, r.st, &m, &err), 0);
	snap_take(&r, &good);
	assert_int_equal(chmod(dir, 0555), 0);
	train(&r, 2, 1);
	m = meta_for(&r, 3);
	assert_int_equal(hb_ckpt_save(dir, 0, r.st, &m, &err), -1);
	assert_msg_has(&err, dir);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(dir_entries(dir, &tmp), 1);
	assert_int_equal(tmp, 0);
	in = expect_for(&r);
	assert_int_equal(hb_ckpt_load(dir, 0, r.st, &in, &err), 0);
	assert_int_equal(in.data_pos, 2);
	snap_take(&r, &back);
	snap_assert_equal(&good, &back, "the checkpoint before the read-only save");
	snap_free(&back);
	snap_free(&good);
	rig_close(&r);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_sgd_two_vsws),
		cmocka_unit_test(test_restart_sgd_one_vsw),
		cmocka_unit_test(test_restart_adam),
		cmocka_unit_test(test_restart_adam_two_vsws),
		cmocka_unit_test(test_meta_roundtrip),
		cmocka_unit_test(test_corrupt_every_byte),
		cmocka_unit_test(test_foreign_header),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_mismatch),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_atomic),
		cmocka_unit_test(test_readonly_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
