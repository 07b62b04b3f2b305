/*
 * reader.c — the public Parquet read API: open a file (footer, encryption
 * refusal, schema validation), expose its Arrow schema, and stream record
 * batches with projection, row-group pruning and row selection.
 *
 * Lifetime: the parsed footer, the schema tree and the byte source live in
 * a reference-counted `hs_pq_file`. The reader holds one reference and each
 * stream another, so a stream may outlive its reader. A stream decodes one
 * row group at a time (projected leaves only) and emits it as one struct
 * batch, or as several when batch_rows_max slices it; the first failure is
 * sticky and get_last_error returns its message.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/fs.h"
#include "../io/store.h"
#include "chunk_memo.h"
#include "page_read.h"
#include "reader_internal.h"
#include "../common/parallel.h"

typedef struct hs_pq_file {
  int refs;
  hs_source *src;
  hs_arena arena; /* metadata and schema tree */
  hs_pq_file_metadata md;
  hs_pq_schema schema;
  int64_t *rg_first_row; /* n_row_groups + 1 entries: file-wide row of each group */
  /* What row selections keep per chunk (chunk_memo.h): made by the first
   * selection, shared by every reader and stream of the file. */
  _Atomic(hs_pq_memo *) memo;
} hs_pq_file;

struct hs_parquet_reader {
  hs_pq_file *file;
};

static void file_unref(hs_pq_file *f) {
  if (f == NULL || __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  hs_pq_memo_free(atomic_load(&f->memo));
  hs_arena_reset(&f->arena);
  hs_source_unref(f->src);
  hs_free(f);
}

static hs_status prefixed(hs_error *err, const hs_source *src, hs_status st) {
  if (err != NULL && err->status != HS_OK) hs_error_prefix(err, "%s: ", hs_source_name(src));
  return st;
}

static hs_status file_open(hs_source *src, hs_parquet_reader **out, hs_error *err) {
  hs_pq_file *f = hs_calloc(1, sizeof *f);
  hs_parquet_reader *r = hs_calloc(1, sizeof *r);
  if (f == NULL || r == NULL) {
    hs_free(f);
    hs_free(r);
    hs_source_unref(src);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory opening", hs_source_name(src));
  }
  f->refs = 1;
  f->src = src;
  hs_arena_init(&f->arena);
  r->file = f;
  hs_status st = hs_pq_footer_read(src, &f->arena, &f->md, err);
  if (st == HS_OK && f->md.has_encryption_algorithm) {
    st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                      "file is encrypted (plaintext footer); decryption is not supported");
  }
  if (st == HS_OK) st = hs_pq_schema_build(&f->md, &f->arena, &f->schema, err);
  if (st == HS_OK) {
    f->rg_first_row = hs_arena_alloc(&f->arena, sizeof(int64_t) * (f->md.n_row_groups + 1));
    if (f->rg_first_row == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  for (uint32_t g = 0; st == HS_OK && g < f->md.n_row_groups; g++) {
    int64_t n = f->md.row_groups[g].num_rows;
    if (__builtin_add_overflow(f->rg_first_row[g], n, &f->rg_first_row[g + 1])) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "row counts of the row groups overflow");
    }
  }
  if (st != HS_OK) {
    prefixed(err, src, st);
    hs_parquet_reader_free(r);
    return st;
  }
  *out = r;
  return HS_OK;
}

void hs_parquet_read_options_init(hs_parquet_read_options *opts) {
  memset(opts, 0, sizeof *opts);
}

hs_status hs_parquet_reader_open(const char *path, hs_parquet_reader **out, hs_error *err) {
  hs_source *src;
  if (path == NULL || out == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_parquet_reader_open: NULL argument");
  }
  *out = NULL;
  /* Local files memory-mapped as always; others through the store. */
  hs_status st = hs_store_is_remote(path) ? hs_store_source_open(path, &src, err)
                                          : hs_source_open_file(path, &src, err);
  if (st != HS_OK) return st;
  return file_open(src, out, err);
}

hs_status hs_parquet_reader_open_buffer(const uint8_t *buf, size_t len, const char *name,
                                        hs_parquet_reader **out, hs_error *err) {
  hs_source *src;
  if ((buf == NULL && len > 0) || out == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_parquet_reader_open_buffer: NULL argument");
  }
  *out = NULL;
  hs_status st = hs_source_open_memory(buf, len, name ? name : "<memory>", &src, err);
  if (st != HS_OK) return st;
  return file_open(src, out, err);
}

/* ------------------------------------------------------- shared files
 *
 * Kept opened data files (parquet.h): per query, opening a file costs an
 * mmap, a footer parse and, at close, an munmap that drops every page the
 * query mapped, so the next query faults them in again; for an indexed
 * query gathering a few thousand rows that was most of its time. */

typedef struct fc_entry {
  char *path;
  hs_fs_stamp stamp;
  hs_pq_file *file; /* one reference held by the cache */
  uint64_t used_at;
} fc_entry;

