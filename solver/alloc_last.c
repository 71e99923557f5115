/*
 * alloc_last.c: the last candidate of Q (alloc.h) of each answer key, found
 * without walking Q.
 *
 * A ranking over Q whose ties go to the later candidate, and whose estimate
 * of a candidate depends only on the candidate's answer key (per node kind
 * the units taken, and one node or more), picks among the candidates of
 * one key only the last one.  JABAS's offers on a Philly cluster hold 10^5
 * candidates and a few hundred keys, and a walk of Q costs its size times
 * the nodes; this file builds each key's last candidate directly.
 *
 * Q's order among equal totals is descending lexicographic over the
 * per-node vector, so the last candidate of a key is the lexicographically
 * least packed vector with that key.  It is built node by node, each node
 * taking the fewest units that still leave the key reachable by the nodes
 * after it (feasible(), exact below), which is the least vector.  Packed:
 * a node takes units only while every earlier node of its class is full;
 * a class is "open" while that holds and it has nodes left, "closed" once a
 * node of it is not full.  When every class lies within one kind, what the
 * open classes can still add to kind k is any number from 0 to the units
 * they have left (each class any number from 0 to its rest, packed), so a
 * key is reachable exactly when each kind's need is within its open rest
 * and the node count can come out right (feasible() says how).  A class
 * that spans kinds (identical servers by alloc.h's rule, different kinds
 * by the caller's) breaks that interval argument; such a set is searched
 * exhaustively instead (hb_alloc_last_by_key_search), which is also the
 * tests' oracle.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* The state of one construction: the nodes before i are decided. */
struct build {
	const struct hb_alloc_set *q;
	const int *kind;          /* [nnodes] */
	int nkind;
	const int *cap;           /* [nnodes]: units per node */
	int maxcap;
	int *cls_kind;            /* [nclasses] */
	int *cls_cap;             /* [nclasses]: units of each node of the class (alloc.h: identical nodes) */
	int *rest;                /* [nclasses]: units the class's undecided nodes hold */
	char *closed;             /* [nclasses] */
	long *need;               /* [nkind]: units still to place per kind */
	long *open_rest;          /* [nkind]: rest of the open classes with units left */
	int *open_n;              /* [nkind]: those classes */
	int *open_cap;            /* [nkind · (maxcap + 1)]: those classes by node size */
	int used;                 /* nodes taking units so far, capped at 2 */
	int single;               /* the key: 1 = one node, 0 = more than one */
};

/* Can the nodes from the next one on complete the key?  (The interval
 * argument in the header.)  Nodes not yet decided are all after the
 * decided ones, so every unit still needed lands on a new node. */
static int feasible(const struct build *b)
{
	long sum = 0;
	int kpos = -1, nkpos = 0;

	for (int k = 0; k < b->nkind; k++) {
		if (b->need[k] < 0 || b->need[k] > b->open_rest[k])
			return 0;
		if (b->need[k] > 0) {
			sum += b->need[k];
			kpos = k;
			nkpos++;
		}
	}
	if (b->single) {
		if (b->used >= 2)
			return 0;
		if (b->used == 1)
			return sum == 0;
		/* nothing used: all of it on one node, of a class whose nodes
		 * hold it */
		if (nkpos != 1)
			return 0;
		for (int c = (int)b->need[kpos]; c <= b->maxcap; c++)
			if (b->open_cap[kpos * (b->maxcap + 1) + c] > 0)
				return 1;
		return 0;
	}
	if (b->used >= 2)
		return 1;
	if (b->used == 1)
		return sum >= 1;
	if (sum < 2)
		return 0;
	if (nkpos >= 2 || b->open_n[kpos] >= 2)
		return 1;
	/* one open class of that kind holds it all: more than one node only
	 * when it spills past the class's first undecided node */
	for (int c = 0; c <= b->maxcap; c++)
		if (b->open_cap[kpos * (b->maxcap + 1) + c] > 0)
			return b->need[kpos] > c;
	return 0;
}

/* Class c leaves or joins the open classes with units left (sign -1, +1). */
static void open_add(struct build *b, int c, int sign)
{
	const int k = b->cls_kind[c];

	b->open_rest[k] += sign * (long)b->rest[c];
	b->open_n[k] += sign;
	b->open_cap[k * (b->maxcap + 1) + b->cls_cap[c]] += sign;
}

/* Decide node i at v units; undo() reverses it. */
struct step {
	int closed_before, rest_before, was_open, used_before;
};

