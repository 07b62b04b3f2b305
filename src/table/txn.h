/*
 * txn.h — the table layer's one commit path (txn.c).
 *
 * Every change of a table commits through a transaction: appends
 * (commit.c), metadata-only edits (hs_table_commit_metadata: partition
 * specs, sort orders, index registry and configuration, expiry), refs
 * (refs.c: rollback, tags, branches) and row-level changes (data and delete
 * files added, files removed). A transaction begins on the handle's latest
 * version, collects changes, and commits them as v{N+1} with the protocol
 * of src/table/README.md ("The commit protocol"): new manifests written
 * unsynced, one sync set, the exclusive link under the shared publish
 * lock, the hint, the new version adopted. A lost race reloads the latest
 * version, re-validates the change against the snapshots committed since
 * the transaction began (Iceberg's rules for concurrent writers, see
 * txn.c), rebuilds the manifest list and retries, with backoff, at most
 * HS_TXN_ATTEMPTS_MAX times. A change that no longer applies is
 * HS_ERR_CONFLICT, and nothing is committed.
 */
#ifndef HS_TABLE_TXN_H
#define HS_TABLE_TXN_H

#include "table.h"

#define HS_TXN_ATTEMPTS_MAX 200

/* The snapshot's "operation" (Iceberg's DataOperations). */
typedef enum hs_txn_op {
  HS_TXN_OP_AUTO = 0, /* append when only data files are added; delete when
                         no data file is added; overwrite else */
  HS_TXN_OP_APPEND,
  HS_TXN_OP_OVERWRITE,
  HS_TXN_OP_DELETE,
  HS_TXN_OP_REPLACE
} hs_txn_op;

typedef struct hs_txn hs_txn;

/* Run on every retry against the reloaded latest version (t->meta), before
 * anything is rebuilt: an error fails the commit (appends: the schema the
 * data was written with must still be current). */
typedef hs_status (*hs_txn_recheck)(const hs_table *t, void *ctx, hs_error *err);

/* validateNoConflictingData: true when `added` (a data file committed
 * concurrently, since the transaction began) conflicts with this change. */
typedef bool (*hs_txn_conflict_fn)(void *ctx, const hs_iceberg_data_file *added);

/* Begin on the latest version of `t` (refreshed; refused for static,
 * catalog-named and v1 tables). `what` names the commit in errors and must
 * outlive the transaction. Free with hs_txn_free (after commit or not):
 * the version begun on stays valid until then, even across retries that
 * reload `t`. */
hs_status hs_txn_begin(hs_table *t, const char *what, hs_txn **out, hs_error *err);
void hs_txn_free(hs_txn *x); /* accepts NULL; removes the manifests it wrote if not committed */

/* The snapshot the transaction began on: its id (-1: none) and the
 * table's last sequence number then. */
int64_t hs_txn_start_snapshot_id(const hs_txn *x);
int64_t hs_txn_start_sequence_number(const hs_txn *x);

/* Validate against the commits made since snapshot `snapshot_id` (-1: the
 * table's first snapshot on) instead of since the begin: the snapshot the
 * caller read when it decided the change. It must be the begin's current
 * snapshot or one of its ancestors, else HS_ERR_CONFLICT at commit. */
void hs_txn_set_start_snapshot(hs_txn *x, int64_t snapshot_id);

void hs_txn_set_operation(hs_txn *x, hs_txn_op op);
/* The schema id recorded on the new snapshot (default: current at begin). */
void hs_txn_set_schema_id(hs_txn *x, int32_t schema_id);

/* Data files (content DATA) or delete files (POSITION_DELETES, deletion
 * vectors with file_format "PUFFIN", EQUALITY_DELETES with equality_ids)
 * already written, of partition spec `spec_id`: one new manifest per spec
 * and kind, its entries' snapshot id and sequence numbers inherited from
 * the new snapshot. The structs are copied shallowly: what they point at
 * must outlive the commit. Data files without first_row_id get row ids
 * from the new snapshot (v3). A position delete's referenced_data_file is
 * required to stay live (hs_txn_require_data_file). */
hs_status hs_txn_add_files(hs_txn *x, const hs_iceberg_data_file *files, size_t n, int32_t spec_id,
                           hs_error *err);
/* A file the commit names that is written but not yet synced: fd (handed
 * over on success: its fdatasync started at once, waited for before the link of the first attempt,
 * closed by the txn) and its path, re-checked under the publish lock
 * before the link. fd -1: only re-checked. */
hs_status hs_txn_add_written(hs_txn *x, const char *path, int fd, hs_error *err);

/* As hs_txn_add_written for a file written and closed unsynced (the
 * delete-file writers): opened here to be synced with the commit's others. */
hs_status hs_txn_add_written_path(hs_txn *x, const char *path, hs_error *err);

/* Remove the data or delete file recorded at `path` (as recorded in its
 * manifest): every manifest holding it is rewritten. It must still be live
 * when the commit lands, else HS_ERR_CONFLICT. */
hs_status hs_txn_remove_file(hs_txn *x, const char *path, hs_error *err);

/* Remove only the deletion vector of data file `data_file` (as recorded)
 * held in Puffin file `path` (others in that file stay live). */
hs_status hs_txn_remove_dv(hs_txn *x, const char *path, const char *data_file, hs_error *err);

/* validateDataFilesExist: the data file at `path` (as recorded), which a
 * position delete or deletion vector of this change references, must not
 * have been removed since the transaction began. */
hs_status hs_txn_require_data_file(hs_txn *x, const char *path, hs_error *err);

/* validateNoNewDeletesForDataFiles: no delete file that may apply to a
 * data file this change removes was committed since the transaction began
 * (default: on for REPLACE and OVERWRITE, off otherwise). */
void hs_txn_validate_no_new_deletes(hs_txn *x, bool on);
/* validateNoConflictingDeleteFiles: no delete file that may apply to a data
 * file this change's deletes reference (hs_txn_require_data_file) was
 * committed since the transaction began (one without a referenced data
 * file counts as applying). Off by default. */
void hs_txn_validate_no_conflicting_deletes(hs_txn *x, bool on);
void hs_txn_set_conflict_filter(hs_txn *x, hs_txn_conflict_fn fn, void *ctx);
void hs_txn_set_recheck(hs_txn *x, hs_txn_recheck fn, void *ctx);

/* A metadata edit applied to each attempt's version (with or without a
 * snapshot): `m` starts as a shallow copy of the loaded version with
 * m->last_updated_ms already the commit's time. `prefix_errors`: the
 * edit's errors get "<root>: <what>: " in front. */
void hs_txn_set_edit(hs_txn *x, hs_table_metadata_edit edit, void *ctx, bool prefix_errors);

/* Commit. *snapshot_id_out (may be NULL): the new snapshot, -1 when the
 * commit made none (metadata-only, or an edit that changed nothing).
 * *committed (may be NULL): whether a version was published. */
hs_status hs_txn_commit(hs_txn *x, int64_t *snapshot_id_out, bool *committed, hs_error *err);

#endif /* HS_TABLE_TXN_H */
