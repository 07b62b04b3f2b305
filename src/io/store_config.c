/*
 * store_config.c — the options of an S3 location: the registry behind
 * hs_store_configure, and their resolution (hs_store_config_resolve) over
 * the AWS environment variables and the shared ~/.aws files.
 *
 * Precedence, field by field: the options of the longest registered prefix
 * of the URI, then the environment, then the files, then the defaults
 * (region us-east-1, request timeout 30 s, connect timeout 5 s, 5 retries,
 * plain HTTP allowed only for an http:// endpoint, virtual-hosted
 * addressing only on AWS's own endpoints). Credentials are one unit, as in
 * the AWS SDKs: a key id from one place is never paired with a secret or a
 * session token from another. A registered `profile` names the profile the
 * files are read from and makes its credentials win over the environment's
 * (asking for a profile means those credentials); otherwise AWS_PROFILE or
 * "default".
 *
 * A prefix matches a URI that starts with it at a path boundary: the prefix
 * ends with '/', or the URI continues with '/' or ends there ("s3://b"
 * covers "s3://b/k" but not "s3://b2/k").
 *
 * The files are read (at most 1 MiB each) only when the registry and the
 * environment leave something to find there, and their parse is reused
 * while a file's stamp (fs.h) stays the same: resolution runs for every S3
 * call and then costs a stat. Option values are never echoed in messages
 * (some are secrets).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fs.h"
#include "store_internal.h"

enum {
  F_ACCESS,
  F_SECRET,
  F_TOKEN,
  F_REGION,
  F_ENDPOINT,
  F_ALLOW_HTTP,
  F_VIRTUAL,
  F_PROFILE,
  F_REQUEST_TIMEOUT,
  F_CONNECT_TIMEOUT,
  F_RETRIES,
};
#define BIT(f) (1u << (f))
#define CREDENTIAL_BITS (BIT(F_ACCESS) | BIT(F_SECRET) | BIT(F_TOKEN))

typedef struct option_key {
  const char *key;
  int field;
  bool inverse; /* s3.path-style-access is the opposite of virtual hosting */
} option_key;

/* The spellings store.h lists (LanceDB's / object_store's and pyiceberg's). */
static const option_key k_keys[] = {
    {"aws_access_key_id", F_ACCESS, false},
    {"s3.access-key-id", F_ACCESS, false},
    {"aws_secret_access_key", F_SECRET, false},
    {"s3.secret-access-key", F_SECRET, false},
    {"aws_session_token", F_TOKEN, false},
    {"s3.session-token", F_TOKEN, false},
    {"region", F_REGION, false},
    {"aws_region", F_REGION, false},
    {"s3.region", F_REGION, false},
    {"endpoint", F_ENDPOINT, false},
    {"aws_endpoint", F_ENDPOINT, false},
    {"s3.endpoint", F_ENDPOINT, false},
    {"allow_http", F_ALLOW_HTTP, false},
    {"virtual_hosted_style_request", F_VIRTUAL, false},
    {"s3.path-style-access", F_VIRTUAL, true},
    {"profile", F_PROFILE, false},
    {"request_timeout_ms", F_REQUEST_TIMEOUT, false},
    {"connect_timeout_ms", F_CONNECT_TIMEOUT, false},
    {"max_retries", F_RETRIES, false},
};

#define PREFIXES_MAX 1024     /* registered prefixes (a process configures a few) */
#define PREFIX_BYTES_MAX 2048 /* one prefix's length */
#define AWS_FILE_BYTES_MAX ((size_t)1 << 20)
#define TIMEOUT_MS_MAX 86400000L /* a day */
#define RETRIES_MAX 100

typedef struct prefix_options {
  char *prefix;
  hs_store_config cfg; /* only the fields in `set` mean anything */
  unsigned set;
} prefix_options;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static prefix_options *g_opts; /* g_n used of g_cap */
static size_t g_n, g_cap;

/* --------------------------------------------------------- parsing */

static hs_status set_string(char *dst, size_t cap, const char *value, const char *what,
                            const char *prefix, hs_error *err) {
  size_t n = strlen(value);
  if (n >= cap) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: %s is too long (%zu bytes, at most %zu)",
                        prefix, what, n, cap - 1);
  }
  memcpy(dst, value, n + 1);
  return HS_OK;
}