static struct step decide(struct build *b, int i, int v)
{
	const int c = b->q->node_class[i];
	struct step s = { b->closed[c], b->rest[c], !b->closed[c] && b->rest[c] > 0, b->used };

	if (s.was_open)
		open_add(b, c, -1);
	b->rest[c] -= b->cap[i];
	if (v < b->cap[i])
		b->closed[c] = 1;
	b->need[b->kind[i]] -= v;
	if (v > 0 && b->used < 2)
		b->used++;
	if (!b->closed[c] && b->rest[c] > 0)
		open_add(b, c, +1);
	return s;
}

static void undo(struct build *b, int i, int v, struct step s)
{
	const int c = b->q->node_class[i];

	if (!b->closed[c] && b->rest[c] > 0)
		open_add(b, c, -1);
	b->need[b->kind[i]] += v;
	b->used = s.used_before;
	b->closed[c] = (char)s.closed_before;
	b->rest[c] = s.rest_before;
	if (s.was_open)
		open_add(b, c, +1);
}

/* The least packed vector with the key (b->need, b->single) into units;
 * 0 when no candidate has it. */
static int least_vector(struct build *b, int *units)
{
	const struct hb_alloc_set *q = b->q;

	for (int c = 0; c < q->nclasses; c++) {
		b->closed[c] = 0;
		b->rest[c] = q->classes[c].max_units;
	}
	for (int k = 0; k < b->nkind; k++) {
		b->open_rest[k] = 0;
		b->open_n[k] = 0;
	}
	memset(b->open_cap, 0, (size_t)b->nkind * (size_t)(b->maxcap + 1) * sizeof(*b->open_cap));
	for (int c = 0; c < q->nclasses; c++)
		if (b->rest[c] > 0)
			open_add(b, c, +1);
	b->used = 0;
	if (!feasible(b))
		return 0;
	for (int i = 0; i < q->nnodes; i++) {
		const int c = q->node_class[i], cap = b->cap[i];
		int cand[4], nc = 0, done = 0;

		if (b->closed[c] || cap == 0) {
			/* takes nothing; feasibility is unchanged (a closed
			 * class left the open ones when it closed) */
			units[i] = 0;
			decide(b, i, 0);
			continue;
		}
		/* The least feasible v is among four.  0 and cap are tried as
		 * they are (cap keeps the class open).  A v strictly between
		 * closes the class, and then feasibility asks only: the kind's
		 * need less v within the other open classes (v >= lo), v within
		 * the need, and the node count: one node more than one needs
		 * at most all - 1 (no bound on the least), exactly one node
		 * needs v = all, the whole need.  So the least such v is lo or
		 * all.  test_last_by_key (tests/alloc) compares the result with
		 * the search of every candidate; a mutant without either one
		 * fails it. */
		{
			const int k = b->kind[i];
			const long others = b->open_rest[k] - b->rest[c];
			long lo = b->need[k] - others, all = 0;

			for (int j = 0; j < b->nkind; j++)
				all += b->need[j];
			cand[nc++] = 0;
			if (lo < 1)
				lo = 1;
			if (lo < cap)
				cand[nc++] = (int)lo;
			if (all >= 1 && all < cap && all != lo)
				cand[nc++] = (int)all;
			cand[nc++] = cap;
		}
		/* ascending, for the least */
		for (int a = 1; a < nc; a++)
			for (int z = a; z > 0 && cand[z] < cand[z - 1]; z--) {
				int t = cand[z];

				cand[z] = cand[z - 1];
				cand[z - 1] = t;
			}
		for (int a = 0; a < nc && !done; a++) {
			const int v = cand[a];
			struct step s;

			if (a > 0 && v == cand[a - 1])
				continue;
			s = decide(b, i, v);
			if (feasible(b)) {
				units[i] = v;
				done = 1;
			} else {
				undo(b, i, v, s);
			}
		}
		if (!done)
			return -1; /* cannot happen: the state before was feasible */
	}
	return 1;
}

/* Q's order: a before b (fewer units, or as many and lexicographically
 * greater per-node vector). */
static int q_before(const int *a, int ta, const int *b, int tb, int n)
{
	if (ta != tb)
		return ta < tb;
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] > b[i];
	return 0;
}

