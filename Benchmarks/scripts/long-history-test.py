#!/usr/bin/env python3
"""`moult test` on a long generated model history (issue 39, item 6): how long every version takes by
every path.

    Benchmarks/scripts/long-history-test.py [--versions 100] [--objects 30] [--moult PATH] [--work DIR]

Writes DIR/History.xcdatamodeld with VERSIONS versions (`v001`, `v002`, ...) of three entities (Ride,
Track, Vehicle: a to-one with its to-many inverse, a many-to-many, an optional one-to-one) and a mappings
folder, then runs `moult test MODEL --mapping DIR/mappings --objects OBJECTS --json` once: a generated store
of every version but the last, each migrated to the last by every path (into a new store, in place,
stopped and resumed), verified and compared. Every version adds an attribute to one entity (String,
Integer 64, Date or Double in turn); every seventh renames one (renaming identifier: inferred); every
twenty-fifth renames one without an identifier, so that the step needs its mapping model (Moult's JSON, in
the mappings folder): a store of an early version crosses four of those, its chain several steps long.

Prints the wall and CPU time of the whole command (its children's included), the load average before and
after, and the stores and paths that passed. No timing is asserted anywhere: the figure goes in
BENCHMARKS.md.
"""
import argparse, importlib.util, json, os, shutil, subprocess, sys, time

# The model writer of long-history.py (its file name is not a module name).
_spec = importlib.util.spec_from_file_location("long_history", os.path.join(os.path.dirname(os.path.abspath(__file__)), "long-history.py"))
long_history = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(long_history)

ENTITIES = ["Ride", "Track", "Vehicle"]
TYPES = ["String", "Integer 64", "Date", "Double"]


def name(index):
    return f"v{index + 1:03d}"


def attributes(index):
    """Each entity's attributes at version `index`: [(name, type, renaming identifier)], and the name of
    the attribute each entity's first one (b0) has become through the renames without identifier."""
    result = {entity: [(f"b{n}", "String", None) for n in range(4)] for entity in ENTITIES}
    carrier = {entity: "b0" for entity in ENTITIES}
    for version in range(1, index + 1):
        result[ENTITIES[version % 3]].append((f"f{version}", TYPES[version % 4], None))
        if version % 25 == 0:
            # Renamed with no identifier: only the mapping model carries the values.
            target = ENTITIES[(version // 25) % 3]
            result[target] = [(f"m{version}", t, None) if n == carrier[target] else (n, t, r) for n, t, r in result[target]]
            carrier[target] = f"m{version}"
        elif version % 7 == 0:
            # Renamed with the previous name as its renaming identifier: inferred.
            target = ENTITIES[(version // 7) % 3]
            old, kind, _ = result[target][1]
            result[target][1] = (f"r{version}", kind, old)
    return result, carrier


# Each entity's relationships: (name, destination, inverse, to-many).
RELATIONSHIPS = {
    "Ride": [("vehicle", "Vehicle", "rides", False), ("tracks", "Track", "rides", True)],
    "Track": [("rides", "Ride", "tracks", True), ("home", "Vehicle", "track", False)],
    "Vehicle": [("rides", "Ride", "vehicle", True), ("track", "Track", "home", False)],
}


def contents(index):
    lines = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
             '<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="1" '
             'systemVersion="1" minimumToolsVersion="Automatic" sourceLanguage="Swift">']
    for entity, attrs in attributes(index)[0].items():
        lines.append(f'<entity name="{entity}" syncable="YES">')
        for attr, kind, renamed in attrs:
            identifier = f' elementID="{renamed}"' if renamed else ""
            lines.append(f'<attribute name="{attr}" optional="YES" attributeType="{kind}"{identifier}/>')
        for relationship, destination, inverse, to_many in RELATIONSHIPS[entity]:
            cardinality = 'toMany="YES"' if to_many else 'maxCount="1"'
            lines.append(f'<relationship name="{relationship}" optional="YES" {cardinality} deletionRule="Nullify" '
                         f'destinationEntity="{destination}" inverseName="{inverse}" inverseEntity="{destination}"/>')
        lines.append('</entity>')
    lines.append('</model>')
    return "\n".join(lines) + "\n"


def mapping(index):
    """The JSON mapping from version index to index + 1 (a rename without identifier): every attribute
    copied from the one of the same name (or the renamed one's, from its old name), every relationship
    carried through the mapping of its destination."""
    (source, source_carrier), (destination, destination_carrier) = attributes(index), attributes(index + 1)
    entity_mappings = []
    for entity in ENTITIES:
        before = {n for n, _, _ in source[entity]}
        props = []
        for attr, _, _ in destination[entity]:
            origin = source_carrier[entity] if attr == destination_carrier[entity] else attr
            if origin in before:
                props.append({"name": attr, "value": f"$source.{origin}"})
        links = [{"name": relationship,
                  "value": f'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "{target}To{target}", $source.{relationship})'}
                 for relationship, target, _, _ in RELATIONSHIPS[entity]]
        entity_mappings.append({"name": f"{entity}To{entity}", "type": "transform", "source": entity, "destination": entity,
                                "attributes": props, "relationships": links})
    return {"format": "moult-mapping/1", "source": {"name": name(index)}, "destination": {"name": name(index + 1)},
            "entityMappings": entity_mappings}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--versions", type=int, default=100)
    parser.add_argument("--objects", type=int, default=30)
    parser.add_argument("--moult", default=shutil.which("moult") or ".build/release/moult")
    parser.add_argument("--work", default="/tmp/moult-long-history-test")
    args = parser.parse_args()
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    model = os.path.join(work, "History.xcdatamodeld")
    long_history.write_model(model, args.versions, name, contents)
    mappings = os.path.join(work, "mappings")
    os.makedirs(mappings)
    for index in range(args.versions - 1):
        if (index + 1) % 25 == 0:
            with open(os.path.join(mappings, f"{name(index)}-to-{name(index + 1)}.json"), "w") as file:
                json.dump(mapping(index), file, indent=1)
    command = [args.moult, "test", model, "--mapping", mappings, "--objects", str(args.objects), "--json", "--work", os.path.join(work, "run")]
    print(" ".join(command))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    sys.stdout.flush()
    start, usage = time.monotonic(), os.times()
    done = subprocess.run(command, capture_output=True, text=True)
    wall, after = time.monotonic() - start, os.times()
    cpu = (after.children_user - usage.children_user) + (after.children_system - usage.children_system)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with open(os.path.join(work, "report.json"), "w") as file:
        file.write(done.stdout)
    with open(os.path.join(work, "stderr.txt"), "w") as file:
        file.write(done.stderr)
    try:
        report = json.loads(done.stdout)
        sources = report["sources"]
        paths = [path for source in sources for path in source["paths"]]
        passed = sum(1 for path in paths if path["passed"])
        accounts = sum(1 for source in sources if source.get("accountFailure"))
        summary = f"{len(sources)} stores, {passed} of {len(paths)} paths passed, {accounts} account failures"
    except (ValueError, KeyError):
        summary = "no JSON report: " + done.stderr.strip()[-400:]
    print(f"{args.versions} versions, {args.objects} objects: exit {done.returncode}, {wall:.1f} s wall, {cpu:.1f} s CPU; {summary}")


if __name__ == "__main__":
    main()
