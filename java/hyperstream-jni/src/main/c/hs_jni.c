/*
 * hs_jni.c — the JNI layer of the JVM connectors: org.hyperstreamdb.jni.NativeApi's
 * native methods, each a thin call of the public C API (include/hyperstream.h).
 *
 * Data crosses as the Arrow C Data Interface: Java allocates an ArrowSchema
 * or ArrowArrayStream struct (org.apache.arrow.c) and passes its address;
 * we fill it and Java imports it (Data.importArrayStream), after which the
 * Java side owns it and its release callback runs here.
 *
 * Errors: every failed call throws org.hyperstreamdb.jni.HyperStreamException
 * (the hs_status and the C message) and returns a dummy value; nothing here
 * aborts the JVM. Table handles are hs_table pointers as jlong, owned by the
 * Java HsTable (tableClose frees). A handle must not be used by two threads
 * at once (the Java side synchronizes).
 *
 * Planned splits carry their candidate rows (byte[] per Split); scans of
 * splits hand them back (hs_table_scan_split_rows).
 *
 * Scan streams are wrapped (scan_wrap): each get_next copies the scan's
 * counters into a refcounted holder the Java side reads (statsGet) after
 * the stream ends, since the stream itself moves into Java's ownership.
 */
#include <jni.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hyperstream.h"

/* ------------------------------------------------------------ errors */

static void throw_status(JNIEnv *env, int status, const char *msg) {
  if ((*env)->ExceptionCheck(env)) return;
  jclass c = (*env)->FindClass(env, "org/hyperstreamdb/jni/HyperStreamException");
  if (c == NULL) return; /* NoClassDefFoundError pending */
  jmethodID ctor = (*env)->GetMethodID(env, c, "<init>", "(ILjava/lang/String;)V");
  if (ctor == NULL) return;
  jstring m = (*env)->NewStringUTF(env, msg != NULL ? msg : "");
  if (m == NULL) return;
  jobject e = (*env)->NewObject(env, c, ctor, (jint)status, m);
  if (e != NULL) (*env)->Throw(env, (jthrowable)e);
}

static void throw_err(JNIEnv *env, hs_status st, const hs_error *err) {
  const char *msg = err->message[0] ? err->message : hs_status_str(st);
  throw_status(env, (int)st, msg);
}

static hs_table *table_of(JNIEnv *env, jlong h) {
  if (h == 0) throw_status(env, HS_ERR_INVALID_ARG, "the table is closed");
  return (hs_table *)(intptr_t)h;
}

/* ------------------------------------------------------------ strings */

/* A Java String as a malloc'd C string (NULL for null, and on failure with
 * an exception pending: *ok false). */
static char *cstr(JNIEnv *env, jstring s, int *ok) {
  *ok = 1;
  if (s == NULL) return NULL;
  const char *u = (*env)->GetStringUTFChars(env, s, NULL);
  if (u == NULL) {
    *ok = 0;
    return NULL;
  }
  char *c = strdup(u);
  (*env)->ReleaseStringUTFChars(env, s, u);
  if (c == NULL) {
    *ok = 0;
    throw_status(env, HS_ERR_NOMEM, "out of memory");
  }
  return c;
}

typedef struct str_list {
  char **v;
  size_t n;
  int present; /* the Java array was not null */
} str_list;

