#!/usr/bin/env python3
"""Writes version-hashes.json: every entity version hash Core Data wrote into a fixture store's
metadata (Z_METADATA, key NSStoreModelVersionHashes), each with the model version that made the store
(STORES below, by hand: the version the repository's own code says wrote it) and the framework
version. Run from Tests/Fixtures when stores change. Stores are copied (with -wal/-shm) before
opening, so fixtures are never touched. Nothing here computes a hash: they are Core Data's own."""
import importlib.util, json, os

# The store's metadata as extract-store-metadata.py reads it.
_spec = importlib.util.spec_from_file_location("extract_store_metadata", os.path.join(os.path.dirname(os.path.abspath(__file__)), "extract-store-metadata.py"))
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
metadata = _module.metadata

PHOTOS = "(not included: tests/Test-10.15.1.photoslibrary/database/Photos.sqlite of the osxphotos test libraries)"

# (store, model version's contents file, the name the store is recorded under if not its path), in order.
STORES = [
    *[(f"wibosco__{repo}/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_{n}.sqlite",
       f"wibosco__{repo}/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example{'' if n == 1 else f' {n}'}.xcdatamodel/contents", None)
      for repo in ["CoreDataMigration-Example", "CoreDataMigrationRevised-Example"] for n in [1, 2, 3]],
    *[(f"jeffreybergier__CoreDataMigrationTests/CoreDataMigration/CoreDataMigrationTests/Example_{v}.sqlite",
       f"jeffreybergier__CoreDataMigrationTests/CoreDataMigration/CoreDataMigration/Model.xcdatamodeld/{v}.xcdatamodel/contents", None)
      for v in ["v1.0.0", "v1.1.0", "v1.1.2", "v1.2.0", "v2.0.0"]],
    ("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
     "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel/contents", None),
    ("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite",
     "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel/contents", None),
    ("alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
     "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld/SampleModel3.xcdatamodel/contents", None),
    ("osxphotos__Photos-10.15.1/Photos.sqlite", "osxphotos__Photos-10.15.1/Photos.xcdatamodel/contents", PHOTOS),
    # Apptentive's test stores: ATDataModelvN.sqlite was written by version N (the app's migration
    # tests say so); the WAL ones and the 3.5.0 container hold the version their data shows.
    *[(f"apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/ATDataModelv{n}.sqlite",
       f"apptentive__apptentive-ios/Apptentive/Apptentive/Model/ATDataModel.xcdatamodeld/ATDataModel{'' if n == 1 else f' {n}'}.xcdatamodel/contents", None)
      for n in range(1, 7)],
    *[(f"apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/v{n}WALDatabase/ATDataModel.sqlite",
       f"apptentive__apptentive-ios/Apptentive/Apptentive/Model/ATDataModel.xcdatamodeld/ATDataModel {n}.xcdatamodel/contents", None)
      for n in [2, 3]],
    ("apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/containers/3.5.0.xcappdata/AppData/Library/Application Support/com.apptentive.feedback/ATDataModel.sqlite",
     "apptentive__apptentive-ios/Apptentive/Apptentive/Model/ATDataModel.xcdatamodeld/ATDataModel 5.xcdatamodel/contents", None),
    ("bignerdranch__CoreDataStack/Sample Model/Deprecated/TestModel.sqlite",
     "bignerdranch__CoreDataStack/Sample Model/Deprecated/Sample.xcdatamodeld/TestModel.xcdatamodel/contents", None),
    ("ebf__CTDataStoreManager/CTDataStoreManager/CTDataStoreManagerTests/CoreDataTests/MigrationTest/TestMigrationStore_version_1.sqlite",
     "ebf__CTDataStoreManager/CTDataStoreManager/CTDataStoreManagerTests/CoreDataTests/MigrationTest/TestMigrationStore.xcdatamodeld/TestMigrationStore.xcdatamodel/contents", None),
    ("objcio__issue-4-core-data-migration/BookMigration/Model1.sqlite",
     "objcio__issue-4-core-data-migration/BookMigration/Model.xcdatamodeld/Model1.xcdatamodel/contents", None),
    # CartKit edits its one version in place; its legacy store was written by the model of commit
    # 48ffe53 (the same at 0cd9455 and 8bde0bb), kept under history/.
    ("Karim-ezzedine__CartKit/Tests/CartKitStorageCoreDataTests/LegacyCoreData/CartStorage_v1.sqlite",
     "Karim-ezzedine__CartKit/history/48ffe53/CartStorage.xcdatamodel/contents", None),
    # DuckDuckGo's BrowserServicesKit: Bookmarks_VN.sqlite was written by BookmarksModel version N and
    # SyncMetadata_V3.sqlite by SyncMetadata 3 (the repository's migration tests and the stores' tables say so).
    *[(f"duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V{n}.sqlite",
       f"duckduckgo__BrowserServicesKit/Sources/Bookmarks/BookmarksModel.xcdatamodeld/BookmarksModel{'' if n == 1 else f' {n}'}.xcdatamodel/contents", None)
      for n in range(1, 6)],
    ("duckduckgo__BrowserServicesKit/Tests/DDGSyncTests/Resources/SyncMetadata_V3.sqlite",
     "duckduckgo__BrowserServicesKit/Sources/DDGSync/SyncMetadata.xcdatamodeld/SyncMetadata 3.xcdatamodel/contents", None),
    # XCServerCoreData: each store is named after the version that wrote it. XCServerCoreData2.0.0 was
    # edited in place (commit 876163f: its indexed attributes became fetch indexes, its hashes the same)
    # after XCServerCoreData_2.0.0_empty.sqlite was made (34f8fd4): that store's version is the one of
    # commit 0f23bc7, kept under history/ (its indexes are that version's).
    *[(f"richardpiazza__XCServerCoreData/Tests/XCServerCoreData_{store}.sqlite",
       f"richardpiazza__XCServerCoreData/{version}.xcdatamodel/contents", None)
      for store, version in [("1.2.0", "Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData1.2.0"),
                             ("1.2.0_empty", "Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData1.2.0"),
                             ("2.0.0_empty", "history/0f23bc7/XCServerCoreData2.0.0"),
                             ("2.0.1", "Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData2.0.1")]],
]


entries = []
for store, model, recorded in STORES:
    assert os.path.exists(model), model
    plist = metadata(store)
    for entity, value in sorted(plist["NSStoreModelVersionHashes"].items()):
        entries.append({
            "model": model,
            "store": recorded or store,
            "entity": entity,
            "versionHash": bytes(value).hex(),
            "frameworkVersion": int(plist["NSPersistenceFrameworkVersion"]),
        })
with open("version-hashes.json", "w") as out:
    json.dump(entries, out, indent=1, ensure_ascii=False)
    out.write("\n")