static pthread_mutex_t fc_mu = PTHREAD_MUTEX_INITIALIZER;
static fc_entry fc[HS_PQ_FILE_CACHE_MAX];
static uint64_t fc_tick;

static void fc_drop(fc_entry *e, hs_pq_file **gone, char **gone_path) {
  *gone = e->file;
  *gone_path = e->path;
  memset(e, 0, sizeof *e);
}

hs_status hs_parquet_reader_open_shared(const char *path, hs_parquet_reader **out, hs_error *err) {
  hs_fs_stamp st;
  if (path == NULL || out == NULL || !hs_store_stamp_of(path, &st))
    return hs_parquet_reader_open(path, out, err); /* its error */
  *out = NULL;
  hs_parquet_reader *r = hs_calloc(1, sizeof *r);
  if (r == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory opening", path);
  hs_pq_file *gone = NULL;
  char *gone_path = NULL;
  pthread_mutex_lock(&fc_mu);
  for (int i = 0; i < HS_PQ_FILE_CACHE_MAX && r->file == NULL && gone == NULL; i++) {
    if (fc[i].file == NULL || strcmp(fc[i].path, path) != 0) continue;
    if (hs_fs_stamp_equal(&fc[i].stamp, &st)) {
      __atomic_add_fetch(&fc[i].file->refs, 1, __ATOMIC_RELAXED);
      fc[i].used_at = ++fc_tick;
      r->file = fc[i].file;
    } else {
      fc_drop(&fc[i], &gone, &gone_path); /* the path now names another file */
    }
  }
  pthread_mutex_unlock(&fc_mu);
  file_unref(gone);
  hs_free(gone_path);
  if (r->file != NULL) {
    *out = r;
    return HS_OK;
  }
  hs_free(r);
  hs_status s = hs_parquet_reader_open(path, out, err);
  char *key = s == HS_OK ? hs_strdup(path) : NULL;
  if (key == NULL) return s;
  hs_pq_file *f = (*out)->file;
  __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED); /* the cache's */
  gone = NULL;
  gone_path = NULL;
  pthread_mutex_lock(&fc_mu);
  int slot = 0;
  for (int i = 0; i < HS_PQ_FILE_CACHE_MAX; i++) {
    if (fc[i].file == NULL) {
      slot = i;
      break;
    }
    if (fc[i].used_at < fc[slot].used_at) slot = i;
  }
  if (fc[slot].file != NULL) fc_drop(&fc[slot], &gone, &gone_path);
  fc[slot] = (fc_entry){.path = key, .stamp = st, .file = f, .used_at = ++fc_tick};
  pthread_mutex_unlock(&fc_mu);
  file_unref(gone);
  hs_free(gone_path);
  return HS_OK;
}

hs_status hs_parquet_reader_dup(const hs_parquet_reader *reader, hs_parquet_reader **out,
                                hs_error *err) {
  *out = NULL;
  hs_parquet_reader *r = hs_calloc(1, sizeof *r);
  if (r == NULL) return hs_error_set(err, HS_ERR_NOMEM, "parquet reader: out of memory");
  __atomic_add_fetch(&reader->file->refs, 1, __ATOMIC_RELAXED);
  r->file = reader->file;
  *out = r;
  return HS_OK;
}

hs_source *hs_parquet_reader_source(hs_parquet_reader *reader) {
  hs_source_ref(reader->file->src);
  return reader->file->src;
}

void hs_parquet_file_cache_clear(void) {
  hs_pq_file *gone[HS_PQ_FILE_CACHE_MAX];
  char *paths[HS_PQ_FILE_CACHE_MAX];
  pthread_mutex_lock(&fc_mu);
  for (int i = 0; i < HS_PQ_FILE_CACHE_MAX; i++) fc_drop(&fc[i], &gone[i], &paths[i]);
  pthread_mutex_unlock(&fc_mu);
  for (int i = 0; i < HS_PQ_FILE_CACHE_MAX; i++) {
    file_unref(gone[i]);
    hs_free(paths[i]);
  }
  hs_pq_cache_clear();
}

void hs_parquet_reader_free(hs_parquet_reader *reader) {
  if (reader == NULL) return;
  file_unref(reader->file);
  hs_free(reader);
}

int64_t hs_parquet_reader_num_rows(const hs_parquet_reader *reader) {
  return reader->file->md.num_rows;
}

int64_t hs_parquet_reader_num_row_groups(const hs_parquet_reader *reader) {
  return reader->file->md.n_row_groups;
}

const hs_pq_file_metadata *hs_parquet_reader_metadata(const hs_parquet_reader *reader) {
  return &reader->file->md;
}

/* Export a struct schema over the given top-level nodes. */
static hs_status export_struct(const hs_pq_node *const *cols, size_t n, struct ArrowSchema *out,
                               hs_error *err) {
  hs_status st = hs_arrow_schema_init(out, "+s", "", 0, (int64_t)n, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    st = hs_pq_node_export_schema(cols[i], out->children[i], err);
    if (st != HS_OK) out->release(out);
  }
  return st;
}

