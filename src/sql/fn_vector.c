/*
 * fn_vector.c — pgvector's operators, functions and aggregates over
 * vector, halfvec, sparsevec and bit (table hs_sql_fns_vector and
 * hs_sql_aggs_vector; text forms and casts are in fn_vector_text.c).
 *
 * Values are pgvector's: distances accumulate in float32 (the SIMD
 * kernels of src/index/vector, which may reorder the sum: results agree
 * with pgvector to float rounding) and are returned as double, with the
 * sqrt / quotient / clamp of L2 and cosine in double; norms accumulate in
 * double. <#> is the negative inner product, inner_product() the positive.
 * Cosine distance of a zero vector is NaN; Jaccard distance of two zero
 * bit strings is 1. Element-wise + - * refuse overflow ("value out of
 * range: overflow") and, for *, underflow to zero.
 *
 * A constant argument (HS_SX_CONST, e.g. the query vector of ORDER BY
 * embedding <-> '[...]') is read from the expression's value with stride 0
 * instead of its broadcast copy.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../index/vector/distance.h"
#include "fn_vector.h"
#include "fn_vector_internal.h"
#include "func_tables.h"

/* ------------------------------------------------------------ helpers */

typedef struct dense_arg {
  const float *x;
  size_t stride; /* floats between rows; 0 for a constant */
  int32_t dim;
} dense_arg;

static dense_arg dense_of(const hs_sql_expr *e, const hs_sql_vec *args, int32_t k) {
  dense_arg d = {args[k].data, (size_t)args[k].type.a, args[k].type.a};
  if (e != NULL && k < e->n_args && e->args != NULL && e->args[k] != NULL) {
    const hs_sql_expr *c = e->args[k];
    if (c->kind == HS_SX_CONST && !c->value.is_null && c->value.type.id == args[k].type.id &&
        c->value.type.a == args[k].type.a && c->value.v.vec != NULL) {
      d.x = c->value.v.vec;
      d.stride = 0;
    }
  }
  return d;
}

static int32_t epos(const hs_sql_expr *e) {
  return e != NULL ? e->pos : 0;
}

static const char *vname(hs_sql_tid id) {
  return id == HS_SQL_HALFVEC ? "halfvec" : id == HS_SQL_SPARSEVEC ? "sparsevec" : "vector";
}

static hs_status dims_differ(const hs_sql_expr *e, hs_sql_tid id, int64_t a, int64_t b,
                             hs_error *err) {
  return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, epos(e),
                             "different %s dimensions %lld and %lld", vname(id), (long long)a,
                             (long long)b);
}

