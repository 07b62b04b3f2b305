/*
 * ddl.c — statements that change tables or indexes rather than read them.
 * Each maps onto the table layer's operations (see src/sql/README.md).
 */
#include <string.h>

#include "bind.h"

hs_status hs_sql_session_other(hs_sql_session *s, const char *sql, const char *kind, void *json,
                               struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  (void)s, (void)sql, (void)json, (void)out;
  *pos = 0;
  static const struct {
    const char *node, *words;
  } names[] = {{"InsertStmt", "INSERT"},
               {"CreateStmt", "CREATE TABLE"},
               {"CreateTableAsStmt", "CREATE TABLE AS"},
               {"IndexStmt", "CREATE INDEX"},
               {"DropStmt", "DROP"},
               {"DeleteStmt", "DELETE"},
               {"UpdateStmt", "UPDATE"},
               {"MergeStmt", "MERGE"},
               {"AlterTableStmt", "ALTER TABLE"}};
  const char *words = kind;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].node, kind) == 0) words = names[i].words;
  return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s statements are not supported yet", words);
}