static void str_list_free(str_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* A Java String[] (null: absent) as C strings; 0 with an exception pending on failure. */
static int str_list_of(JNIEnv *env, jobjectArray a, const char *what, str_list *out) {
  memset(out, 0, sizeof *out);
  if (a == NULL) return 1;
  out->present = 1;
  jsize n = (*env)->GetArrayLength(env, a);
  out->v = calloc((size_t)n + 1, sizeof *out->v);
  if (out->v == NULL) {
    throw_status(env, HS_ERR_NOMEM, "out of memory");
    return 0;
  }
  for (jsize i = 0; i < n; i++) {
    jstring s = (jstring)(*env)->GetObjectArrayElement(env, a, i);
    if (s == NULL) {
      if (!(*env)->ExceptionCheck(env)) {
        char m[128];
        snprintf(m, sizeof m, "%s[%d] is null", what, (int)i);
        throw_status(env, HS_ERR_INVALID_ARG, m);
      }
      str_list_free(out);
      return 0;
    }
    int ok;
    out->v[i] = cstr(env, s, &ok);
    (*env)->DeleteLocalRef(env, s);
    if (!ok) {
      str_list_free(out);
      return 0;
    }
    out->n = (size_t)i + 1;
  }
  return 1;
}

/* ------------------------------------------------------------ tables */

JNIEXPORT jlong JNICALL Java_org_hyperstreamdb_jni_NativeApi_tableOpen(JNIEnv *env, jclass cls,
                                                                       jstring uri) {
  int ok;
  char *u = cstr(env, uri, &ok);
  if (!ok) return 0;
  if (u == NULL) {
    throw_status(env, HS_ERR_INVALID_ARG, "table path is null");
    return 0;
  }
  hs_table *t = NULL;
  hs_error err = {0};
  hs_status st = hs_table_open(u, &t, &err);
  free(u);
  if (st != HS_OK) {
    throw_err(env, st, &err);
    return 0;
  }
  return (jlong)(intptr_t)t;
}

JNIEXPORT void JNICALL Java_org_hyperstreamdb_jni_NativeApi_tableClose(JNIEnv *env, jclass cls,
                                                                       jlong h) {
  hs_table_free((hs_table *)(intptr_t)h);
}

JNIEXPORT jlong JNICALL Java_org_hyperstreamdb_jni_NativeApi_currentSnapshotId(JNIEnv *env,
                                                                               jclass cls,
                                                                               jlong h) {
  hs_table *t = table_of(env, h);
  return t != NULL ? (jlong)hs_table_current_snapshot_id(t) : -1;
}

JNIEXPORT jstring JNICALL Java_org_hyperstreamdb_jni_NativeApi_metadataLocation(JNIEnv *env,
                                                                                jclass cls,
                                                                                jlong h) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return NULL;
  const char *m = hs_table_metadata_location(t);
  return (*env)->NewStringUTF(env, m != NULL ? m : "");
}

JNIEXPORT jlong JNICALL Java_org_hyperstreamdb_jni_NativeApi_snapshotAt(JNIEnv *env, jclass cls,
                                                                        jlong h, jlong ts_ms) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return -1;
  int64_t id = -1;
  hs_error err = {0};
  hs_status st = hs_table_snapshot_at(t, (int64_t)ts_ms, &id, &err);
  if (st != HS_OK) throw_err(env, st, &err);
  return (jlong)id;
}

JNIEXPORT jlong JNICALL Java_org_hyperstreamdb_jni_NativeApi_refSnapshot(JNIEnv *env, jclass cls,
                                                                         jlong h, jstring name) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return -1;
  int ok;
  char *n = cstr(env, name, &ok);
  if (!ok) return -1;
  int64_t id = -1;
  hs_error err = {0};
  if (n == NULL) {
    throw_status(env, HS_ERR_INVALID_ARG, "ref name is null");
    return -1;
  }
  hs_status st = hs_table_ref_snapshot(t, n, &id, &err);
  free(n);
  if (st != HS_OK) throw_err(env, st, &err);
  return (jlong)id;
}

/* ------------------------------------------------------------ plan */

