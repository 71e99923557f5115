/*
 * jabas_memo.c: the JABAS agent's memos of its own answers (see
 * jabas_memo.h): emptying them, growing their arrays, and the ranking
 * memo's lookups.  What each memo is keyed by, and why its answers are a
 * function of that key, is documented with its struct.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jabas_memo.h"

void jabas_memo_clear(struct q_memo *m)
{
	for (size_t j = 0; j < m->n; j++) {
		free(m->e[j].sig);
		free(m->e[j].ent);
		free(m->e[j].units);
	}
	m->n = 0;
	m->words = 0;
}

void jabas_picks_clear(struct pick_memo *m)
{
	for (int i = 0; i < PICK_MEMO_MAX; i++) {
		free(m->e[i].key);
		free(m->e[i].traj);
		m->e[i] = (struct pick_memo_entry){ 0 };
	}
	m->next = 0;
}

/* Room for n items' arrays (their units on nq nodes). */
int jabas_shapes_reserve(struct q_shapes *qs, size_t n, size_t nq)
{
	if (n > qs->cap) {
		size_t nc = qs->cap ? 2 * qs->cap : 64;
		size_t *ent;
		struct hb_jabas_rank_item *order;
		int *units;

		while (nc < n)
			nc *= 2;
		/* Each array keeps its block until its new one is there, and cap
		 * grows only once all of them have grown. */
		if (!(ent = realloc(qs->ent, nc * sizeof(*ent))))
			return -1;
		qs->ent = ent;
		if (!(order = realloc(qs->order, nc * sizeof(*order))))
			return -1;
		qs->order = order;
		if (!(units = realloc(qs->units, nc * nq * sizeof(*units))))
			return -1;
		qs->units = units;
		qs->cap = nc;
	}
	return 0;
}

/* Empty the store (its shapes' blocks are kept, rebuilt in place). */
void jabas_store_clear(struct shape_store *ss, struct hb_iidp_solver *solver)
{
	for (size_t j = 0; j < ss->n; j++)
		hb_iidp_shape_bound_release(solver, &ss->bnd[j]);
	ss->n = 0;
	if (ss->tcap)
		memset(ss->tab_hash, 0, ss->tcap * sizeof(*ss->tab_hash));
}

/* Room for one more entry with a key of klen words, the table at most half
 * full. */
int jabas_store_reserve(struct shape_store *ss, size_t klen)
{
	if (ss->n + 1 > ss->cap) {
		size_t nc = ss->cap ? 2 * ss->cap : 64;
		struct hb_iidp_shape *sh;
		struct hb_iidp_shape_bound *bnd;
		size_t *koff;

		if (!(sh = realloc(ss->sh, nc * sizeof(*sh))))
			return -1;
		memset(sh + ss->cap, 0, (nc - ss->cap) * sizeof(*sh));
		ss->sh = sh;
		if (!(bnd = realloc(ss->bnd, nc * sizeof(*bnd))))
			return -1;
		memset(bnd + ss->cap, 0, (nc - ss->cap) * sizeof(*bnd));
		ss->bnd = bnd;
		if (!(koff = realloc(ss->koff, (nc + 1) * sizeof(*koff))))
			return -1;
		ss->koff = koff;
		ss->cap = nc;
	}
	if (ss->n == 0)
		ss->koff[0] = 0;
	if (ss->koff[ss->n] + klen > ss->kcap) {
		size_t kc = ss->kcap ? 2 * ss->kcap : 1024;
		uint64_t *key;

		while (kc < ss->koff[ss->n] + klen)
			kc *= 2;
		if (!(key = realloc(ss->key, kc * sizeof(*key))))
			return -1;
		ss->key = key;
		ss->kcap = kc;
	}
	if (2 * (ss->n + 1) > ss->tcap) {
		size_t tc = ss->tcap ? 2 * ss->tcap : 128;
		uint64_t *th = calloc(tc, sizeof(*th));
		size_t *ti = malloc(tc * sizeof(*ti));

		if (!th || !ti) {
			free(th);
			free(ti);
			return -1;
		}
		for (size_t j = 0; j < ss->n; j++) {
			uint64_t h = jabas_key_hash(ss->key + ss->koff[j], ss->koff[j + 1] - ss->koff[j]);
			size_t sl = h & (tc - 1);

			while (th[sl] != 0)
				sl = (sl + 1) & (tc - 1);
			th[sl] = h;
			ti[sl] = j;
		}
		free(ss->tab_hash);
		free(ss->tab_idx);
		ss->tab_hash = th;
		ss->tab_idx = ti;
		ss->tcap = tc;
	}
	return 0;
}

