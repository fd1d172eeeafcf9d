#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

// MARK: - A chunk's rows, evaluated on one connection and inserted from another
//
// The engine's second core evaluates a bulk copy's SELECT for the next chunk on a connection of its
// own while the destination's connection writes the chunk before it. The rows cross between the two
// as they were computed: each value's SQLite type and its integer, real, text or blob, the text and
// blob bytes in one buffer. The destination's connection reads them back through a virtual table,
// `moult_chunk_rows`, created in its temp schema with the number of columns as the argument
// (`CREATE VIRTUAL TABLE temp.x USING moult_chunk_rows(6)`), so `INSERT … SELECT … FROM temp.x`
// writes exactly the values the SELECT made: the same records, in the same order. The table reads the
// rows its slot points to at the time of the statement; the module's client data is that slot.

typedef struct MoultChunkValue {
    union {
        sqlite3_int64 integer;  // the integer, or the offset of text or blob bytes
        double real;
    };
    int type;                   // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL
    int length;                 // bytes of text or blob
} MoultChunkValue;

typedef struct MoultChunkRows {
    int columns;
    sqlite3_int64 count;
    MoultChunkValue *values;
    sqlite3_int64 capacity;  // values allocated
    unsigned char *bytes;
    sqlite3_int64 byteCount;
    sqlite3_int64 byteCapacity;
} MoultChunkRows;

static inline MoultChunkRows *moult_chunk_rows_new(int columns) {
    MoultChunkRows *rows = (MoultChunkRows *)sqlite3_malloc64(sizeof(MoultChunkRows));
    if (!rows) return 0;
    memset(rows, 0, sizeof(*rows));
    rows->columns = columns;
    return rows;
}

static inline void moult_chunk_rows_free(MoultChunkRows *rows) {
    if (!rows) return;
    sqlite3_free(rows->values);
    sqlite3_free(rows->bytes);
    sqlite3_free(rows);
}

static inline int moult_chunk_rows_reserve(MoultChunkRows *rows, sqlite3_int64 values, sqlite3_int64 bytes) {
    if (values > rows->capacity) {
        sqlite3_int64 capacity = rows->capacity ? rows->capacity : 1024;
        while (capacity < values) capacity *= 2;
        void *grown = sqlite3_realloc64(rows->values, (sqlite3_uint64)capacity * sizeof(MoultChunkValue));
        if (!grown) return SQLITE_NOMEM;
        rows->values = (MoultChunkValue *)grown;
        rows->capacity = capacity;
    }
    if (bytes > rows->byteCapacity) {
        sqlite3_int64 capacity = rows->byteCapacity ? rows->byteCapacity : 16384;
        while (capacity < bytes) capacity *= 2;
        void *grown = sqlite3_realloc64(rows->bytes, (sqlite3_uint64)capacity);
        if (!grown) return SQLITE_NOMEM;
        rows->bytes = (unsigned char *)grown;
        rows->byteCapacity = capacity;
    }
    return SQLITE_OK;
}

/// What ``moult_chunk_rows_fill`` returns when the rows would hold more than its limit.
#define MOULT_CHUNK_ROWS_OVER_LIMIT (-1)