hs_status hs_parquet_reader_schema(hs_parquet_reader *reader, struct ArrowSchema *out,
                                   hs_error *err) {
  const hs_pq_node *root = reader->file->schema.root;
  hs_status st =
      export_struct((const hs_pq_node *const *)root->children, (size_t)root->n_children, out, err);
  return prefixed(err, reader->file->src, st);
}

/* --------------------------------------------------------- selection */

/* The row groups to read under `opts` (pruned, and holding selected rows). */
static hs_status select_row_groups(hs_pq_file *f, const hs_parquet_read_options *opts,
                                   uint32_t *out, size_t *n_out, hs_error *err) {
  size_t n = 0;
  for (uint32_t g = 0; g < f->md.n_row_groups; g++) {
    bool keep = true;
    if (opts && opts->n_predicates > 0) {
      hs_status st = hs_pq_prune_row_group(&f->schema, &f->md.row_groups[g], opts->predicates,
                                           opts->n_predicates, &keep, err);
      if (st != HS_OK) return st;
    }
    if (keep && opts && opts->rows) {
      /* Any selected row inside [first, end)? Rows are sorted: bisect. */
      int64_t first = f->rg_first_row[g], end = f->rg_first_row[g + 1];
      size_t lo = 0, hi = opts->n_rows;
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (opts->rows[mid] < first)
          lo = mid + 1;
        else
          hi = mid;
      }
      keep = lo < opts->n_rows && opts->rows[lo] < end;
    }
    if (keep) out[n++] = g;
  }
  *n_out = n;
  return HS_OK;
}

static hs_status check_options(hs_pq_file *f, const hs_parquet_read_options *opts, hs_error *err) {
  if (opts == NULL) return HS_OK;
  if ((opts->columns == NULL && opts->n_columns > 0) || (opts->rows == NULL && opts->n_rows > 0) ||
      (opts->predicates == NULL && opts->n_predicates > 0) || opts->batch_rows_max < 0) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "read options: NULL array with a count");
  }
  for (size_t i = 0; opts->rows && i < opts->n_rows; i++) {
    if (opts->rows[i] < 0 || opts->rows[i] >= f->rg_first_row[f->md.n_row_groups] ||
        (i > 0 && opts->rows[i] <= opts->rows[i - 1])) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "read options: rows[%zu] = %lld is not strictly increasing within "
                          "[0, %lld)",
                          i, (long long)opts->rows[i],
                          (long long)f->rg_first_row[f->md.n_row_groups]);
    }
  }
  return HS_OK;
}

