/*
 * plan_deletes.h — private to plan.c: attaching the snapshot's delete
 * files to its planned data files (plan_deletes.c).
 */
#ifndef HS_TABLE_PLAN_DELETES_H
#define HS_TABLE_PLAN_DELETES_H

#include "table.h"

/* One live delete file (or deletion vector) of the planned snapshot. */
typedef struct hs_table_plan_delete {
  const hs_iceberg_manifest_entry *e; /* its entry (sequence numbers inherited) */
  int32_t spec_id;                    /* its manifest's partition spec */
  const char *path;                   /* resolved local path of the file */
  const char *manifest;               /* the manifest listing it (errors) */
} hs_table_plan_delete;

/* Set files[i].deleted / n_deleted / n_delete_files of every file of `p`
 * from the n delete files `d` of snapshot `snap` by the spec's scope rules,
 * reading the delete files; the bitmaps go to p->bitmaps. */
hs_status hs_table_plan_deletes(const hs_table *t, const hs_iceberg_snapshot *snap,
                                hs_table_plan *p, const hs_table_plan_delete *d, size_t n,
                                hs_error *err);

#endif /* HS_TABLE_PLAN_DELETES_H */