/// Steps `statement` to its end, appending each row's `rows->columns` first columns to `rows`, as long
/// as the rows hold at most `limit` bytes (values and text and blob bytes).
/// Returns SQLITE_DONE; MOULT_CHUNK_ROWS_OVER_LIMIT when the next row would pass the limit (the
/// statement is left where it stopped); or the error that stopped it (the statement's message says what).
static inline int moult_chunk_rows_fill(sqlite3_stmt *statement, MoultChunkRows *rows, sqlite3_int64 limit) {
    int rc;
    const int columns = rows->columns;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        if (moult_chunk_rows_reserve(rows, (rows->count + 1) * columns, 0) != SQLITE_OK) return SQLITE_NOMEM;
        const sqlite3_int64 bytesBefore = rows->byteCount;
        MoultChunkValue *row = rows->values + rows->count * columns;
        for (int column = 0; column < columns; column++) {
            MoultChunkValue *value = row + column;
            value->type = sqlite3_column_type(statement, column);
            value->length = 0;
            switch (value->type) {
            case SQLITE_INTEGER: value->integer = sqlite3_column_int64(statement, column); break;
            case SQLITE_FLOAT: value->real = sqlite3_column_double(statement, column); break;
            case SQLITE_TEXT:
            case SQLITE_BLOB: {
                const void *data = value->type == SQLITE_TEXT ? (const void *)sqlite3_column_text(statement, column)
                                                              : sqlite3_column_blob(statement, column);
                int length = sqlite3_column_bytes(statement, column);
                if (rows->byteCount + length > limit) {
                    // Over the limit: the row is left out, its bytes so far given back.
                    rows->byteCount = bytesBefore;
                    return MOULT_CHUNK_ROWS_OVER_LIMIT;
                }
                if (moult_chunk_rows_reserve(rows, 0, rows->byteCount + length) != SQLITE_OK) return SQLITE_NOMEM;
                if (length > 0) memcpy(rows->bytes + rows->byteCount, data, (size_t)length);
                value->integer = rows->byteCount;
                value->length = length;
                rows->byteCount += length;
                break;
            }
            default: break;
            }
        }
        if ((rows->count + 1) * columns * (sqlite3_int64)sizeof(MoultChunkValue) + rows->byteCount > limit) {
            rows->byteCount = bytesBefore;
            return MOULT_CHUNK_ROWS_OVER_LIMIT;
        }
        rows->count += 1;
    }
    return rc;
}

typedef struct MoultChunkRowsTable {
    sqlite3_vtab base;
    MoultChunkRows **slot;
    int columns;
} MoultChunkRowsTable;

typedef struct MoultChunkRowsCursor {
    sqlite3_vtab_cursor base;
    const MoultChunkRows *rows;
    sqlite3_int64 row;
} MoultChunkRowsCursor;

