/* Damaged-file versus out-of-memory verdict for failed SQLite reads; see sqlite_fail.h. */
#include "util/sqlite_fail.h"

#include <stdio.h>
#include <string.h>

int gw_sqlite_damaged(sqlite3 *db, const char *table, char *why, size_t why_size)
{
    why[0] = '\0';
    char sql[256];
    int n = table ? snprintf(sql, sizeof sql, "PRAGMA quick_check(\"%s\")", table)
                  : snprintf(sql, sizeof sql, "PRAGMA quick_check(1)");
    if (n < 0 || (size_t)n >= sizeof sql || (table && strchr(table, '"')))
        n = snprintf(sql, sizeof sql, "PRAGMA quick_check(1)");
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        if (rc == SQLITE_NOMEM)
            return -1;
        snprintf(why, why_size, "%s", sqlite3_errmsg(db));
        return 1;
    }
    int damaged = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        /* A report may start with a "*** in database main ***" heading line; the
         * complaint follows it. */
        if (line && !strncmp(line, "*** ", 4))
            line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "";
        if (!line || !*line || !strcmp(line, "ok"))
            continue;
        snprintf(why, why_size, "%.*s", (int)strcspn(line, "\n"), line);
        damaged = 1;
        break;
    }
    if (!damaged && rc != SQLITE_DONE) {
        if (rc == SQLITE_NOMEM) {
            sqlite3_finalize(st);
            return -1;
        }
        snprintf(why, why_size, "%s", sqlite3_errmsg(db));
        damaged = 1;
    }
    sqlite3_finalize(st);
    return damaged;
}

int gw_sqlite_read_failed_as(gw_error *err, sqlite3 *db, int rc, const char *path, const char *what,
                             const char *table)
{
    if (!db)
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory opening the file", path);
    if (!rc)
        rc = sqlite3_errcode(db);
    if ((rc & 0xff) == SQLITE_NOMEM) {
        char why[200];
        int damaged = gw_sqlite_damaged(db, table, why, sizeof why);
        if (damaged <= 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory reading %s", path, what);
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: damaged SQLite database: reading %s failed (%s)", path, what,
                       why);
    }
    return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: not a usable SQLite database: reading %s: %s", path, what,
                   sqlite3_errmsg(db));
}

int gw_sqlite_read_failed(gw_error *err, sqlite3 *db, int rc, const char *path, const char *table)
{
    return gw_sqlite_read_failed_as(err, db, rc, path, table ? table : "the file", table);
}
