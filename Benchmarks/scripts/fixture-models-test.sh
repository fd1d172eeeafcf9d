#!/usr/bin/env bash
# `moult test` on every shared fixture model (Tests/Fixtures, real files made by Xcode and Core Data), with
# its mapping models, and its Core Data stores as frozen fixtures (each copied and checkpointed into one
# file, then listed in a manifest with its checksum and the version it is at, from `moult inspect`).
#
#     Benchmarks/scripts/fixture-models-test.sh [--objects N] [--seed S] [--debug]
#         defaults: 200 objects per generated store, seed 1, the release build (--debug: .build/debug)
#
# Prints each model's summary line and exit code; exits 1 when one fails. The JUnit reports are left in
# the work folder (.build/bench-work/fixture-models).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OBJECTS=200 SEED=1 DEBUG=
while [[ $# -gt 0 ]]; do
    case "$1" in
    --objects) OBJECTS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --debug) DEBUG=1; shift ;;
    *) die "unknown option $1" ;;
    esac
done
if [[ -n "${MOULT_BINARY:-}" ]]; then MOULT=$MOULT_BINARY; elif [[ -n "$DEBUG" ]]; then MOULT="$ROOT/.build/debug/moult"; else build_moult; fi
make_work fixture-models
F="$ROOT/Tests/Fixtures"

# model | mapping folder or files, ';' between them (or -) | stores folder (or -) | extra options
CASES=(
    "wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld|wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Migration/Mappings|wibosco__CoreDataMigration-Example/CoreDataMigration-ExampleTests/Resources/SQLite|--policy Post2ToPost3MigrationPolicy=default"
    "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld|wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Migration/Mappings|wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite|--policy Post2ToPost3MigrationPolicy=default"
    "jeffreybergier__CoreDataMigrationTests/CoreDataMigration/CoreDataMigration/Model.xcdatamodeld|-|jeffreybergier__CoreDataMigrationTests/CoreDataMigration/CoreDataMigrationTests|"
    "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld|alemar11__CoreDataPlus/Tests/Resources/SampleModel/MappingModels|alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures|--to SampleModel3 --policy V2to3MakerPolicy=default"
    "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld|-|alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures|"
    "jdspoone__CoreDataMigrationExample/CoreDataMigration/CoreDataMigration.xcdatamodeld|jdspoone__CoreDataMigrationExample/CoreDataMigration|-|--policy NoteToNotePolicy=default --policy ImageToImagePolicy=default"
    "apptentive__apptentive-ios/Apptentive/Apptentive/Model/ATDataModel.xcdatamodeld|apptentive__apptentive-ios/Apptentive/Apptentive/Model|apptentive__apptentive-ios/Apptentive/ApptentiveTests/data|"
    "bignerdranch__CoreDataStack/Sample Model/Deprecated/Sample.xcdatamodeld|-|bignerdranch__CoreDataStack/Sample Model/Deprecated|"
    "ebf__CTDataStoreManager/CTDataStoreManager/CTDataStoreManagerTests/CoreDataTests/MigrationTest/TestMigrationStore.xcdatamodeld|ebf__CTDataStoreManager/CTDataStoreManager/CTDataStoreManagerTests/CoreDataTests/MigrationTest|ebf__CTDataStoreManager/CTDataStoreManager/CTDataStoreManagerTests/CoreDataTests/MigrationTest|"
    "ebf__CTDataStoreManager/SampleApplication/SampleApplication/DataModel.xcdatamodeld|ebf__CTDataStoreManager/SampleApplication/SampleApplication|-|"
    "ebf__CTDataStoreManager/SampleApplication/SampleApplication/ECConnectorModel.xcdatamodeld|-|-|"
    # Model2 → Model3 is two mapping models, run as two passes (the app's own migration manager does so).
    "objcio__issue-4-core-data-migration/BookMigration/Model.xcdatamodeld|objcio__issue-4-core-data-migration/BookMigration/Model1_to_Model2.xcmappingmodel;objcio__issue-4-core-data-migration/BookMigration/Model2_to_Model3.xcmappingmodel;objcio__issue-4-core-data-migration/BookMigration/Model2_to_Model3_User.xcmappingmodel|objcio__issue-4-core-data-migration/BookMigration|--policy MHWBookToBookPolicy=default --policy MHWUserToUserPolicy=default"
    # The repository's .xccurrentversion names V0; its tests migrate up to V3. The mappings' policies
    # compute values with functions of their own ($entityPolicy): bound to the default policy they
    # cannot run, so this history is tested inferred.
    "prisma-ai__Sworm/Tests/SwormTests/DataModels/MigratableDataModel.xcdatamodeld|-|-|--to V3 --infer"
    "prisma-ai__Sworm/Tests/SwormTests/DataModels/BLOBModel.xcdatamodeld|-|-|"
    "RestKit__RestKit/Tests/Models/VersionedModel.xcdatamodeld|-|-|"
    "duckduckgo__BrowserServicesKit/Sources/Bookmarks/BookmarksModel.xcdatamodeld|-|duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources|"
    "duckduckgo__BrowserServicesKit/Sources/DDGSync/SyncMetadata.xcdatamodeld|-|duckduckgo__BrowserServicesKit/Tests/DDGSyncTests/Resources|"
    # The app's store was written by a model merged from several (AppRatingPrompt's first version and
    # two of BrowserServicesKit's): no version of this model matches it, so it is left out here.
    "duckduckgo__iOS/DuckDuckGo/AppRatingPrompt.xcdatamodeld|-|duckduckgo__iOS/DuckDuckGoTests/AppRatingPrompt_v1|"
    # The repository's two mapping models take 1.2.0 and 2.0.1 straight to 2.0.3 (the folder: each store
    # uses one of them); 1.2.0's names the app's policy, which parses dates from strings.
    "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld|richardpiazza__XCServerCoreData/Resources|richardpiazza__XCServerCoreData/Tests|--policy IntegrationStringToDateMigrationPolicy=default"
)