static bool parse_bool(const char *v, bool *out) {
  static const char *const yes[] = {"true", "1", "yes", "on"};
  static const char *const no[] = {"false", "0", "no", "off"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(v, yes[i]) == 0) return *out = true, true;
    if (strcasecmp(v, no[i]) == 0) return *out = false, true;
  }
  return false;
}

static bool parse_long(const char *v, long lo, long hi, long *out) {
  if (*v == '\0') return false;
  char *end = NULL;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < lo || x > hi) return false;
  *out = x;
  return true;
}

static hs_status set_option(prefix_options *p, const char *prefix, const hs_store_option *o,
                            hs_error *err) {
  const option_key *k = NULL;
  for (size_t i = 0; o->key != NULL && i < sizeof k_keys / sizeof *k_keys; i++) {
    if (strcmp(o->key, k_keys[i].key) == 0) k = &k_keys[i];
  }
  if (k == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: unknown storage option '%s' (known: aws_access_key_id, "
                        "aws_secret_access_key, aws_session_token, region, endpoint, allow_http, "
                        "virtual_hosted_style_request, profile, request_timeout_ms, "
                        "connect_timeout_ms, max_retries, and pyiceberg's s3.* spellings)",
                        prefix, o->key ? o->key : "(null)");
  }
  if (o->value == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: storage option '%s' has no value", prefix,
                        k->key);
  }
  hs_store_config *c = &p->cfg;
  bool b = false;
  long x = 0;
  hs_status st = HS_OK;
  switch (k->field) {
  case F_ACCESS:
    st = set_string(c->access_key, sizeof c->access_key, o->value, k->key, prefix, err);
    break;
  case F_SECRET:
    st = set_string(c->secret_key, sizeof c->secret_key, o->value, k->key, prefix, err);
    break;
  case F_TOKEN:
    st = set_string(c->session_token, sizeof c->session_token, o->value, k->key, prefix, err);
    break;
  case F_REGION: st = set_string(c->region, sizeof c->region, o->value, k->key, prefix, err); break;
  case F_ENDPOINT:
    st = set_string(c->endpoint, sizeof c->endpoint, o->value, k->key, prefix, err);
    break;
  case F_PROFILE:
    st = set_string(c->profile, sizeof c->profile, o->value, k->key, prefix, err);
    break;
  case F_ALLOW_HTTP:
  case F_VIRTUAL:
    if (!parse_bool(o->value, &b)) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: storage option '%s' must be true or false",
                          prefix, k->key);
    }
    if (k->field == F_ALLOW_HTTP) c->allow_http = b;
    if (k->field == F_VIRTUAL) c->virtual_hosted = k->inverse ? !b : b;
    break;
  case F_REQUEST_TIMEOUT:
  case F_CONNECT_TIMEOUT:
    if (!parse_long(o->value, 1, TIMEOUT_MS_MAX, &x)) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%s: storage option '%s' must be a whole number of milliseconds from 1 "
                          "to %ld",
                          prefix, k->key, TIMEOUT_MS_MAX);
    }
    if (k->field == F_REQUEST_TIMEOUT) c->request_timeout_ms = x;
    if (k->field == F_CONNECT_TIMEOUT) c->connect_timeout_ms = x;
    break;
  case F_RETRIES:
    if (!parse_long(o->value, 0, RETRIES_MAX, &x)) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%s: storage option '%s' must be a whole number from 0 to %d", prefix,
                          k->key, RETRIES_MAX);
    }
    c->max_retries = (int)x;
    break;
  default: return hs_error_set(err, HS_ERR_INTERNAL, "%s: option field %d", prefix, k->field);
  }
  if (st == HS_OK) p->set |= BIT(k->field);
  return st;
}

/* -------------------------------------------------------- registry */

bool hs_store_option_known(const char *key) {
  for (size_t i = 0; key != NULL && i < sizeof k_keys / sizeof *k_keys; i++)
    if (strcmp(key, k_keys[i].key) == 0) return true;
  return false;
}

