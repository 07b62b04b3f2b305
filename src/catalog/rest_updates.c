/*
 * rest_updates.c — a commit's change as the REST catalog's
 * `requirements` and `updates` (hs_rest_commit_body, catalog.h).
 *
 * Both versions are serialized by the Iceberg layer's writer
 * (hs_iceberg_metadata_write) and compared member by member, so every
 * schema, spec, sort order, snapshot, ref and statistics entry is sent as
 * exactly the JSON a metadata file of ours would hold. What the catalog
 * derives itself (last-updated-ms, the logs, last-sequence-number,
 * current-snapshot-id from refs.main, next-row-id from the snapshot) is
 * not sent; any other difference is refused by name.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"

static json_t *tree(const hs_iceberg_metadata *m, hs_error *err) {
  hs_buf b;
  hs_buf_init(&b);
  hs_status st = hs_iceberg_metadata_write(m, &b, err);
  json_t *j = NULL;
  if (st == HS_OK) {
    j = json_loadb((const char *)b.data, b.len, 0, NULL);
    if (j == NULL) hs_error_set(err, HS_ERR_INTERNAL, "commit: our metadata JSON does not parse");
  }
  hs_buf_free(&b);
  return j;
}

/* The element of array `arr` whose integer member `key` is `id`. */
static json_t *by_id(json_t *arr, const char *key, json_int_t id) {
  size_t i;
  json_t *e;
  json_array_foreach(arr, i, e) {
    json_t *v = json_object_get(e, key);
    if (json_is_integer(v) && json_integer_value(v) == id) return e;
  }
  return NULL;
}

static json_t *action(const char *name) {
  return json_pack("{s:s}", "action", name);
}

static json_t *requirement(const char *type) {
  return json_pack("{s:s}", "type", type);
}

/* Entries of array member `key` in `nw` whose `id_key` the old one lacks:
 * one update `act` each, the entry under `member`. */
static void added(json_t *upd, json_t *old, json_t *nw, const char *key, const char *id_key,
                  const char *act, const char *member, json_t *extra_key, const char *extra_name,
                  bool *any) {
  json_t *oa = json_object_get(old, key), *na = json_object_get(nw, key);
  size_t i;
  json_t *e;
  json_array_foreach(na, i, e) {
    json_t *id = json_object_get(e, id_key);
    if (!json_is_integer(id) || by_id(oa, id_key, json_integer_value(id)) != NULL) continue;
    json_t *u = action(act);
    json_object_set(u, member, e);
    if (extra_key != NULL) json_object_set(u, extra_name, extra_key);
    json_array_append_new(upd, u);
    *any = true;
  }
}

static bool differs(json_t *old, json_t *nw, const char *key) {
  json_t *a = json_object_get(old, key), *b = json_object_get(nw, key);
  if (a == NULL || b == NULL) return a != b;
  return !json_equal(a, b);
}

/* set-/remove-statistics (or the partition- forms) by snapshot id. */
static void statistics(json_t *upd, json_t *old, json_t *nw, const char *key, const char *set,
                       const char *remove, const char *member) {
  json_t *oa = json_object_get(old, key), *na = json_object_get(nw, key);
  size_t i;
  json_t *e;
  json_array_foreach(na, i, e) {
    json_t *id = json_object_get(e, "snapshot-id");
    if (!json_is_integer(id)) continue;
    json_t *o = by_id(oa, "snapshot-id", json_integer_value(id));
    if (o != NULL && json_equal(o, e)) continue;
    json_t *u = action(set);
    json_object_set(u, "snapshot-id", id);
    json_object_set(u, member, e);
    json_array_append_new(upd, u);
  }
  json_array_foreach(oa, i, e) {
    json_t *id = json_object_get(e, "snapshot-id");
    if (!json_is_integer(id) || by_id(na, "snapshot-id", json_integer_value(id)) != NULL) continue;
    json_t *u = action(remove);
    json_object_set(u, "snapshot-id", id);
    json_array_append_new(upd, u);
  }
}

