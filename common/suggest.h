/*
 * suggest.h: "did you mean" for a misspelled name.
 *
 * A suggester is fed every name the user could have meant (subcommands,
 * options, policies, catalog entries) and keeps the closest ones by edit
 * distance, so each caller walks its own table and nothing here knows
 * hetbatch's tables.  Names compare case-insensitively (ASCII), as the
 * lookups they stand beside do.
 */
#ifndef HB_SUGGEST_H
#define HB_SUGGEST_H

#include <stddef.h>

#define HB_SUGGEST_MAX 3 /* suggestions kept: more is a list, not a guess */

struct hb_suggest {
	const char *word;                  /* what the user typed (not copied) */
	const char *best[HB_SUGGEST_MAX];  /* closest candidates, nearest first (not copied) */
	int dist[HB_SUGGEST_MAX];          /* their scores (edit distance; prefix matches rank after) */
	int n;                             /* candidates kept, <= HB_SUGGEST_MAX */
};

/* Case-insensitive optimal-string-alignment distance: insertions, deletions,
 * substitutions and transpositions of neighbours each cost 1.  Strings longer
 * than 64 bytes compare as far apart (INT_MAX / 2). */
int hb_edit_distance(const char *a, const char *b);

void hb_suggest_init(struct hb_suggest *s, const char *word);
/* Consider one candidate name.  It is kept when its distance is at most
 * max(1, strlen(word) / 3) (at most 3), or when word (3 bytes or more) is
 * a prefix of it, as "llama" of "llama2-7b"; among those the nearest are
 * kept, ties in the order given.  The same name twice is kept once. */
void hb_suggest_add(struct hb_suggest *s, const char *candidate);
/* "; did you mean 'a'?" or "; did you mean 'a' or 'b'?" into buf (with the
 * given prefix before each name, e.g. "--"); "" when nothing is close.
 * Returns the length written (truncated to fit). */
size_t hb_suggest_format(const struct hb_suggest *s, const char *prefix, char *buf, size_t size);

#endif