/* Allocate *out (n rows of `t`) and set validity from args (strict). */
static hs_status alloc_strict(const hs_sql_vec *args, int32_t n_args, hs_sql_type t, int64_t n,
                              hs_sql_vec *out, hs_error *err) {
  hs_status st = hs_sql_vec_alloc(out, t, n, false, err);
  if (st != HS_OK) return st;
  st = hs_sql_fn_strict_valid(args, n_args, out, err);
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

static inline float ldf(const unsigned char *p, int32_t i) {
  float v;
  memcpy(&v, p + 4 * (size_t)i, 4);
  return v;
}
static inline uint32_t ldu(const unsigned char *p, int32_t i) {
  uint32_t v;
  memcpy(&v, p + 4 * (size_t)i, 4);
  return v;
}

static inline float to_half(float v) {
  return hs_f16_to_f32(hs_f32_to_f16(v));
}

/* ----------------------------------------------------- dense distances */

typedef enum vmetric { VM_L2, VM_NIP, VM_IP, VM_COS, VM_L1 } vmetric;

static double cosine_of(const float parts[3]) {
  double sim = (double)parts[0] / sqrt((double)parts[1] * (double)parts[2]);
  if (sim > 1)
    sim = 1.0;
  else if (sim < -1)
    sim = -1.0;
  return 1.0 - sim;
}

static hs_status dense_dist(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                            hs_sql_vec *out, vmetric m, hs_error *err) {
  dense_arg a = dense_of(e, args, 0), b = dense_of(e, args, 1);
  if (a.dim != b.dim) return dims_differ(e, args[0].type.id, a.dim, b.dim, err);
  hs_status st = alloc_strict(args, n_args, hs_sql_type_of(HS_SQL_FLOAT64), n, out, err);
  if (st != HS_OK) return st;
  double *o = hs_sql_vec_mut_data(out);
  const hs_distance_kernels *K = hs_distance_kernels_active();
  size_t d = (size_t)a.dim;
  switch (m) {
  case VM_L2:
    for (int64_t i = 0; i < n; i++)
      o[i] = sqrt((double)K->l2sq_f32(a.x + (size_t)i * a.stride, b.x + (size_t)i * b.stride, d));
    break;
  case VM_NIP:
    for (int64_t i = 0; i < n; i++)
      o[i] = -(double)K->dot_f32(a.x + (size_t)i * a.stride, b.x + (size_t)i * b.stride, d);
    break;
  case VM_IP:
    for (int64_t i = 0; i < n; i++)
      o[i] = (double)K->dot_f32(a.x + (size_t)i * a.stride, b.x + (size_t)i * b.stride, d);
    break;
  case VM_COS:
    for (int64_t i = 0; i < n; i++) {
      float parts[3];
      K->cosine_parts_f32(a.x + (size_t)i * a.stride, b.x + (size_t)i * b.stride, d, parts);
      o[i] = cosine_of(parts);
    }
    break;
  case VM_L1:
    for (int64_t i = 0; i < n; i++)
      o[i] = (double)K->l1_f32(a.x + (size_t)i * a.stride, b.x + (size_t)i * b.stride, d);
    break;
  }
  return HS_OK;
}

hs_status hs_sql_vector_distances(const char *metric, const float *query, int32_t dim,
                                  const hs_sql_vec *rows, double *out, hs_error *err) {
  vmetric m;
  if (!strcmp(metric, "l2"))
    m = VM_L2;
  else if (!strcmp(metric, "ip"))
    m = VM_NIP;
  else if (!strcmp(metric, "cosine"))
    m = VM_COS;
  else if (!strcmp(metric, "l1"))
    m = VM_L1;
  else
    return hs_error_set(err, HS_ERR_INVALID_ARG, "unknown vector metric \"%s\"", metric);
  if (!hs_sql_type_is_vector(rows->type.id) || rows->type.a != dim)
    return dims_differ(NULL, HS_SQL_VECTOR, rows->type.a, dim, err);
  const hs_distance_kernels *K = hs_distance_kernels_active();
  const float *x = rows->data;
  size_t d = (size_t)dim;
  for (int64_t i = 0; i < rows->n; i++) {
    const float *r = x + (size_t)i * d;
    float parts[3];
    switch (m) {
    case VM_L2: out[i] = sqrt((double)K->l2sq_f32(r, query, d)); break;
    case VM_NIP: out[i] = -(double)K->dot_f32(r, query, d); break;
    case VM_COS:
      K->cosine_parts_f32(r, query, d, parts);
      out[i] = cosine_of(parts);
      break;
    default: out[i] = (double)K->l1_f32(r, query, d); break;
    }
  }
  return HS_OK;
}

#define DENSE_KERNEL(fname, metric)                                                               \
  static hs_status fname(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n, \
                         hs_sql_type ret, hs_sql_vec *out, hs_error *err) {                       \
    (void)ret;                                                                                    \
    return dense_dist(e, args, n_args, n, out, metric, err);                                      \
  }
DENSE_KERNEL(k_l2, VM_L2)
DENSE_KERNEL(k_nip, VM_NIP)
DENSE_KERNEL(k_ip, VM_IP)
DENSE_KERNEL(k_cos, VM_COS)
DENSE_KERNEL(k_l1, VM_L1)

/* ---------------------------------------------------- sparse distances */

/* The sums pgvector's sparse functions take, walking both index lists in
 * order: l2 (squared), dot, l1, and each side's squared norm. */
typedef struct sp_sums {
  float l2sq, dot, l1, na, nb;
} sp_sums;

static void sparse_sums(const hs_sql_sparse_view *a, const hs_sql_sparse_view *b, vmetric m,
                        sp_sums *s) {
  memset(s, 0, sizeof *s);
  int32_t i = 0, j = 0;
  while (i < a->nnz || j < b->nnz) {
    uint32_t ai = i < a->nnz ? ldu(a->indices, i) : UINT32_MAX;
    uint32_t bj = j < b->nnz ? ldu(b->indices, j) : UINT32_MAX;
    float x = 0, y = 0;
    if (ai == bj) {
      x = ldf(a->values, i++);
      y = ldf(b->values, j++);
      s->dot += x * y;
    } else if (ai < bj) {
      x = ldf(a->values, i++);
    } else {
      y = ldf(b->values, j++);
    }
    if (m == VM_L2) {
      float df = x - y;
      s->l2sq += df * df;
    } else if (m == VM_L1) {
      s->l1 += fabsf(x - y);
    } else if (m == VM_COS) {
      s->na += x * x;
      s->nb += y * y;
    }
  }
}

static hs_status sparse_dist(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args,
                             int64_t n, hs_sql_vec *out, vmetric m, hs_error *err) {
  hs_status st = alloc_strict(args, n_args, hs_sql_type_of(HS_SQL_FLOAT64), n, out, err);
  if (st != HS_OK) return st;
  double *o = hs_sql_vec_mut_data(out);
  const hs_sql_str *sa = args[0].data, *sb = args[1].data;
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(out, i)) continue;
    hs_sql_sparse_view a, b;
    if (!hs_sql_sparse_view_of(sa[i], &a) || !hs_sql_sparse_view_of(sb[i], &b)) {
      hs_sql_vec_release(out);
      return hs_error_set(err, HS_ERR_CORRUPT, "malformed sparsevec value");
    }
    if (a.dim != b.dim) {
      hs_sql_vec_release(out);
      return dims_differ(e, HS_SQL_SPARSEVEC, a.dim, b.dim, err);
    }
    sp_sums s;
    sparse_sums(&a, &b, m, &s);
    switch (m) {
    case VM_L2: o[i] = sqrt((double)s.l2sq); break;
    case VM_NIP: o[i] = -(double)s.dot; break;
    case VM_IP: o[i] = (double)s.dot; break;
    case VM_COS: {
      float parts[3] = {s.dot, s.na, s.nb};
      o[i] = cosine_of(parts);
      break;
    }
    case VM_L1: o[i] = (double)s.l1; break;
    }
  }
  return HS_OK;
}