static int out_push(struct hb_alloc_last *out, const int *units, int total, size_t *cap)
{
	const int n = out->nnodes;

	if (out->n == *cap) {
		size_t c2 = *cap ? 2 * *cap : 16;
		int *nu = realloc(out->node_units, c2 * (size_t)(n > 0 ? n : 1) * sizeof(*nu));
		int *t;

		if (!nu)
			return -1;
		out->node_units = nu;
		if (!(t = realloc(out->total, c2 * sizeof(*t))))
			return -1;
		out->total = t;
		*cap = c2;
	}
	memcpy(out->node_units + out->n * (size_t)n, units, (size_t)n * sizeof(*units));
	out->total[out->n] = total;
	out->n++;
	return 0;
}

/* Sort out's entries into Q's order (insertion sort on an index, then a
 * permutation): a few hundred entries. */
static int out_sort(struct hb_alloc_last *out)
{
	const int n = out->nnodes;
	size_t *ord = malloc((out->n ? out->n : 1) * sizeof(*ord));
	int *nu = malloc((out->n ? out->n : 1) * (size_t)(n > 0 ? n : 1) * sizeof(*nu));
	int *t = malloc((out->n ? out->n : 1) * sizeof(*t));

	if (!ord || !nu || !t) {
		free(ord);
		free(nu);
		free(t);
		return -1;
	}
	for (size_t a = 0; a < out->n; a++) {
		size_t z = a;

		for (; z > 0 && q_before(out->node_units + a * (size_t)n, out->total[a],
					  out->node_units + ord[z - 1] * (size_t)n, out->total[ord[z - 1]], n);
		     z--)
			ord[z] = ord[z - 1];
		ord[z] = a;
	}
	for (size_t a = 0; a < out->n; a++) {
		memcpy(nu + a * (size_t)n, out->node_units + ord[a] * (size_t)n, (size_t)n * sizeof(*nu));
		t[a] = out->total[ord[a]];
	}
	free(out->node_units);
	free(out->total);
	out->node_units = nu;
	out->total = t;
	free(ord);
	return 0;
}

/* Every key (need per kind, summing to 1..max_units, each within its
 * kind's units, and the node-count flag) in turn, kinds from k on, its
 * least vector into out.  -1 out of memory, -2 an internal error (a
 * feasible state with no feasible step). */
static int keys_from(struct build *b, int k, long left, const long *kind_units, int total, int *units,
		     struct hb_alloc_last *out, size_t *cap)
{
	if (k == b->nkind) {
		long saved[64];
		long *keep = b->nkind <= 64 ? saved : malloc((size_t)b->nkind * sizeof(*keep));
		int rc = 0;

		if (total < 1)
			return 0;
		if (!keep)
			return -1;
		memcpy(keep, b->need, (size_t)b->nkind * sizeof(*keep));
		/* both node-count flags (out_sort puts the keys in Q's order) */
		for (int single = 1; single >= 0 && rc == 0; single--) {
			int found;

			memcpy(b->need, keep, (size_t)b->nkind * sizeof(*keep));
			b->single = single;
			found = least_vector(b, units);
			if (found < 0)
				rc = -2;
			else if (found > 0 && out_push(out, units, total, cap) < 0)
				rc = -1;
		}
		memcpy(b->need, keep, (size_t)b->nkind * sizeof(*keep));
		if (keep != saved)
			free(keep);
		return rc;
	}
	for (long t = 0; t <= kind_units[k] && t <= left; t++) {
		int rc;

		b->need[k] = t;
		if ((rc = keys_from(b, k + 1, left - t, kind_units, total + (int)t, units, out, cap)) < 0)
			return rc;
	}
	b->need[k] = 0;
	return 0;
}

/* ---- exhaustive: every candidate's key, the later kept ------------------ */

struct search {
	const struct hb_alloc_set *q;
	const int *kind;
	int nkind, max_units;
	const int *cap;
	int *x;                   /* [nclasses]: units per class */
	int *units;               /* [nnodes]: the packed form of x */
	long *sum;                /* [nkind] */
	/* the keys met: open addressing on (sums, flag) */
	size_t tcap;
	size_t *tab;              /* [tcap]: entry + 1, 0 = empty */
	long *keys;               /* [cap · (nkind + 1)] */
	struct hb_alloc_last *out;
	size_t ocap;
};

static uint64_t key_hash(const long *k, int n)
{
	uint64_t h = 1469598103934665603ULL;

	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)k[i]) * 1099511628211ULL;
	return h;
}