static inline int moult_chunk_rows_create(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **error) {
    int columns = argc > 3 ? (int)strtol(argv[3], 0, 10) : 0;
    if (columns < 1 || columns > 2000) {
        *error = sqlite3_mprintf("moult_chunk_rows: the number of columns must be 1 to 2000");
        return SQLITE_ERROR;
    }
    sqlite3_str *sql = sqlite3_str_new(db);
    sqlite3_str_appendall(sql, "CREATE TABLE x(");
    for (int column = 0; column < columns; column++) sqlite3_str_appendf(sql, column ? ", c%d" : "c%d", column);
    sqlite3_str_appendall(sql, ")");
    char *declaration = sqlite3_str_finish(sql);
    if (!declaration) return SQLITE_NOMEM;
    int rc = sqlite3_declare_vtab(db, declaration);
    sqlite3_free(declaration);
    if (rc != SQLITE_OK) return rc;
    MoultChunkRowsTable *table = (MoultChunkRowsTable *)sqlite3_malloc(sizeof(MoultChunkRowsTable));
    if (!table) return SQLITE_NOMEM;
    memset(table, 0, sizeof(*table));
    table->slot = (MoultChunkRows **)aux;
    table->columns = columns;
    *out = &table->base;
    return SQLITE_OK;
}
static inline int moult_chunk_rows_best_index(sqlite3_vtab *table, sqlite3_index_info *info) {
    (void)table;
    info->estimatedCost = 1e6;
    return SQLITE_OK;
}
static inline int moult_chunk_rows_disconnect(sqlite3_vtab *table) {
    sqlite3_free(table);
    return SQLITE_OK;
}
static inline int moult_chunk_rows_open(sqlite3_vtab *table, sqlite3_vtab_cursor **out) {
    MoultChunkRowsCursor *cursor = (MoultChunkRowsCursor *)sqlite3_malloc(sizeof(MoultChunkRowsCursor));
    if (!cursor) return SQLITE_NOMEM;
    memset(cursor, 0, sizeof(*cursor));
    (void)table;
    *out = &cursor->base;
    return SQLITE_OK;
}
static inline int moult_chunk_rows_close(sqlite3_vtab_cursor *cursor) {
    sqlite3_free(cursor);
    return SQLITE_OK;
}
static inline int moult_chunk_rows_filter(sqlite3_vtab_cursor *base, int index, const char *name, int argc, sqlite3_value **argv) {
    (void)index; (void)name; (void)argc; (void)argv;
    MoultChunkRowsCursor *cursor = (MoultChunkRowsCursor *)base;
    MoultChunkRowsTable *table = (MoultChunkRowsTable *)base->pVtab;
    const MoultChunkRows *rows = *table->slot;
    if (rows && rows->columns != table->columns) {
        table->base.zErrMsg = sqlite3_mprintf("moult_chunk_rows: the rows have %d columns, the table %d", rows->columns, table->columns);
        return SQLITE_ERROR;
    }
    cursor->rows = rows;
    cursor->row = 0;
    return SQLITE_OK;
}
static inline int moult_chunk_rows_next(sqlite3_vtab_cursor *base) {
    ((MoultChunkRowsCursor *)base)->row += 1;
    return SQLITE_OK;
}
static inline int moult_chunk_rows_eof(sqlite3_vtab_cursor *base) {
    MoultChunkRowsCursor *cursor = (MoultChunkRowsCursor *)base;
    return !cursor->rows || cursor->row >= cursor->rows->count;
}
static inline int moult_chunk_rows_column(sqlite3_vtab_cursor *base, sqlite3_context *context, int column) {
    MoultChunkRowsCursor *cursor = (MoultChunkRowsCursor *)base;
    const MoultChunkRows *rows = cursor->rows;
    const MoultChunkValue *value = rows->values + cursor->row * rows->columns + column;
    switch (value->type) {
    case SQLITE_INTEGER: sqlite3_result_int64(context, value->integer); break;
    case SQLITE_FLOAT: sqlite3_result_double(context, value->real); break;
    // An empty text or blob may have no bytes buffer at all: a null pointer would make it NULL.
    case SQLITE_TEXT:
        if (value->length == 0) sqlite3_result_text(context, "", 0, SQLITE_STATIC);
        else sqlite3_result_text(context, (const char *)rows->bytes + value->integer, value->length, SQLITE_STATIC);
        break;
    case SQLITE_BLOB:
        if (value->length == 0) sqlite3_result_zeroblob(context, 0);
        else sqlite3_result_blob(context, rows->bytes + value->integer, value->length, SQLITE_STATIC);
        break;
    default: sqlite3_result_null(context); break;
    }
    return SQLITE_OK;
}
static inline int moult_chunk_rows_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *out) {
    *out = ((MoultChunkRowsCursor *)base)->row + 1;
    return SQLITE_OK;
}

/// Registers `moult_chunk_rows` on a connection; `slot` (owned by the caller, alive as long as the
/// connection) points to the rows its tables read.
static inline int moult_chunk_rows_register(sqlite3 *db, MoultChunkRows **slot) {
    static const sqlite3_module module = {
        0,
        moult_chunk_rows_create, moult_chunk_rows_create, moult_chunk_rows_best_index,
        moult_chunk_rows_disconnect, moult_chunk_rows_disconnect,
        moult_chunk_rows_open, moult_chunk_rows_close, moult_chunk_rows_filter, moult_chunk_rows_next,
        moult_chunk_rows_eof, moult_chunk_rows_column, moult_chunk_rows_rowid,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    };
    return sqlite3_create_module_v2(db, "moult_chunk_rows", &module, slot, 0);
}