#define SPARSE_KERNEL(fname, metric)                                                              \
  static hs_status fname(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n, \
                         hs_sql_type ret, hs_sql_vec *out, hs_error *err) {                       \
    (void)ret;                                                                                    \
    return sparse_dist(e, args, n_args, n, out, metric, err);                                     \
  }
SPARSE_KERNEL(k_sp_l2, VM_L2)
SPARSE_KERNEL(k_sp_nip, VM_NIP)
SPARSE_KERNEL(k_sp_ip, VM_IP)
SPARSE_KERNEL(k_sp_cos, VM_COS)
SPARSE_KERNEL(k_sp_l1, VM_L1)

/* ------------------------------------------------------- bit distances */

static inline uint64_t ld64(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static hs_status bit_dist(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                          hs_sql_vec *out, bool jaccard, hs_error *err) {
  hs_status st = alloc_strict(args, n_args, hs_sql_type_of(HS_SQL_FLOAT64), n, out, err);
  if (st != HS_OK) return st;
  double *o = hs_sql_vec_mut_data(out);
  const hs_sql_str *sa = args[0].data, *sb = args[1].data;
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(out, i)) continue;
    int64_t la = hs_sql_bit_len(sa[i]), lb = hs_sql_bit_len(sb[i]);
    if (la < 0 || lb < 0) {
      hs_sql_vec_release(out);
      return hs_error_set(err, HS_ERR_CORRUPT, "malformed bit value");
    }
    if (la != lb) {
      hs_sql_vec_release(out);
      return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, epos(e),
                                 "different bit lengths %lld and %lld", (long long)la,
                                 (long long)lb);
    }
    const char *pa = sa[i].ptr + 4, *pb = sb[i].ptr + 4;
    size_t len = sa[i].len - 4, k = 0;
    uint64_t x = 0, ab = 0, aa = 0, bb = 0;
    for (; k + 8 <= len; k += 8) {
      uint64_t u = ld64(pa + k), w = ld64(pb + k);
      x += (uint64_t)__builtin_popcountll(u ^ w);
      ab += (uint64_t)__builtin_popcountll(u & w);
      aa += (uint64_t)__builtin_popcountll(u);
      bb += (uint64_t)__builtin_popcountll(w);
    }
    for (; k < len; k++) {
      unsigned u = (unsigned char)pa[k], w = (unsigned char)pb[k];
      x += (uint64_t)__builtin_popcount(u ^ w);
      ab += (uint64_t)__builtin_popcount(u & w);
      aa += (uint64_t)__builtin_popcount(u);
      bb += (uint64_t)__builtin_popcount(w);
    }
    if (!jaccard)
      o[i] = (double)x;
    else
      o[i] = ab == 0 ? 1.0 : 1.0 - (double)ab / (double)(aa + bb - ab);
  }
  return HS_OK;
}

static hs_status k_hamming(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                           hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  (void)ret;
  return bit_dist(e, args, n_args, n, out, false, err);
}
static hs_status k_jaccard(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                           hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  (void)ret;
  return bit_dist(e, args, n_args, n, out, true, err);
}

/* ------------------------------------------------- element-wise math */

typedef enum vop { VO_ADD, VO_SUB, VO_MUL } vop;

static hs_status dense_arith(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args,
                             int64_t n, hs_sql_vec *out, vop op, hs_error *err) {
  dense_arg a = dense_of(e, args, 0), b = dense_of(e, args, 1);
  hs_sql_tid id = args[0].type.id;
  if (a.dim != b.dim) return dims_differ(e, id, a.dim, b.dim, err);
  hs_sql_type t = args[0].type;
  hs_status st = alloc_strict(args, n_args, t, n, out, err);
  if (st != HS_OK) return st;
  float *o = hs_sql_vec_mut_data(out);
  size_t d = (size_t)a.dim;
  for (int64_t i = 0; i < n; i++) {
    const float *x = a.x + (size_t)i * a.stride, *y = b.x + (size_t)i * b.stride;
    float *r = o + (size_t)i * d;
    switch (op) {
    case VO_ADD:
      for (size_t k = 0; k < d; k++) r[k] = x[k] + y[k];
      break;
    case VO_SUB:
      for (size_t k = 0; k < d; k++) r[k] = x[k] - y[k];
      break;
    case VO_MUL:
      for (size_t k = 0; k < d; k++) r[k] = x[k] * y[k];
      break;
    }
    if (id == HS_SQL_HALFVEC)
      for (size_t k = 0; k < d; k++) r[k] = to_half(r[k]);
    if (!hs_sql_vec_valid(out, i)) {
      memset(r, 0, d * sizeof(float));
      continue;
    }
    for (size_t k = 0; k < d; k++) {
      if (isinf(r[k])) {
        hs_sql_vec_release(out);
        return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, epos(e),
                                   "value out of range: overflow");
      }
      if (op == VO_MUL && r[k] == 0 && x[k] != 0 && y[k] != 0) {
        hs_sql_vec_release(out);
        return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, epos(e),
                                   "value out of range: underflow");
      }
    }
  }
  return HS_OK;
}