failed=0
for index in "${!CASES[@]}"; do
    IFS='|' read -r model mappings stores extra <<<"${CASES[$index]}"
    fixtures="$WORK/fixtures-$index"
    mkdir -p "$fixtures"
    echo "moult-fixtures 1" >"$fixtures/fixtures.manifest"
    if [[ "$stores" != "-" ]]; then
        for store in "$F/$stores"/*.sqlite; do
            # `inspect` exits 66 when no version matches (the store is then left out, not the run ended).
            version=$("$MOULT" inspect "$store" --model "$F/$model" --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("matchingVersion") or "")' || true)
            [[ -n "$version" ]] || { echo "  $(basename "$store"): no version of the model matches it: left out"; continue; }
            # A fixture is one checkpointed file: the store copied with its -wal, checkpointed, then listed alone.
            local_copy="$fixtures/$(basename "$store")"
            for suffix in "" -wal -shm; do [[ -f "$store$suffix" ]] && cp "$store$suffix" "$local_copy$suffix"; done
            sqlite3 "$local_copy" 'PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;' >/dev/null
            rm -f "$local_copy-wal" "$local_copy-shm"
            printf '%s\t%s\t%s\n' "$(sha256sum "$local_copy" | cut -d' ' -f1)" "$version" "$(basename "$store")" >>"$fixtures/fixtures.manifest"
        done
    fi
    args=("$F/$model" --objects "$OBJECTS" --seed "$SEED" --fixtures "$fixtures" --junit "$WORK/junit-$index.xml")
    if [[ "$mappings" != "-" ]]; then
        IFS=';' read -r -a mapping_list <<<"$mappings"
        for mapping in "${mapping_list[@]}"; do args+=(--mapping "$F/$mapping"); done
    fi
    # shellcheck disable=SC2206
    [[ -n "$extra" ]] && args+=($extra)
    echo "== $model"
    rc=0
    "$MOULT" test "${args[@]}" >"$WORK/out-$index.txt" 2>"$WORK/err-$index.txt" || rc=$?
    tail -1 "$WORK/out-$index.txt"
    if [[ $rc -ne 0 ]]; then failed=1; echo "   exit $rc: $(head -c 600 "$WORK/err-$index.txt")"; fi
done
exit $failed
