/*
 * checkpoint.c: save and load DIR/rank-<rank>.ckpt (layout in checkpoint.h).
 *
 * Sections: the checksum, fixed-offset encoding of the header and the
 * metadata, save, load.  The header and the metadata are encoded into
 * byte arrays field by field (never by writing a C struct), so the layout
 * is the one checkpoint.h documents on any compiler.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"   /* defines: hb_ckpt_save, hb_ckpt_load, hb_ckpt_exists, hb_ckpt_path */
#include "fileio.h"       /* defines: hb_atomic_open/commit/abort, hb_mkdir_p, hb_path_is_dir */

static const char CK_MAGIC[8] = "HBCKPT1";  /* with its NUL: 8 bytes */
#define CK_BOM 0x01020304u                   /* byte-order mark as the writer stores it */
#define CK_BOM_SWAPPED 0x04030201u           /* the same, read on a host of the other order */
#define CK_HEADER_BYTES 64
#define CK_META_BYTES 576
#define CK_MODEL_BYTES 64
#define CK_CONFIG_BYTES 256
#define CK_SUM_BYTES 8

_Static_assert(sizeof(((struct hb_ckpt_meta *)0)->model) == CK_MODEL_BYTES, "model field is 64 bytes on disk");
_Static_assert(sizeof(((struct hb_ckpt_meta *)0)->config) == CK_CONFIG_BYTES, "config field is 256 bytes on disk");
_Static_assert(sizeof(float) == 4, "parameters are IEEE float32");

/* ------------------------------------------------------------------------ */
/* Checksum: FNV-1a 64 (Fowler, Noll, Vo), offset basis and prime from the  */
/* reference.  Any single changed byte changes it: each step is a          */
/* bijection of the running hash.                                           */

#define FNV_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= FNV_PRIME;
	}
	return h;
}

/* ------------------------------------------------------------------------ */
/* Fixed-offset encoding                                                    */

struct ck_buf {
	unsigned char *p;         /* the header or metadata bytes */
	size_t off;               /* next field */
};

static void put(struct ck_buf *b, const void *v, size_t n)
{
	memcpy(b->p + b->off, v, n);
	b->off += n;
}

static void put_u32(struct ck_buf *b, uint32_t v) { put(b, &v, 4); }
static void put_i32(struct ck_buf *b, int32_t v) { put(b, &v, 4); }
static void put_u64(struct ck_buf *b, uint64_t v) { put(b, &v, 8); }
static void put_i64(struct ck_buf *b, int64_t v) { put(b, &v, 8); }
static void put_f64(struct ck_buf *b, double v) { put(b, &v, 8); }

static void get(struct ck_buf *b, void *v, size_t n)
{
	memcpy(v, b->p + b->off, n);
	b->off += n;
}

static uint32_t get_u32(struct ck_buf *b) { uint32_t v; get(b, &v, 4); return v; }
static int32_t get_i32(struct ck_buf *b) { int32_t v; get(b, &v, 4); return v; }
static uint64_t get_u64(struct ck_buf *b) { uint64_t v; get(b, &v, 8); return v; }
static int64_t get_i64(struct ck_buf *b) { int64_t v; get(b, &v, 8); return v; }
static double get_f64(struct ck_buf *b) { double v; get(b, &v, 8); return v; }

/* The sizes the header carries. */
struct ck_header {
	uint32_t version, bom, header_bytes, meta_bytes;
	uint64_t param_floats, opt_floats, file_bytes;
};

static uint64_t file_bytes_for(uint64_t pf, uint64_t of)
{
	return CK_HEADER_BYTES + CK_META_BYTES + 4 * (pf + of) + CK_SUM_BYTES;
}