/* Split[] of a scan of snapshot `snapshot_id` (-1: current) with `filter`. */
JNIEXPORT jobjectArray JNICALL Java_org_hyperstreamdb_jni_NativeApi_planSplits(JNIEnv *env,
                                                                               jclass cls, jlong h,
                                                                               jlong snapshot_id,
                                                                               jstring filter) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return NULL;
  jclass sc = (*env)->FindClass(env, "org/hyperstreamdb/jni/Split");
  if (sc == NULL) return NULL;
  jmethodID ctor = (*env)->GetMethodID(env, sc, "<init>", "(Ljava/lang/String;JJJJJJ[BZ)V");
  if (ctor == NULL) return NULL;
  int ok;
  char *f = cstr(env, filter, &ok);
  if (!ok) return NULL;
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.snapshot_id = (int64_t)snapshot_id;
  o.filter = f;
  hs_scan_split *v = NULL;
  size_t n = 0;
  int64_t sid = -1;
  hs_error err = {0};
  hs_status st = hs_table_plan_splits(t, &o, &v, &n, &sid, &err);
  free(f);
  if (st != HS_OK) {
    throw_err(env, st, &err);
    return NULL;
  }
  jobjectArray out = (*env)->NewObjectArray(env, (jsize)n, sc, NULL);
  for (size_t i = 0; out != NULL && i < n; i++) {
    jstring p = (*env)->NewStringUTF(env, v[i].path);
    jbyteArray cb = NULL;
    if (p != NULL && v[i].candidates != NULL) {
      if (v[i].candidates_size > (size_t)INT32_MAX) {
        throw_status(env, HS_ERR_UNSUPPORTED, "plan splits: candidates over 2 GB");
        out = NULL;
        break;
      }
      cb = (*env)->NewByteArray(env, (jsize)v[i].candidates_size);
      if (cb != NULL)
        (*env)->SetByteArrayRegion(env, cb, 0, (jsize)v[i].candidates_size,
                                   (const jbyte *)v[i].candidates);
    }
    jobject o2 = p != NULL && (cb != NULL || v[i].candidates == NULL)
                     ? (*env)->NewObject(env, sc, ctor, p, (jlong)sid, (jlong)v[i].plan_index,
                                         (jlong)v[i].file_size_in_bytes, (jlong)v[i].record_count,
                                         (jlong)v[i].rows_deleted, (jlong)v[i].rows_candidate, cb,
                                         (jboolean)(v[i].candidates_exact != 0))
                     : NULL;
    if (o2 == NULL) {
      out = NULL;
      break;
    }
    (*env)->SetObjectArrayElement(env, out, (jsize)i, o2);
    (*env)->DeleteLocalRef(env, o2);
    if (cb != NULL) (*env)->DeleteLocalRef(env, cb);
    (*env)->DeleteLocalRef(env, p);
  }
  hs_scan_splits_free(v, n);
  return out;
}

/* ------------------------------------------------------------ scans */

/* Counters of one scan, refcounted between the Java side and the stream. */
enum { ST_N = 17 };
typedef struct scan_stats_box {
  atomic_int refs;
  int64_t v[ST_N];
} scan_stats_box;

static void box_unref(scan_stats_box *b) {
  if (b != NULL && atomic_fetch_sub(&b->refs, 1) == 1) free(b);
}

typedef struct scan_wrap {
  struct ArrowArrayStream inner;
  scan_stats_box *box;
} scan_wrap;

static void box_fill(const struct ArrowArrayStream *s, scan_stats_box *b) {
  hs_scan_stats ss;
  hs_scan_index_stats is;
  hs_scan_page_stats ps;
  hs_error e = {0};
  if (hs_scan_stats_get(s, &ss, &e) != HS_OK || hs_scan_index_stats_get(s, &is, &e) != HS_OK ||
      hs_scan_page_stats_get(s, &ps, &e) != HS_OK)
    return;
  int64_t v[ST_N] = {ss.manifests_read, ss.files_planned,   ss.files_pruned,
                     ss.files_read,     ss.row_groups_read, ss.row_groups_pruned,
                     ss.rows_scanned,   ss.rows_matched,    ss.rows_returned,
                     ss.delete_files,   ss.rows_deleted,    is.files_indexed,
                     is.rows_candidate, is.rows_eliminated, is.files_index_rejected,
                     ps.pages,          ps.pages_pruned};
  memcpy(b->v, v, sizeof v);
}

