#!/usr/bin/env python3
"""Issue 40's figures, measured on the corpus of real model histories in Tests/Fixtures (files made by
Xcode and Core Data, copied from public repositories), with `moult` run as a user runs it.

    Benchmarks/scripts/corpus-figures.py [--moult PATH] [--objects N] [--no-test] [--json FILE]
        defaults: the release build (.build/release/moult, built when missing), 50 objects per
        generated store for `moult test`

Figures:
- entity hashes: every entity version hash Core Data wrote (each store's metadata,
  NSStoreModelVersionHashes; each compiled model's VersionInfo.plist), against `moult hash` of the
  version that made it (version-hashes.json names it; the stores it does not name are listed in
  MODELS below, or carry their model in Z_MODELCACHE, which `moult inspect` decodes). "loadable":
  the version is one Moult reads.
- stores recognised: `moult inspect --model` names the store's version, or (a store whose model is
  not among the versions) the model the store carries has the metadata's hashes.
- migrations: each recognised store not at its target, migrated with --output, inferred (--infer;
  --source-model store for a store recognised by its cache) and again through the repository's own
  mapping models where it has them (as given to fixture-models-test.sh, without its --policy bindings:
  an app's policy classes are not compiled in); right: exit 0 and `moult verify` passes; wrong: exit 0
  and verify fails; refused: any other exit code.
- in place: a copy of each such store migrated in place (through its mapping models where the
  repository has them, else inferred), then verified against the original.
- `moult test` paths: Benchmarks/scripts/fixture-models-test.sh's summary lines (its own cases).

Prints a Markdown table, then every refusal and failure with its reason."""
import argparse, glob, json, os, plistlib, re, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
F = os.path.join(ROOT, "Tests", "Fixtures")
AT = "apptentive__apptentive-ios/Apptentive"

# Stores version-hashes.json does not name, with the model (version folder) that made them, and the
# model to recognise and migrate them with. A store with neither is recognised by its model cache alone.
MODELS = {
    f"{AT}/ApptentiveTests/data/v2CorruptDatabase/ATDataModel.sqlite":
        (f"{AT}/Apptentive/Model/ATDataModel.xcdatamodeld/ATDataModel 3.xcdatamodel", None),
    "RestKit__RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite":
        ("RestKit__RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel",
         "RestKit__RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel"),
    "osxphotos__Photos-10.15.1/Photos.sqlite": (None, "osxphotos__Photos-10.15.1/Photos.xcdatamodel"),
    # CartKit's legacy store: today's model has no version of it; its cache takes it there.
    "Karim-ezzedine__CartKit/Tests/CartKitStorageCoreDataTests/LegacyCoreData/CartStorage_v1.sqlite":
        (None, "Karim-ezzedine__CartKit/Sources/CartKitStorageCoreData/Resources/CartStorage.xcdatamodeld"),
}


