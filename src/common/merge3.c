/*
 * merge3.c — the three-way merge of keyed entry lists (the rule is in
 * merge3.h).
 */
#include "merge3.h"

int hs_merge3_run(const hs_merge3 *m) {
  int differs = 0;
  for (size_t i = 0; i < m->n[HS_MERGE3_OURS]; i++) {
    const void *e = m->at(m->ctx, HS_MERGE3_OURS, i);
    const void *b = m->find(m->ctx, HS_MERGE3_BASE, e);
    const void *t = m->find(m->ctx, HS_MERGE3_THEIRS, e);
    if (b != NULL && t == NULL) { /* theirs removed it */
      differs = 1;
      continue;
    }
    if (b != NULL && !m->same(m->ctx, b, t) && m->same(m->ctx, b, e)) { /* only theirs changed it */
      e = t;
      differs = 1;
    }
    if (!m->emit(m->ctx, e)) return -1;
  }
  for (size_t i = 0; i < m->n[HS_MERGE3_THEIRS]; i++) {
    const void *e = m->at(m->ctx, HS_MERGE3_THEIRS, i);
    if (m->find(m->ctx, HS_MERGE3_BASE, e) != NULL || m->find(m->ctx, HS_MERGE3_OURS, e) != NULL)
      continue;
    if (!m->emit(m->ctx, e)) return -1; /* theirs added it */
    differs = 1;
  }
  return differs;
}