#define ARITH_KERNEL(fname, op)                                                                   \
  static hs_status fname(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n, \
                         hs_sql_type ret, hs_sql_vec *out, hs_error *err) {                       \
    (void)ret;                                                                                    \
    return dense_arith(e, args, n_args, n, out, op, err);                                         \
  }
ARITH_KERNEL(k_add, VO_ADD)
ARITH_KERNEL(k_sub, VO_SUB)
ARITH_KERNEL(k_mul, VO_MUL)

static hs_status k_concat(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                          hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  (void)ret;
  dense_arg a = dense_of(e, args, 0), b = dense_of(e, args, 1);
  int64_t dim = (int64_t)a.dim + b.dim;
  hs_status st = hs_sql_vector_check_dim(dim, args[0].type.id, epos(e), err);
  if (st != HS_OK) return st;
  hs_sql_type t = args[0].type;
  t.a = (int32_t)dim;
  st = alloc_strict(args, n_args, t, n, out, err);
  if (st != HS_OK) return st;
  float *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    float *r = o + (size_t)i * (size_t)dim;
    memcpy(r, a.x + (size_t)i * a.stride, (size_t)a.dim * sizeof(float));
    memcpy(r + a.dim, b.x + (size_t)i * b.stride, (size_t)b.dim * sizeof(float));
  }
  return HS_OK;
}

/* --------------------------------------------------- unary functions */

static hs_status k_dims(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                        hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  (void)e;
  (void)ret;
  hs_status st = alloc_strict(args, n_args, hs_sql_type_of(HS_SQL_INT32), n, out, err);
  if (st != HS_OK) return st;
  int32_t *o = hs_sql_vec_mut_data(out);
  if (args[0].type.id == HS_SQL_SPARSEVEC) {
    const hs_sql_str *s = args[0].data;
    for (int64_t i = 0; i < n; i++) {
      hs_sql_sparse_view v;
      o[i] = hs_sql_vec_valid(out, i) && hs_sql_sparse_view_of(s[i], &v) ? v.dim : 0;
    }
  } else {
    for (int64_t i = 0; i < n; i++) o[i] = args[0].type.a;
  }
  return HS_OK;
}

static hs_status k_norm(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                        hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  (void)e;
  (void)ret;
  hs_status st = alloc_strict(args, n_args, hs_sql_type_of(HS_SQL_FLOAT64), n, out, err);
  if (st != HS_OK) return st;
  double *o = hs_sql_vec_mut_data(out);
  if (args[0].type.id == HS_SQL_SPARSEVEC) {
    const hs_sql_str *s = args[0].data;
    for (int64_t i = 0; i < n; i++) {
      hs_sql_sparse_view v;
      double sum = 0;
      if (hs_sql_vec_valid(out, i) && hs_sql_sparse_view_of(s[i], &v))
        for (int32_t k = 0; k < v.nnz; k++) {
          double x = ldf(v.values, k);
          sum += x * x;
        }
      o[i] = sqrt(sum);
    }
    return HS_OK;
  }
  const float *x = args[0].data;
  size_t d = (size_t)args[0].type.a;
  for (int64_t i = 0; i < n; i++) {
    double sum = 0;
    const float *r = x + (size_t)i * d;
    for (size_t k = 0; k < d; k++) sum += (double)r[k] * (double)r[k];
    o[i] = sqrt(sum);
  }
  return HS_OK;
}

static hs_status k_normalize(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args,
                             int64_t n, hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  (void)ret;
  hs_sql_tid id = args[0].type.id;
  hs_status st = alloc_strict(args, n_args, args[0].type, n, out, err);
  if (st != HS_OK) return st;
  if (id == HS_SQL_SPARSEVEC) {
    const hs_sql_str *s = args[0].data;
    size_t bytes = 0;
    for (int64_t i = 0; i < n; i++) bytes += s[i].len;
    unsigned char *b = (unsigned char *)hs_sql_vec_add_bytes(out, bytes ? bytes : 1, err);
    if (b == NULL) {
      hs_sql_vec_release(out);
      return err->status;
    }
    hs_sql_str *o = hs_sql_vec_mut_data(out);
    for (int64_t i = 0; i < n; i++) {
      hs_sql_sparse_view v;
      if (!hs_sql_vec_valid(out, i) || !hs_sql_sparse_view_of(s[i], &v)) {
        o[i].ptr = (const char *)b;
        o[i].len = 0;
        continue;
      }
      double sum = 0;
      for (int32_t k = 0; k < v.nnz; k++) {
        double x = ldf(v.values, k);
        sum += x * x;
      }
      double norm = sqrt(sum);
      /* zeros after the division (underflow) are dropped, as pgvector does */
      int32_t nnz = 0;
      for (int32_t k = 0; k < v.nnz; k++) nnz += (float)(ldf(v.values, k) / norm) != 0;
      if (norm <= 0) nnz = v.nnz;
      int32_t hdr[2] = {v.dim, nnz};
      memcpy(b, hdr, 8);
      unsigned char *ix = b + 8, *vx = b + 8 + 4 * (size_t)nnz;
      for (int32_t k = 0; k < v.nnz; k++) {
        float x = norm > 0 ? (float)(ldf(v.values, k) / norm) : ldf(v.values, k);
        if (x == 0) continue;
        uint32_t u = ldu(v.indices, k);
        memcpy(ix, &u, 4);
        memcpy(vx, &x, 4);
        ix += 4;
        vx += 4;
      }
      o[i].ptr = (const char *)b;
      o[i].len = (uint32_t)(8 + 8 * (size_t)nnz);
      b += o[i].len;
    }
    return HS_OK;
  }
  const float *x = args[0].data;
  float *o = hs_sql_vec_mut_data(out);
  size_t d = (size_t)args[0].type.a;
  for (int64_t i = 0; i < n; i++) {
    const float *r = x + (size_t)i * d;
    float *w = o + (size_t)i * d;
    double sum = 0;
    for (size_t k = 0; k < d; k++) sum += (double)r[k] * (double)r[k];
    double norm = sqrt(sum);
    if (!(norm > 0)) continue; /* pgvector: a zero vector stays zero */
    for (size_t k = 0; k < d; k++) w[k] = (float)(r[k] / norm);
    if (id == HS_SQL_HALFVEC)
      for (size_t k = 0; k < d; k++) w[k] = to_half(w[k]);
  }
  return HS_OK;
}