hs_status hs_parquet_reader_count_row_groups(hs_parquet_reader *reader,
                                             const hs_parquet_read_options *opts, int64_t *out,
                                             hs_error *err) {
  hs_pq_file *f = reader->file;
  uint32_t *rgs = hs_malloc(sizeof(uint32_t) * (f->md.n_row_groups + 1));
  size_t n = 0;
  if (rgs == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  hs_status st = check_options(f, opts, err);
  if (st == HS_OK) st = select_row_groups(f, opts, rgs, &n, err);
  hs_free(rgs);
  if (st == HS_OK) *out = (int64_t)n;
  return prefixed(err, f->src, st);
}

/* ------------------------------------------------------------ stream */

typedef struct stream_state {
  hs_pq_file *file;
  const hs_pq_node **cols;
  size_t n_cols;
  bool *leaf_used; /* per leaf: below a projected column */
  /* Per leaf: the size of the fixed-size list directly above it when that
   * list is a projected top-level column (0 otherwise); only such a leaf
   * may keep implicit repetition levels (reader_internal.h). */
  int32_t *leaf_fixed;
  int64_t *rows; /* copy of the selection, file-wide */
  size_t n_rows;
  int64_t batch_rows_max;
  uint32_t *rgs;
  size_t n_rgs, next_rg;
  /* The row group being emitted. */
  bool loaded;
  int64_t rg_rows, rg_done;
  hs_pq_leaf_data *leaves;
  hs_pq_leaf_window *windows;
  int64_t *next_lo, *next_vlo;        /* per leaf: where the next batch starts */
  int32_t *used_leaves;               /* stream_load's scratch: the used leaves */
  const hs_pq_offset_index **used_oi; /* and their offset indexes */
  hs_pq_chunk_memo **used_memo;       /* and their chunk memos (or NULL) */
  bool parallel_always;               /* HS_PQ_PARALLEL_MIN=0 */
  hs_arena rg_arena;
  hs_status failed;
  char last_error[HS_ERROR_MESSAGE_MAX];
} stream_state;

static void stream_unload(stream_state *s) {
  for (int32_t l = 0; s->leaves && l < s->file->schema.n_leaves; l++) {
    hs_pq_leaf_data_free(&s->leaves[l]);
    memset(&s->leaves[l], 0, sizeof s->leaves[l]);
  }
  hs_arena_reset(&s->rg_arena);
  s->loaded = false;
}

/* A parsed offset index kept in the page cache: the struct and its page
 * locations in one allocation. */
static hs_pq_offset_index *oi_clone(const hs_pq_offset_index *src, void *(*alloc)(void *, size_t),
                                    void *ctx) {
  size_t n = src->n_pages, bytes = sizeof(hs_pq_offset_index) + n * sizeof(hs_pq_page_location);
  hs_pq_offset_index *o = alloc(ctx, bytes);
  if (o == NULL) return NULL;
  o->n_pages = src->n_pages;
  o->page_locations = (hs_pq_page_location *)(void *)(o + 1);
  if (n > 0) memcpy(o->page_locations, src->page_locations, n * sizeof(hs_pq_page_location));
  return o;
}

static void *oi_heap(void *ctx, size_t n) {
  (void)ctx;
  return hs_malloc(n);
}

static void *oi_arena(void *ctx, size_t n) {
  return hs_arena_alloc(ctx, n);
}

/* Offset index of a chunk, or NULL when absent or unreadable (then pages
 * are skipped by their headers instead). A file with a stamp keeps the
 * parsed index in the page cache: a search's fetch of ten rows re-parsed
 * the 400 page locations of a vector column per query (~7 % of its time). */
static const hs_pq_offset_index *load_offset_index(stream_state *s, const hs_pq_column_chunk *cc) {
  if (!cc->has_offset_index || cc->offset_index_length <= 0 || cc->offset_index_offset < 0) {
    return NULL;
  }
  hs_error local = {0};
  size_t len = (size_t)cc->offset_index_length;
  if ((uint64_t)cc->offset_index_offset > hs_source_size(s->file->src) ||
      len > hs_source_size(s->file->src) - (uint64_t)cc->offset_index_offset) {
    return NULL;
  }
  hs_fs_stamp stamp;
  bool stamped = hs_source_stamp(s->file->src, &stamp);
  uint64_t at = (uint64_t)cc->offset_index_offset;
  hs_pq_cached *c = stamped ? hs_pq_cache_find(&stamp, at, len, HS_PQ_CACHED_OFFSET_INDEX) : NULL;
  if (c != NULL) {
    hs_pq_offset_index *oi = oi_clone(hs_pq_cached_obj(c), oi_arena, &s->rg_arena);
    hs_pq_cache_put(c);
    return oi;
  }
  uint8_t *buf = hs_arena_alloc(&s->rg_arena, len);
  hs_pq_offset_index *oi = hs_arena_alloc(&s->rg_arena, sizeof *oi);
  if (buf == NULL || oi == NULL) return NULL;
  if (hs_source_read(s->file->src, at, len, buf, &local) != HS_OK ||
      hs_pq_offset_index_parse(buf, len, &s->rg_arena, oi, &local) != HS_OK) {
    return NULL;
  }
  hs_pq_offset_index *keep = stamped ? oi_clone(oi, oi_heap, NULL) : NULL;
  if (keep != NULL) {
    size_t bytes = sizeof *keep + keep->n_pages * sizeof(hs_pq_page_location);
    hs_pq_cache_put(
        hs_pq_cache_add(&stamp, at, len, HS_PQ_CACHED_OFFSET_INDEX, keep, bytes, hs_free));
  }
  return oi;
}

/* The file's memo (chunk_memo.h), made on first use; NULL for a source
 * without a stamp (memory: its bytes are checked every read, as before)
 * or when out of memory (reads then keep nothing). */
static hs_pq_memo *file_memo(hs_pq_file *f) {
  hs_pq_memo *m = atomic_load_explicit(&f->memo, memory_order_acquire);
  if (m != NULL) return m;
  hs_fs_stamp stamp;
  if (!hs_source_stamp(f->src, &stamp)) return NULL;
  hs_pq_memo *mine = hs_pq_memo_new(f->md.n_row_groups, f->schema.n_leaves);
  if (mine == NULL) return NULL;
  if (atomic_compare_exchange_strong_explicit(&f->memo, &m, mine, memory_order_acq_rel,
                                              memory_order_acquire))
    return mine;
  hs_pq_memo_free(mine); /* another stream's is there */
  return m;
}

/* True when the chunk's data pages are stored raw: an UNCOMPRESSED chunk,
 * or one whose first data page is a v2 page with is_compressed = false
 * (the table layout keeps incompressible pages raw whatever the codec). A
 * selective read then costs its rows, not the chunk's bytes. The chunk's
 * memo, when given, keeps the answer. */
static bool chunk_pages_raw(stream_state *s, const hs_pq_column_meta *m, hs_pq_chunk_memo *cm) {
  if (m->codec == HS_PQ_CODEC_UNCOMPRESSED) return true;
  int known = cm != NULL ? atomic_load_explicit(&cm->raw, memory_order_relaxed) : 0;
  if (known != 0) return known == 1;
  uint64_t size = hs_source_size(s->file->src);
  if (m->data_page_offset < 0 || (uint64_t)m->data_page_offset >= size) return false;
  size_t len = size - (uint64_t)m->data_page_offset < 256
                   ? (size_t)(size - (uint64_t)m->data_page_offset)
                   : 256;
  hs_buf scratch;
  hs_buf_init(&scratch);
  const uint8_t *p = NULL;
  hs_pq_page_header ph;
  size_t used = 0;
  hs_error local = {0};
  bool raw = hs_source_view(s->file->src, (uint64_t)m->data_page_offset, len, &scratch, &p,
                            &local) == HS_OK &&
             hs_pq_page_header_parse(p, len, &s->rg_arena, &ph, &used, &local) == HS_OK &&
             ph.type == HS_PQ_DATA_PAGE_V2 && ph.has_data_page_v2 && !ph.data_page_v2.is_compressed;
  hs_buf_free(&scratch);
  if (cm != NULL) atomic_store_explicit(&cm->raw, raw ? 1 : 2, memory_order_relaxed);
  return raw;
}

/* Leaf l of row group g into s->leaves[l] and s->windows[l] (nothing else
 * of `s` is written, so leaves load on several threads at once). rel:
 * the selected rows of the row group (NULL: all). */
static hs_status load_leaf(stream_state *s, uint32_t g, int32_t l, const hs_pq_offset_index *oi,
                           hs_pq_chunk_memo *memo, const int64_t *rel, size_t n_rel,
                           hs_error *err) {
  hs_pq_file *f = s->file;
  const hs_pq_row_group *rg = &f->md.row_groups[g];
  const hs_pq_column_chunk *cc = &rg->columns[l];
  hs_pq_lazy_levels lazy;
  hs_status st = hs_pq_column_read_lazy(f->src, cc, &f->schema.leaves[l], rg->num_rows, oi, memo,
                                        rel, n_rel, &s->leaves[l], &lazy, err);
  /* Implicit definition levels read as all max_def everywhere; implicit
   * repetition levels only under their fixed-size list, and only with
   * no nulls (its fast path). */
  if (st == HS_OK && lazy.rep_period > 0 &&
      (lazy.rep_period != s->leaf_fixed[l] || !lazy.def_all_max)) {
    st = hs_pq_lazy_levels_materialize(&s->leaves[l], &f->schema.leaves[l], &lazy, err);
  }
  if (st != HS_OK) {
    hs_error_prefix(err, "row group %u: ", g);
    return st;
  }
  if (s->leaves[l].n_rows != s->rg_rows) {
    return hs_error_set(
        err, HS_ERR_CORRUPT, "row group %u: column '%s' holds %lld rows, expected %lld", g,
        f->schema.leaves[l].path, (long long)s->leaves[l].n_rows, (long long)s->rg_rows);
  }
  if (s->leaves[l].rep != NULL && s->leaves[l].n_levels > 0 && s->leaves[l].rep[0] != 0) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "row group %u: column '%s': the first repetition level is %d, not 0", g,
                        f->schema.leaves[l].path, (int)s->leaves[l].rep[0]);
  }
  s->windows[l] = (hs_pq_leaf_window){
      .data = &s->leaves[l], .desc = &f->schema.leaves[l], .rep_period = lazy.rep_period};
  s->next_lo[l] = 0;
  s->next_vlo[l] = 0;
  return HS_OK;
}