/* Candidate x (total units) met: a new key, or a later candidate of one. */
static int search_visit(struct search *s, int total)
{
	const struct hb_alloc_set *q = s->q;
	const int n = q->nnodes, kw = s->nkind + 1;
	int used = 0;
	long key[65], *kp = key;
	uint64_t h;
	size_t slot;

	if (kw > 65 && !(kp = malloc((size_t)kw * sizeof(*kp))))
		return -1;
	/* the packed form: each class's units over its nodes in order */
	{
		int *left = s->x; /* consumed below and restored */

		for (int i = 0; i < n; i++) {
			const int c = q->node_class[i];
			const int v = left[c] < s->cap[i] ? left[c] : s->cap[i];

			s->units[i] = v;
			left[c] -= v;
		}
		for (int i = 0; i < n; i++)
			left[q->node_class[i]] += s->units[i];
	}
	for (int k = 0; k < s->nkind; k++)
		kp[k] = 0;
	for (int i = 0; i < n; i++) {
		kp[s->kind[i]] += s->units[i];
		used += s->units[i] > 0;
	}
	kp[s->nkind] = used == 1;
	h = key_hash(kp, kw);
	for (slot = h & (s->tcap - 1); s->tab[slot] != 0; slot = (slot + 1) & (s->tcap - 1)) {
		const size_t e = s->tab[slot] - 1;

		if (memcmp(s->keys + e * (size_t)kw, kp, (size_t)kw * sizeof(*kp)) == 0) {
			int *u = s->out->node_units + e * (size_t)n;

			if (q_before(u, s->out->total[e], s->units, total, n)) {
				memcpy(u, s->units, (size_t)n * sizeof(*u));
				s->out->total[e] = total;
			}
			goto done;
		}
	}
	{
		const size_t e = s->out->n, oldcap = s->ocap;
		long *nk;

		if (out_push(s->out, s->units, total, &s->ocap) < 0)
			goto fail;
		if (s->ocap != oldcap) {
			if (!(nk = realloc(s->keys, s->ocap * (size_t)kw * sizeof(*nk))))
				goto fail;
			s->keys = nk;
		}
		memcpy(s->keys + e * (size_t)kw, kp, (size_t)kw * sizeof(*kp));
		s->tab[slot] = e + 1;
		if (2 * s->out->n > s->tcap) {
			size_t tc = 2 * s->tcap, *t = calloc(tc, sizeof(*t));

			if (!t)
				goto fail;
			for (size_t j = 0; j < s->out->n; j++) {
				size_t sl = key_hash(s->keys + j * (size_t)kw, kw) & (tc - 1);

				while (t[sl] != 0)
					sl = (sl + 1) & (tc - 1);
				t[sl] = j + 1;
			}
			free(s->tab);
			s->tab = t;
			s->tcap = tc;
		}
	}
done:
	if (kp != key)
		free(kp);
	return 0;
fail:
	if (kp != key)
		free(kp);
	return -1;
}

/* Every units-per-class vector x of classes from c on, total <= max_units. */
static int search_from(struct search *s, int c, int total)
{
	if (c == s->q->nclasses)
		return total >= 1 ? search_visit(s, total) : 0;
	for (int v = 0; v <= s->q->classes[c].max_units && total + v <= s->max_units; v++) {
		s->x[c] = v;
		if (search_from(s, c + 1, total + v) < 0)
			return -1;
	}
	s->x[c] = 0;
	return 0;
}

static int check_args(const struct hb_alloc_set *q, const int *kind, int nkind, struct hb_error *err)
{
	if (!q || q->nnodes < 1 || !q->node_class || !q->node_ngpus || !q->classes || q->unit < 1)
		return hb_input_error(err, "alloc: last candidate by key: no described candidate set");
	if (nkind < 1 || !kind)
		return hb_input_error(err, "alloc: last candidate by key: %d node kinds", nkind);
	for (int i = 0; i < q->nnodes; i++)
		if (kind[i] < 0 || kind[i] >= nkind)
			return hb_input_error(err, "alloc: last candidate by key: node %d: kind %d outside 0..%d", i,
					      kind[i], nkind - 1);
	return 0;
}

int hb_alloc_last_by_key_search(const struct hb_alloc_set *q, int max_units, const int *kind, int nkind,
				struct hb_alloc_last *out, struct hb_error *err)
{
	struct search s = { 0 };
	int *cap = NULL, rc = -1;

