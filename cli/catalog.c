/*
 * catalog.c — Iceberg REST catalogs on the command line.
 *
 * Any table argument of the form "rest://host:port[/path]#ns.table" (or
 * rests:// for https) names a table of a REST catalog. Before a command
 * runs, hs_cli_connect_catalogs() connects each catalog such arguments name
 * (hs_catalog_connect), with options from the environment — secrets stay out
 * of argv, where `ps` would show them:
 *
 *   HS_CATALOG_WAREHOUSE   "warehouse"        HS_CATALOG_TOKEN       "token"
 *   HS_CATALOG_CREDENTIAL  "credential"       HS_CATALOG_SCOPE       "scope"
 *   HS_CATALOG_PREFIX      "prefix"           HS_CATALOG_TIMEOUT_MS  "timeout_ms"
 *
 * `hyperstream catalog URI [NAMESPACE] [--json]` lists a catalog's
 * namespaces (those under NAMESPACE when given) and the tables of NAMESPACE
 * (of every top-level namespace without one).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hyperstream.h"

int hs_cli_catalog(int argc, char **argv);
int hs_cli_connect_catalogs(int argc, char **argv);
bool hs_cli_is_catalog_uri(const char *s);

static const struct {
  const char *env, *key;
} catalog_env[] = {
    {"HS_CATALOG_WAREHOUSE", "warehouse"},   {"HS_CATALOG_TOKEN", "token"},
    {"HS_CATALOG_CREDENTIAL", "credential"}, {"HS_CATALOG_SCOPE", "scope"},
    {"HS_CATALOG_PREFIX", "prefix"},         {"HS_CATALOG_TIMEOUT_MS", "timeout_ms"},
};
enum { N_CATALOG_ENV = sizeof catalog_env / sizeof catalog_env[0] };

bool hs_cli_is_catalog_uri(const char *s) {
  return s != NULL && (strncmp(s, "rest://", 7) == 0 || strncmp(s, "rests://", 8) == 0);
}

/* The catalog part of a catalog URI: up to '#', without trailing '/'. */
static size_t catalog_len(const char *uri) {
  const char *hash = strchr(uri, '#');
  size_t n = hash ? (size_t)(hash - uri) : strlen(uri);
  while (n > 0 && uri[n - 1] == '/') n--;
  return n;
}

static int connect_one(const char *uri, size_t n) {
  char *base = hs_malloc(n + 1);
  if (base == NULL) return hs_cli_fail("out of memory");
  memcpy(base, uri, n);
  base[n] = '\0';
  hs_catalog_option opts[N_CATALOG_ENV];
  size_t k = 0;
  for (size_t i = 0; i < N_CATALOG_ENV; i++) {
    const char *v = getenv(catalog_env[i].env);
    if (v != NULL && v[0] != '\0') opts[k++] = (hs_catalog_option){catalog_env[i].key, v};
  }
  hs_error err = {0};
  hs_status st = hs_catalog_connect(base, opts, k, &err);
  int rc = HS_CLI_OK;
  if (st != HS_OK)
    rc = strstr(err.message, base) ? hs_cli_fail("%s", err.message)
                                   : hs_cli_fail("%s: %s", base, err.message);
  hs_free(base);
  return rc;
}

int hs_cli_connect_catalogs(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!hs_cli_is_catalog_uri(argv[i])) continue;
    size_t n = catalog_len(argv[i]);
    bool seen = false;
    for (int j = 1; j < i && !seen; j++)
      seen = hs_cli_is_catalog_uri(argv[j]) && catalog_len(argv[j]) == n &&
             strncmp(argv[j], argv[i], n) == 0;
    if (seen) continue;
    int rc = connect_one(argv[i], n);
    if (rc != HS_CLI_OK) return rc;
  }
  return HS_CLI_OK;
}

/* Print a JSON string (names are the catalog's: escape what JSON needs). */
static void json_str(const char *s) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      printf("\\%c", *p);
    else if (*p < 0x20)
      printf("\\u%04x", *p);
    else
      putchar(*p);
  }
  putchar('"');
}

static void print_names(const char *kind, char **names, size_t n, bool json, bool *first) {
  for (size_t i = 0; i < n; i++) {
    if (json) {
      fputs(*first ? "" : ",\n", stdout);
      printf("  {\"kind\": \"%s\", \"name\": ", kind);
      json_str(names[i]);
      putchar('}');
    } else {
      printf("%-9s %s\n", kind, names[i]);
    }
    *first = false;
  }
}

static const char catalog_usage[] =
    "Usage: hyperstream catalog URI [NAMESPACE] [--json]\n"
    "  List the namespaces of an Iceberg REST catalog (those under NAMESPACE\n"
    "  when given) and the tables of NAMESPACE (of every top-level namespace\n"
    "  without one). URI: rest://host:port[/path] (https: rests://).\n"
    "  Options come from the environment: HS_CATALOG_WAREHOUSE, HS_CATALOG_TOKEN,\n"
    "  HS_CATALOG_CREDENTIAL (client_id:client_secret), HS_CATALOG_SCOPE,\n"
    "  HS_CATALOG_PREFIX, HS_CATALOG_TIMEOUT_MS. Tables of the catalog are\n"
    "  URI#namespace.table in every other command.\n";

int hs_cli_catalog(int argc, char **argv) {
  const char *uri = NULL, *ns = NULL;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(catalog_usage, stdout);
      return HS_CLI_OK;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return hs_cli_usage_error("catalog: unknown option '%s'", argv[i]);
    } else if (uri == NULL) {
      uri = argv[i];
    } else if (ns == NULL) {
      ns = argv[i];
    } else {
      return hs_cli_usage_error("catalog: unexpected argument '%s'", argv[i]);
    }
  }
  if (uri == NULL) return hs_cli_usage_error("catalog: missing URI (rest://host:port)");
  if (!hs_cli_is_catalog_uri(uri) || strchr(uri, '#') != NULL)
    return hs_cli_usage_error("catalog: '%s' is not a catalog URI (rest://host:port[/path])", uri);
  /* run() connected it already (every rest:// argument is). */
  hs_error err = {0};
  char **nss = NULL, **tabs = NULL;
  size_t n_ns = 0, n_tabs = 0;
  bool first = true;
  if (json) fputs("[\n", stdout);
  hs_status st = hs_catalog_list_namespaces(uri, ns, &nss, &n_ns, &err);
  if (st == HS_OK) print_names("namespace", nss, n_ns, json, &first);
  if (st == HS_OK && ns != NULL) {
    st = hs_catalog_list_tables(uri, ns, &tabs, &n_tabs, &err);
    if (st == HS_OK) print_names("table", tabs, n_tabs, json, &first);
    hs_catalog_names_free(tabs, n_tabs);
  }
  for (size_t i = 0; st == HS_OK && ns == NULL && i < n_ns; i++) {
    tabs = NULL;
    n_tabs = 0;
    st = hs_catalog_list_tables(uri, nss[i], &tabs, &n_tabs, &err);
    if (st == HS_OK) print_names("table", tabs, n_tabs, json, &first);
    hs_catalog_names_free(tabs, n_tabs);
  }
  hs_catalog_names_free(nss, n_ns);
  if (json) fputs(first ? "]\n" : "\n]\n", stdout);
  if (st != HS_OK)
    return strstr(err.message, uri) ? hs_cli_fail("%s", err.message)
                                    : hs_cli_fail("%s: %s", uri, err.message);
  return fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}