/* Leaves of a row group decoded on the worker pool (stream_load). Each
 * task writes only its own leaf and its own status and error slot. */
typedef struct load_job {
  stream_state *s;
  uint32_t g;
  const int32_t *leaf;                 /* the used leaves, increasing */
  const hs_pq_offset_index *const *oi; /* per used leaf */
  hs_pq_chunk_memo *const *memo;       /* per used leaf */
  const int64_t *rel;
  size_t n_rel;
  hs_status *st;
  hs_error *errs;
} load_job;

static void load_worker(void *ctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  load_job *j = ctx;
  for (size_t i = begin; i < end; i++)
    j->st[i] =
        load_leaf(j->s, j->g, j->leaf[i], j->oi[i], j->memo[i], j->rel, j->n_rel, &j->errs[i]);
}

/* Compressed bytes of the used chunks of a row group from which its
 * leaves are decoded in parallel: below, starting threads (tens of
 * microseconds, and a wait for a core on a busy machine) is not worth it.
 * A selection over uncompressed chunks counts 16 bytes per selected row
 * and chunk, the rows being all that is read. */
#define HS_PQ_PARALLEL_BYTES (64 * 1024)

static hs_status stream_load(stream_state *s, uint32_t g, hs_error *err) {
  hs_pq_file *f = s->file;
  const hs_pq_row_group *rg = &f->md.row_groups[g];
  int64_t *rel = NULL;
  size_t n_rel = 0;
  hs_status st = HS_OK;
  s->rg_rows = rg->num_rows;
  if (s->rows) {
    int64_t first = f->rg_first_row[g], end = f->rg_first_row[g + 1];
    size_t lo = 0, hi = s->n_rows;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (s->rows[mid] < first)
        lo = mid + 1;
      else
        hi = mid;
    }
    size_t e = lo;
    while (e < s->n_rows && s->rows[e] < end) e++;
    n_rel = e - lo;
    rel = hs_arena_alloc(&s->rg_arena, sizeof(int64_t) * (n_rel ? n_rel : 1));
    if (rel == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_rel; i++) rel[i] = s->rows[lo + i] - first;
    s->rg_rows = (int64_t)n_rel;
  }
  /* The used leaves and their offset indexes (read here: the arena is
   * not shared with workers). */
  size_t n_used = 0;
  int64_t bytes = 0;
  hs_pq_memo *fm = s->rows ? file_memo(f) : NULL;
  for (int32_t l = 0; l < f->schema.n_leaves; l++) {
    if (!s->leaf_used[l]) continue;
    s->used_leaves[n_used] = l;
    /* A selection reads by the chunk's memo and the offset index it keeps
     * (the first one loads it). */
    hs_pq_chunk_memo *cm = hs_pq_memo_chunk(fm, g, l, NULL);
    const hs_pq_offset_index *oi = NULL;
    if (cm == NULL && s->rows) {
      oi = load_offset_index(s, &rg->columns[l]);
      cm = oi != NULL ? hs_pq_memo_chunk(fm, g, l, oi) : NULL;
    }
    s->used_oi[n_used] = cm != NULL ? &cm->oi : oi;
    s->used_memo[n_used] = cm;
    const hs_pq_column_chunk *cc = &rg->columns[l];
    if (cc->has_meta_data && cc->meta_data.total_compressed_size > 0) {
      /* A chunk of raw pages gives up only the selected rows (page_gather.c):
       * the work is theirs, not the chunk's size. */
      const hs_pq_column_meta *m = &cc->meta_data;
      int64_t b = m->total_compressed_size;
      if (s->rows && (int64_t)n_rel * 16 < b && chunk_pages_raw(s, m, cm)) b = (int64_t)n_rel * 16;
      bytes += b;
    }
    n_used++;
  }
  uint32_t threads = n_used >= 2 && (bytes >= HS_PQ_PARALLEL_BYTES || s->parallel_always)
                         ? hs_parallel_cores()
                         : 1;
  if (threads > 1) {
    hs_error *errs = hs_calloc(n_used, sizeof *errs);
    hs_status *sts = hs_calloc(n_used, sizeof *sts);
    if (errs == NULL || sts == NULL) {
      threads = 1; /* decode serially instead */
    } else {
      load_job j = {.s = s,
                    .g = g,
                    .leaf = s->used_leaves,
                    .oi = s->used_oi,
                    .memo = s->used_memo,
                    .rel = rel,
                    .n_rel = n_rel,
                    .st = sts,
                    .errs = errs};
      hs_parallel_for(n_used, 1, threads, load_worker, &j);
      for (size_t i = 0; st == HS_OK && i < n_used; i++) { /* the first in leaf order */
        st = sts[i];
        if (st != HS_OK && err != NULL) *err = errs[i];
      }
    }
    hs_free(errs);
    hs_free(sts);
  }
  if (threads <= 1) {
    for (size_t i = 0; st == HS_OK && i < n_used; i++)
      st = load_leaf(s, g, s->used_leaves[i], s->used_oi[i], s->used_memo[i], rel, n_rel, err);
  }
  if (st != HS_OK) {
    stream_unload(s);
    return st;
  }
  s->loaded = true;
  s->rg_done = 0;
  return HS_OK;
}

