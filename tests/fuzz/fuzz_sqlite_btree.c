/* libFuzzer target: the direct SQLite page reader (src/ingest/sqlite_btree.c) on its own,
 * faster than through the nsys reader: open, walk the table B-tree from every root page a
 * small file has, iterate the leaf cells and decode each record's integer columns. Every
 * offset and count comes from the bytes, so this is where a bounds slip would show. */
#include <stdlib.h>

#include "fuzz_common.h"
#include "ingest/sqlite_btree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_tree(const gw_btree_file *f, uint32_t root, uint8_t *page)
{
    const char *why = NULL;
    gw_btree_leaf *leaves = NULL;
    size_t count = 0;
    if (gw_btree_leaves(f, root, &leaves, &count, &why) != 0)
        return;
    /* Columns 0..15 into slots in a scrambled order, as the nsys plans do. */
    gw_record_plan plan;
    for (int i = 0; i < GW_BTREE_MAX_COLUMNS; i++)
        plan.slot_of[i] = i < 16 ? (int8_t)((i * 7) % 16) : -1;
    plan.columns = 16;
    for (size_t i = 0; i < count; i++) {
        if (gw_btree_read_pages(f, leaves[i].page, 1, page, &why) != 0)
            continue;
        gw_btree_leaf_iter it;
        if (gw_btree_leaf_begin(&it, f, page, leaves[i].page, &why) != 0)
            continue;
        int64_t rowid, values[16];
        uint8_t is_null[16];
        const uint8_t *record;
        uint32_t len;
        while (gw_btree_leaf_next(&it, &rowid, &record, &len, &why) == 1)
            (void)gw_record_ints(&plan, record, len, values, is_null, &why);
    }
    free(leaves);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    char path[128];
    if (gw_fuzz_file(0, data, size, path) != 0)
        return 0;
    gw_btree_file f;
    const char *why = NULL;
    if (gw_btree_open(&f, path, &why) == 0) {
        uint8_t *page = malloc(f.page_size);
        for (uint32_t root = 1; page && root <= f.page_count && root <= 64; root++)
            read_tree(&f, root, page);
        free(page);
        gw_btree_close(&f);
    }
    return 0;
}
