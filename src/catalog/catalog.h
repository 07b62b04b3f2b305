/*
 * catalog.h — the catalog layer's private interface (src/catalog/): an
 * Iceberg REST catalog client. The public side is the "Catalogs" section
 * of include/hyperstream.h; tables of a catalog are opened and created
 * through hs_table_open / hs_table_create with URIs
 * "rest://host:port[/path]#namespace.table", which the table layer hands
 * to the hooks this layer installs (table.h, hs_table_catalog_hooks).
 *
 * Files: rest_parse.c (bounded parsing of the catalog's answers: what a
 * server sends is untrusted; fuzz/fuzz_rest.c), rest_client.c (connected
 * catalogs, auth, requests, ErrorModel -> hs_error), rest_updates.c (a
 * commit's (old, new) metadata as REST `requirements` + `updates`),
 * rest_table.c (open, create, load, commit; namespaces and tables),
 * rest_merge.c (a concurrent writer's index properties kept when our
 * commit replaced them: the protocol cannot guard a property).
 *
 * Ownership: parse results live in the caller's arena; a connected
 * catalog is reference counted (hs_rest_catalog_ref / _unref), each open
 * table holding one.
 */
#ifndef HS_CATALOG_H
#define HS_CATALOG_H

#include <pthread.h>

#include "../io/http.h"
#include "../io/store.h"
#include "../table/table.h"

/* Answers longer than this are refused as corrupt. */
#define HS_REST_ANSWER_MAX ((size_t)256 << 20)

/* ------------------------------------------------------- rest_parse.c */

/* The spec's ErrorModel ({"error": {"message", "type", "code"}}); false
 * when the body is not one. Strings are cut to fit. */
typedef struct hs_rest_error {
  long code;
  char type[128];
  char message[768];
} hs_rest_error;
bool hs_rest_parse_error(const char *body, size_t len, hs_rest_error *out);

/* GET /v1/config: the string maps `defaults` and `overrides` (either may
 * be absent). Arrays in `a`. */
typedef struct hs_rest_config {
  hs_iceberg_kv *defaults, *overrides;
  size_t n_defaults, n_overrides;
} hs_rest_config;
hs_status hs_rest_parse_config(const char *body, size_t len, hs_arena *a, hs_rest_config *out,
                               hs_error *err);

/* POST /v1/oauth/tokens: access_token (token_type, when given, must be
 * "bearer", any case), into `a`. */
hs_status hs_rest_parse_token(const char *body, size_t len, hs_arena *a, const char **token,
                              hs_error *err);

/* GET .../namespaces: {"namespaces": [[level, ...], ...],
 * "next-page-token"?} as dotted names ("a.b"); GET .../tables:
 * {"identifiers": [{"namespace": [...], "name"}], "next-page-token"?} as
 * "a.b.name". *next NULL when there is no further page. */
hs_status hs_rest_parse_namespaces(const char *body, size_t len, hs_arena *a, char ***names,
                                   size_t *n, const char **next, hs_error *err);
hs_status hs_rest_parse_tables(const char *body, size_t len, hs_arena *a, char ***names, size_t *n,
                               const char **next, hs_error *err);

/* A LoadTableResult (load, create, commit answers): metadata-location and
 * the metadata, parsed. */
/* A LoadTableResult: its metadata-location, metadata and, when `config`
 * is not NULL, its "config" (the table's storage configuration the
 * catalog vends, e.g. "s3.access-key-id"; string values, at most
 * HS_REST_CONFIG_MAX; *n_config 0 when absent), all in `a`. */
#define HS_REST_CONFIG_MAX 256
hs_status hs_rest_parse_load(const char *body, size_t len, hs_arena *a, const char **location,
                             hs_iceberg_metadata *meta, hs_store_option **config, size_t *n_config,
                             hs_error *err);

/* ------------------------------------------------------ rest_client.c */

typedef struct hs_rest_catalog {
  pthread_mutex_t mu; /* guards token */
  int refs;           /* under the registry's lock */
  char *uri;          /* as connected, no trailing '/': "rest://127.0.0.1:8181" */
  char *base;         /* "http://127.0.0.1:8181" (the config's "uri" override applied) */
  char *prefix;       /* the config's "prefix", "" when none */
  char *warehouse;    /* may be NULL */
  char *token;        /* bearer token in use, may be NULL */
  char *credential;   /* "id:secret" for client credentials, may be NULL */
  char *scope;        /* OAuth scope ("catalog") */
  char *oauth_url;    /* token endpoint */
  long timeout_ms;
  /* A table refresh (not a commit's load) within this many ms of the
   * handle's last load or commit keeps what it holds; 0: always loads. */
  long max_staleness_ms;
  /* Object-store options for the tables' locations (connect options
   * "storage.<key>", the prefix dropped; owned strings): each table the
   * catalog loads or creates has them registered for its location
   * (hs_store_configure) before any of its files is read or written. */
  hs_store_option *storage;
  size_t n_storage;
} hs_rest_catalog;

/* Register c's storage options for `location`, then (overriding them, as
 * Iceberg's clients let a table's config override the catalog's) the
 * `n_vended` storage keys the catalog vended for the table
 * (LoadTableResult.config: the keys hs_store_configure knows, and
 * "client.region" as the region; others are for other clients, ignored).
 * Nothing when there are none. */
