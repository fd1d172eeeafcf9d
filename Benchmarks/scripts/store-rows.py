#!/usr/bin/env python3
"""Print every row of a Core Data SQLite store, table by table, so that two stores can be compared row for row.

    Benchmarks/scripts/store-rows.py [--loose] STORE

Sections, each a header line and its rows sorted:
  table NAME COUNT        every table but Z_METADATA, Z_MODELCACHE and a virtual table's shadow tables
  table Z_PRIMARYKEY COUNT   the entities' rows (Z_ENT below 16000)
  table Z_PRIMARYKEY:history COUNT   persistent history's rows (16001 CHANGE, 16002 TRANSACTION, ...)
  metadata                Z_VERSION, Z_UUID, then one line per key of Z_PLIST, keys sorted

A value is its SQLite type and its exact content, never text that could stop at a NUL byte or round a
real: `n` (NULL), `i:<integer>`, `r:<the 64 bits in hex>`, `t:<the UTF-8 bytes in hex>`, `b:<the bytes in
hex>`. An external-storage reference (0x02, a UUID, 0x00) whose file is in the store's `_EXTERNAL_DATA`
folder is replaced by what a value kept in the row holds, `b:01<the file's bytes>`: the bytes are the
value, the file's name is not (an XML store holds the value inline).

--loose compares what Core Data's XML store can hold, and nothing it cannot:
  - `Z_OPT` (the optimistic-locking version) is left out of entity tables: the XML format has no place
    for it, and a store made from an XML store starts every object at 1, as Core Data does for an insert.
  - An order column (`Z_FOK_...`) is replaced by the rank of its value among the rows of one ordered
    relationship: the XML format holds an ordered to-many as its destinations' order (`idrefs`), not the
    numbers an SQLite store kept for it.
  - `Z_PRIMARYKEY.Z_NAME` is left out: Core Data keeps an entity's old name there after a rename, which
    no store made for the model has.
  - A date in the metadata is compared to the second: the XML store's metadata is an XML property list,
    whose `<date>` is `yyyy-MM-ddTHH:mm:ssZ` (Photos' ImportedFileSystemAssetsDate has microseconds).
Columns are compared by name (a `columns` line heads each table), not by their place in the table.

The store is opened read-only (immutable when it has no -wal file), so it is never changed.
"""
import datetime, os, plistlib, re, sqlite3, struct, sys

UUID_NAME = re.compile(rb"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")


def cell(kind, value, external):
    if kind == "null":
        return "n"
    if kind == "integer":
        return "i:%d" % value
    if kind == "real":
        return "r:" + struct.pack(">d", value).hex()
    if kind == "text":
        return "t:" + bytes(value).hex()
    value = bytes(value)
    if value[:1] == b"\x02" and value[-1:] == b"\x00" and UUID_NAME.match(value[1:-1]):
        path = os.path.join(external, value[1:-1].decode())
        if os.path.isfile(path):
            with open(path, "rb") as f:
                return "b:01" + f.read().hex()
    return "b:" + value.hex()