hs_status hs_store_configure(const char *uri_prefix, const hs_store_option *opts, size_t n,
                             hs_error *err) {
  if (uri_prefix == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "storage options: no location prefix");
  }
  size_t plen = strlen(uri_prefix);
  if (plen >= PREFIX_BYTES_MAX) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "storage options: location prefix of %zu bytes (at most %d)", plen,
                        PREFIX_BYTES_MAX - 1);
  }
  if (n > 0 && opts == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: storage options: NULL options", uri_prefix);
  }
  /* Everything is checked before the registry changes. */
  prefix_options p;
  memset(&p, 0, sizeof p);
  for (size_t i = 0; i < n; i++) {
    hs_status st = set_option(&p, uri_prefix, &opts[i], err);
    if (st != HS_OK) return st;
  }
  char *copy = n > 0 ? hs_strdup(uri_prefix) : NULL;
  if (n > 0 && copy == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "%s: storage options: out of memory", uri_prefix);
  }
  p.prefix = copy;
  hs_status st = HS_OK;
  pthread_mutex_lock(&g_lock);
  size_t at = g_n;
  for (size_t i = 0; i < g_n; i++) {
    if (strcmp(g_opts[i].prefix, uri_prefix) == 0) at = i;
  }
  if (at < g_n) {
    hs_free(g_opts[at].prefix);
    if (n > 0) {
      g_opts[at] = p;
    } else { /* no options: the prefix is forgotten */
      g_opts[at] = g_opts[--g_n];
    }
  } else if (n > 0) {
    if (g_n == g_cap) {
      size_t nc = g_cap ? g_cap * 2 : 8;
      prefix_options *nv = g_n >= PREFIXES_MAX ? NULL : hs_realloc(g_opts, nc * sizeof *nv);
      if (nv == NULL) {
        st =
            g_n >= PREFIXES_MAX
                ? hs_error_set(err, HS_ERR_NOMEM, "%s: storage options: more than %d prefixes",
                               uri_prefix, PREFIXES_MAX)
                : hs_error_set(err, HS_ERR_NOMEM, "%s: storage options: out of memory", uri_prefix);
      } else {
        g_opts = nv;
        g_cap = nc;
      }
    }
    if (st == HS_OK) g_opts[g_n++] = p;
  }
  pthread_mutex_unlock(&g_lock);
  if (st != HS_OK) hs_free(copy);
  return st;
}

static bool prefix_matches(const char *prefix, size_t plen, const char *uri) {
  if (strncmp(uri, prefix, plen) != 0) return false;
  return plen == 0 || prefix[plen - 1] == '/' || uri[plen] == '\0' || uri[plen] == '/';
}

/* A copy of the options of the longest registered prefix of `uri`. */
static void registered_for(const char *uri, prefix_options *out) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&g_lock);
  size_t best = g_n, best_len = 0;
  for (size_t i = 0; i < g_n; i++) {
    size_t plen = strlen(g_opts[i].prefix);
    if ((best == g_n || plen > best_len) && prefix_matches(g_opts[i].prefix, plen, uri)) {
      best = i;
      best_len = plen;
    }
  }
  if (best < g_n) {
    out->cfg = g_opts[best].cfg;
    out->set = g_opts[best].set;
  }
  pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------- AWS files */

/* What one profile of one AWS file says. */
typedef struct file_profile {
  char access_key[128], secret_key[128], session_token[2048];
  char region[64], endpoint[512], s3_endpoint[512];
  int addressing; /* 0 unset, 1 virtual, 2 path (the s3 = ... sub-section) */
} file_profile;

static char *trim(char *s, char *end) {
  while (s < end && (*s == ' ' || *s == '\t')) s++;
  while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
  *end = '\0';
  return s;
}

/* Does section header `name` (trimmed, between the brackets) name
 * `profile`? Credentials file: "[NAME]"; config file: "[profile NAME]",
 * or "[default]" for the default profile. */
static bool section_is(const char *name, const char *profile, bool config_file) {
  if (!config_file) return strcmp(name, profile) == 0;
  if (strcmp(profile, "default") == 0 && strcmp(name, "default") == 0) return true;
  if (strncmp(name, "profile", 7) != 0 || (name[7] != ' ' && name[7] != '\t')) return false;
  const char *p = name + 7;
  while (*p == ' ' || *p == '\t') p++;
  return strcmp(p, profile) == 0;
}