static int wrap_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  scan_wrap *w = s->private_data;
  return w->inner.get_schema(&w->inner, out);
}

static int wrap_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  scan_wrap *w = s->private_data;
  int rc = w->inner.get_next(&w->inner, out);
  box_fill(&w->inner, w->box);
  return rc;
}

static const char *wrap_last_error(struct ArrowArrayStream *s) {
  scan_wrap *w = s->private_data;
  return w->inner.get_last_error(&w->inner);
}

static void wrap_release(struct ArrowArrayStream *s) {
  scan_wrap *w = s->private_data;
  if (w->inner.release != NULL) w->inner.release(&w->inner);
  box_unref(w->box);
  free(w);
  s->release = NULL;
}

/* The planned splits of `paths` with their candidates (byte[][] `cand`,
 * entries may be null) and planned record counts: hs_scan_split entries
 * whose paths are borrowed from `ps` and candidate bytes copied (freed by
 * splits_free). 0 with an exception pending on failure. */
static int splits_of(JNIEnv *env, const str_list *ps, jobjectArray cand, jlongArray counts,
                     jbooleanArray exact, hs_scan_split **out) {
  *out = NULL;
  jsize n = (jsize)ps->n;
  if ((*env)->GetArrayLength(env, cand) != n || counts == NULL || exact == NULL ||
      (*env)->GetArrayLength(env, counts) != n || (*env)->GetArrayLength(env, exact) != n) {
    throw_status(env, HS_ERR_INVALID_ARG, "scan: candidates, counts and paths differ in length");
    return 0;
  }
  hs_scan_split *v = calloc((size_t)n + 1, sizeof *v);
  jlong *c = malloc(((size_t)n + 1) * sizeof *c);
  jboolean *x = malloc(((size_t)n + 1) * sizeof *x);
  if (v == NULL || c == NULL || x == NULL) {
    free(v);
    free(c);
    free(x);
    throw_status(env, HS_ERR_NOMEM, "out of memory");
    return 0;
  }
  (*env)->GetLongArrayRegion(env, counts, 0, n, c);
  (*env)->GetBooleanArrayRegion(env, exact, 0, n, x);
  int ok = 1;
  for (jsize i = 0; ok && i < n; i++) {
    v[i].path = ps->v[i];
    v[i].record_count = (int64_t)c[i];
    v[i].rows_candidate = -1;
    jbyteArray b = (jbyteArray)(*env)->GetObjectArrayElement(env, cand, i);
    if (b == NULL) continue;
    jsize len = (*env)->GetArrayLength(env, b);
    v[i].candidates = malloc(len > 0 ? (size_t)len : 1);
    if (v[i].candidates == NULL) {
      throw_status(env, HS_ERR_NOMEM, "out of memory");
      ok = 0;
    } else {
      (*env)->GetByteArrayRegion(env, b, 0, len, (jbyte *)v[i].candidates);
      v[i].candidates_size = (size_t)len;
      v[i].candidates_exact = x[i] ? 1 : 0;
    }
    (*env)->DeleteLocalRef(env, b);
  }
  free(c);
  free(x);
  if (!ok) {
    for (jsize i = 0; i < n; i++) free(v[i].candidates);
    free(v);
    return 0;
  }
  *out = v;
  return 1;
}

static void splits_free(hs_scan_split *v, size_t n) {
  if (v == NULL) return;
  for (size_t i = 0; i < n; i++) free(v[i].candidates);
  free(v);
}

/* Scan `paths` (null: every file, hs_table_scan_query) of a snapshot into
 * the ArrowArrayStream at `stream_addr`; with `cand` (one entry per path),
 * the planned splits at their candidate rows (hs_table_scan_split_rows).
 * Returns the counters' handle (statsGet / statsFree). */