hs_status hs_rest_catalog_configure_storage(const hs_rest_catalog *c, const char *location,
                                            const hs_store_option *vended, size_t n_vended,
                                            hs_error *err);

/* The connected catalog whose URI is `uri` up to its '#' (a ref, release
 * with hs_rest_catalog_unref); *ident (may be NULL) what follows '#' (""
 * when nothing does). HS_ERR_INVALID_ARG naming the URI when none is. */
hs_status hs_rest_catalog_find(const char *uri, hs_rest_catalog **out, const char **ident,
                               hs_error *err);
void hs_rest_catalog_unref(hs_rest_catalog *c); /* accepts NULL */
/* Make `c` (refs 1, moved to the registry) the catalog of its URI,
 * replacing one connected before (tables open on that one keep it). */
hs_status hs_rest_catalog_register(hs_rest_catalog *c, hs_error *err);
/* With a credential: fetch a bearer token by OAuth2 client credentials
 * (POST c->oauth_url) into c->token. Without one: nothing. */
hs_status hs_rest_catalog_auth(hs_rest_catalog *c, hs_error *err);

/* One call: `path` below "{base}/v1/" (`prefixed`: below
 * "{base}/v1/{prefix}/"), an optional JSON body, the bearer token. The
 * answer's status and body returned whatever the status; a 401 with a
 * credential fetches a new token and tries once more. */
hs_status hs_rest_call(hs_rest_catalog *c, const char *method, const char *path, bool prefixed,
                       const char *json, size_t len, const char *what, bool idempotent,
                       hs_buf *answer, long *status, hs_error *err);

/* The error for a non-2xx answer: HS_ERR_NOT_FOUND (404),
 * HS_ERR_CONFLICT (409), HS_ERR_INVALID_ARG (400, 401, 403, 406, 422),
 * else HS_ERR_IO; the message names the catalog, the call, the status and
 * the server's type and message. */
hs_status hs_rest_fail(const hs_rest_catalog *c, const char *what, long status, const hs_buf *body,
                       hs_error *err);

/* Percent-encode one path segment (RFC 3986 unreserved kept) onto `b`;
 * a namespace's levels are joined by the unit separator (%1F). */
bool hs_rest_encode_segment(hs_buf *b, const char *s);
bool hs_rest_encode_namespace(hs_buf *b, const char *dotted);

/* ----------------------------------------------------- rest_updates.c */

/* The body of POST .../tables/{t} for moving `old` to `m`: requirements
 * (assert-table-uuid always; assert-ref-snapshot-id for each ref changed;
 * assert-current-schema-id and assert-last-assigned-field-id for a schema
 * change; assert-default-spec-id and assert-last-assigned-partition-id
 * for a spec change; assert-default-sort-order-id for an order change)
 * and updates (add-schema, set-current-schema, add-spec,
 * set-default-spec, add-sort-order, set-default-sort-order, add-snapshot,
 * remove-snapshots, set-snapshot-ref, remove-snapshot-ref,
 * set-properties, remove-properties, set-statistics, remove-statistics,
 * upgrade-format-version). A difference none of these expresses (the
 * location, say) is HS_ERR_UNSUPPORTED naming it. *n_updates 0: nothing
 * to send. */
hs_status hs_rest_commit_body(const hs_iceberg_metadata *old, const hs_iceberg_metadata *m,
                              hs_buf *out, size_t *n_updates, hs_error *err);

/* ------------------------------------------------------- rest_table.c */

/* open / create of "rest://...#ns.table" URIs (installed into the table
 * layer by hs_catalog_connect). */
extern const hs_table_catalog_hooks hs_rest_table_hooks;

/* ------------------------------------------------------- rest_merge.c */

/* What a commit that changes our index properties began from: the base
 * metadata's path and its registry and configuration values (copies). */
typedef struct hs_rest_base {
  char *path, *reg, *conf;
} hs_rest_base;
/* Fill *b when `m` changes either property of `old` (t's loaded metadata);
 * false (b empty): it changes neither. Free with hs_rest_base_free. */
bool hs_rest_base_take(hs_rest_base *b, const hs_table *t, const hs_iceberg_metadata *old,
                       const hs_iceberg_metadata *m);
void hs_rest_base_free(hs_rest_base *b);
/* After our commit (t holds the catalog's answer): when another writer
 * committed between `base` and ours and changed a property ours then
 * replaced, *m2 becomes t's metadata with theirs merged back (new files
 * and strings in `a`) and the answer is true: commit *m2 on t's metadata.
 * False: nothing was lost (or the version before ours cannot be read). */
bool hs_rest_merge_theirs(hs_table *t, const hs_rest_base *base, hs_iceberg_metadata *m2,
                          hs_arena *a);
/* The index configuration texts (JSON arrays of entries keyed by field id,
 * else column name) merged three ways by common/merge3.h's rule, in `a`;
 * NULL: the merge equals ours, or a text does not parse (left as it is). */
const char *hs_rest_conf_merge3(const char *base, const char *theirs, const char *ours,
                                hs_arena *a);

#endif /* HS_CATALOG_H */
