#include <sqlite3.h>
#include <string.h>
#include "chunk_rows.h"

// MARK: - A read-only VFS whose WAL index lives in private memory
//
// SQLite reads a WAL-mode database through its wal-index, normally the `-shm` file beside it, which it
// creates when missing, even on a read-only connection. Moult must read a store's committed `-wal`
// content without creating (or writing) anything beside the store. This VFS wraps the default one and
// changes only the shared-memory methods: each open file gets its own wal-index in private, zeroed
// memory, so the connection rebuilds the index from the `-wal` file (SQLite's recovery, which reads
// the WAL and writes nothing but the index) and never touches a `-shm` file. It is only for connections
// opened read-only by a process that is the store's only user: the private index is not shared with
// any other connection, so its locks are granted at once.

typedef struct MoultPrivateShmFile {
    sqlite3_file base;
    sqlite3_file *real;
    void **regions;
    int regionCount;
    int padding;
} MoultPrivateShmFile;

#define MOULT_REAL(file) (((MoultPrivateShmFile *)(file))->real)

static inline void moult_private_shm_free(MoultPrivateShmFile *file) {
    for (int i = 0; i < file->regionCount; i++) sqlite3_free(file->regions[i]);
    sqlite3_free(file->regions);
    file->regions = 0;
    file->regionCount = 0;
}

static inline int moult_private_shm_close(sqlite3_file *file) {
    MoultPrivateShmFile *p = (MoultPrivateShmFile *)file;
    moult_private_shm_free(p);
    return p->real->pMethods ? p->real->pMethods->xClose(p->real) : SQLITE_OK;
}
static inline int moult_private_shm_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    return MOULT_REAL(f)->pMethods->xRead(MOULT_REAL(f), buffer, amount, offset);
}
static inline int moult_private_shm_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    return MOULT_REAL(f)->pMethods->xWrite(MOULT_REAL(f), buffer, amount, offset);
}
static inline int moult_private_shm_truncate(sqlite3_file *f, sqlite3_int64 size) {
    return MOULT_REAL(f)->pMethods->xTruncate(MOULT_REAL(f), size);
}
static inline int moult_private_shm_sync(sqlite3_file *f, int flags) {
    return MOULT_REAL(f)->pMethods->xSync(MOULT_REAL(f), flags);
}
static inline int moult_private_shm_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    return MOULT_REAL(f)->pMethods->xFileSize(MOULT_REAL(f), size);
}
static inline int moult_private_shm_lock(sqlite3_file *f, int level) {
    return MOULT_REAL(f)->pMethods->xLock(MOULT_REAL(f), level);
}
static inline int moult_private_shm_unlock(sqlite3_file *f, int level) {
    return MOULT_REAL(f)->pMethods->xUnlock(MOULT_REAL(f), level);
}
static inline int moult_private_shm_check_reserved(sqlite3_file *f, int *out) {
    return MOULT_REAL(f)->pMethods->xCheckReservedLock(MOULT_REAL(f), out);
}
static inline int moult_private_shm_file_control(sqlite3_file *f, int op, void *argument) {
    return MOULT_REAL(f)->pMethods->xFileControl(MOULT_REAL(f), op, argument);
}
static inline int moult_private_shm_sector_size(sqlite3_file *f) {
    return MOULT_REAL(f)->pMethods->xSectorSize(MOULT_REAL(f));
}
static inline int moult_private_shm_device(sqlite3_file *f) {
    return MOULT_REAL(f)->pMethods->xDeviceCharacteristics(MOULT_REAL(f));
}

/// Region `index` of the private wal-index, allocated zeroed on first use.
static inline int moult_private_shm_map(sqlite3_file *f, int index, int size, int extend, void volatile **out) {
    MoultPrivateShmFile *p = (MoultPrivateShmFile *)f;
    (void)extend;
    if (index < 0 || size <= 0) return SQLITE_IOERR_SHMMAP;
    if (index >= p->regionCount) {
        void **grown = (void **)sqlite3_realloc64(p->regions, (sqlite3_uint64)(index + 1) * sizeof(void *));
        if (!grown) return SQLITE_IOERR_NOMEM;
        for (int i = p->regionCount; i <= index; i++) grown[i] = 0;
        p->regions = grown;
        p->regionCount = index + 1;
    }
    if (!p->regions[index]) {
        void *region = sqlite3_malloc64((sqlite3_uint64)size);
        if (!region) return SQLITE_IOERR_NOMEM;
        memset(region, 0, (size_t)size);
        p->regions[index] = region;
    }
    *out = p->regions[index];
    return SQLITE_OK;
}
static inline int moult_private_shm_shm_lock(sqlite3_file *f, int offset, int count, int flags) {
    (void)f; (void)offset; (void)count; (void)flags;
    return SQLITE_OK;
}
static inline void moult_private_shm_barrier(sqlite3_file *f) {
    (void)f;
    __sync_synchronize();
}
static inline int moult_private_shm_unmap(sqlite3_file *f, int deleteFlag) {
    (void)deleteFlag;
    moult_private_shm_free((MoultPrivateShmFile *)f);
    return SQLITE_OK;
}

