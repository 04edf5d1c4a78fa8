/* One verdict for a failed read of an SQLite input (Nsight Systems export, gpuwhy
 * recording): exit 2 with SQLite's reason when the file is damaged, exit 1 only when memory
 * really ran out.
 *
 * SQLite answers some damaged files with SQLITE_NOMEM rather than SQLITE_CORRUPT (a record
 * header that claims a gigabyte-long value makes it ask for that much memory and fail).
 * Reporting that as "out of memory" would send the user looking at their machine instead
 * of at their file, so a NOMEM is checked with PRAGMA quick_check on the table that was
 * being read (or the whole file): a damaged B-tree is bad input, a sound one a real
 * shortage. The check runs only on this failure path. */
#ifndef GW_UTIL_SQLITE_FAIL_H
#define GW_UTIL_SQLITE_FAIL_H

#include <sqlite3.h>
#include <stddef.h>

#include "util/error.h"

/* Sets err for a failed prepare/step on db (rc: the failing result code, or 0 to take
 * sqlite3_errcode(db)) while reading table `table` of `path` (NULL: the file as a whole,
 * which is then what quick_check looks at), and returns -1. */
int gw_sqlite_read_failed(gw_error *err, sqlite3 *db, int rc, const char *path, const char *table);
/* The same with a label of one's own for what was being read ("table samples"). */
int gw_sqlite_read_failed_as(gw_error *err, sqlite3 *db, int rc, const char *path, const char *what,
                             const char *table);

/* 1 when quick_check finds table (NULL: the whole file) damaged, with SQLite's first
 * complaint in why; 0 when sound; -1 when the check itself could not run (no memory). */
int gw_sqlite_damaged(sqlite3 *db, const char *table, char *why, size_t why_size);

#endif