static hs_status k_binary_quantize(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args,
                                   int64_t n, hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  (void)e;
  (void)ret;
  size_t d = (size_t)args[0].type.a, nb = 4 + (d + 7) / 8;
  int32_t nbits = (int32_t)d;
  hs_sql_type t = hs_sql_type_of(HS_SQL_BIT);
  t.a = (int32_t)d;
  hs_status st = alloc_strict(args, n_args, t, n, out, err);
  if (st != HS_OK) return st;
  unsigned char *b = (unsigned char *)hs_sql_vec_add_bytes(out, nb * (size_t)n + 1, err);
  if (b == NULL) {
    hs_sql_vec_release(out);
    return err->status;
  }
  memset(b, 0, nb * (size_t)n + 1);
  const float *x = args[0].data;
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    const float *r = x + (size_t)i * d;
    unsigned char *w = b + (size_t)i * nb;
    memcpy(w, &nbits, 4);
    for (size_t k = 0; k < d; k++)
      if (r[k] > 0) w[4 + k / 8] |= (unsigned char)(0x80u >> (k % 8));
    o[i].ptr = (const char *)w;
    o[i].len = (uint32_t)nb;
  }
  return HS_OK;
}

/* subvector(v, start, count): 1-based, clipped like substring. Every valid
 * row must give the same dimension (a column has one). */
static hs_status k_subvector(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args,
                             int64_t n, hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  (void)ret;
  int64_t dim = args[0].type.a;
  const int32_t *sv = args[1].data, *cv = args[2].data;
  int64_t out_dim = -1, first = 0;
  hs_sql_vec tmp = {0};
  hs_status st = hs_sql_vec_alloc(&tmp, hs_sql_type_of(HS_SQL_BOOL), n, false, err);
  if (st != HS_OK) return st;
  st = hs_sql_fn_strict_valid(args, n_args, &tmp, err);
  if (st != HS_OK) {
    hs_sql_vec_release(&tmp);
    return st;
  }
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(&tmp, i)) continue;
    int64_t start = sv[i], count = cv[i];
    if (count < 1) {
      hs_sql_vec_release(&tmp);
      return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, epos(e),
                                 "%s must have at least 1 dimension", vname(args[0].type.id));
    }
    int64_t end = start + count > dim + 1 ? dim + 1 : start + count;
    if (start < 1) start = 1;
    int64_t d = end - start;
    if (d < 1) {
      hs_sql_vec_release(&tmp);
      return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, epos(e),
                                 "%s must have at least 1 dimension", vname(args[0].type.id));
    }
    if (out_dim < 0) {
      out_dim = d;
      first = i;
    } else if (d != out_dim) {
      hs_sql_vec_release(&tmp);
      return hs_sql_vector_error(
          err, HS_ERR_INVALID_ARG, epos(e),
          "subvector: rows %lld and %lld give different dimensions (%lld and "
          "%lld); a column has one",
          (long long)first + 1, (long long)i + 1, (long long)out_dim, (long long)d);
    }
  }
  if (out_dim < 0) out_dim = 1;
  hs_sql_type t = args[0].type;
  t.a = (int32_t)out_dim;
  st = hs_sql_vec_alloc(out, t, n, tmp.valid != NULL, err);
  if (st == HS_OK && tmp.valid != NULL) memcpy(hs_sql_vec_mut_valid(out), tmp.valid, (size_t)n);
  if (st != HS_OK) {
    hs_sql_vec_release(&tmp);
    return st;
  }
  const float *x = args[0].data;
  float *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(&tmp, i)) continue;
    int64_t start = sv[i] < 1 ? 1 : sv[i];
    memcpy(o + (size_t)i * (size_t)out_dim, x + (size_t)i * (size_t)dim + (size_t)(start - 1),
           (size_t)out_dim * sizeof(float));
  }
  hs_sql_vec_release(&tmp);
  return HS_OK;
}