static void copy_value(char *dst, size_t cap, const char *v) {
  snprintf(dst, cap, "%s", v); /* a value longer than the field is cut: checked by the caller */
}

static void take_key(file_profile *fp, const char *sub, const char *key, const char *v) {
  if (sub[0] == '\0') {
    if (strcmp(key, "aws_access_key_id") == 0) copy_value(fp->access_key, sizeof fp->access_key, v);
    if (strcmp(key, "aws_secret_access_key") == 0)
      copy_value(fp->secret_key, sizeof fp->secret_key, v);
    if (strcmp(key, "aws_session_token") == 0)
      copy_value(fp->session_token, sizeof fp->session_token, v);
    if (strcmp(key, "region") == 0) copy_value(fp->region, sizeof fp->region, v);
    if (strcmp(key, "endpoint_url") == 0) copy_value(fp->endpoint, sizeof fp->endpoint, v);
  } else if (strcmp(sub, "s3") == 0) {
    if (strcmp(key, "endpoint_url") == 0) copy_value(fp->s3_endpoint, sizeof fp->s3_endpoint, v);
    if (strcmp(key, "addressing_style") == 0) {
      fp->addressing = strcmp(v, "virtual") == 0 ? 1 : strcmp(v, "path") == 0 ? 2 : 0;
    }
  }
}

/* Parse INI text: the keys of the sections naming `profile` into `fp`
 * (later lines win). An indented "key = value" after "name =" with no
 * value belongs to sub-section `name` (the config file's "s3 ="). */
static void ini_parse(char *text, size_t len, const char *profile, bool config_file,
                      file_profile *fp) {
  bool in = false;
  char sub[32] = "";
  char *end = text + len;
  for (char *line = text; line < end;) {
    char *nl = memchr(line, '\n', (size_t)(end - line));
    char *stop = nl ? nl : end;
    bool indented = line < stop && (*line == ' ' || *line == '\t');
    char *s = trim(line, stop);
    line = nl ? nl + 1 : end;
    if (*s == '\0' || *s == '#' || *s == ';') continue;
    if (*s == '[') {
      char *close = strchr(s, ']');
      sub[0] = '\0';
      in = close != NULL && section_is(trim(s + 1, close), profile, config_file);
      continue;
    }
    char *eq = strchr(s, '=');
    if (!in || eq == NULL) continue;
    char *key = trim(s, eq);
    char *value = trim(eq + 1, eq + 1 + strlen(eq + 1));
    if (!indented) sub[0] = '\0';
    if (!indented && *value == '\0') {
      snprintf(sub, sizeof sub, "%s", key);
      continue;
    }
    take_key(fp, indented ? sub : "", key, value);
  }
}

/* The file named by environment variable `env_name`, else ~/<home_rel>,
 * into `out` ("" when neither is known). A leading "~/" is $HOME. */
static void aws_file_path(const char *env_name, const char *home_rel, char *out, size_t cap) {
  const char *v = getenv(env_name);
  const char *home = getenv("HOME");
  out[0] = '\0';
  if (v != NULL && v[0] != '\0') {
    if (strncmp(v, "~/", 2) == 0 && home != NULL) {
      snprintf(out, cap, "%s/%s", home, v + 2);
    } else {
      snprintf(out, cap, "%s", v);
    }
  } else if (home != NULL && home[0] != '\0') {
    snprintf(out, cap, "%s/%s", home, home_rel);
  }
}

/* The last parse of each file (credentials, config), reused while the
 * file's stamp, path and profile stay the same: resolution runs for every
 * S3 call, a stat is all it costs then. Under g_lock. */
typedef struct file_cache {
  bool valid;
  char path[PATH_MAX];
  char profile[128];
  hs_fs_stamp stamp;
  file_profile fp;
} file_cache;
static file_cache g_files[2];