static void encode_header(unsigned char out[CK_HEADER_BYTES], uint64_t pf, uint64_t of)
{
	struct ck_buf b = { out, 0 };

	put(&b, CK_MAGIC, sizeof(CK_MAGIC));
	put_u32(&b, HB_CKPT_VERSION);
	put_u32(&b, CK_BOM);
	put_u32(&b, CK_HEADER_BYTES);
	put_u32(&b, CK_META_BYTES);
	put_u64(&b, pf);
	put_u64(&b, of);
	put_u64(&b, file_bytes_for(pf, of));
	put_u64(&b, 0);
	put_u64(&b, fnv1a(FNV_BASIS, out, b.off));
}

static void encode_meta(unsigned char out[CK_META_BYTES], const struct hb_ckpt_meta *m, int rank, long step)
{
	struct ck_buf b = { out, 0 };
	char model[CK_MODEL_BYTES] = { 0 }, config[CK_CONFIG_BYTES] = { 0 };

	/* Copied up to the NUL, so no stale bytes past it reach the file. */
	memcpy(model, m->model, strnlen(m->model, sizeof(model) - 1));
	memcpy(config, m->config, strnlen(m->config, sizeof(config) - 1));
	put(&b, model, sizeof(model));
	put_f64(&b, m->scale);
	put_i32(&b, m->local_bs);
	put_i32(&b, m->n_vsw);
	put_i32(&b, rank);
	put_i32(&b, m->nranks);
	put_i64(&b, step);
	put_i64(&b, m->iteration);
	put_i64(&b, m->data_pos);
	put_u64(&b, m->seed);
	put_i32(&b, m->nrng);
	put_i32(&b, 0);
	for (int k = 0; k < HB_CKPT_MAX_RNG; k++) {
		const struct hb_rng *r = &m->rng[k];
		int used = k < m->nrng;

		for (int j = 0; j < 4; j++)
			put_u64(&b, used ? r->s[j] : 0);
		put_i32(&b, used ? r->have_spare : 0);
		put_i32(&b, 0);
		put_f64(&b, used ? r->spare : 0.0);
	}
	put(&b, config, sizeof(config));
}

/* Decode the metadata of a file whose checksum matched; -1 with the field
 * named when a value is out of range (a writer bug, or a forged file). */
static int decode_meta(const char *path, unsigned char in[CK_META_BYTES], struct hb_ckpt_meta *m,
		       struct hb_error *err)
{
	struct ck_buf b = { in, 0 };