def run(moult, *arguments):
    result = subprocess.run([moult, *arguments], capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr


def reason(stderr):
    lines = [line for line in stderr.splitlines() if line.startswith("moult: error:")]
    return (lines[0] if lines else stderr.strip().splitlines()[-1] if stderr.strip() else "")[:300]


def cases():
    """fixture-models-test.sh's cases: (model, [mapping paths], stores folder or None, extra options)."""
    text = open(os.path.join(ROOT, "Benchmarks", "scripts", "fixture-models-test.sh")).read()
    block = text[text.index("CASES=(") : text.index("\n)\n", text.index("CASES=("))]
    result = []
    for line in re.findall(r'^\s*"([^"]*)"\s*$', block, re.M):
        model, mappings, stores, extra = line.split("|")
        result.append((model, [] if mappings == "-" else mappings.split(";"), None if stores == "-" else stores, extra.split()))
    return result


def without_policies(options):
    kept, skip = [], False
    for option in options:
        if skip:
            skip = False
        elif option == "--policy":
            skip = True
        else:
            kept.append(option)
    return kept


def hash_version(moult, folder, cache):
    """The entity hashes `moult hash` gives a version folder ({} and the reason when it cannot)."""
    if folder not in cache:
        code, out, err = run(moult, "hash", os.path.join(F, folder), "--json")
        cache[folder] = ({name: value for name, value in json.loads(out)["versions"][0]["entities"].items() if value}, None) if code == 0 else ({}, reason(err))
    return cache[folder]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--moult", default=os.path.join(ROOT, ".build", "release", "moult"))
    parser.add_argument("--objects", default="50")
    parser.add_argument("--no-test", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    moult = args.moult
    if not os.path.exists(moult):
        subprocess.run(["swift", "build", "-c", "release", "--product", "moult"], cwd=ROOT, check=True)

    metadata = json.load(open(os.path.join(F, "store-metadata.json")))
    recorded = {}
    for entry in json.load(open(os.path.join(F, "version-hashes.json"))):
        store = "osxphotos__Photos-10.15.1/Photos.sqlite" if entry["store"].startswith("(not included") else entry["store"]
        recorded[store] = os.path.dirname(entry["model"])
    case_list = cases()
    issues = []

    # 1. Entity hashes.
    hashes = {"total": 0, "loadable": 0, "equal": 0}
    versions = {}
    inspected = {}
    for entry in metadata:
        store = entry["store"]
        folder = recorded.get(store) or MODELS.get(store, (None, None))[0]
        if folder:
            ours, why = hash_version(moult, folder, versions)
        else:
            code, out, err = run(moult, "inspect", os.path.join(F, store), "--json")
            inspected[store] = (code, out, err)
            model = json.loads(out).get("storeModel") if code == 0 else None
            ours, why = ((model or {}).get("entities") or {}, None if model else "no model: " + reason(err))
            ours = {name: value for name, value in ours.items() if value}
        for entity, theirs in entry["versionHashes"].items():
            hashes["total"] += 1
            if entity in ours:
                hashes["loadable"] += 1
                hashes["equal"] += ours[entity] == theirs
                if ours[entity] != theirs:
                    issues.append(f"hash differs: {entity} of {store}")
        if why:
            issues.append(f"hashes not loadable ({len(entry['versionHashes'])}): {store}: {why}")
    for info in glob.glob(os.path.join(F, "**", "VersionInfo.plist"), recursive=True):
        compiled = plistlib.load(open(info, "rb"))
        name = os.path.basename(os.path.dirname(info))[: -len(".momd")]
        # The model compiled: the .xcdatamodeld of that name beside the .momd, or else the one of
        # that name elsewhere in the repository's folder (XCServerCoreData keeps its momd in Tests/).
        model = os.path.join(os.path.dirname(os.path.dirname(info)), f"{name}.xcdatamodeld")
        if not os.path.isdir(model):
            repository = os.path.join(F, os.path.relpath(info, F).split(os.sep)[0])
            model = next(iter(glob.glob(os.path.join(glob.escape(repository), "**", f"{name}.xcdatamodeld"), recursive=True)), model)
        for version, entities in compiled["NSManagedObjectModel_VersionHashes"].items():
            folder = os.path.relpath(os.path.join(model, f"{version}.xcdatamodel"), F)
            ours, why = hash_version(moult, folder, versions)
            for entity, theirs in entities.items():
                hashes["total"] += 1
                if entity in ours:
                    hashes["loadable"] += 1
                    hashes["equal"] += ours[entity] == bytes(theirs).hex()
                    if ours[entity] != bytes(theirs).hex():
                        issues.append(f"hash differs: {entity} of {folder} (compiled {os.path.relpath(info, F)})")
            if why:
                issues.append(f"hashes not loadable ({len(entities)}): {folder}: {why}")

    # 2. Stores recognised, and 3. migrations and in place.
    stores = {"total": 0, "byVersion": 0, "byCache": 0}
    migrations = {kind: {"runs": 0, "right": 0, "wrong": 0, "refused": 0} for kind in ["inferred", "mapping", "in place"]}
    work = tempfile.mkdtemp(prefix="corpus-figures-")
    owner = {}
    for model, mappings, folder, extra in case_list:
        if folder:
            for store in glob.glob(os.path.join(F, glob.escape(folder), "**", "*.sqlite"), recursive=True):
                owner.setdefault(os.path.relpath(store, F), (model, mappings, extra))
    for number, entry in enumerate(metadata):
        store = entry["store"]
        stores["total"] += 1
        model, mappings, extra = owner.get(store) or (MODELS.get(store, (None, None))[1], [], [])
        source = os.path.join(F, store)
        options = ["--model", os.path.join(F, model)] if model else []
        code, out, err = inspected.get(store) if not model and store in inspected else run(moult, "inspect", source, *options, "--json")
        report = json.loads(out) if out.strip().startswith("{") else {}
        version = report.get("matchingVersion")
        by_cache = not version and (report.get("storeModel") or {}).get("matchesMetadata")
        if version:
            stores["byVersion"] += 1
        elif by_cache:
            stores["byCache"] += 1
        else:
            issues.append(f"store not recognised: {store}: exit {code}: {reason(err)}")
            continue
        if not model or not model.endswith(".xcdatamodeld"):
            continue  # no other version to migrate to
        target = extra[extra.index("--to") + 1] if "--to" in extra else None
        if target is None:
            code, out, _ = run(moult, "hash", os.path.join(F, model), "--json")
            target = next(v["name"] for v in json.loads(out)["versions"] if v.get("current")) if code == 0 else None
        if version == target:
            continue
        base = options + (["--to", target] if target else []) + (["--source-model", "store"] if by_cache else [])
        given = [argument for mapping in mappings for argument in ["--mapping", os.path.join(F, mapping)]]
        kinds = [("inferred", base + ["--infer"])]
        if given:
            kinds.append(("mapping", base + given + without_policies(extra[extra.index("--to") + 2 :] if "--to" in extra else extra)))
        kinds.append(("in place", kinds[-1][1]))
        for kind, arguments in kinds:
            tally = migrations[kind]
            tally["runs"] += 1
            folder = os.path.join(work, f"{number}-{kind.replace(' ', '-')}")
            os.makedirs(folder)
            if kind == "in place":
                destination = os.path.join(folder, "store.sqlite")
                for suffix in ["", "-wal", "-shm"]:
                    if os.path.exists(source + suffix):
                        shutil.copy(source + suffix, destination + suffix)
                code, out, err = run(moult, "migrate", destination, "--no-backup", "--quiet", *arguments)
            else:
                destination = os.path.join(folder, "out.sqlite")
                code, out, err = run(moult, "migrate", source, "--output", destination, "--quiet", *arguments)
            if code != 0:
                tally["refused"] += 1
                issues.append(f"{kind} refused: {store}: exit {code}: {reason(err)}")
                continue
            code, out, err = run(moult, "verify", source, destination, *arguments)
            if code == 0:
                tally["right"] += 1
            else:
                tally["wrong"] += 1
                issues.append(f"{kind} wrong: {store}: verify exit {code}: {(out + err).strip().splitlines()[-1][:300]}")
    shutil.rmtree(work)

    # 4. `moult test` on each model history.
    tests = {"histories": 0, "stores": 0, "paths": 0, "failed": 0}
    if not args.no_test:
        environment = dict(os.environ, MOULT_BINARY=moult)
        result = subprocess.run([os.path.join(ROOT, "Benchmarks", "scripts", "fixture-models-test.sh"), "--objects", args.objects],
                                capture_output=True, text=True, env=environment)
        model = None
        for line in result.stdout.splitlines():
            if line.startswith("== "):
                model = line[3:]
            found = re.match(r"(\d+) stores?, (\d+) paths: (all passed|(\d+) failed)", line)
            if found:
                tests["histories"] += 1
                tests["stores"] += int(found.group(1))
                tests["paths"] += int(found.group(2))
                tests["failed"] += int(found.group(4) or 0)
                if found.group(4):
                    issues.append(f"moult test: {model}: {line}")

    figures = {"hashes": hashes, "stores": stores, "migrations": migrations, "test": tests}
    print("| figure | value |\n|---|---|")
    print(f"| entity hashes Core Data wrote (store metadata, compiled models) | {hashes['total']} |")
    print(f"| of those, in a version Moult reads | {hashes['loadable']} |")
    print(f"| equal to Core Data's | {hashes['equal']} of {hashes['loadable']} |")
    print(f"| stores recognised | {stores['byVersion'] + stores['byCache']} of {stores['total']} ({stores['byCache']} by the model they carry) |")
    for kind, tally in migrations.items():
        print(f"| migrations, {kind} | {tally['runs']}: {tally['right']} right, {tally['wrong']} wrong, {tally['refused']} refused |")
    if not args.no_test:
        print(f"| `moult test` ({tests['histories']} histories, {tests['stores']} stores) | {tests['paths'] - tests['failed']} of {tests['paths']} paths passed |")
    print()
    for line in issues:
        print("- " + line)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"figures": figures, "issues": issues}, out, indent=1)


if __name__ == "__main__":
    sys.exit(main())
