/*
 * merge3.h — the three-way merge of keyed entry lists.
 *
 * Used where two writers may each have edited a list that a property or
 * file holds, and the one who wrote last must keep what the other did:
 * index configuration entries (catalog/rest_merge.c) and index registry
 * entries (table/index_registry.c). The rule, for base (what both began
 * from), theirs and ours:
 *   - an entry of ours that base had and theirs removed is dropped;
 *   - an entry of ours that only theirs changed (ours equals base's, theirs
 *     differs) becomes theirs;
 *   - every other entry of ours stays as it is (ours wins a conflict);
 *   - an entry theirs added (in neither base nor ours) is appended.
 * The lists, their lookup and the output belong to the caller; this file
 * only decides, through callbacks, in ours' order then theirs'.
 */
#ifndef HS_MERGE3_H
#define HS_MERGE3_H

#include <stdbool.h>
#include <stddef.h>

enum { HS_MERGE3_BASE = 0, HS_MERGE3_THEIRS = 1, HS_MERGE3_OURS = 2 };

typedef struct hs_merge3 {
  void *ctx;
  size_t n[3]; /* entries in base, theirs, ours */
  /* Entry i of list `list`. */
  const void *(*at)(void *ctx, int list, size_t i);
  /* The entry of `list` with e's key, or NULL. */
  const void *(*find)(void *ctx, int list, const void *e);
  /* Same content (the keys are equal already). */
  bool (*same)(void *ctx, const void *a, const void *b);
  /* Append e to the result; false: out of memory. */
  bool (*emit)(void *ctx, const void *e);
} hs_merge3;

/* Run the merge: -1 when an emit failed, 1 when the result differs from
 * ours, 0 when it equals ours (nothing to commit). */
int hs_merge3_run(const hs_merge3 *m);

#endif /* HS_MERGE3_H */