static inline const sqlite3_io_methods *moult_private_shm_methods(void) {
    static const sqlite3_io_methods methods = {
        2,
        moult_private_shm_close, moult_private_shm_read, moult_private_shm_write, moult_private_shm_truncate,
        moult_private_shm_sync, moult_private_shm_file_size, moult_private_shm_lock, moult_private_shm_unlock,
        moult_private_shm_check_reserved, moult_private_shm_file_control, moult_private_shm_sector_size,
        moult_private_shm_device, moult_private_shm_map, moult_private_shm_shm_lock, moult_private_shm_barrier,
        moult_private_shm_unmap, 0, 0,
    };
    return &methods;
}

#define MOULT_BASE(vfs) ((sqlite3_vfs *)(vfs)->pAppData)

static inline int moult_private_shm_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    MoultPrivateShmFile *p = (MoultPrivateShmFile *)file;
    memset(p, 0, sizeof(*p));
    p->real = (sqlite3_file *)&p[1];
    int rc = MOULT_BASE(vfs)->xOpen(MOULT_BASE(vfs), name, p->real, flags, outFlags);
    p->base.pMethods = p->real->pMethods ? moult_private_shm_methods() : 0;
    return rc;
}
static inline int moult_private_shm_delete(sqlite3_vfs *vfs, const char *name, int sync) {
    return MOULT_BASE(vfs)->xDelete(MOULT_BASE(vfs), name, sync);
}
static inline int moult_private_shm_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    return MOULT_BASE(vfs)->xAccess(MOULT_BASE(vfs), name, flags, out);
}
static inline int moult_held_path(const char *name, int size, char *out);
static inline int moult_private_shm_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    int held = moult_held_path(name, size, out);
    return held >= 0 ? held : MOULT_BASE(vfs)->xFullPathname(MOULT_BASE(vfs), name, size, out);
}
static inline void *moult_private_shm_dlopen(sqlite3_vfs *vfs, const char *name) {
    return MOULT_BASE(vfs)->xDlOpen(MOULT_BASE(vfs), name);
}
static inline void moult_private_shm_dlerror(sqlite3_vfs *vfs, int size, char *out) {
    MOULT_BASE(vfs)->xDlError(MOULT_BASE(vfs), size, out);
}
static inline void (*moult_private_shm_dlsym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    return MOULT_BASE(vfs)->xDlSym(MOULT_BASE(vfs), handle, symbol);
}
static inline void moult_private_shm_dlclose(sqlite3_vfs *vfs, void *handle) {
    MOULT_BASE(vfs)->xDlClose(MOULT_BASE(vfs), handle);
}
static inline int moult_private_shm_randomness(sqlite3_vfs *vfs, int size, char *out) {
    return MOULT_BASE(vfs)->xRandomness(MOULT_BASE(vfs), size, out);
}
static inline int moult_private_shm_sleep(sqlite3_vfs *vfs, int microseconds) {
    return MOULT_BASE(vfs)->xSleep(MOULT_BASE(vfs), microseconds);
}
static inline int moult_private_shm_current_time(sqlite3_vfs *vfs, double *out) {
    return MOULT_BASE(vfs)->xCurrentTime(MOULT_BASE(vfs), out);
}
static inline int moult_private_shm_last_error(sqlite3_vfs *vfs, int size, char *out) {
    return MOULT_BASE(vfs)->xGetLastError ? MOULT_BASE(vfs)->xGetLastError(MOULT_BASE(vfs), size, out) : 0;
}
static inline int moult_private_shm_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    if (MOULT_BASE(vfs)->iVersion >= 2 && MOULT_BASE(vfs)->xCurrentTimeInt64) {
        return MOULT_BASE(vfs)->xCurrentTimeInt64(MOULT_BASE(vfs), out);
    }
    double days = 0;
    int rc = MOULT_BASE(vfs)->xCurrentTime(MOULT_BASE(vfs), &days);
    *out = (sqlite3_int64)(days * 86400000.0);
    return rc;
}