hs_status hs_rest_commit_body(const hs_iceberg_metadata *old_m, const hs_iceberg_metadata *new_m,
                              hs_buf *out, size_t *n_updates, hs_error *err) {
  *n_updates = 0;
  json_t *old = tree(old_m, err), *nw = old ? tree(new_m, err) : NULL;
  if (old == NULL || nw == NULL) {
    json_decref(old);
    return HS_ERR_INTERNAL;
  }
  hs_status st = HS_OK;
  /* Members the catalog derives, or that the updates below carry. */
  static const char *const known[] = {"format-version",
                                      "table-uuid",
                                      "location",
                                      "last-sequence-number",
                                      "last-updated-ms",
                                      "last-column-id",
                                      "current-schema-id",
                                      "schemas",
                                      "default-spec-id",
                                      "partition-specs",
                                      "last-partition-id",
                                      "default-sort-order-id",
                                      "sort-orders",
                                      "properties",
                                      "current-snapshot-id",
                                      "snapshots",
                                      "snapshot-log",
                                      "metadata-log",
                                      "refs",
                                      "statistics",
                                      "partition-statistics",
                                      "next-row-id",
                                      "schema",
                                      "partition-spec"};
  const char *key;
  json_t *v;
  json_object_foreach(nw, key, v) {
    bool k = false;
    for (size_t i = 0; i < sizeof known / sizeof known[0] && !k; i++)
      k = strcmp(key, known[i]) == 0;
    if (!k && differs(old, nw, key)) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "commit: metadata member '%s' changed, which a REST catalog commit "
                        "cannot express",
                        key);
      break;
    }
  }
  if (st == HS_OK && (differs(old, nw, "location") || differs(old, nw, "table-uuid")))
    st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                      "commit: the table's location or uuid changed (not a catalog update)");
  json_t *req = json_array(), *upd = json_array();
  json_array_append_new(req, json_pack("{s:s,s:O}", "type", "assert-table-uuid", "uuid",
                                       json_object_get(old, "table-uuid")));
  if (st == HS_OK && differs(old, nw, "format-version")) {
    json_t *u = action("upgrade-format-version");
    json_object_set(u, "format-version", json_object_get(nw, "format-version"));
    json_array_append_new(upd, u);
  }
  /* Schemas. */
  bool any = false;
  if (st == HS_OK) {
    added(upd, old, nw, "schemas", "schema-id", "add-schema", "schema",
          json_object_get(nw, "last-column-id"), "last-column-id", &any);
    if (differs(old, nw, "current-schema-id")) {
      json_t *u = action("set-current-schema");
      json_object_set(u, "schema-id", json_object_get(nw, "current-schema-id"));
      json_array_append_new(upd, u);
      any = true;
    }
    if (any) {
      json_t *r = requirement("assert-current-schema-id");
      json_object_set(r, "current-schema-id", json_object_get(old, "current-schema-id"));
      json_array_append_new(req, r);
      r = requirement("assert-last-assigned-field-id");
      json_object_set(r, "last-assigned-field-id", json_object_get(old, "last-column-id"));
      json_array_append_new(req, r);
    }
  }
  /* Partition specs. */
  any = false;
  if (st == HS_OK) {
    added(upd, old, nw, "partition-specs", "spec-id", "add-spec", "spec", NULL, NULL, &any);
    if (differs(old, nw, "default-spec-id")) {
      json_t *u = action("set-default-spec");
      json_object_set(u, "spec-id", json_object_get(nw, "default-spec-id"));
      json_array_append_new(upd, u);
      any = true;
    }
    if (any) {
      json_t *r = requirement("assert-default-spec-id");
      json_object_set(r, "default-spec-id", json_object_get(old, "default-spec-id"));
      json_array_append_new(req, r);
      json_t *lp = json_object_get(old, "last-partition-id");
      if (lp != NULL) {
        r = requirement("assert-last-assigned-partition-id");
        json_object_set(r, "last-assigned-partition-id", lp);
        json_array_append_new(req, r);
      }
    }
  }
  /* Sort orders. */
  any = false;
  if (st == HS_OK) {
    added(upd, old, nw, "sort-orders", "order-id", "add-sort-order", "sort-order", NULL, NULL,
          &any);
    if (differs(old, nw, "default-sort-order-id")) {
      json_t *u = action("set-default-sort-order");
      json_object_set(u, "sort-order-id", json_object_get(nw, "default-sort-order-id"));
      json_array_append_new(upd, u);
      any = true;
    }
    if (any) {
      json_t *r = requirement("assert-default-sort-order-id");
      json_object_set(r, "default-sort-order-id", json_object_get(old, "default-sort-order-id"));
      json_array_append_new(req, r);
    }
  }
  /* Snapshots: added, then refs, then those expired. */
  if (st == HS_OK) {
    any = false;
    added(upd, old, nw, "snapshots", "snapshot-id", "add-snapshot", "snapshot", NULL, NULL, &any);
    json_t *orefs = json_object_get(old, "refs"), *nrefs = json_object_get(nw, "refs");
    const char *name;
    json_t *ref;
    json_object_foreach(nrefs, name, ref) {
      json_t *o = json_object_get(orefs, name);
      if (o != NULL && json_equal(o, ref)) continue;
      json_t *u = json_deep_copy(ref);
      json_object_set_new(u, "action", json_string("set-snapshot-ref"));
      json_object_set_new(u, "ref-name", json_string(name));
      json_array_append_new(upd, u);
      json_t *r = requirement("assert-ref-snapshot-id");
      json_object_set_new(r, "ref", json_string(name));
      json_object_set(r, "snapshot-id", o ? json_object_get(o, "snapshot-id") : json_null());
      json_array_append_new(req, r);
    }
    json_object_foreach(orefs, name, ref) {
      if (json_object_get(nrefs, name) != NULL) continue;
      json_t *u = action("remove-snapshot-ref");
      json_object_set_new(u, "ref-name", json_string(name));
      json_array_append_new(upd, u);
      json_t *r = requirement("assert-ref-snapshot-id");
      json_object_set_new(r, "ref", json_string(name));
      json_object_set(r, "snapshot-id", json_object_get(ref, "snapshot-id"));
      json_array_append_new(req, r);
    }
    json_t *gone = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(old, "snapshots"), i, e) {
      json_t *id = json_object_get(e, "snapshot-id");
      if (json_is_integer(id) &&
          by_id(json_object_get(nw, "snapshots"), "snapshot-id", json_integer_value(id)) == NULL)
        json_array_append(gone, id);
    }
    if (json_array_size(gone) > 0) {
      json_t *u = action("remove-snapshots");
      json_object_set(u, "snapshot-ids", gone);
      json_array_append_new(upd, u);
    }
    json_decref(gone);
  }
  /* Properties (our index registry and configuration among them). */
  if (st == HS_OK) {
    json_t *op = json_object_get(old, "properties"), *np = json_object_get(nw, "properties");
    json_t *set = json_object(), *rm = json_array();
    const char *k;
    json_t *val;
    json_object_foreach(np, k, val) {
      json_t *o = json_object_get(op, k);
      if (o == NULL || !json_equal(o, val)) json_object_set(set, k, val);
    }
    json_object_foreach(op, k, val) {
      if (json_object_get(np, k) == NULL) json_array_append_new(rm, json_string(k));
    }
    if (json_object_size(set) > 0) {
      json_t *u = action("set-properties");
      json_object_set(u, "updates", set);
      json_array_append_new(upd, u);
    }
    if (json_array_size(rm) > 0) {
      json_t *u = action("remove-properties");
      json_object_set(u, "removals", rm);
      json_array_append_new(upd, u);
    }
    json_decref(set);
    json_decref(rm);
    statistics(upd, old, nw, "statistics", "set-statistics", "remove-statistics", "statistics");
    statistics(upd, old, nw, "partition-statistics", "set-partition-statistics",
               "remove-partition-statistics", "partition-statistics");
  }
  if (st == HS_OK) {
    *n_updates = json_array_size(upd);
    json_t *body = json_pack("{s:O,s:O}", "requirements", req, "updates", upd);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (text == NULL || !hs_buf_append(out, text, strlen(text)))
      st = hs_error_set(err, HS_ERR_NOMEM, "commit: out of memory");
    free(text);
    json_decref(body);
  }
  json_decref(req);
  json_decref(upd);
  json_decref(old);
  json_decref(nw);
  return st;
}