/* Read profile `profile` of an AWS file; a missing file says nothing. */
static hs_status read_aws_file(const char *env_name, const char *home_rel, const char *profile,
                               bool config_file, file_profile *fp, hs_error *err) {
  memset(fp, 0, sizeof *fp);
  char path[PATH_MAX];
  aws_file_path(env_name, home_rel, path, sizeof path);
  if (path[0] == '\0') return HS_OK;
  hs_fs_stamp stamp;
  bool stamped = hs_fs_stamp_of(path, &stamp);
  file_cache *c = &g_files[config_file ? 1 : 0];
  pthread_mutex_lock(&g_lock);
  bool hit = stamped && c->valid && hs_fs_stamp_equal(&c->stamp, &stamp) &&
             strcmp(c->path, path) == 0 && strcmp(c->profile, profile) == 0;
  if (hit) *fp = c->fp;
  pthread_mutex_unlock(&g_lock);
  if (hit) return HS_OK;
  hs_buf text;
  hs_buf_init(&text);
  hs_error e = {0};
  hs_status st = hs_fs_read_file(path, AWS_FILE_BYTES_MAX, &text, &e);
  if (st == HS_ERR_NOT_FOUND) {
    st = HS_OK;
  } else if (st != HS_OK) {
    st = hs_error_set(err, st, "S3 configuration: %s", e.message);
  } else if (hs_buf_reserve(&text, 1)) {
    text.data[text.len] = '\0';
    ini_parse((char *)text.data, text.len, profile, config_file, fp);
    /* Keyed by the stamp taken before the read: a file changed meanwhile
     * has another stamp next time and is read again. */
    if (stamped && strlen(profile) < sizeof c->profile) {
      pthread_mutex_lock(&g_lock);
      c->valid = true;
      c->stamp = stamp;
      snprintf(c->path, sizeof c->path, "%s", path);
      snprintf(c->profile, sizeof c->profile, "%s", profile);
      c->fp = *fp;
      pthread_mutex_unlock(&g_lock);
    }
  } else {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  }
  hs_buf_free(&text);
  return st;
}

/* ------------------------------------------------------- resolution */

static const char *env_nonempty(const char *name) {
  const char *v = getenv(name);
  return v != NULL && v[0] != '\0' ? v : NULL;
}

static hs_status from_env(char *dst, size_t cap, const char *name, const char *value,
                          hs_error *err) {
  if (strlen(value) >= cap) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s is too long (%zu bytes, at most %zu)", name,
                        strlen(value), cap - 1);
  }
  memcpy(dst, value, strlen(value) + 1);
  return HS_OK;
}

static bool has_credentials(const char *access, const char *secret) {
  return access[0] != '\0' && secret[0] != '\0';
}