/// Registers the VFS (once; later calls do nothing) and returns its name, or 0 when SQLite has no
/// default VFS to wrap. Call it from one thread at a time (Moult calls it from a Swift lazy global).
static inline const char *moult_register_private_shm_vfs(void) {
    static sqlite3_vfs vfs;
    static int registered = 0;
    if (registered) return vfs.zName;
    sqlite3_vfs *base = sqlite3_vfs_find(0);
    if (!base) return 0;
    memset(&vfs, 0, sizeof(vfs));
    vfs.iVersion = 2;
    vfs.szOsFile = (int)sizeof(MoultPrivateShmFile) + base->szOsFile;
    vfs.mxPathname = base->mxPathname;
    vfs.zName = "moult-private-shm";
    vfs.pAppData = base;
    vfs.xOpen = moult_private_shm_open;
    vfs.xDelete = moult_private_shm_delete;
    vfs.xAccess = moult_private_shm_access;
    vfs.xFullPathname = moult_private_shm_full_pathname;
    vfs.xDlOpen = moult_private_shm_dlopen;
    vfs.xDlError = moult_private_shm_dlerror;
    vfs.xDlSym = moult_private_shm_dlsym;
    vfs.xDlClose = moult_private_shm_dlclose;
    vfs.xRandomness = moult_private_shm_randomness;
    vfs.xSleep = moult_private_shm_sleep;
    vfs.xCurrentTime = moult_private_shm_current_time;
    vfs.xGetLastError = moult_private_shm_last_error;
    vfs.xCurrentTimeInt64 = moult_private_shm_current_time_int64;
    if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) return 0;
    registered = 1;
    return vfs.zName;
}

// MARK: - A VFS for files in a folder the run holds
//
// A file in a folder Moult holds open for a run is given to SQLite as `/proc/self/fd/N/NAME`, N being a
// descriptor of that folder, so that the kernel finds the folder the run holds wherever it now is. The
// unix VFS's xFullPathname would undo that: it follows every symbolic link of a path (and the magic link
// `/proc/self/fd/N` is one), naming the folder by the path it has at that instant, and then opens the
// `-journal`, `-wal` and `-shm` by that path, later, wherever it then leads (with
// SQLITE_OPEN_NOFOLLOW it refuses the path instead: SQLITE_CANTOPEN_SYMLINK). This VFS is the default
// one with one change: a path under `/proc/self/fd/` is its own full path, so that every file of the
// connection is opened through the descriptor. The private-memory VFS above does the same.

/// Copies `name` to `out` when it is a path under `/proc/self/fd/`: SQLITE_OK, or SQLITE_CANTOPEN when it
/// does not fit; -1 for any other path.
static inline int moult_held_path(const char *name, int size, char *out) {
    static const char prefix[] = "/proc/self/fd/";
    if (!name || strncmp(name, prefix, sizeof(prefix) - 1) != 0) return -1;
    size_t length = strlen(name);
    if (length + 1 > (size_t)size) return SQLITE_CANTOPEN;
    memcpy(out, name, length + 1);
    return SQLITE_OK;
}

/// The default VFS the held-folder VFS is a copy of.
static inline sqlite3_vfs **moult_held_base(void) {
    static sqlite3_vfs *base = 0;
    return &base;
}

static inline int moult_held_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    int held = moult_held_path(name, size, out);
    sqlite3_vfs *base = *moult_held_base();
    return held >= 0 ? held : base->xFullPathname(base, name, size, out);
}

/// Registers the held-folder VFS (once; later calls do nothing) and returns its name, or 0 when SQLite
/// has no default VFS to copy. Call it from one thread at a time (Moult calls it from a Swift lazy global).
static inline const char *moult_register_held_vfs(void) {
    static sqlite3_vfs vfs;
    static int registered = 0;
    if (registered) return vfs.zName;
    sqlite3_vfs *base = sqlite3_vfs_find(0);
    if (!base) return 0;
    *moult_held_base() = base;
    vfs = *base;
    vfs.pNext = 0;
    vfs.zName = "moult-held";
    vfs.xFullPathname = moult_held_full_pathname;
    if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) return 0;
    registered = 1;
    return vfs.zName;
}
