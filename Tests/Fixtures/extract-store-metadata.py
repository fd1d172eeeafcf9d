#!/usr/bin/env python3
"""Writes store-metadata.json: the version hashes, digest and checksum each fixture store's
Z_METADATA holds, decoded from its binary property list. Run from Tests/Fixtures when stores change.
Stores are copied (with -wal/-shm) before opening, so fixtures are never touched."""
import glob, json, os, plistlib, shutil, sqlite3, tempfile

entries = []
for store in sorted(glob.glob("**/*.sqlite", recursive=True)):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "store.sqlite")
        for suffix in ["", "-wal", "-shm"]:
            if os.path.exists(store + suffix):
                shutil.copy(store + suffix, copy + suffix)
        connection = sqlite3.connect(copy)
        (blob,) = connection.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()
        connection.close()
    metadata = plistlib.loads(blob)
    hashes = metadata.get("NSStoreModelVersionHashes", {})
    entries.append({
        "store": store,
        "versionHashes": {name: bytes(value).hex() for name, value in sorted(hashes.items())},
        "versionIdentifiers": list(metadata.get("NSStoreModelVersionIdentifiers", [])),
        "digest": metadata.get("NSStoreModelVersionHashesDigest"),
        "checksum": metadata.get("NSStoreModelVersionChecksumKey"),
    })
with open("store-metadata.json", "w") as out:
    json.dump(entries, out, indent=1, sort_keys=True)
    out.write("\n")