JNIEXPORT jlong JNICALL Java_org_hyperstreamdb_jni_NativeApi_scan(
    JNIEnv *env, jclass cls, jlong h, jlong snapshot_id, jobjectArray columns, jstring filter,
    jlong limit, jlong batch_rows, jlong batch_rows_min, jobjectArray paths, jobjectArray cand,
    jlongArray counts, jbooleanArray exact, jlong stream_addr) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return 0;
  if (stream_addr == 0) {
    throw_status(env, HS_ERR_INVALID_ARG, "no ArrowArrayStream address");
    return 0;
  }
  str_list cols, ps;
  int ok;
  if (!str_list_of(env, columns, "columns", &cols)) return 0;
  if (!str_list_of(env, paths, "paths", &ps)) {
    str_list_free(&cols);
    return 0;
  }
  hs_scan_split *sp = NULL;
  if (cand != NULL && (!ps.present || !splits_of(env, &ps, cand, counts, exact, &sp))) {
    if (!ps.present) throw_status(env, HS_ERR_INVALID_ARG, "scan: candidates without paths");
    str_list_free(&cols);
    str_list_free(&ps);
    return 0;
  }
  char *f = cstr(env, filter, &ok);
  scan_stats_box *box = ok ? calloc(1, sizeof *box) : NULL;
  scan_wrap *w = box != NULL ? calloc(1, sizeof *w) : NULL;
  jlong ret = 0;
  if (ok && w == NULL) throw_status(env, HS_ERR_NOMEM, "out of memory");
  if (w != NULL) {
    hs_scan_options o;
    hs_scan_options_init(&o);
    o.snapshot_id = (int64_t)snapshot_id;
    o.columns = cols.present ? (const char *const *)cols.v : NULL;
    o.n_columns = cols.n;
    o.filter = f;
    o.limit = (int64_t)limit;
    o.batch_rows_max = (int64_t)batch_rows;
    o.batch_rows_min = (int64_t)batch_rows_min;
    hs_error err = {0};
    hs_status st =
        sp != NULL   ? hs_table_scan_split_rows(t, &o, sp, ps.n, &w->inner, &err)
        : ps.present ? hs_table_scan_split(t, &o, (const char *const *)ps.v, ps.n, &w->inner, &err)
                     : hs_table_scan_query(t, &o, &w->inner, &err);
    if (st != HS_OK) {
      throw_err(env, st, &err);
    } else {
      atomic_init(&box->refs, 2); /* the stream's and the Java side's */
      box_fill(&w->inner, box);
      w->box = box;
      struct ArrowArrayStream *out = (struct ArrowArrayStream *)(intptr_t)stream_addr;
      out->get_schema = wrap_get_schema;
      out->get_next = wrap_get_next;
      out->get_last_error = wrap_last_error;
      out->release = wrap_release;
      out->private_data = w;
      ret = (jlong)(intptr_t)box;
      w = NULL;
      box = NULL;
    }
  }
  free(w);
  free(box);
  free(f);
  splits_free(sp, ps.n);
  str_list_free(&cols);
  str_list_free(&ps);
  return ret;
}

JNIEXPORT jlongArray JNICALL Java_org_hyperstreamdb_jni_NativeApi_statsGet(JNIEnv *env, jclass cls,
                                                                           jlong handle) {
  scan_stats_box *b = (scan_stats_box *)(intptr_t)handle;
  if (b == NULL) {
    throw_status(env, HS_ERR_INVALID_ARG, "scan statistics already freed");
    return NULL;
  }
  jlongArray a = (*env)->NewLongArray(env, ST_N);
  if (a != NULL) (*env)->SetLongArrayRegion(env, a, 0, ST_N, (const jlong *)b->v);
  return a;
}

JNIEXPORT void JNICALL Java_org_hyperstreamdb_jni_NativeApi_statsFree(JNIEnv *env, jclass cls,
                                                                      jlong handle) {
  box_unref((scan_stats_box *)(intptr_t)handle);
}

