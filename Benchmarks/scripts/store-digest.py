#!/usr/bin/env python3
"""Print a digest of a SQLite store's content, one line per table, so two stores can be compared.

    Benchmarks/scripts/store-digest.py [--ignore-uuid] STORE

Lines (tab-separated):
  schema      <sha256 of the sorted sqlite_master entries (type, name, table, sql)>
  table NAME  <row count>  <sha256 of every row, sorted>
  metadata    <sha256 of Z_METADATA decoded: Z_VERSION, Z_UUID and the binary property list's keys>
  uuid        <Z_UUID/NSStoreUUID> (left out, and out of `metadata`, with --ignore-uuid)

Two stores with the same objects, the same primary keys, the same relationships (foreign key columns and
join tables are ordinary rows here) and the same metadata print the same lines. The store is opened
read-only (immutable when it has no -wal file), so it is never changed.
"""
import hashlib, os, plistlib, sqlite3, sys


def canonical(value):
    """A stable text for a property-list or SQLite value: dicts by sorted key, bytes as hex."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{canonical(k)}:{canonical(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, (bytes, bytearray)):
        return "x'" + bytes(value).hex() + "'"
    if isinstance(value, float):
        return repr(value)
    return repr(value)


def main():
    args = sys.argv[1:]
    ignore_uuid = False
    if args and args[0] == "--ignore-uuid":
        ignore_uuid = True
        args.pop(0)
    if len(args) != 1:
        sys.exit("usage: store-digest.py [--ignore-uuid] STORE")
    path = args[0]
    if not os.path.exists(path):
        sys.exit(f"store-digest: no such store: {path}")
    immutable = "&immutable=1" if not os.path.exists(path + "-wal") else ""
    db = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro{immutable}", uri=True)

    schema = sorted(db.execute("SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master "
                               "WHERE name NOT LIKE 'sqlite_%'"))
    print("schema\t" + hashlib.sha256(canonical(schema).encode()).hexdigest())

    tables = sorted(name for (name,) in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
    for table in tables:
        if table == "Z_METADATA":
            continue
        rows = sorted(canonical(row) for row in db.execute(f'SELECT * FROM "{table}"'))
        digest = hashlib.sha256("\n".join(rows).encode()).hexdigest()
        print(f"table {table}\t{len(rows)}\t{digest}")

    if "Z_METADATA" in tables:
        entries = []
        uuids = []
        for version, uuid, blob in db.execute("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION"):
            plist = plistlib.loads(blob) if blob else {}
            uuids.append(f"{uuid}/{plist.get('NSStoreUUID')}")
            if ignore_uuid:
                plist.pop("NSStoreUUID", None)
                uuid = None
            entries.append((version, uuid, plist))
        print("metadata\t" + hashlib.sha256(canonical(entries).encode()).hexdigest())
        if not ignore_uuid:
            print("uuid\t" + ",".join(uuids))
    db.close()


main()
