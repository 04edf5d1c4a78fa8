/* Direct reading of SQLite table B-trees (see sqlite_btree.h for what is and is not read).
 * Every offset read from the file is checked against the page before it is followed: a
 * damaged file gives a reason, never an out-of-bounds read. */
#include "ingest/sqlite_btree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/grow.h"

/* B-tree page types (first byte of the page header). */
#define PAGE_TABLE_INTERIOR 0x05
#define PAGE_TABLE_LEAF 0x0D
/* The 100-byte database header sits before page 1's B-tree header. */
#define DB_HEADER_BYTES 100
/* Deeper than any real table: a 4 KiB-page tree of depth 20 would hold more rows than a
 * file can. A cycle of damaged child pointers stops here too. */
#define MAX_DEPTH 20

static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* SQLite varint (1-9 bytes, big-endian, 7 bits per byte, all 8 bits of a 9th byte) at p,
 * not reading at or past end. Bytes used, or 0 when it runs past end. */
static unsigned varint(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++) {
        if (p + i >= end)
            return 0;
        v = v << 7 | (p[i] & 0x7F);
        if (!(p[i] & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    if (p + 8 >= end)
        return 0;
    *out = v << 8 | p[8];
    return 9;
}

int gw_btree_open(gw_btree_file *f, const char *path, const char **why)
{
    memset(f, 0, sizeof *f);
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        *why = "cannot open the file";
        return -1;
    }
    uint8_t h[DB_HEADER_BYTES];
    struct stat sb;
    if (pread(f->fd, h, sizeof h, 0) != (ssize_t)sizeof h || fstat(f->fd, &sb) != 0) {
        *why = "cannot read the database header";
        goto fail;
    }
    if (memcmp(h, "SQLite format 3", 16) != 0) {
        *why = "not an SQLite 3 file";
        goto fail;
    }
    uint32_t page_size = be16(h + 16);
    if (page_size == 1)
        page_size = 65536;
    if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1))) {
        *why = "invalid page size";
        goto fail;
    }
    /* Bytes 18/19: 1 = rollback journal, 2 = WAL. In WAL mode the newest version of a page
     * may be in the -wal file rather than the database: read directly only when there is
     * none (a checkpointed, closed database). */
    if (h[18] != 1 || h[19] != 1) {
        if (h[18] != 2 || h[19] != 2) {
            *why = "unknown file format version";
            goto fail;
        }
        char wal[4096];
        struct stat ws;
        int too_long = snprintf(wal, sizeof wal, "%s-wal", path) >= (int)sizeof wal;
        if (too_long || (stat(wal, &ws) == 0 ? ws.st_size > 0 : errno != ENOENT)) {
            *why = "WAL-mode database with a write-ahead log";
            goto fail;
        }
    }
    f->page_size = page_size;
    /* Byte 20: bytes reserved at the end of each page (checksums, encryption). */
    if (h[20] >= page_size - 480) {
        *why = "invalid reserved space";
        goto fail;
    }
    f->usable = page_size - h[20];
    uint64_t pages = (uint64_t)sb.st_size / page_size;
    f->page_count = pages > UINT32_MAX ? UINT32_MAX : (uint32_t)pages;
    return 0;
fail:
    close(f->fd);
    f->fd = -1;
    return -1;
}