/* The read schema of a snapshot projected to `columns` (null: all), as
 * scans of it emit batches, into the ArrowSchema at `schema_addr`. */
JNIEXPORT void JNICALL Java_org_hyperstreamdb_jni_NativeApi_schema(JNIEnv *env, jclass cls, jlong h,
                                                                   jlong snapshot_id,
                                                                   jobjectArray columns,
                                                                   jlong schema_addr) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return;
  str_list cols;
  if (!str_list_of(env, columns, "columns", &cols)) return;
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.snapshot_id = (int64_t)snapshot_id;
  o.columns = cols.present ? (const char *const *)cols.v : NULL;
  o.n_columns = cols.n;
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  hs_error err = {0};
  /* A split of no files: the snapshot's projected read schema, nothing read. */
  static const char *const none[1] = {NULL};
  hs_status st = hs_table_scan_split(t, &o, none, 0, &s, &err);
  if (st == HS_OK) {
    int rc = s.get_schema(&s, (struct ArrowSchema *)(intptr_t)schema_addr);
    if (rc != 0) {
      const char *m = s.get_last_error(&s);
      throw_status(env, HS_ERR_INTERNAL, m != NULL ? m : "schema export failed");
    }
    s.release(&s);
  } else {
    throw_err(env, st, &err);
  }
  str_list_free(&cols);
}

/* ------------------------------------------------------------ vectors */

/* Top-k of one query over `paths` (null: every file) into the stream at
 * `stream_addr`. Returns the search's counters: files_planned,
 * files_searched, files_indexed, rows_scored, rows_matched, rows_returned,
 * files_index_rejected. */
JNIEXPORT jlongArray JNICALL Java_org_hyperstreamdb_jni_NativeApi_vectorSearch(
    JNIEnv *env, jclass cls, jlong h, jlong snapshot_id, jstring column, jfloatArray query, jlong k,
    jstring metric, jstring filter, jobjectArray columns, jint ef_search, jint nprobe,
    jboolean exact, jobjectArray paths, jlong stream_addr) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return NULL;
  if (stream_addr == 0 || query == NULL) {
    throw_status(
        env, HS_ERR_INVALID_ARG,
        query == NULL ? "vector search: the query vector is null" : "no ArrowArrayStream address");
    return NULL;
  }
  str_list cols, ps;
  if (!str_list_of(env, columns, "columns", &cols)) return NULL;
  if (!str_list_of(env, paths, "paths", &ps)) {
    str_list_free(&cols);
    return NULL;
  }
  int ok1, ok2 = 1, ok3 = 1;
  char *c = cstr(env, column, &ok1);
  char *m = ok1 ? cstr(env, metric, &ok2) : NULL;
  char *f = ok1 && ok2 ? cstr(env, filter, &ok3) : NULL;
  jsize dim = (*env)->GetArrayLength(env, query);
  float *q = malloc(((size_t)dim + 1) * sizeof *q);
  jlongArray ret = NULL;
  if (ok1 && ok2 && ok3 && q != NULL) {
    (*env)->GetFloatArrayRegion(env, query, 0, dim, q);
    hs_vector_search_options o;
    hs_vector_search_options_init(&o);
    o.snapshot_id = (int64_t)snapshot_id;
    o.column = c;
    o.metric = m;
    o.k = (int64_t)k;
    o.filter = f;
    o.columns = cols.present ? (const char *const *)cols.v : NULL;
    o.n_columns = cols.n;
    o.ef_search = ef_search > 0 ? (uint32_t)ef_search : 0;
    o.nprobe = nprobe > 0 ? (uint32_t)nprobe : 0;
    o.exact = exact ? 1 : 0;
    hs_vector_search_stats vs;
    memset(&vs, 0, sizeof vs);
    hs_error err = {0};
    struct ArrowArrayStream *out = (struct ArrowArrayStream *)(intptr_t)stream_addr;
    hs_status st = ps.present ? hs_table_vector_search_split(t, &o, (const char *const *)ps.v, ps.n,
                                                             q, (size_t)dim, out, &vs, &err)
                              : hs_table_vector_search(t, &o, q, (size_t)dim, out, &vs, &err);
    if (st != HS_OK) {
      throw_err(env, st, &err);
    } else {
      jlong v[7] = {vs.files_planned, vs.files_searched, vs.files_indexed,       vs.rows_scored,
                    vs.rows_matched,  vs.rows_returned,  vs.files_index_rejected};
      ret = (*env)->NewLongArray(env, 7);
      if (ret != NULL) (*env)->SetLongArrayRegion(env, ret, 0, 7, v);
    }
  } else if (q == NULL) {
    throw_status(env, HS_ERR_NOMEM, "out of memory");
  }
  free(q);
  free(c);
  free(m);
  free(f);
  str_list_free(&cols);
  str_list_free(&ps);
  return ret;
}