	memset(m, 0, sizeof(*m));
	get(&b, m->model, CK_MODEL_BYTES);
	m->scale = get_f64(&b);
	m->local_bs = get_i32(&b);
	m->n_vsw = get_i32(&b);
	m->rank = get_i32(&b);
	m->nranks = get_i32(&b);
	m->step = (long)get_i64(&b);
	m->iteration = (long)get_i64(&b);
	m->data_pos = (long)get_i64(&b);
	m->seed = get_u64(&b);
	m->nrng = get_i32(&b);
	(void)get_i32(&b);
	for (int k = 0; k < HB_CKPT_MAX_RNG; k++) {
		struct hb_rng *r = &m->rng[k];

		for (int j = 0; j < 4; j++)
			r->s[j] = get_u64(&b);
		r->have_spare = get_i32(&b);
		(void)get_i32(&b);
		r->spare = get_f64(&b);
	}
	get(&b, m->config, CK_CONFIG_BYTES);
	if (!memchr(m->model, '\0', CK_MODEL_BYTES) || !memchr(m->config, '\0', CK_CONFIG_BYTES))
		return hb_input_error(err, "%s: metadata: model or config is not NUL-terminated", path);
	if (m->local_bs < 1 || m->n_vsw < 1 || m->nranks < 1 || m->rank < 0 || m->rank >= m->nranks)
		return hb_input_error(err, "%s: metadata: local batch %d, VSWs %d, rank %d of %d out of range", path,
				      m->local_bs, m->n_vsw, m->rank, m->nranks);
	if (m->step < 0 || m->iteration < 0 || m->data_pos < 0 || m->nrng < 0 || m->nrng > HB_CKPT_MAX_RNG)
		return hb_input_error(err, "%s: metadata: step %ld, iteration %ld, data position %ld, RNG streams %d "
				      "out of range", path, m->step, m->iteration, m->data_pos, m->nrng);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Paths                                                                    */

int hb_ckpt_path(const char *dir, int rank, char *buf, size_t size, struct hb_error *err)
{
	int n = snprintf(buf, size, "%s/rank-%d.ckpt", dir, rank);

	if (n < 0 || (size_t)n >= size)
		return hb_input_error(err, "checkpoint directory '%s': path too long", dir);
	return 0;
}

int hb_ckpt_exists(const char *dir, int rank)
{
	char path[4096];
	struct stat sb;

	return hb_ckpt_path(dir, rank, path, sizeof(path), NULL) == 0 && stat(path, &sb) == 0 &&
	       S_ISREG(sb.st_mode);
}

/* ------------------------------------------------------------------------ */
/* Save                                                                     */

/* Bytes into the open temporary file, hashed on the way. */
struct ck_out {
	FILE *f;
	uint64_t h;               /* FNV-1a of everything written so far */
	int bad;                  /* errno of the first failed write, or 0 */
};

static void emit(struct ck_out *o, const void *p, size_t n)
{
	o->h = fnv1a(o->h, p, n);
	errno = 0;
	if (!o->bad && fwrite(p, 1, n, o->f) != n)
		o->bad = errno ? errno : EIO;
}

static int check_save_meta(const char *path, int rank, const struct hb_ckpt_meta *m, struct hb_error *err)
{
	if (!memchr(m->model, '\0', sizeof(m->model)) || !m->model[0])
		return hb_input_error(err, "%s: cannot save: no model name", path);
	if (!memchr(m->config, '\0', sizeof(m->config)))
		return hb_input_error(err, "%s: cannot save: config is not NUL-terminated", path);
	if (m->local_bs < 1 || m->n_vsw < 1)
		return hb_input_error(err, "%s: cannot save: local batch %d and VSWs %d must be positive", path,
				      m->local_bs, m->n_vsw);
	if (m->nranks < 1 || rank < 0 || rank >= m->nranks)
		return hb_input_error(err, "%s: cannot save: rank %d of %d ranks", path, rank, m->nranks);
	if (m->iteration < 0 || m->data_pos < 0)
		return hb_input_error(err, "%s: cannot save: iteration %ld and data position %ld must be >= 0", path,
				      m->iteration, m->data_pos);
	if (m->nrng < 0 || m->nrng > HB_CKPT_MAX_RNG)
		return hb_input_error(err, "%s: cannot save: %d RNG streams, at most %d", path, m->nrng,
				      HB_CKPT_MAX_RNG);
	return 0;
}

/* The rename is durable only once the directory's entry is on disk. */
static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY);

	if (fd >= 0) {
		(void)fsync(fd);  /* some file systems refuse fsync on a directory: not an error */
		close(fd);
	}
}

int hb_ckpt_save(const char *dir, int rank, struct hb_wl_state *st, const struct hb_ckpt_meta *meta,
		 struct hb_error *err)
{
	char path[4096];
	unsigned char head[CK_HEADER_BYTES], mbytes[CK_META_BYTES];
	long pf = hb_wl_param_floats(st), of = hb_wl_opt_floats(st);
	struct hb_atomic_file af;
	struct ck_out o = { 0 };
	float *host;
	uint64_t sum;