void gw_btree_close(gw_btree_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

int gw_btree_read_pages(const gw_btree_file *f, uint32_t first, uint32_t n, uint8_t *buf, const char **why)
{
    if (first == 0 || n == 0 || first > f->page_count || n > f->page_count - first + 1) {
        *why = "page number out of range";
        return -1;
    }
    size_t want = (size_t)n * f->page_size;
    off_t at = (off_t)(first - 1) * f->page_size;
    size_t done = 0;
    while (done < want) {
        ssize_t got = pread(f->fd, buf + done, want - done, at + (off_t)done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            *why = "short read";
            return -1;
        }
        done += (size_t)got;
    }
    return 0;
}

/* Offset of the B-tree page header within page pgno. */
static uint32_t header_offset(uint32_t pgno) { return pgno == 1 ? DB_HEADER_BYTES : 0; }

typedef struct leaf_walk {
    const gw_btree_file *f;
    uint8_t *page;          /* owned: one page of scratch per tree level */
    gw_btree_leaf *leaves;  /* owned until handed to the caller */
    size_t count, cap;
    size_t pages_seen;
    const char **why;
} leaf_walk;

static int walk(leaf_walk *w, uint32_t pgno, int64_t max_rowid, int depth)
{
    const gw_btree_file *f = w->f;
    if (depth > MAX_DEPTH || ++w->pages_seen > f->page_count) {
        *w->why = "B-tree too deep or cyclic";
        return -1;
    }
    uint8_t *page = w->page + (size_t)depth * f->page_size;
    if (gw_btree_read_pages(f, pgno, 1, page, w->why) != 0)
        return -1;
    uint32_t h = header_offset(pgno);
    if (page[h] == PAGE_TABLE_LEAF) {
        if (gw_grow((void **)&w->leaves, &w->cap, w->count + 1, sizeof *w->leaves) != 0) {
            *w->why = "out of memory";
            return -1;
        }
        w->leaves[w->count++] = (gw_btree_leaf){.page = pgno, .max_rowid = max_rowid};
        return 0;
    }
    if (page[h] != PAGE_TABLE_INTERIOR) {
        *w->why = "not a table B-tree page (WITHOUT ROWID table or damaged)";
        return -1;
    }
    uint32_t cells = be16(page + h + 3);
    uint32_t right = be32(page + h + 8);
    uint32_t ptrs = h + 12;
    if (ptrs + 2 * cells > f->usable) {
        *w->why = "cell count runs past the page";
        return -1;
    }
    int64_t prev_key = INT64_MIN;
    const uint8_t *end = page + f->usable;
    for (uint32_t i = 0; i < cells; i++) {
        uint32_t at = be16(page + ptrs + 2 * i);
        if (at < ptrs + 2 * cells || at + 4 >= f->usable) {
            *w->why = "interior cell outside its page";
            return -1;
        }
        uint32_t child = be32(page + at);
        uint64_t key;
        if (!varint(page + at + 4, end, &key)) {
            *w->why = "interior cell key runs past its page";
            return -1;
        }
        int64_t k = (int64_t)key;
        if (k < prev_key || k > max_rowid) {
            *w->why = "interior keys out of order";
            return -1;
        }
        prev_key = k;
        /* The recursion reuses the next level's scratch page; this page stays intact. */
        if (walk(w, child, k, depth + 1) != 0)
            return -1;
    }
    return walk(w, right, max_rowid, depth + 1);
}

int gw_btree_leaves(const gw_btree_file *f, uint32_t root, gw_btree_leaf **leaves, size_t *count, const char **why)
{
    *leaves = NULL;
    *count = 0;
    leaf_walk w = {.f = f, .why = why};
    w.page = malloc((size_t)(MAX_DEPTH + 2) * f->page_size);
    if (!w.page) {
        *why = "out of memory";
        return -1;
    }
    int rc = walk(&w, root, INT64_MAX, 0);
    free(w.page);
    if (rc != 0) {
        free(w.leaves);
        return -1;
    }
    *leaves = w.leaves;
    *count = w.count;
    return 0;
}

int gw_btree_leaf_begin(gw_btree_leaf_iter *it, const gw_btree_file *f, const uint8_t *page, uint32_t pgno,
                        const char **why)
{
    uint32_t h = header_offset(pgno);
    if (page[h] != PAGE_TABLE_LEAF) {
        *why = "expected a table leaf page";
        return -1;
    }
    it->page = page;
    it->usable = f->usable;
    /* Table leaf cells keep payloads of up to usable - 35 bytes in the page; longer ones
     * spill to overflow pages, which this reader does not follow. */
    it->max_local = f->usable - 35;
    it->cells = be16(page + h + 3);
    it->cell_ptrs = h + 8;
    it->next = 0;
    if (it->cell_ptrs + 2 * it->cells > f->usable) {
        *why = "cell count runs past the page";
        return -1;
    }
    return 0;
}

int gw_btree_leaf_next(gw_btree_leaf_iter *it, int64_t *rowid, const uint8_t **record, uint32_t *record_len,
                       const char **why)
{
    if (it->next >= it->cells)
        return 0;
    uint32_t at = be16(it->page + it->cell_ptrs + 2 * it->next);
    it->next++;
    const uint8_t *end = it->page + it->usable;
    if (at < it->cell_ptrs + 2 * it->cells || at >= it->usable) {
        *why = "leaf cell outside its page";
        return -1;
    }
    const uint8_t *p = it->page + at;
    uint64_t payload, key;
    unsigned n = varint(p, end, &payload);
    if (!n) {
        *why = "leaf cell runs past its page";
        return -1;
    }
    p += n;
    if (!(n = varint(p, end, &key))) {
        *why = "leaf cell runs past its page";
        return -1;
    }
    p += n;
    if (payload > it->max_local) {
        *why = "row larger than its page (overflow pages)";
        return -1;
    }
    if (payload > (uint64_t)(end - p)) {
        *why = "leaf cell runs past its page";
        return -1;
    }
    *rowid = (int64_t)key;
    *record = p;
    *record_len = (uint32_t)payload;
    return 1;
}

/* Bytes a value of serial type t takes in the record body (types 10 and 11 are reserved:
 * UINT32_MAX). */
static uint32_t serial_size(uint64_t t)
{
    static const uint8_t SIZES[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
    if (t >= 12)
        return t > 2u * UINT32_MAX ? UINT32_MAX : (uint32_t)((t - 12) / 2);
    if (t == 10 || t == 11)
        return UINT32_MAX;
    return SIZES[t];
}

/* Big-endian two's complement integer of n bytes (1, 2, 3, 4, 6 or 8). */
static int64_t read_int(const uint8_t *p, uint32_t n)
{
    uint64_t v = (p[0] & 0x80) ? ~(uint64_t)0 : 0;
    for (uint32_t i = 0; i < n; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

int gw_record_ints(const gw_record_plan *plan, const uint8_t *record, uint32_t record_len, int64_t *values,
                   uint8_t *is_null, const char **why)
{
    const uint8_t *end = record + record_len;
    uint64_t header_len;
    unsigned n = varint(record, end, &header_len);
    if (!n || header_len > record_len || header_len < n) {
        *why = "record header runs past the record";
        return -1;
    }
    const uint8_t *type_at = record + n, *types_end = record + header_len;
    uint64_t body_at = header_len;
    int col = 0;
    for (; col < plan->columns && type_at < types_end; col++) {
        uint64_t type = *type_at;
        /* Integer and NULL types are one byte; only long strings and blobs need more. */
        if (type < 0x80)
            type_at++;
        else if ((n = varint(type_at, types_end, &type)) != 0)
            type_at += n;
        else {
            *why = "record header runs past the record";
            return -1;
        }
        uint32_t size = serial_size(type);
        if (size == UINT32_MAX || body_at + size > record_len) {
            *why = "record value runs past the record";
            return -1;
        }
        int slot = plan->slot_of[col];
        if (slot >= 0) {
            if (type == 0) {
                is_null[slot] = 1;
                values[slot] = 0;
            } else if (type <= 6) {
                is_null[slot] = 0;
                values[slot] = read_int(record + body_at, size);
            } else if (type == 8 || type == 9) {
                is_null[slot] = 0;
                values[slot] = type == 9;
            } else {
                *why = "a value that is not an integer";
                return -1;
            }
        }
        body_at += size;
    }
    /* Columns added after the row was written read as their (NULL) default. */
    for (; col < plan->columns; col++) {
        int slot = plan->slot_of[col];
        if (slot >= 0) {
            is_null[slot] = 1;
            values[slot] = 0;
        }
    }
    return 0;
}