/* ------------------------------------------------------------ writes */

/* The table's current schema (field ids on every node, vectors as
 * fixed_size_list) into the ArrowSchema at `schema_addr`. */
JNIEXPORT void JNICALL Java_org_hyperstreamdb_jni_NativeApi_tableSchema(JNIEnv *env, jclass cls,
                                                                        jlong h,
                                                                        jlong schema_addr) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return;
  hs_error err = {0};
  hs_status st = hs_table_schema(t, (struct ArrowSchema *)(intptr_t)schema_addr, &err);
  if (st != HS_OK) throw_err(env, st, &err);
}

/* Create an empty table at `uri` with the struct schema at `schema_addr`
 * (released here); returns its handle. */
JNIEXPORT jlong JNICALL Java_org_hyperstreamdb_jni_NativeApi_tableCreate(JNIEnv *env, jclass cls,
                                                                         jstring uri,
                                                                         jlong schema_addr) {
  struct ArrowSchema *s = (struct ArrowSchema *)(intptr_t)schema_addr;
  int ok;
  char *u = cstr(env, uri, &ok);
  hs_table *t = NULL;
  if (ok && u == NULL) throw_status(env, HS_ERR_INVALID_ARG, "table path is null");
  if (u != NULL) {
    hs_error err = {0};
    hs_status st = hs_table_create(u, s, NULL, &t, &err);
    if (st != HS_OK) throw_err(env, st, &err);
  }
  if (s->release != NULL) s->release(s);
  free(u);
  return (jlong)(intptr_t)t;
}

/* A Parquet writer for `path` with the struct schema at `schema_addr`
 * (carrying the table's field ids; released here). */
JNIEXPORT jlong JNICALL Java_org_hyperstreamdb_jni_NativeApi_writerOpen(JNIEnv *env, jclass cls,
                                                                        jstring path,
                                                                        jlong schema_addr) {
  struct ArrowSchema *s = (struct ArrowSchema *)(intptr_t)schema_addr;
  int ok;
  char *p = cstr(env, path, &ok);
  hs_parquet_writer *w = NULL;
  if (ok && p == NULL) throw_status(env, HS_ERR_INVALID_ARG, "data file path is null");
  if (p != NULL) {
    hs_parquet_write_options o;
    hs_parquet_write_options_init(&o);
    hs_error err = {0};
    hs_status st = hs_parquet_writer_open(p, s, &o, &w, &err);
    if (st != HS_OK) throw_err(env, st, &err);
  }
  if (s->release != NULL) s->release(s);
  free(p);
  return (jlong)(intptr_t)w;
}

/* Write the struct array at `array_addr` (released here, on every return). */
JNIEXPORT void JNICALL Java_org_hyperstreamdb_jni_NativeApi_writerWrite(JNIEnv *env, jclass cls,
                                                                        jlong w, jlong array_addr) {
  struct ArrowArray *a = (struct ArrowArray *)(intptr_t)array_addr;
  hs_error err = {0};
  hs_status st = w == 0 ? HS_ERR_INVALID_ARG
                        : hs_parquet_writer_write((hs_parquet_writer *)(intptr_t)w, a, &err);
  if (a->release != NULL) a->release(a);
  if (st != HS_OK) throw_err(env, st, &err);
}

