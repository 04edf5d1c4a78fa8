/* Direct reading of SQLite table B-trees from the database file, for the two tables of an
 * Nsight Systems export that hold millions of rows (kernels, CUDA API calls). Going
 * through SQLite's virtual machine costs ~130 ns per row on these tables; walking the
 * leaf pages and decoding the integer columns gpuwhy needs costs a fraction of that.
 *
 * Deliberately narrow: rowid tables whose rows fit in their leaf page (no overflow pages),
 * integer or NULL values in the columns read, a file not in WAL mode with frames pending.
 * Anything else, and anything inconsistent (a page of the wrong type, a cell that runs
 * past its page, keys out of order), is reported as "not readable directly" with a reason:
 * the caller then reads the table through SQLite, which gives the exact answer or the
 * exact error. The file layout follows the published SQLite file format
 * (https://www.sqlite.org/fileformat.html). Callers hold a read transaction on a SQLite
 * connection to the same file while reading, so no writer changes pages underneath. */
#ifndef GW_INGEST_SQLITE_BTREE_H
#define GW_INGEST_SQLITE_BTREE_H

#include <stddef.h>
#include <stdint.h>

typedef struct gw_btree_file {
    int fd;              /* owned: closed by gw_btree_close */
    uint32_t page_size;  /* bytes per page */
    uint32_t usable;     /* page_size minus the reserved bytes at the end of each page */
    uint32_t page_count; /* whole pages in the file */
} gw_btree_file;

/* Opens path for direct reading. 0, or -1 with *why set (a static string) when the file
 * cannot be read directly (then nothing is left open). */
int gw_btree_open(gw_btree_file *f, const char *path, const char **why);
void gw_btree_close(gw_btree_file *f);

/* A leaf page and the largest rowid its rows may have (the key its parent gives it;
 * INT64_MAX for the last leaf). Rows of leaf i have rowids in (leaf[i-1].max_rowid,
 * leaf[i].max_rowid]. */
typedef struct gw_btree_leaf {
    uint32_t page;
    int64_t max_rowid;
} gw_btree_leaf;

/* The leaf pages of the table B-tree rooted at page root, in rowid order, into *leaves
 * (owned by the caller: free()). 0, or -1 with *why set. */
int gw_btree_leaves(const gw_btree_file *f, uint32_t root, gw_btree_leaf **leaves, size_t *count, const char **why);

/* Reads n pages starting at page number first (1-based) into buf (n * page_size bytes).
 * 0, or -1 with *why set. */
int gw_btree_read_pages(const gw_btree_file *f, uint32_t first, uint32_t n, uint8_t *buf, const char **why);

/* Walks the rows of one leaf page image (page: page_size bytes of page number pgno). */
typedef struct gw_btree_leaf_iter {
    const uint8_t *page;
    uint32_t usable;
    uint32_t max_local;   /* largest payload kept whole in the page */
    uint32_t cell_ptrs;   /* offset of the cell pointer array */
    uint32_t cells, next;
} gw_btree_leaf_iter;

/* 0, or -1 with *why set when the image is not a table leaf page. */
int gw_btree_leaf_begin(gw_btree_leaf_iter *it, const gw_btree_file *f, const uint8_t *page, uint32_t pgno,
                        const char **why);
/* Next row: 1 with its rowid and record (pointing into the page image), 0 after the last
 * row, -1 with *why set. */
int gw_btree_leaf_next(gw_btree_leaf_iter *it, int64_t *rowid, const uint8_t **record, uint32_t *record_len,
                       const char **why);

/* Columns to take from a record: slot_of[i] is the output slot of the record's i-th column
 * or -1; columns at positions >= columns are not read. */
#define GW_BTREE_MAX_COLUMNS 64
typedef struct gw_record_plan {
    int8_t slot_of[GW_BTREE_MAX_COLUMNS];
    int columns;          /* 1 + the largest position read */
} gw_record_plan;

/* Decodes the planned integer columns of a record into values[slot]; is_null[slot] is 1
 * for NULL and for columns the record is too short to hold (added to the table after the
 * row was written: they read as their default, which the caller made sure is NULL).
 * Slots the plan does not fill are left alone. 0, or -1 with *why set (a value that is
 * not an integer or NULL, or a record that runs past its length). */
int gw_record_ints(const gw_record_plan *plan, const uint8_t *record, uint32_t record_len, int64_t *values,
                   uint8_t *is_null, const char **why);

#endif