/* -------------------------------------------------------- comparisons */

/* pgvector's order: element by element, then by dimension. */
static int dense_cmp(const float *a, int32_t da, const float *b, int32_t db) {
  int32_t d = da < db ? da : db;
  for (int32_t k = 0; k < d; k++) {
    if (a[k] < b[k]) return -1;
    if (a[k] > b[k]) return 1;
  }
  return da < db ? -1 : da > db;
}

typedef enum vcmp { VC_EQ, VC_NE, VC_LT, VC_LE, VC_GT, VC_GE } vcmp;

static hs_status cmp_kernel(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                            hs_sql_vec *out, vcmp c, hs_error *err) {
  hs_status st = alloc_strict(args, n_args, hs_sql_type_of(HS_SQL_BOOL), n, out, err);
  if (st != HS_OK) return st;
  uint8_t *o = hs_sql_vec_mut_data(out);
  bool dense = hs_sql_type_is_vector(args[0].type.id);
  bool bits = args[0].type.id == HS_SQL_BIT;
  dense_arg a = {0}, b = {0};
  if (dense) {
    a = dense_of(e, args, 0);
    b = dense_of(e, args, 1);
  }
  const hs_sql_str *sa = args[0].data, *sb = args[1].data;
  for (int64_t i = 0; i < n; i++) {
    int r;
    if (dense) {
      r = dense_cmp(a.x + (size_t)i * a.stride, a.dim, b.x + (size_t)i * b.stride, b.dim);
    } else if (bits) {
      /* PostgreSQL's bit order: the common bytes, then the bit length */
      int64_t la = hs_sql_bit_len(sa[i]), lb = hs_sql_bit_len(sb[i]);
      uint32_t m = sa[i].len < sb[i].len ? sa[i].len : sb[i].len;
      r = m > 4 ? memcmp(sa[i].ptr + 4, sb[i].ptr + 4, m - 4) : 0;
      if (r == 0) r = la < lb ? -1 : la > lb;
    } else {
      uint32_t m = sa[i].len < sb[i].len ? sa[i].len : sb[i].len;
      r = m ? memcmp(sa[i].ptr, sb[i].ptr, m) : 0;
      if (r == 0) r = sa[i].len < sb[i].len ? -1 : sa[i].len > sb[i].len;
    }
    bool v = false;
    switch (c) {
    case VC_EQ: v = r == 0; break;
    case VC_NE: v = r != 0; break;
    case VC_LT: v = r < 0; break;
    case VC_LE: v = r <= 0; break;
    case VC_GT: v = r > 0; break;
    case VC_GE: v = r >= 0; break;
    }
    o[i] = v;
  }
  return HS_OK;
}

#define CMP_KERNEL(fname, c)                                                                      \
  static hs_status fname(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n, \
                         hs_sql_type ret, hs_sql_vec *out, hs_error *err) {                       \
    (void)ret;                                                                                    \
    return cmp_kernel(e, args, n_args, n, out, c, err);                                           \
  }
CMP_KERNEL(k_eq, VC_EQ)
CMP_KERNEL(k_ne, VC_NE)
CMP_KERNEL(k_lt, VC_LT)
CMP_KERNEL(k_le, VC_LE)
CMP_KERNEL(k_gt, VC_GT)
CMP_KERNEL(k_ge, VC_GE)

/* -------------------------------------------------------- return types */

static bool rt_dist(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  (void)n;
  if (a[0].id != HS_SQL_BIT && a[0].a > 0 && a[1].a > 0 && a[0].a != a[1].a) {
    snprintf(why, wl, "different %s dimensions %d and %d", vname(a[0].id), (int)a[0].a,
             (int)a[1].a);
    return false;
  }
  if (a[0].id == HS_SQL_BIT && a[0].a > 0 && a[1].a > 0 && a[0].a != a[1].a) {
    snprintf(why, wl, "different bit lengths %d and %d", (int)a[0].a, (int)a[1].a);
    return false;
  }
  *ret = hs_sql_type_of(HS_SQL_FLOAT64);
  return true;
}

static bool rt_same(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  if (n == 2 && a[0].a > 0 && a[1].a > 0 && a[0].a != a[1].a) {
    snprintf(why, wl, "different %s dimensions %d and %d", vname(a[0].id), (int)a[0].a,
             (int)a[1].a);
    return false;
  }
  *ret = a[0];
  if (n == 2 && ret->a == 0) ret->a = a[1].a;
  return true;
}

static bool rt_cmp(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  (void)a;
  (void)n;
  (void)why;
  (void)wl;
  *ret = hs_sql_type_of(HS_SQL_BOOL);
  return true;
}

static bool rt_concat(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  (void)n;
  *ret = a[0];
  ret->a = a[0].a > 0 && a[1].a > 0 ? a[0].a + a[1].a : 0;
  if (ret->a > HS_SQL_VECTOR_MAX_DIM) {
    snprintf(why, wl, "%s cannot have more than %d dimensions", vname(a[0].id),
             HS_SQL_VECTOR_MAX_DIM);
    return false;
  }
  return true;
}