/* Column i of a batch of k rows: out->children[i] from its leaves' windows
 * (each column its own leaves, so columns assemble on several threads). */
static hs_status emit_column(stream_state *s, size_t i, struct ArrowArray *out, int64_t k,
                             hs_error *err) {
  hs_status st = hs_pq_assemble(s->cols[i], s->windows, out->children[i], err);
  if (st == HS_OK && out->children[i]->length != k) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "column '%s' has %lld rows in a batch of %lld",
                      s->cols[i]->name, (long long)out->children[i]->length, (long long)k);
  }
  return st;
}

typedef struct emit_job {
  stream_state *s;
  struct ArrowArray *out;
  int64_t k;
  hs_status *st;
  hs_error *errs;
} emit_job;

static void emit_worker(void *ctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  emit_job *j = ctx;
  for (size_t i = begin; i < end; i++) j->st[i] = emit_column(j->s, i, j->out, j->k, &j->errs[i]);
}

/* Rows of a batch from which its columns are assembled in parallel. */
#define HS_PQ_PARALLEL_ROWS 16384

/* The environment variable HS_PQ_PARALLEL_MIN=0 drops both thresholds
 * (HS_PQ_PARALLEL_BYTES, HS_PQ_PARALLEL_ROWS): tests run the parallel paths
 * on small files. */
static bool parallel_always(void) {
  const char *v = getenv("HS_PQ_PARALLEL_MIN");
  return v != NULL && strcmp(v, "0") == 0;
}

