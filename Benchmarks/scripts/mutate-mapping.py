#!/usr/bin/env python3
"""One seeded mutation of an inferred mapping (moult infer --json) for the mutation test of `moult test`
(mutation-test.sh): a mapping that loses data in one way, or one that is right.

    mutate-mapping.py KIND SEED MAPPING.json MODEL_V1_CONTENTS STORE.sqlite OUT.json

KIND is one of
  filter        a filter that rejects every object of an entity with objects
  attribute     an attribute mapping removed (its destination attribute still exists; values in the store)
  expression    an attribute's expression replaced by another attribute's of the same entity, or by nil
  relationship  a relationship with values left out, both sides (neither it nor its inverse is read)
  right         the mapping as inferred, its copies written in the equivalent forms Xcode and Core Data use
Exits 3 when the mapping offers nothing the kind can change with data behind it (try another pair).
Prints what it changed.
"""
import json
import random
import sqlite3
import sys
import xml.etree.ElementTree as ElementTree

kind, seed, mapping_path, contents_path, store_path, out_path = sys.argv[1:7]
rng = random.Random(f"{kind}-{seed}")
mapping = json.load(open(mapping_path))
model = ElementTree.parse(contents_path).getroot()
entities = {e.get("name"): e for e in model.findall("entity")}
store = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
numbers = {name: (number, sup) for number, name, sup in store.execute("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY")}


def table(entity):
    """The table of an entity's hierarchy and the condition selecting its own objects."""
    number, sup = numbers[entity]
    root = entity
    while sup:
        root = next(name for name, (n, _) in numbers.items() if n == sup)
        sup = numbers[root][1]
    return f"Z{root.upper()}", f"Z_ENT = {number}"


def objects(entity):
    if entity not in numbers:
        return 0
    name, where = table(entity)
    return store.execute(f"SELECT count(*) FROM {name} WHERE {where}").fetchone()[0]


def values(entity, column):
    name, where = table(entity)
    try:
        return store.execute(f'SELECT count("Z{column.upper()}") FROM {name} WHERE {where}').fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def attribute_type(entity, name):
    for element in entities.get(entity, []):
        if element.tag == "attribute" and element.get("name") == name:
            return element.get("attributeType"), element.get("transient") == "YES"
    return None, True


def done(text):
    json.dump(mapping, open(out_path, "w"), indent=1)
    print(text)
    sys.exit(0)


# A pair whose versions have the same hashes has nothing to migrate: no mutation can lose anything.
if mapping["source"].get("entityVersionHashes") == mapping["destination"].get("entityVersionHashes"):
    sys.exit(3)

mappings = [m for m in mapping["entityMappings"] if m.get("source") and m.get("destination")]
rng.shuffle(mappings)

if kind == "right":
    changed = 0
    for m in mapping["entityMappings"]:
        for a in m.get("attributes", []):
            value = a.get("value", "")
            if value.startswith("$source.") and rng.random() < 0.5:
                a["value"] = f'FUNCTION($source, "valueForKey:", "{value[len("$source."):]}")'
                m["type"] = "transform"
                changed += 1
    done(f"right: {changed} copies written as valueForKey:")

for m in mappings:
    source = m["source"]
    if objects(source) == 0:
        continue
    attributes = [a for a in m.get("attributes", []) if a.get("value", "").startswith("$source.")]
    read = [(a, a["value"][len("$source."):]) for a in attributes]
    with_values = [(a, key) for a, key in read if not attribute_type(source, key)[1] and values(source, key) > 0]
    if kind == "filter":
        key = next((key for _, key in read if not attribute_type(source, key)[1]), None)
        if key is None:
            continue
        m["filter"] = f"{key} == nil AND {key} != nil"
        m["type"] = "transform"
        done(f"filter: {m['name']} rejects every {source} ({objects(source)} objects)")
    if kind == "attribute" and with_values:
        a, key = rng.choice(with_values)
        m["attributes"].remove(a)
        m["type"] = "transform"
        done(f"attribute: {m['name']} no longer maps {a['name']} ({source}.{key}: {values(source, key)} values)")
    if kind == "expression" and with_values:
        a, key = rng.choice(with_values)
        kind_of = attribute_type(source, key)[0]
        others = [k for _, k in read if k != key and attribute_type(source, k)[0] == kind_of]
        a["value"] = f"$source.{rng.choice(others)}" if others else "nil"
        # Nothing else may read the attribute, or its values are still carried.
        for other in m.get("attributes", []):
            if other is not a and other.get("value") == f"$source.{key}":
                other["value"] = "nil"
        m["type"] = "transform"
        done(f"expression: {m['name']}.{a['name']} = {a['value']} ({source}.{key}: {values(source, key)} values)")
    if kind == "relationship":
        for r in m.get("relationships", []):
            element = next((e for e in entities[source] if e.tag == "relationship" and e.get("name") == r["name"]), None)
            if element is None or element.get("toMany") == "YES" or values(source, r["name"]) == 0:
                continue
            inverse, target = element.get("inverseName"), element.get("destinationEntity")
            m["relationships"].remove(r)
            m["type"] = "transform"
            for other in mapping["entityMappings"]:
                if other.get("source") == target:
                    other["relationships"] = [x for x in other.get("relationships", []) if x["name"] != inverse]
                    other["type"] = "transform"
            done(f"relationship: {source}.{r['name']} and {target}.{inverse} left out ({values(source, r['name'])} links)")
sys.exit(3)
