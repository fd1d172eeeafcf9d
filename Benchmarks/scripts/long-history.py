#!/usr/bin/env python3
"""A long synthetic model history, and how long `moult plan` takes on it (issue 40, item 4).

    Benchmarks/scripts/long-history.py [--versions 300] [--moult PATH] [--work DIR] [--hashes]

Writes DIR/History.xcdatamodeld with VERSIONS versions named as a real app's are (`History`, `2`, `3`,
... so that the names' order puts the first version last), one mapping model from each version to the
next in DIR/mappings (Moult's JSON format; with --hashes each is `moult infer --json`'s, recording the
entity hashes, as a compiled Xcode mapping model does, else it names its versions), and a store at the
first version. Every version adds an attribute to one of three entities; every tenth changes one the first
version has from String to Integer 64, which no lightweight migration infers, so those steps need their
mapping. Then it times `moult plan` from the first version to the last: with every mapping given as a
file, with the mappings folder, and with no mapping at the first version (every step inferred but the
type changes: refused, naming the edge that is missing; `--order`, as the names' order puts the first
version last), and with only the mappings of the retyping steps (each stretch between two of them
inferred).
"""
import argparse, json, os, shutil, subprocess, sys, time

ENTITIES = ["Ride", "Track", "Vehicle"]
# The attributes each entity has from the first version on.
BASE = 40


def name(index):
    return "History" if index == 0 else str(index + 1)


def attributes(index):
    """Each entity's attributes at version `index`: (name, type)."""
    result = {entity: [(f"b{number}", "String") for number in range(BASE)] for entity in ENTITIES}
    for version in range(1, index + 1):
        result[ENTITIES[version % 3]].append((f"f{version}", "String"))
        if version % 10 == 0:
            # An attribute of the first version becomes an integer.
            entity = ENTITIES[version // 10 % 3]
            target = f"b{version // 10 % BASE}"
            result[entity] = [(n, "Integer 64" if n == target else t) for n, t in result[entity]]
    return result


def contents(index):
    lines = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
             '<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="1" '
             'systemVersion="1" minimumToolsVersion="Automatic" sourceLanguage="Swift">']
    for entity, attrs in attributes(index).items():
        lines.append(f'<entity name="{entity}" syncable="YES">')
        for attr, kind in attrs:
            lines.append(f'<attribute name="{attr}" optional="YES" attributeType="{kind}"/>')
        lines.append('</entity>')
    lines.append('</model>')
    return "\n".join(lines) + "\n"


def mapping(index):
    """The JSON mapping from version index to index + 1."""
    source, destination = attributes(index), attributes(index + 1)
    entity_mappings = []
    for entity in ENTITIES:
        before = dict(source[entity])
        props = []
        for attr, kind in destination[entity]:
            if attr not in before:
                continue
            value = f"$source.{attr}"
            if before[attr] != kind:
                value = f"FUNCTION($source.{attr}, \"integerValue\")"
            props.append({"name": attr, "value": value})
        entity_mappings.append({"name": f"{entity}To{entity}", "type": "transform", "source": entity,
                                "destination": entity, "attributes": props})
    return {"format": "moult-mapping/1", "source": {"name": name(index)},
            "destination": {"name": name(index + 1)}, "entityMappings": entity_mappings}


def write_model(model, versions, name, contents):
    """Writes the versioned model MODEL: version `index` named `name(index)` with `contents(index)`, the
    last one current. (long-history-test.py writes its history with it too.)"""
    for index in range(versions):
        folder = os.path.join(model, name(index) + ".xcdatamodel")
        os.makedirs(folder)
        with open(os.path.join(folder, "contents"), "w") as file:
            file.write(contents(index))
    with open(os.path.join(model, ".xccurrentversion"), "w") as file:
        file.write('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
                   '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0"><dict>'
                   f'<key>_XCCurrentVersionName</key><string>{name(versions - 1)}.xcdatamodel</string></dict></plist>\n')


def write_history(work, versions, moult, hashes=False):
    """Writes the history into WORK (emptied first): the model, the mappings folder and a store at the
    first version. Returns (model, mapping files, store). (long-history-same.py writes its histories
    with it.)"""
    shutil.rmtree(work, ignore_errors=True)
    model = os.path.join(work, "History.xcdatamodeld")
    write_model(model, versions, name, contents)
    mappings = os.path.join(work, "mappings")
    os.makedirs(mappings)
    files = []
    for index in range(versions - 1):
        path = os.path.join(mappings, f"{name(index)}-to-{name(index + 1)}.json")
        text = json.dumps(mapping(index), indent=1)
        if hashes and (index + 1) % 10 != 0:
            text = subprocess.run([moult, "infer", "--json", "--from", os.path.join(model, name(index) + ".xcdatamodel"),
                                   "--to", os.path.join(model, name(index + 1) + ".xcdatamodel")],
                                  check=True, capture_output=True, text=True).stdout
        with open(path, "w") as file:
            file.write(text)
        files.append(path)
    store = os.path.join(work, "store.sqlite")
    subprocess.run([moult, "create", store, "--model", os.path.join(model, "History.xcdatamodel")], check=True,
                   capture_output=True)
    return model, files, store


def cases(versions, files):
    """The four cases' `moult plan` arguments after STORE --model MODEL: [(label, arguments)]."""
    mappings = os.path.dirname(files[0])
    order = ",".join(name(index) for index in range(versions))
    needed = [path for index, path in enumerate(files) if (index + 1) % 10 == 0]
    return [("every mapping as a file", [arg for path in files for arg in ("--mapping", path)]),
            ("the mappings folder", ["--mapping", mappings]),
            ("no mapping, --order", ["--order", order]),
            (f"the {len(needed)} retyping mappings only, --order",
             ["--order", order] + [arg for path in needed for arg in ("--mapping", path)])]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--versions", type=int, default=300)
    parser.add_argument("--moult", default=shutil.which("moult") or ".build/release/moult")
    parser.add_argument("--work", default="/tmp/moult-long-history")
    parser.add_argument("--hashes", action="store_true")
    args = parser.parse_args()
    model, files, store = write_history(args.work, args.versions, args.moult, args.hashes)

    def timed(label, extra):
        start = time.monotonic()
        usage = os.times()
        done = subprocess.run([args.moult, "plan", store, "--model", model] + extra, capture_output=True, text=True)
        after = os.times()
        cpu = (after.children_user - usage.children_user) + (after.children_system - usage.children_system)
        last = (done.stderr.strip().splitlines() or [""])[-1][:160]
        steps = sum(1 for line in done.stdout.splitlines() if line.startswith("step "))
        print(f"{label}\texit {done.returncode}\t{steps} steps\t{time.monotonic() - start:.2f} s wall\t{cpu:.2f} s CPU\t{last}")
        sys.stdout.flush()

    print(f"{args.versions} versions, {len(files)} mappings ({'recording hashes' if args.hashes else 'naming their versions'})")
    for label, extra in cases(args.versions, files):
        timed(label, extra)


if __name__ == "__main__":
    main()