/* Close (footer written) and free; on failure the file is removed. */
JNIEXPORT void JNICALL Java_org_hyperstreamdb_jni_NativeApi_writerClose(JNIEnv *env, jclass cls,
                                                                        jlong w) {
  hs_parquet_writer *pw = (hs_parquet_writer *)(intptr_t)w;
  hs_error err = {0};
  hs_status st = pw == NULL ? HS_ERR_INVALID_ARG : hs_parquet_writer_close(pw, &err);
  hs_parquet_writer_free(pw);
  if (st != HS_OK) throw_err(env, st, &err);
}

/* Free without closing: the partial file is removed. */
JNIEXPORT void JNICALL Java_org_hyperstreamdb_jni_NativeApi_writerAbort(JNIEnv *env, jclass cls,
                                                                        jlong w) {
  hs_parquet_writer_free((hs_parquet_writer *)(intptr_t)w);
}

/* One append commit of the written data files (hs_table_commit_row_delta),
 * validated against commits since `base_snapshot_id`; returns the new
 * snapshot's id. */
JNIEXPORT jlong JNICALL Java_org_hyperstreamdb_jni_NativeApi_commitAppend(JNIEnv *env, jclass cls,
                                                                          jlong h,
                                                                          jobjectArray files,
                                                                          jlong base_snapshot_id) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return -1;
  str_list fs;
  if (!str_list_of(env, files, "files", &fs)) return -1;
  hs_table_row_delta d;
  memset(&d, 0, sizeof d);
  d.operation = HS_TABLE_OP_APPEND;
  d.add_data_files = (const char *const *)fs.v;
  d.n_add_data_files = fs.n;
  d.validate_no_new_deletes = -1;
  d.has_base_snapshot_id = 1;
  d.base_snapshot_id = (int64_t)base_snapshot_id;
  int64_t sid = -1;
  hs_error err = {0};
  hs_status st = hs_table_commit_row_delta(t, &d, &sid, &err);
  str_list_free(&fs);
  if (st != HS_OK) throw_err(env, st, &err);
  return (jlong)sid;
}

/* The rows of snapshot `snapshot_id` (-1: current; the snapshot the change
 * was decided on) matching `filter` (null: every row) deleted in one commit
 * (hs_table_change_rows, the table's write.delete.mode): {new snapshot id
 * (-1: nothing matched), rows deleted}. */
JNIEXPORT jlongArray JNICALL Java_org_hyperstreamdb_jni_NativeApi_deleteRows(JNIEnv *env,
                                                                             jclass cls, jlong h,
                                                                             jlong snapshot_id,
                                                                             jstring filter) {
  hs_table *t = table_of(env, h);
  if (t == NULL) return NULL;
  int ok;
  char *f = cstr(env, filter, &ok);
  if (!ok) return NULL;
  const char *deletes[1] = {f};
  hs_row_change c;
  memset(&c, 0, sizeof c);
  c.what = "delete";
  c.snapshot_id = (int64_t)snapshot_id;
  c.deletes = deletes;
  c.n_deletes = 1;
  c.mode_property = "write.delete.mode";
  hs_row_change_result r;
  memset(&r, 0, sizeof r);
  hs_error err = {0};
  hs_status st = hs_table_change_rows(t, &c, &r, &err);
  free(f);
  if (st != HS_OK) {
    throw_err(env, st, &err);
    return NULL;
  }
  jlongArray a = (*env)->NewLongArray(env, 2);
  if (a == NULL) return NULL;
  jlong v[2] = {(jlong)r.snapshot_id, (jlong)r.rows_deleted};
  (*env)->SetLongArrayRegion(env, a, 0, 2, v);
  return a;
}