/* The memo's items of layout sig (nsig words, hash h), or NULL. */
const struct q_memo_entry *jabas_memo_find(const struct q_memo *m, const uint64_t *sig, size_t nsig, uint64_t h)
{
	for (size_t j = 0; j < m->n; j++)
		if (m->e[j].hash == h && m->e[j].nsig == nsig && memcmp(m->e[j].sig, sig, nsig * sizeof(*sig)) == 0)
			return &m->e[j];
	return NULL;
}

/* The ranking memo's hash of its inputs (struct pick_memo). */
uint64_t jabas_pick_hash(const struct q_shapes *qs, const long *traj, size_t ntraj, long done,
			 const struct hb_jabas_first *first)
{
	uint64_t x = JABAS_HASH_SEED;

	x = jabas_hash_mix(jabas_hash_mix(x, (uint64_t)first->m_rule), (uint64_t)first->local_bs);
	for (size_t j = 0; j < qs->n; j++)
		x = jabas_hash_mix(x, (uint64_t)qs->ent[j]);
	for (size_t k = 0; k < ntraj; k++)
		x = jabas_hash_mix(x, (uint64_t)traj[k]);
	x = jabas_hash_mix(jabas_hash_mix(jabas_hash_mix(x, (uint64_t)done), (uint64_t)ntraj), (uint64_t)qs->n);
	return x ? x : 1;
}

const struct pick_memo_entry *jabas_pick_find(const struct pick_memo *m, const struct q_shapes *qs, uint64_t h,
					      const long *traj, size_t ntraj, long done,
					      const struct hb_jabas_first *first)
{
	for (int i = 0; i < PICK_MEMO_MAX; i++) {
		const struct pick_memo_entry *e = &m->e[i];

		if (e->hash == h && e->n == qs->n && e->ntraj == ntraj && e->done == done &&
		    e->first.m_rule == first->m_rule && e->first.local_bs == first->local_bs &&
		    (qs->n == 0 || memcmp(e->key, qs->ent, qs->n * sizeof(size_t)) == 0) &&
		    (ntraj == 0 || memcmp(e->traj, traj, ntraj * sizeof(long)) == 0))
			return e;
	}
	return NULL;
}

/* Keep an answer; without memory it is just not kept. */
void jabas_pick_save(struct pick_memo *m, const struct q_shapes *qs, uint64_t h, const long *traj, size_t ntraj,
		     long done, const struct hb_jabas_first *first, long best, double best_s)
{
	struct pick_memo_entry *e = &m->e[m->next];
	size_t *key = malloc((qs->n + 1) * sizeof(size_t));
	long *tr = malloc((ntraj + 1) * sizeof(long));

	if (!key || !tr) {
		free(key);
		free(tr);
		return;
	}
	free(e->key);
	free(e->traj);
	if (qs->n) /* qs's arrays are NULL before its first item */
		memcpy(key, qs->ent, qs->n * sizeof(size_t));
	if (ntraj)
		memcpy(tr, traj, ntraj * sizeof(long));
	*e = (struct pick_memo_entry){ .hash = h, .n = qs->n, .ntraj = ntraj, .done = done, .first = *first,
				       .key = key, .traj = tr, .best = best, .best_s = best_s };
	m->next = (m->next + 1) % PICK_MEMO_MAX;
}