static bool rt_bq(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  (void)n;
  (void)why;
  (void)wl;
  *ret = hs_sql_type_of(HS_SQL_BIT);
  ret->a = a[0].a;
  return true;
}

static bool rt_sub(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  (void)n;
  (void)why;
  (void)wl;
  *ret = hs_sql_type_of(a[0].id); /* dimension known at run time */
  return true;
}

/* ---------------------------------------------------------------- table */

#define V HS_SQL_VECTOR
#define H HS_SQL_HALFVEC
#define S HS_SQL_SPARSEVEC
#define B HS_SQL_BIT
#define F8 HS_SQL_FLOAT64
#define I4 HS_SQL_INT32

#define DIST_ROWS(T, l2, nip, cos, l1, ip)                                                     \
  {"<->", 2, {T, T}, F8, rt_dist, l2, false}, {"<#>", 2, {T, T}, F8, rt_dist, nip, false},     \
      {"<=>", 2, {T, T}, F8, rt_dist, cos, false}, {"<+>", 2, {T, T}, F8, rt_dist, l1, false}, \
      {"l2_distance", 2, {T, T}, F8, rt_dist, l2, false},                                      \
      {"inner_product", 2, {T, T}, F8, rt_dist, ip, false},                                    \
      {"cosine_distance", 2, {T, T}, F8, rt_dist, cos, false}, {                               \
    "l1_distance", 2, {T, T}, F8, rt_dist, l1, false                                           \
  }

#define CMP_ROWS(T)                                         \
  {"=", 2, {T, T}, HS_SQL_BOOL, rt_cmp, k_eq, false},       \
      {"<>", 2, {T, T}, HS_SQL_BOOL, rt_cmp, k_ne, false},  \
      {"<", 2, {T, T}, HS_SQL_BOOL, rt_cmp, k_lt, false},   \
      {"<=", 2, {T, T}, HS_SQL_BOOL, rt_cmp, k_le, false},  \
      {">", 2, {T, T}, HS_SQL_BOOL, rt_cmp, k_gt, false}, { \
    ">=", 2, {T, T}, HS_SQL_BOOL, rt_cmp, k_ge, false       \
  }

const hs_sql_fn hs_sql_fns_vector[] = {
    DIST_ROWS(V, k_l2, k_nip, k_cos, k_l1, k_ip),
    DIST_ROWS(H, k_l2, k_nip, k_cos, k_l1, k_ip),
    DIST_ROWS(S, k_sp_l2, k_sp_nip, k_sp_cos, k_sp_l1, k_sp_ip),
    {"<~>", 2, {B, B}, F8, rt_dist, k_hamming, false},
    {"<%>", 2, {B, B}, F8, rt_dist, k_jaccard, false},
    {"hamming_distance", 2, {B, B}, F8, rt_dist, k_hamming, false},
    {"jaccard_distance", 2, {B, B}, F8, rt_dist, k_jaccard, false},
    {"+", 2, {V, V}, V, rt_same, k_add, false},
    {"-", 2, {V, V}, V, rt_same, k_sub, false},
    {"*", 2, {V, V}, V, rt_same, k_mul, false},
    {"||", 2, {V, V}, V, rt_concat, k_concat, false},
    {"+", 2, {H, H}, H, rt_same, k_add, false},
    {"-", 2, {H, H}, H, rt_same, k_sub, false},
    {"*", 2, {H, H}, H, rt_same, k_mul, false},
    {"||", 2, {H, H}, H, rt_concat, k_concat, false},
    {"vector_dims", 1, {V}, I4, NULL, k_dims, false},
    {"vector_dims", 1, {H}, I4, NULL, k_dims, false},
    {"vector_norm", 1, {V}, F8, NULL, k_norm, false},
    {"l2_norm", 1, {H}, F8, NULL, k_norm, false},
    {"l2_norm", 1, {S}, F8, NULL, k_norm, false},
    {"l2_normalize", 1, {V}, V, rt_same, k_normalize, false},
    {"l2_normalize", 1, {H}, H, rt_same, k_normalize, false},
    {"l2_normalize", 1, {S}, S, rt_same, k_normalize, false},
    {"binary_quantize", 1, {V}, B, rt_bq, k_binary_quantize, false},
    {"binary_quantize", 1, {H}, B, rt_bq, k_binary_quantize, false},
    {"subvector", 3, {V, I4, I4}, V, rt_sub, k_subvector, false},
    {"subvector", 3, {H, I4, I4}, H, rt_sub, k_subvector, false},
    CMP_ROWS(V),
    CMP_ROWS(H),
    CMP_ROWS(B),
    {"=", 2, {S, S}, HS_SQL_BOOL, rt_cmp, k_eq, false},
    {"<>", 2, {S, S}, HS_SQL_BOOL, rt_cmp, k_ne, false},
};
const size_t hs_sql_fns_vector_n = sizeof(hs_sql_fns_vector) / sizeof(hs_sql_fns_vector[0]);

/* ------------------------------------------------------------ aggregates */

/* avg sums in double (pgvector's vector_accum), sum in float with an
 * overflow check after every add (pgvector's sum is vector_add). */
typedef struct vagg_state {
  int64_t n;
  int32_t dim;
  int32_t pad_;
  void *sum; /* double[dim] (avg) or float[dim] (sum), in the arena */
} vagg_state;

