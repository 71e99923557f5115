/*
 * suggest.c: edit distance and the closest-names list (suggest.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "suggest.h"

#define MAXLEN 64 /* names are short; longer input is not a typo of one */

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int min3(int a, int b, int c)
{
	int m = a < b ? a : b;

	return m < c ? m : c;
}

int hb_edit_distance(const char *a, const char *b)
{
	/* Three rows of the dynamic programme: row i lives in rows[i % 3]. */
	int rows[3][MAXLEN + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > MAXLEN || lb > MAXLEN)
		return INT_MAX / 2;
	for (size_t j = 0; j <= lb; j++)
		rows[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int *prev2 = rows[(i + 1) % 3], *prev = rows[(i + 2) % 3], *cur = rows[i % 3];

		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = lower((unsigned char)a[i - 1]), cb = lower((unsigned char)b[j - 1]);
			int cost = ca != cb;

			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && ca == lower((unsigned char)b[j - 2]) &&
			    lower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < cur[j])
				cur[j] = prev2[j - 2] + 1;
		}
	}
	return rows[la % 3][lb];
}

void hb_suggest_init(struct hb_suggest *s, const char *word)
{
	memset(s, 0, sizeof(*s));
	s->word = word ? word : "";
}

static int is_prefix_ci(const char *p, const char *s)
{
	for (; *p; p++, s++)
		if (!*s || lower((unsigned char)*p) != lower((unsigned char)*s))
			return 0;
	return 1;
}

void hb_suggest_add(struct hb_suggest *s, const char *candidate)
{
	size_t len = strlen(s->word);
	int limit = (int)(len / 3), d, at;

	if (!candidate || !*candidate || !*s->word)
		return;
	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	d = hb_edit_distance(s->word, candidate);
	if (d > limit) {
		if (len < 3 || !is_prefix_ci(s->word, candidate))
			return;
		d = limit + 1; /* a completion ranks after every near miss */
	}
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->best[i], candidate) == 0)
			return;
	/* insert after every candidate at least as close (stable for ties) */
	at = s->n;

	while (at > 0 && s->dist[at - 1] > d)
		at--;
	if (at >= HB_SUGGEST_MAX)
		return;
	for (int i = (s->n < HB_SUGGEST_MAX ? s->n : HB_SUGGEST_MAX - 1); i > at; i--) {
		s->best[i] = s->best[i - 1];
		s->dist[i] = s->dist[i - 1];
	}
	s->best[at] = candidate;
	s->dist[at] = d;
	if (s->n < HB_SUGGEST_MAX)
		s->n++;
}

size_t hb_suggest_format(const struct hb_suggest *s, const char *prefix, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return 0;
	buf[0] = '\0';
	if (!prefix)
		prefix = "";
	for (int i = 0; i < s->n; i++) {
		const char *sep = i == 0 ? "; did you mean " : i == s->n - 1 ? " or " : ", ";

		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s'%s%s'", sep, prefix, s->best[i]);
	}
	if (s->n)
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "?");
	return len < size ? len : size - 1;
}