	if (hb_ckpt_path(dir, rank, path, sizeof(path), err) < 0 || check_save_meta(path, rank, meta, err) < 0)
		return -1;
	if (hb_mkdir_p(dir, err) < 0) {
		hb_error_prefix(err, "%s: cannot save: ", path);
		return -1;
	}
	host = malloc((size_t)(pf > of ? pf : of) * sizeof(float));
	if (!host)
		return hb_runtime_error(err, "%s: cannot save: out of host memory for %ld floats", path,
					pf > of ? pf : of);
	encode_header(head, (uint64_t)pf, (uint64_t)of);
	encode_meta(mbytes, meta, rank, hb_wl_step(st));
	if (hb_atomic_open(&af, path, err) < 0) {
		free(host);
		hb_error_prefix(err, "saving checkpoint: ");
		return -1;
	}
	o.f = af.f;
	o.h = FNV_BASIS;
	emit(&o, head, sizeof(head));
	emit(&o, mbytes, sizeof(mbytes));
	if (hb_wl_read_weights(st, 0, host, (size_t)pf, err) < 0)
		goto fail;
	emit(&o, host, (size_t)pf * sizeof(float));
	if (hb_wl_read_opt_state(st, host, (size_t)of, err) < 0)
		goto fail;
	emit(&o, host, (size_t)of * sizeof(float));
	sum = o.h;
	emit(&o, &sum, sizeof(sum));
	free(host);
	if (o.bad) {
		hb_atomic_abort(&af);
		return hb_runtime_error(err, "%s: write failed: %s", af.path, strerror(o.bad));
	}
	if (hb_atomic_commit(&af, err) < 0) {
		hb_error_prefix(err, "saving checkpoint: ");
		return -1;
	}
	sync_dir(dir);
	return 0;
fail:
	free(host);
	hb_atomic_abort(&af);
	hb_error_prefix(err, "%s: cannot save: ", path);
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Load                                                                     */

/* Open the file, telling a missing directory from a missing file. */
static FILE *open_ckpt(const char *dir, const char *path, struct hb_error *err)
{
	FILE *f = fopen(path, "rb");

	if (f)
		return f;
	if (errno == ENOENT && !hb_path_is_dir(dir))
		hb_input_error(err, "%s: no checkpoint: directory '%s' does not exist", path, dir);
	else if (errno == ENOENT)
		hb_input_error(err, "%s: no checkpoint: no such file", path);
	else
		hb_runtime_error(err, "%s: cannot open: %s", path, strerror(errno));
	return NULL;
}

/* Read and check the header against the file's size; the sizes in it are
 * trusted only after its own checksum. */
static int read_header(FILE *f, const char *path, unsigned char raw[CK_HEADER_BYTES], struct ck_header *h,
		       struct hb_error *err)
{
	struct ck_buf b = { raw, sizeof(CK_MAGIC) };
	struct stat sb;
	size_t got;
	uint64_t sum;