/* Emit the next `k` rows of the loaded row group as one struct batch. */
static hs_status stream_emit(stream_state *s, int64_t k, struct ArrowArray *out, hs_error *err) {
  hs_pq_file *f = s->file;
  bool whole = s->rg_done == 0 && k == s->rg_rows;
  hs_status st = HS_OK;
  for (int32_t l = 0; l < f->schema.n_leaves; l++) {
    if (!s->leaf_used[l]) continue;
    hs_pq_leaf_window *w = &s->windows[l];
    int64_t hi = s->next_lo[l], vhi = s->next_vlo[l];
    st = hs_pq_window_advance(w->data, w->desc, w->rep_period, &hi, &vhi, k, err);
    if (st != HS_OK) return st;
    w->lo = s->next_lo[l];
    w->vlo = s->next_vlo[l];
    w->hi = hi;
    w->whole = whole && hi == w->data->n_levels && vhi == w->data->n_values;
    s->next_lo[l] = hi;
    s->next_vlo[l] = vhi;
  }
  st = hs_arrow_array_init(out, 1, (int64_t)s->n_cols, err);
  if (st != HS_OK) return st;
  out->length = k;
  out->null_count = 0;
  uint32_t threads =
      s->n_cols >= 2 && (k >= HS_PQ_PARALLEL_ROWS || s->parallel_always) ? hs_parallel_cores() : 1;
  hs_error *errs = threads > 1 ? hs_calloc(s->n_cols, sizeof *errs) : NULL;
  hs_status *sts = threads > 1 ? hs_calloc(s->n_cols, sizeof *sts) : NULL;
  if (errs != NULL && sts != NULL) {
    emit_job j = {.s = s, .out = out, .k = k, .st = sts, .errs = errs};
    hs_parallel_for(s->n_cols, 1, threads, emit_worker, &j);
    for (size_t i = 0; st == HS_OK && i < s->n_cols; i++) { /* the first in column order */
      st = sts[i];
      if (st != HS_OK && err != NULL) *err = errs[i];
    }
  } else {
    for (size_t i = 0; st == HS_OK && i < s->n_cols; i++) st = emit_column(s, i, out, k, err);
  }
  hs_free(errs);
  hs_free(sts);
  if (st != HS_OK) {
    out->release(out);
    return st;
  }
  s->rg_done += k;
  return HS_OK;
}

static int errno_of(hs_status st) {
  return hs_status_errno(st);
}

static int stream_fail(stream_state *s, hs_error *err) {
  s->failed = err->status != HS_OK ? err->status : HS_ERR_INTERNAL;
  hs_error_prefix(err, "%s: ", hs_source_name(s->file->src));
  snprintf(s->last_error, sizeof s->last_error, "%s", err->message);
  return errno_of(s->failed);
}

static int stream_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out) {
  stream_state *s = stream->private_data;
  hs_error err = {0};
  if (export_struct(s->cols, s->n_cols, out, &err) != HS_OK) {
    hs_error_prefix(&err, "%s: ", hs_source_name(s->file->src));
    snprintf(s->last_error, sizeof s->last_error, "%s", err.message);
    return errno_of(err.status);
  }
  return 0;
}

static int stream_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out) {
  stream_state *s = stream->private_data;
  hs_error err = {0};
  memset(out, 0, sizeof *out);
  if (s->failed != HS_OK) return errno_of(s->failed);
  for (;;) {
    if (s->loaded && s->rg_done < s->rg_rows) {
      int64_t k = s->rg_rows - s->rg_done;
      if (s->batch_rows_max > 0 && k > s->batch_rows_max) k = s->batch_rows_max;
      if (stream_emit(s, k, out, &err) != HS_OK) return stream_fail(s, &err);
      return 0;
    }
    if (s->loaded) stream_unload(s);
    if (s->next_rg >= s->n_rgs) {
      out->release = NULL; /* end of stream */
      return 0;
    }
    uint32_t g = s->rgs[s->next_rg++];
    if (stream_load(s, g, &err) != HS_OK) return stream_fail(s, &err);
  }
}

static const char *stream_get_last_error(struct ArrowArrayStream *stream) {
  stream_state *s = stream->private_data;
  return s->last_error[0] ? s->last_error : NULL;
}

static void stream_state_free(stream_state *s) {
  if (s == NULL) return;
  if (s->file) stream_unload(s);
  hs_free(s->leaves);
  hs_free(s->windows);
  hs_free(s->next_lo);
  hs_free(s->next_vlo);
  hs_free(s->used_leaves);
  hs_free(s->used_oi);
  hs_free(s->used_memo);
  hs_free(s->leaf_used);
  hs_free(s->leaf_fixed);
  hs_free(s->cols);
  hs_free(s->rows);
  hs_free(s->rgs);
  file_unref(s->file);
  hs_free(s);
}

static void stream_release(struct ArrowArrayStream *stream) {
  stream_state_free(stream->private_data);
  stream->release = NULL;
  stream->private_data = NULL;
}

