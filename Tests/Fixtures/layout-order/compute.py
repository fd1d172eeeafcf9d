#!/usr/bin/env python3
"""Core Data's property order (CORE-DATA-FORMATS.md §3), computed independently of Moult's Swift code.

Written from the formulas of the format notes alone, to give the expected values pinned in
Tests/MoultStoreTests/PropertyOrderTests.swift. Run: python3 compute.py
"""

M = 0xFFFFFFFF


def group_hash(units, length):
    h = length & M
    whole = len(units) // 4 * 4
    for i in range(0, whole, 4):
        a, b, c, d = units[i:i + 4]
        h = (h * 67503105 + 16974593 * a + 66049 * b + 257 * c + d) & M
    for u in units[whole:]:
        h = (h * 257 + u) & M
    return (h + (h << (length % 32))) & M


def utf16(key):
    data = key.encode("utf-16-le")
    return [data[i] | data[i + 1] << 8 for i in range(0, len(data), 2)]


def hash_a(key):
    units = utf16(key)
    n = len(units)
    sampled = units[:8] + units[-16:] if n > 23 else units
    return group_hash(sampled, n)


def hash_b(key):
    units = utf16(key)
    n = len(units)
    sampled = units[:32] + units[n // 2 - 16:n // 2 + 16] + units[-32:] if n >= 97 else units
    h = group_hash(sampled, n)
    v5 = ((1264676453 - h) & M) ^ (((h - 1) << 8) & M)
    v6 = ((2 - h - v5) & M) ^ (v5 >> 13)
    v7 = ((h - 1 - v5 - v6) & M) ^ (v6 >> 12)
    v8 = ((v5 - v6 - v7) & M) ^ ((v7 << 16) & M)
    v9 = ((v6 - v7 - v8) & M) ^ (v8 >> 5)
    v10 = ((v7 - v8 - v9) & M) ^ (v9 >> 3)
    t = ((v8 - v9 - v10) & M) ^ ((v10 << 10) & M)
    return ((v9 - v10 - t) & M) ^ (t >> 15)


def place(slots, key, h):
    i = h % len(slots)
    while slots[i] is not None:
        i = (i + 1) % len(slots)
    slots[i] = key


SIZES_A = [(5, 4), (11, 8), (23, 17), (41, 29), (67, 47), (113, 76), (199, 123), (317, 199), (521, 322),
           (839, 521), (1361, 843), (2207, 1364), (3571, 2207), (5779, 3571), (9349, 5778), (15121, 9349)]


def table_a(keys):
    buckets = next(b for b, cap in SIZES_A if cap >= len(keys))
    slots = [None] * buckets
    for k in keys:
        place(slots, k, hash_a(k))
    return [k for k in slots if k is not None]


def table_b(keys):
    capacity, slots, count = 3, [None] * 4, 0
    for k in keys:
        if count == capacity:
            capacity = 3 << (count // 3).bit_length()
            old = [x for x in slots if x is not None]
            slots = [None] * (4 << ((capacity - 1) // 3).bit_length())
            for x in old:
                place(slots, x, hash_b(x))
        place(slots, k, hash_b(k))
        count += 1
    return [k for k in slots if k is not None]


def order(keys):
    return table_a(table_b(keys))


CASES = {
    # name: keys in declaration order
    "short": ["_ent", "_pk", "_opt", "name", "tags"],
    "grows": ["_ent", "_pk", "_opt", "title", "_ZOWNER", "owner", "albums", "assets", "keywords", "people",
              "albumLists", "moments", "rating", "z"],
    "long keys": ["_ent", "_pk", "_opt", "suggestionsBeingRepresentativeAssets", "memoriesBeingRepresentativeAssets",
                  "a" * 97, "b" * 100 + "c" * 3],
    "competing": ["_ent", "_pk", "_opt", "label", "followers", "following"],
}

if __name__ == "__main__":
    for key in ["", "a", "_pk", "albums", "suggestionsBeingRepresentativeAssets", "x" * 97 + "yz"]:
        print(f"hash {key[:40]!r} (len {len(key)}): A {hash_a(key)} B {hash_b(key)}")
    for name, keys in CASES.items():
        print(name, "B:", table_b(keys))
        print(name, "A:", order(keys))