	if (fstat(fileno(f), &sb) != 0)
		return hb_runtime_error(err, "%s: cannot stat: %s", path, strerror(errno));
	got = fread(raw, 1, CK_HEADER_BYTES, f);
	if (got < CK_HEADER_BYTES)
		return hb_input_error(err, "%s: truncated at byte %zu: the header alone is %d bytes", path, got,
				      CK_HEADER_BYTES);
	if (memcmp(raw, CK_MAGIC, sizeof(CK_MAGIC)) != 0)
		return hb_input_error(err, "%s: not a hetbatch checkpoint (its first bytes are not \"HBCKPT1\")",
				      path);
	h->version = get_u32(&b);
	h->bom = get_u32(&b);
	h->header_bytes = get_u32(&b);
	h->meta_bytes = get_u32(&b);
	h->param_floats = get_u64(&b);
	h->opt_floats = get_u64(&b);
	h->file_bytes = get_u64(&b);
	(void)get_u64(&b);
	sum = get_u64(&b);
	if (h->bom != CK_BOM && h->bom == CK_BOM_SWAPPED)
		return hb_input_error(err, "%s: written on a host of the other byte order", path);
	if (sum != fnv1a(FNV_BASIS, raw, CK_HEADER_BYTES - 8))
		return hb_input_error(err, "%s: header checksum mismatch: the file is corrupted", path);
	if (h->version != HB_CKPT_VERSION)
		return hb_input_error(err, "%s: format version %" PRIu32 ", this build reads version %d", path,
				      h->version, HB_CKPT_VERSION);
	/* Past the header checksum these hold only for a buggy or forged
	 * writer; the bound keeps 4 (P + O) from overflowing. */
	if (h->header_bytes != CK_HEADER_BYTES || h->meta_bytes != CK_META_BYTES || h->bom != CK_BOM ||
	    h->param_floats > (UINT64_MAX >> 4) || h->opt_floats > (UINT64_MAX >> 4) ||
	    h->file_bytes != file_bytes_for(h->param_floats, h->opt_floats))
		return hb_input_error(err, "%s: inconsistent header (%" PRIu32 "-byte header, %" PRIu32 "-byte "
				      "metadata, %" PRIu64 " + %" PRIu64 " floats in %" PRIu64 " bytes)", path,
				      h->header_bytes, h->meta_bytes, h->param_floats, h->opt_floats, h->file_bytes);
	if ((uint64_t)sb.st_size < h->file_bytes)
		return hb_input_error(err, "%s: truncated at byte %lld of %" PRIu64, path, (long long)sb.st_size,
				      h->file_bytes);
	if ((uint64_t)sb.st_size > h->file_bytes)
		return hb_input_error(err, "%s: %lld bytes, %" PRIu64 " expected: trailing data", path,
				      (long long)sb.st_size, h->file_bytes);
	return 0;
}

/* fread n bytes at offset *pos or say where the file ended. */
static int read_exact(FILE *f, const char *path, void *dst, size_t n, uint64_t *pos, struct hb_error *err)
{
	size_t got = fread(dst, 1, n, f);

	*pos += got;
	if (got == n)
		return 0;
	if (ferror(f))
		return hb_runtime_error(err, "%s: read error at byte %" PRIu64 ": %s", path, *pos, strerror(errno));
	return hb_input_error(err, "%s: truncated at byte %" PRIu64 " (it shrank while being read)", path, *pos);
}

/* The file's metadata and sizes against this rank's. */
static int check_compatible(const char *path, int rank, const struct hb_ckpt_meta *want, const struct hb_ckpt_meta *got,
			    const struct ck_header *h, struct hb_wl_state *st, int any_layout, struct hb_error *err)
{
	if (strcmp(got->model, want->model) != 0)
		return hb_input_error(err, "%s: model '%s' != '%s' of this run", path, got->model, want->model);
	if (want->scale > 0 && got->scale != want->scale)
		return hb_input_error(err, "%s: model scale %g != %g of this run", path, got->scale, want->scale);
	if (any_layout)
		goto sizes;
	if (got->local_bs != want->local_bs)
		return hb_input_error(err, "%s: local batch %d != %d of this run", path, got->local_bs,
				      want->local_bs);
	if (got->n_vsw != want->n_vsw)
		return hb_input_error(err, "%s: %d VSWs != %d of this run", path, got->n_vsw, want->n_vsw);
	if (want->nranks > 0 && got->nranks != want->nranks)
		return hb_input_error(err, "%s: %d ranks != %d of this run", path, got->nranks, want->nranks);
	if (got->rank != rank)
		return hb_input_error(err, "%s: written by rank %d, not rank %d", path, got->rank, rank);
sizes:
	if (h->param_floats != (uint64_t)hb_wl_param_floats(st))
		return hb_input_error(err, "%s: %" PRIu64 " parameter floats != %ld of this run's state", path,
				      h->param_floats, hb_wl_param_floats(st));
	if (h->opt_floats != (uint64_t)hb_wl_opt_floats(st))
		return hb_input_error(err, "%s: %" PRIu64 " optimizer-state floats != %ld of this run's state", path,
				      h->opt_floats, hb_wl_opt_floats(st));
	return 0;
}

/* Everything is verified: the weights into every VSW, then the optimizer
 * state and the step. */
static int restore(const char *path, struct hb_wl_state *st, int n_vsw, const float *weights, size_t pf,
		   const float *opt, size_t of, long step, struct hb_error *err)
{
	for (int i = 0; i < n_vsw; i++)
		if (hb_wl_write_weights(st, i, weights, pf, err) < 0)
			goto fail;
	if (hb_wl_write_opt_state(st, opt, of, err) < 0)
		goto fail;
	hb_wl_set_step(st, step);
	return 0;
fail:
	hb_error_prefix(err, "%s: restoring into the state (now partly overwritten): ", path);
	return -1;
}

static int load(const char *dir, int rank, struct hb_wl_state *st, struct hb_ckpt_meta *meta, int any_layout,
		struct hb_error *err)
{
	char path[4096];
	unsigned char head[CK_HEADER_BYTES], mbytes[CK_META_BYTES];
	struct ck_header h = { 0 };
	struct hb_ckpt_meta got;
	FILE *f;
	float *buf = NULL;
	uint64_t pos = CK_HEADER_BYTES, sum, want_sum;
	size_t pf, of;
	int rc = -1;