hs_status hs_store_config_resolve(const char *uri, hs_store_config *cfg, hs_error *err) {
  memset(cfg, 0, sizeof *cfg);
  prefix_options reg;
  registered_for(uri, &reg);
  const hs_store_config *r = &reg.cfg;
  hs_status st = HS_OK;

  const char *v = NULL;
  if (reg.set & BIT(F_PROFILE)) {
    memcpy(cfg->profile, r->profile, sizeof cfg->profile);
  } else if ((v = env_nonempty("AWS_PROFILE")) != NULL) {
    st = from_env(cfg->profile, sizeof cfg->profile, "AWS_PROFILE", v, err);
  } else {
    strcpy(cfg->profile, "default");
  }

  bool creds = (reg.set & CREDENTIAL_BITS) != 0;
  if (creds) {
    memcpy(cfg->access_key, r->access_key, sizeof cfg->access_key);
    memcpy(cfg->secret_key, r->secret_key, sizeof cfg->secret_key);
    memcpy(cfg->session_token, r->session_token, sizeof cfg->session_token);
  } else if ((reg.set & BIT(F_PROFILE)) == 0 && env_nonempty("AWS_ACCESS_KEY_ID") &&
             env_nonempty("AWS_SECRET_ACCESS_KEY")) {
    creds = true;
    const char *tok = env_nonempty("AWS_SESSION_TOKEN");
    if (st == HS_OK)
      st = from_env(cfg->access_key, sizeof cfg->access_key, "AWS_ACCESS_KEY_ID",
                    getenv("AWS_ACCESS_KEY_ID"), err);
    if (st == HS_OK)
      st = from_env(cfg->secret_key, sizeof cfg->secret_key, "AWS_SECRET_ACCESS_KEY",
                    getenv("AWS_SECRET_ACCESS_KEY"), err);
    if (st == HS_OK && tok != NULL)
      st = from_env(cfg->session_token, sizeof cfg->session_token, "AWS_SESSION_TOKEN", tok, err);
  }

  if (reg.set & BIT(F_REGION)) {
    memcpy(cfg->region, r->region, sizeof cfg->region);
  } else if ((v = env_nonempty("AWS_REGION")) || (v = env_nonempty("AWS_DEFAULT_REGION"))) {
    if (st == HS_OK)
      st = from_env(cfg->region, sizeof cfg->region,
                    env_nonempty("AWS_REGION") ? "AWS_REGION" : "AWS_DEFAULT_REGION", v, err);
  }

  if (reg.set & BIT(F_ENDPOINT)) {
    memcpy(cfg->endpoint, r->endpoint, sizeof cfg->endpoint);
  } else if ((v = env_nonempty("AWS_ENDPOINT_URL_S3")) || (v = env_nonempty("AWS_ENDPOINT_URL"))) {
    if (st == HS_OK)
      st = from_env(
          cfg->endpoint, sizeof cfg->endpoint,
          env_nonempty("AWS_ENDPOINT_URL_S3") ? "AWS_ENDPOINT_URL_S3" : "AWS_ENDPOINT_URL", v, err);
  }

  /* The files, only for what is still unknown. */
  int addressing = 0;
  if (st == HS_OK && !creds) {
    file_profile fp;
    st = read_aws_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials", cfg->profile, false, &fp,
                       err);
    if (st == HS_OK && has_credentials(fp.access_key, fp.secret_key)) {
      creds = true;
      memcpy(cfg->access_key, fp.access_key, sizeof cfg->access_key);
      memcpy(cfg->secret_key, fp.secret_key, sizeof cfg->secret_key);
      memcpy(cfg->session_token, fp.session_token, sizeof cfg->session_token);
    }
  }
  bool need_config = cfg->region[0] == '\0' || cfg->endpoint[0] == '\0' ||
                     (reg.set & BIT(F_VIRTUAL)) == 0 || !creds;
  if (st == HS_OK && need_config) {
    file_profile *fp = hs_malloc(sizeof *fp);
    if (fp == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
    st = read_aws_file("AWS_CONFIG_FILE", ".aws/config", cfg->profile, true, fp, err);
    if (st == HS_OK) {
      if (!creds && has_credentials(fp->access_key, fp->secret_key)) {
        memcpy(cfg->access_key, fp->access_key, sizeof cfg->access_key);
        memcpy(cfg->secret_key, fp->secret_key, sizeof cfg->secret_key);
        memcpy(cfg->session_token, fp->session_token, sizeof cfg->session_token);
      }
      if (cfg->region[0] == '\0') memcpy(cfg->region, fp->region, sizeof cfg->region);
      if (cfg->endpoint[0] == '\0') {
        memcpy(cfg->endpoint, fp->s3_endpoint[0] ? fp->s3_endpoint : fp->endpoint,
               sizeof cfg->endpoint);
      }
      addressing = fp->addressing;
    }
    hs_free(fp);
  }
  if (st != HS_OK) return st;

  if (cfg->region[0] == '\0') strcpy(cfg->region, "us-east-1");
  bool http = strncasecmp(cfg->endpoint, "http://", 7) == 0;
  cfg->allow_http = (reg.set & BIT(F_ALLOW_HTTP)) ? r->allow_http : http;
  if (reg.set & BIT(F_VIRTUAL)) {
    cfg->virtual_hosted = r->virtual_hosted;
  } else if (addressing != 0) {
    cfg->virtual_hosted = addressing == 1;
  } else {
    cfg->virtual_hosted = cfg->endpoint[0] == '\0';
  }
  cfg->request_timeout_ms = (reg.set & BIT(F_REQUEST_TIMEOUT)) ? r->request_timeout_ms : 30000;
  cfg->connect_timeout_ms = (reg.set & BIT(F_CONNECT_TIMEOUT)) ? r->connect_timeout_ms : 5000;
  cfg->max_retries = (reg.set & BIT(F_RETRIES)) ? r->max_retries : 5;
  return HS_OK;
}