def canonical(value, loose):
    if isinstance(value, dict):
        return "{" + ", ".join(repr(k) + ": " + canonical(value[k], loose) for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(canonical(v, loose) for v in value) + "]"
    if isinstance(value, datetime.datetime):
        # plistlib reads a date to the microsecond; --loose to the second, all an XML property list holds.
        return repr(value.replace(microsecond=0) if loose else value)
    if isinstance(value, (bytes, bytearray)):
        return "x'" + bytes(value).hex() + "'"
    if isinstance(value, float):
        return "r:" + struct.pack(">d", value).hex()
    return repr(value)


def ranks(rows, order, group, tiebreak):
    """Each row's order value replaced by its rank (1, 2, ...) among the rows of its group."""
    groups = {}
    for index, row in enumerate(rows):
        if row[order] is not None:
            groups.setdefault(row[group], []).append(index)
    for members in groups.values():
        members.sort(key=lambda i: (rows[i][order], rows[i][tiebreak]))
        for rank, i in enumerate(members, 1):
            rows[i][order] = rank


def main():
    args = sys.argv[1:]
    loose = bool(args) and args[0] == "--loose"
    if loose:
        args.pop(0)
    if len(args) != 1:
        sys.exit("usage: store-rows.py [--loose] STORE")
    path = os.path.abspath(args[0])
    if not os.path.exists(path):
        sys.exit("store-rows: no such store: " + path)
    external = os.path.join(os.path.dirname(path), "." + os.path.splitext(os.path.basename(path))[0] + "_SUPPORT", "_EXTERNAL_DATA")
    immutable = "&immutable=1" if not os.path.exists(path + "-wal") else ""
    db = sqlite3.connect("file:%s?mode=ro%s" % (path, immutable), uri=True)
    db.text_factory = bytes
    tables = sorted(name.decode() for (name,) in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
    # A virtual table's shadow tables (an R-tree's _node, _parent, _rowid) hold its rows as SQLite lays
    # them out, which depends on the order they were inserted in: the virtual table's rows are compared.
    virtual = [name.decode() for (name,) in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND upper(sql) LIKE 'CREATE VIRTUAL TABLE%'")]
    shadows = {v + suffix for v in virtual for suffix in ("_node", "_parent", "_rowid")}
    out = sys.stdout
    for table in tables:
        if table in ("Z_METADATA", "Z_MODELCACHE") or table in shadows:
            continue
        # By name: Core Data orders a table's columns by its own rules, which a store made again need not follow.
        columns = sorted(row[1].decode() for row in db.execute('PRAGMA table_info("%s")' % table))
        if table == "Z_PRIMARYKEY" and loose:
            columns = [c for c in columns if c != "Z_NAME"]
        entity_table = {"Z_PK", "Z_ENT", "Z_OPT"} <= set(columns)
        if entity_table and loose:
            columns = [c for c in columns if c != "Z_OPT"]
        selected = ", ".join('typeof("%s"), "%s"' % (c, c) for c in columns)
        raw = [list(row) for row in db.execute('SELECT %s FROM "%s"' % (selected, table))]
        # Kinds and values apart: the ranks replace values of one column, typed integer.
        rows = [[row[2 * i + 1] for i in range(len(columns))] for row in raw]
        kinds = [[row[2 * i].decode() for i in range(len(columns))] for row in raw]
        if loose:
            for order, name in enumerate(columns):
                if not name.startswith("Z_FOK_"):
                    continue
                if entity_table:
                    # The twin of the key column Z<NAME> that says which object's relationship the row is in.
                    key = "Z" + name[len("Z_FOK_"):]
                    group, tiebreak = columns.index(key), columns.index("Z_PK")
                else:
                    # A join table: the twin of Z_<N><NAME>, ordering it among the rows of the other column's object.
                    twin = "Z_" + name[len("Z_FOK_"):]
                    tiebreak = columns.index(twin)
                    group = next(i for i, c in enumerate(columns) if not c.startswith("Z_FOK_") and c != twin)
                ranks(rows, order, group, tiebreak)
        lines = {}
        for row, kind in zip(rows, kinds):
            text = "|".join(cell(k, v, external) for k, v in zip(kind, row))
            section = table
            if table == "Z_PRIMARYKEY" and row[columns.index("Z_ENT")] >= 16000:
                section = "Z_PRIMARYKEY:history"
            lines.setdefault(section, []).append(text)
        for section in sorted(set(lines) | {table}):
            rows = sorted(lines.get(section, []))
            out.write("table %s %d\n" % (section, len(rows)))
            out.write("columns " + ",".join(columns) + "\n")
            for line in rows:
                out.write(line + "\n")
    if "Z_METADATA" in tables:
        version, uuid, blob = db.execute("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA").fetchone()
        out.write("metadata %r %s\n" % (version, bytes(uuid).decode()))
        metadata = plistlib.loads(blob)
        for key in sorted(metadata):
            out.write("key %s %s\n" % (key, canonical(metadata[key], loose)))


if __name__ == "__main__":
    main()