	if (hb_ckpt_path(dir, rank, path, sizeof(path), err) < 0)
		return -1;
	if (!memchr(meta->model, '\0', sizeof(meta->model)) || !meta->model[0] || meta->local_bs < 1 ||
	    meta->n_vsw < 1)
		return hb_input_error(err, "%s: loading needs this run's model, local batch and VSWs "
				      "(got '%.64s', %d, %d)", path, meta->model, meta->local_bs, meta->n_vsw);
	f = open_ckpt(dir, path, err);
	if (!f)
		return -1;
	if (read_header(f, path, head, &h, err) < 0)
		goto out;
	/* The file's size matched the header, so these fit in memory's terms. */
	pf = (size_t)h.param_floats;
	of = (size_t)h.opt_floats;
	buf = malloc((pf + of) * sizeof(float) + 1);
	if (!buf) {
		hb_runtime_error(err, "%s: out of host memory for %zu floats", path, pf + of);
		goto out;
	}
	if (read_exact(f, path, mbytes, sizeof(mbytes), &pos, err) < 0 ||
	    read_exact(f, path, buf, (pf + of) * sizeof(float), &pos, err) < 0 ||
	    read_exact(f, path, &want_sum, sizeof(want_sum), &pos, err) < 0)
		goto out;
	sum = fnv1a(FNV_BASIS, head, sizeof(head));
	sum = fnv1a(sum, mbytes, sizeof(mbytes));
	sum = fnv1a(sum, buf, (pf + of) * sizeof(float));
	if (sum != want_sum) {
		hb_input_error(err, "%s: checksum mismatch (stored %016" PRIx64 ", computed %016" PRIx64 "): "
			       "the file is corrupted", path, want_sum, sum);
		goto out;
	}
	if (decode_meta(path, mbytes, &got, err) < 0 ||
	    check_compatible(path, rank, meta, &got, &h, st, any_layout, err) < 0 ||
	    restore(path, st, meta->n_vsw, buf, pf, buf + pf, of, got.step, err) < 0)
		goto out;
	*meta = got;
	rc = 0;
out:
	free(buf);
	fclose(f);
	return rc;
}

int hb_ckpt_load(const char *dir, int rank, struct hb_wl_state *st, struct hb_ckpt_meta *meta,
		 struct hb_error *err)
{
	return load(dir, rank, st, meta, 0, err);
}

int hb_ckpt_load_any(const char *dir, int rank, struct hb_wl_state *st, int n_vsw, struct hb_ckpt_meta *meta,
		     struct hb_error *err)
{
	struct hb_ckpt_meta want = *meta;

	/* what the layout-free load needs to name: the VSWs to fill */
	want.local_bs = 1;
	want.n_vsw = n_vsw;
	if (load(dir, rank, st, &want, 1, err) < 0)
		return -1;
	*meta = want;
	return 0;
}
