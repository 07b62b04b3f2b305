/*
 * stats_list.c — the metadata's `statistics` / `partition-statistics` lists
 * (spec "Table Statistics", kept as opaque JSON text) when snapshots expire:
 * entries of an expired snapshot go with it, as Iceberg's expireSnapshots
 * removes them; their files then become unreachable and are deleted with the
 * other files only expired snapshots used (expire.c).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

hs_status hs_table_statistics_drop(hs_iceberg_json list, const int64_t *expired, size_t n,
                                   hs_arena *a, hs_iceberg_json *out, hs_error *err) {
  *out = list;
  if (list == NULL || n == 0) return HS_OK;
  json_t *v = json_loads(list, 0, NULL);
  if (v == NULL || !json_is_array(v)) {
    json_decref(v);
    return hs_error_set(err, HS_ERR_CORRUPT, "expire snapshots: a statistics list is not an array");
  }
  bool dropped = false;
  for (size_t i = json_array_size(v); i-- > 0;) {
    json_t *sid = json_object_get(json_array_get(v, i), "snapshot-id");
    if (!json_is_integer(sid)) continue;
    for (size_t k = 0; k < n; k++)
      if (json_integer_value(sid) == expired[k]) {
        json_array_remove(v, i);
        dropped = true;
        break;
      }
  }
  if (!dropped) {
    json_decref(v);
    return HS_OK;
  }
  char *text = json_dumps(v, JSON_COMPACT);
  json_decref(v);
  if (text == NULL) return hs_error_set(err, HS_ERR_NOMEM, "expire snapshots: out of memory");
  *out = hs_arena_strndup(a, text, strlen(text));
  free(text);
  if (*out == NULL) return hs_error_set(err, HS_ERR_NOMEM, "expire snapshots: out of memory");
  return HS_OK;
}