/* Resolve projected names to top-level nodes. */
static hs_status resolve_columns(stream_state *s, const hs_parquet_read_options *opts,
                                 hs_error *err) {
  const hs_pq_node *root = s->file->schema.root;
  bool all = opts == NULL || opts->columns == NULL;
  s->n_cols = all ? (size_t)root->n_children : opts->n_columns;
  s->cols = hs_malloc(sizeof(hs_pq_node *) * (s->n_cols ? s->n_cols : 1));
  if (s->cols == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < s->n_cols; i++) {
    if (all) {
      s->cols[i] = root->children[i];
      continue;
    }
    const char *name = opts->columns[i];
    s->cols[i] = name ? hs_pq_schema_find(&s->file->schema, name) : NULL;
    if (s->cols[i] == NULL) {
      hs_buf list;
      hs_buf_init(&list);
      for (int32_t c = 0; c < root->n_children && list.len < 600; c++) {
        hs_buf_printf(&list, "%s'%s'", c ? ", " : "", root->children[c]->name);
      }
      hs_buf_append_byte(&list, 0);
      hs_error_set(err, HS_ERR_NOT_FOUND, "column '%s' not found; available columns: %s",
                   name ? name : "(null)", list.data ? (const char *)list.data : "");
      hs_buf_free(&list);
      return HS_ERR_NOT_FOUND;
    }
    /* A column twice would share one leaf decoder (its second read found
     * the bytes taken: an internal error); without repeats n_cols is at
     * most the file's columns, so this loop is bounded by them. */
    for (size_t j = 0; j < i; j++)
      if (s->cols[j] == s->cols[i])
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "column '%s' is selected twice (positions %zu and %zu)", name, j, i);
  }
  return HS_OK;
}

hs_status hs_parquet_reader_stream(hs_parquet_reader *reader, const hs_parquet_read_options *opts,
                                   struct ArrowArrayStream *out, hs_error *err) {
  hs_pq_file *f = reader->file;
  hs_status st = check_options(f, opts, err);
  if (st != HS_OK) return prefixed(err, f->src, st);
  stream_state *s = hs_calloc(1, sizeof *s);
  if (s == NULL) return prefixed(err, f->src, hs_error_set(err, HS_ERR_NOMEM, "out of memory"));
  __atomic_add_fetch(&f->refs, 1, __ATOMIC_ACQ_REL);
  s->file = f;
  hs_arena_init(&s->rg_arena);
  size_t nl = (size_t)f->schema.n_leaves + 1;
  s->leaves = hs_calloc(nl, sizeof *s->leaves);
  s->windows = hs_calloc(nl, sizeof *s->windows);
  s->next_lo = hs_calloc(nl, sizeof *s->next_lo);
  s->next_vlo = hs_calloc(nl, sizeof *s->next_vlo);
  s->used_leaves = hs_calloc(nl, sizeof *s->used_leaves);
  s->used_oi = hs_calloc(nl, sizeof *s->used_oi);
  s->used_memo = hs_calloc(nl, sizeof *s->used_memo);
  s->leaf_used = hs_calloc(nl, sizeof *s->leaf_used);
  s->leaf_fixed = hs_calloc(nl, sizeof *s->leaf_fixed);
  s->rgs = hs_calloc(f->md.n_row_groups + 1, sizeof *s->rgs);
  if (!s->leaves || !s->windows || !s->next_lo || !s->next_vlo || !s->leaf_used || !s->leaf_fixed ||
      !s->rgs || !s->used_leaves || !s->used_oi || !s->used_memo) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  if (st == HS_OK) st = resolve_columns(s, opts, err);
  if (st == HS_OK && opts && opts->rows) {
    s->rows = hs_malloc(sizeof(int64_t) * (opts->n_rows ? opts->n_rows : 1));
    if (s->rows == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    else
      memcpy(s->rows, opts->rows, sizeof(int64_t) * opts->n_rows);
    s->n_rows = opts->n_rows;
  }
  if (st == HS_OK) st = select_row_groups(f, opts, s->rgs, &s->n_rgs, err);
  if (st != HS_OK) {
    stream_state_free(s);
    return prefixed(err, f->src, st);
  }
  for (size_t i = 0; i < s->n_cols; i++) {
    const hs_pq_node *c = s->cols[i];
    for (int32_t l = c->first_leaf; l < c->leaf_end; l++) s->leaf_used[l] = true;
    if (c->kind == HS_PQ_NODE_FIXED_LIST && c->n_children == 1 &&
        c->children[0]->kind == HS_PQ_NODE_LEAF && c->fixed_size > 0 && c->slot_rep == 0 &&
        c->elem_rep == 1) {
      s->leaf_fixed[c->children[0]->leaf] = c->fixed_size;
    }
  }
  s->batch_rows_max = opts ? opts->batch_rows_max : 0;
  s->parallel_always = parallel_always();
  out->get_schema = stream_get_schema;
  out->get_next = stream_get_next;
  out->get_last_error = stream_get_last_error;
  out->release = stream_release;
  out->private_data = s;
  return HS_OK;
}
