#!/usr/bin/env python3
"""Writes store-metadata.json: the version hashes, digest and checksum each fixture store's
Z_METADATA holds, decoded from its binary property list. Run from Tests/Fixtures when stores change.
Stores are copied (with -wal/-shm) before opening, so fixtures are never touched. The folders of
cases of our own (regressions/, fuzz-corpus/) are not Core Data's files and are left out."""
import glob, json, os, plistlib, shutil, sqlite3, tempfile


def metadata(store):
    """The metadata property list of `store`, read from a copy of it (with its -wal and -shm)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "store.sqlite")
        for suffix in ["", "-wal", "-shm"]:
            if os.path.exists(store + suffix):
                shutil.copy(store + suffix, copy + suffix)
        connection = sqlite3.connect(copy)
        (blob,) = connection.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()
        connection.close()
    return plistlib.loads(blob)


if __name__ == "__main__":
    entries = []
    for store in sorted(glob.glob("**/*.sqlite", recursive=True)):
        if store.startswith(("regressions/", "fuzz-corpus/")):
            continue
        plist = metadata(store)
        hashes = plist.get("NSStoreModelVersionHashes", {})
        entries.append({
            "store": store,
            "versionHashes": {name: bytes(value).hex() for name, value in sorted(hashes.items())},
            "versionIdentifiers": list(plist.get("NSStoreModelVersionIdentifiers", [])),
            "digest": plist.get("NSStoreModelVersionHashesDigest"),
            "checksum": plist.get("NSStoreModelVersionChecksumKey"),
        })
    with open("store-metadata.json", "w") as out:
        json.dump(entries, out, indent=1, sort_keys=True)
        out.write("\n")