	memset(out, 0, sizeof(*out));
	if (check_args(q, kind, nkind, err) < 0)
		return -1;
	out->nnodes = q->nnodes;
	s.q = q;
	s.kind = kind;
	s.nkind = nkind;
	s.max_units = max_units;
	s.out = out;
	s.tcap = 64;
	cap = malloc((size_t)q->nnodes * sizeof(*cap));
	s.x = calloc((size_t)q->nclasses, sizeof(*s.x));
	s.units = malloc((size_t)q->nnodes * sizeof(*s.units));
	s.tab = calloc(s.tcap, sizeof(*s.tab));
	if (!cap || !s.x || !s.units || !s.tab)
		goto nomem;
	for (int i = 0; i < q->nnodes; i++)
		cap[i] = q->node_ngpus[i] / q->unit;
	s.cap = cap;
	if (search_from(&s, 0, 0) < 0 || out_sort(out) < 0)
		goto nomem;
	rc = 0;
	goto done;
nomem:
	hb_alloc_last_free(out);
	hb_runtime_error(err, "alloc: last candidate by key: out of memory");
done:
	free(cap);
	free(s.x);
	free(s.units);
	free(s.tab);
	free(s.keys);
	return rc;
}

int hb_alloc_last_by_key(const struct hb_alloc_set *q, int max_units, const int *kind, int nkind,
			 struct hb_alloc_last *out, struct hb_error *err)
{
	struct build b = { 0 };
	long *kind_units = NULL;
	int *cap = NULL, *units = NULL, rc = -1;
	size_t ocap = 0;
	long room = 0;

	memset(out, 0, sizeof(*out));
	if (check_args(q, kind, nkind, err) < 0)
		return -1;
	/* A class over two kinds: the interval argument fails; search. */
	for (int i = 0; i < q->nnodes; i++)
		if (kind[i] != kind[q->classes[q->node_class[i]].first_node])
			return hb_alloc_last_by_key_search(q, max_units, kind, nkind, out, err);
	out->nnodes = q->nnodes;
	b.q = q;
	b.kind = kind;
	b.nkind = nkind;
	cap = malloc((size_t)q->nnodes * sizeof(*cap));
	units = malloc((size_t)q->nnodes * sizeof(*units));
	kind_units = calloc((size_t)nkind, sizeof(*kind_units));
	b.cls_kind = malloc((size_t)q->nclasses * sizeof(*b.cls_kind));
	b.cls_cap = malloc((size_t)q->nclasses * sizeof(*b.cls_cap));
	b.rest = malloc((size_t)q->nclasses * sizeof(*b.rest));
	b.closed = malloc((size_t)q->nclasses);
	b.need = calloc((size_t)nkind, sizeof(*b.need));
	b.open_rest = calloc((size_t)nkind, sizeof(*b.open_rest));
	b.open_n = calloc((size_t)nkind, sizeof(*b.open_n));
	if (!cap || !units || !kind_units || !b.cls_kind || !b.cls_cap || !b.rest || !b.closed || !b.need ||
	    !b.open_rest || !b.open_n)
		goto nomem;
	for (int i = 0; i < q->nnodes; i++) {
		cap[i] = q->node_ngpus[i] / q->unit;
		if (cap[i] > b.maxcap)
			b.maxcap = cap[i];
		kind_units[kind[i]] += cap[i];
		room += cap[i];
	}
	for (int c = 0; c < q->nclasses; c++) {
		b.cls_kind[c] = kind[q->classes[c].first_node];
		b.cls_cap[c] = cap[q->classes[c].first_node];
	}
	b.cap = cap;
	if (!(b.open_cap = calloc((size_t)nkind * (size_t)(b.maxcap + 1), sizeof(*b.open_cap))))
		goto nomem;
	if (max_units > room)
		max_units = (int)room;
	rc = keys_from(&b, 0, max_units, kind_units, 0, units, out, &ocap);
	if (rc == -2) {
		hb_alloc_last_free(out);
		hb_runtime_error(err, "alloc: last candidate by key: internal error: a reachable key has no "
				 "next node");
		goto done;
	}
	if (rc < 0 || out_sort(out) < 0)
		goto nomem;
	rc = 0;
	goto done;
nomem:
	rc = -1;
	hb_alloc_last_free(out);
	hb_runtime_error(err, "alloc: last candidate by key: out of memory");
done:
	free(cap);
	free(units);
	free(kind_units);
	free(b.cls_kind);
	free(b.cls_cap);
	free(b.rest);
	free(b.closed);
	free(b.need);
	free(b.open_rest);
	free(b.open_n);
	free(b.open_cap);
	return rc;
}

void hb_alloc_last_free(struct hb_alloc_last *out)
{
	if (!out)
		return;
	free(out->node_units);
	free(out->total);
	memset(out, 0, sizeof(*out));
}