static void vagg_init(void *state, hs_sql_type arg, hs_sql_type ret) {
  (void)ret;
  vagg_state *s = state;
  memset(s, 0, sizeof *s);
  s->dim = arg.a;
}

static bool rt_vagg(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  (void)n;
  (void)why;
  (void)wl;
  *ret = a[0];
  return true;
}

static hs_status overflow(hs_error *err) {
  return hs_error_set(err, HS_ERR_INVALID_ARG, "value out of range: overflow");
}

static hs_status vagg_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                             const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  bool avg = a->name[0] == 'a';
  bool half = args[0].type.id == HS_SQL_HALFVEC;
  size_t d = (size_t)args[0].type.a;
  const float *x = args[0].data;
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(&args[0], i)) continue;
    vagg_state *s = (vagg_state *)((char *)states + (size_t)group[i] * a->state_size);
    const float *r = x + (size_t)i * d;
    if (s->sum == NULL) {
      s->dim = (int32_t)d;
      s->sum = hs_arena_alloc(arena, d * (avg ? sizeof(double) : sizeof(float)));
      if (s->sum == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "out of memory in %s(vector)", a->name);
    } else if ((size_t)s->dim != d) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "expected %d dimensions, not %d", (int)s->dim,
                          (int)d);
    }
    s->n++;
    if (avg) {
      double *sum = s->sum;
      for (size_t k = 0; k < d; k++) sum[k] += r[k];
      for (size_t k = 0; k < d; k++)
        if (isinf(sum[k])) return overflow(err);
    } else {
      float *sum = s->sum;
      for (size_t k = 0; k < d; k++) sum[k] += r[k];
      if (half)
        for (size_t k = 0; k < d; k++) sum[k] = to_half(sum[k]);
      for (size_t k = 0; k < d; k++)
        if (isinf(sum[k])) return overflow(err);
    }
  }
  return HS_OK;
}

static hs_status vagg_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                            hs_error *err) {
  bool avg = a->name[0] == 'a';
  vagg_state *d = dst;
  const vagg_state *s = src;
  if (s->n == 0 || s->sum == NULL) return HS_OK;
  size_t w = avg ? sizeof(double) : sizeof(float);
  if (d->sum == NULL) {
    d->sum = hs_arena_memdup(arena, s->sum, (size_t)s->dim * w);
    if (d->sum == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory in %s(vector)", a->name);
    d->dim = s->dim;
    d->n = s->n;
    return HS_OK;
  }
  if (d->dim != s->dim)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "expected %d dimensions, not %d", (int)d->dim,
                        (int)s->dim);
  d->n += s->n;
  for (int32_t k = 0; k < d->dim; k++) {
    bool inf;
    if (avg) {
      ((double *)d->sum)[k] += ((const double *)s->sum)[k];
      inf = isinf(((double *)d->sum)[k]);
    } else {
      ((float *)d->sum)[k] += ((const float *)s->sum)[k];
      inf = isinf(((float *)d->sum)[k]);
    }
    if (inf) return overflow(err);
  }
  return HS_OK;
}

static hs_status vagg_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,
                            hs_sql_vec *out, int64_t row, hs_error *err) {
  (void)ret;
  bool avg = a->name[0] == 'a';
  const vagg_state *s = state;
  uint8_t *valid = hs_sql_vec_mut_valid(out);
  if (s->n == 0 || s->sum == NULL) {
    if (valid == NULL) {
      hs_status st = hs_sql_vec_make_nullable(out, err);
      if (st != HS_OK) return st;
      valid = hs_sql_vec_mut_valid(out);
    }
    valid[row] = 0;
    return HS_OK;
  }
  if (out->type.a != s->dim)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s(vector): result column has %d dimensions, the rows %d", a->name,
                        (int)out->type.a, (int)s->dim);
  float *o = (float *)hs_sql_vec_mut_data(out) + (size_t)row * (size_t)s->dim;
  bool half = out->type.id == HS_SQL_HALFVEC;
  for (int32_t k = 0; k < s->dim; k++) {
    float v =
        avg ? (float)(((const double *)s->sum)[k] / (double)s->n) : ((const float *)s->sum)[k];
    if (half) v = to_half(v);
    if (isinf(v) || isnan(v)) return overflow(err);
    o[k] = v;
  }
  if (valid != NULL) valid[row] = 1;
  return HS_OK;
}

const hs_sql_agg hs_sql_aggs_vector[] = {
    {"avg", 1, V, rt_vagg, sizeof(vagg_state), vagg_init, vagg_update, vagg_merge, vagg_final},
    {"sum", 1, V, rt_vagg, sizeof(vagg_state), vagg_init, vagg_update, vagg_merge, vagg_final},
    {"avg", 1, H, rt_vagg, sizeof(vagg_state), vagg_init, vagg_update, vagg_merge, vagg_final},
    {"sum", 1, H, rt_vagg, sizeof(vagg_state), vagg_init, vagg_update, vagg_merge, vagg_final},
};
const size_t hs_sql_aggs_vector_n = sizeof(hs_sql_aggs_vector) / sizeof(hs_sql_aggs_vector[0]);
