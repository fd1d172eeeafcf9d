import Foundation
import MoultTestSupport
import Testing

/// The real model histories of the corpus (Tests/Fixtures), run through `moult` as a user runs it:
/// what each repository's files show, one test per behaviour.
@Suite struct CorpusCommandTests {
    static let apptentive = "apptentive__apptentive-ios/Apptentive"
    static var apptentiveModel: String { Fixtures.url("\(apptentive)/Apptentive/Model/ATDataModel.xcdatamodeld").path }
    static var apptentiveMappings: String { Fixtures.url("\(apptentive)/Apptentive/Model").path }

    /// Apptentive's stores of versions 1 to 5 (framework 419 to 519), two of them with most of their
    /// data in the `-wal`, and an app container's store.
    static let apptentiveStores = [
        "ATDataModelv1.sqlite", "ATDataModelv2.sqlite", "ATDataModelv3.sqlite", "ATDataModelv4.sqlite", "ATDataModelv5.sqlite",
        "v2WALDatabase/ATDataModel.sqlite", "v3WALDatabase/ATDataModel.sqlite",
        "containers/3.5.0.xcappdata/AppData/Library/Application Support/com.apptentive.feedback/ATDataModel.sqlite",
    ]

    /// Each store goes to version 6 through the SDK's own chain of mapping models (v1 to v2 … v5 to v6),
    /// and `verify` finds the result right.
    @Test(arguments: apptentiveStores)
    func apptentiveStoresChainThroughTheSDKsMappingModels(_ store: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = Fixtures.url("\(Self.apptentive)/ApptentiveTests/data/\(store)").path
        let output = directory.appending("out.sqlite").path
        let options = ["--model", Self.apptentiveModel, "--mapping", Self.apptentiveMappings]
        let migrated = try MoultProcess.run(["migrate", source, "--output", output, "--quiet"] + options)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("to ATDataModel 6"), "\(migrated.standardOutput)")
        let verified = try MoultProcess.run(["verify", source, output] + options)
        #expect(verified.exitCode == 0 && verified.standardOutput.contains(": 0 failure(s)"), "\(verified.standardOutput)\(verified.standardError)")
    }

    /// `v2CorruptDatabase`, which the SDK's tests use as a store Core Data cannot open (its metadata names
    /// version 3, its tables are older), is refused with the column that is missing (65), and nothing is
    /// written.
    @Test func apptentiveCorruptStoreIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = Fixtures.url("\(Self.apptentive)/ApptentiveTests/data/v2CorruptDatabase/ATDataModel.sqlite").path
        let inspected = try MoultProcess.run(["inspect", source, "--model", Self.apptentiveModel])
        #expect(inspected.exitCode == 65)
        #expect(inspected.standardError.contains("table ZATRECORD has no column ZCUSTOMDATA"), "\(inspected.standardError)")
        let output = directory.appending("out.sqlite").path
        let migrated = try MoultProcess.run(["migrate", source, "--model", Self.apptentiveModel, "--mapping", Self.apptentiveMappings, "--output", output])
        #expect(migrated.exitCode == 65, "\(migrated.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    static let objcio = "objcio__issue-4-core-data-migration/BookMigration"
    /// The three mapping models, Model 2 to 3 in two passes, and the app's policy classes bound to
    /// Core Data's default policy (they are Objective-C).
    static var objcioOptions: [String] {
        ["--model", Fixtures.url("\(objcio)/Model.xcdatamodeld").path]
            + ["Model1_to_Model2", "Model2_to_Model3", "Model2_to_Model3_User"].flatMap { ["--mapping", Fixtures.url("\(objcio)/\($0).xcmappingmodel").path] }
            + ["--policy", "MHWBookToBookPolicy=default", "--policy", "MHWUserToUserPolicy=default"]
    }

    /// objc.io's store at Model1 goes to Model3 in two steps, the second in two passes (two mapping
    /// models between the same versions, in the order given).
    @Test func objcioSecondStepIsTwoPasses() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = Fixtures.url("\(Self.objcio)/Model1.sqlite").path
        let output = directory.appending("out.sqlite").path
        let migrated = try MoultProcess.run(["migrate", source, "--output", output, "--quiet"] + Self.objcioOptions)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("step 2: Model2 -> Model3 ("), "\(migrated.standardOutput)")
        #expect(migrated.standardOutput.contains("Model2_to_Model3.xcmappingmodel, "), "\(migrated.standardOutput)")
        #expect(migrated.standardOutput.contains("Model2_to_Model3_User.xcmappingmodel)"), "\(migrated.standardOutput)")
        let verified = try MoultProcess.run(["verify", source, output] + Self.objcioOptions)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)\(verified.standardError)")
    }

    /// `moult test` given the history's mapping files runs a store of Model2 with only those on its way:
    /// Model1_to_Model2 was handed to it too, and `migrate` refused it (66, "fits no step").
    @Test func testGivesEachStoreOnlyTheMappingsOnItsWay() throws {
        let result = try MoultProcess.run(
            ["test", Fixtures.url("\(Self.objcio)/Model.xcdatamodeld").path, "--objects", "8"] + Self.objcioOptions.dropFirst(2))
        #expect(result.exitCode == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("Model2 → Model3, generated"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("2 stores, 6 paths: all passed"), "\(result.standardOutput)")
    }

    static let cartKit = "Karim-ezzedine__CartKit"
    static var cartKitModel: String { Fixtures.url("\(cartKit)/Sources/CartKitStorageCoreData/Resources/CartStorage.xcdatamodeld").path }
    static var cartKitStore: String { Fixtures.url("\(cartKit)/Tests/CartKitStorageCoreDataTests/LegacyCoreData/CartStorage_v1.sqlite").path }

    /// CartKit edits its one model version in place: no version matches its legacy store (66), whose
    /// own model (its Z_MODELCACHE) takes it to the current one, into a new store and in place.
    @Test func cartKitLegacyStoreMigratesFromTheModelItCarries() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let inspected = try MoultProcess.run(["inspect", Self.cartKitStore, "--model", Self.cartKitModel])
        #expect(inspected.exitCode == 66)
        #expect(inspected.standardOutput.contains("its hashes are the metadata's"), "\(inspected.standardOutput)")
        let options = ["--model", Self.cartKitModel, "--source-model", "store"]
        let output = directory.appending("out.sqlite").path
        let migrated = try MoultProcess.run(["migrate", Self.cartKitStore, "--output", output, "--quiet"] + options)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        let verified = try MoultProcess.run(["verify", Self.cartKitStore, output] + options)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)\(verified.standardError)")

        let copy = try directory.copyStore(URL(filePath: Self.cartKitStore), as: "inplace.sqlite")
        let inPlace = try MoultProcess.run(["migrate", copy.path, "--no-backup", "--quiet"] + options)
        #expect(inPlace.exitCode == 0, "\(inPlace.standardError)")
        // Two relationships that had no inverse become each other's: the step is streamed, and says why.
        #expect(inPlace.standardOutput.contains("CDCartItem.modifiers and its inverse item come from relationships that are not each other's inverse"),
            "\(inPlace.standardOutput)")
        let checked = try MoultProcess.run(["verify", Self.cartKitStore, copy.path] + options)
        #expect(checked.exitCode == 0, "\(checked.standardOutput)\(checked.standardError)")
    }

    static let browserServicesKit = "duckduckgo__BrowserServicesKit"
    static var bookmarksModel: String { Fixtures.url("\(browserServicesKit)/Sources/Bookmarks/BookmarksModel.xcdatamodeld").path }

    /// Every row of a query on a store, its values joined by `|`.
    static func rows(_ store: URL, _ sql: String) throws -> [String] { try FidelityCommandTests.rows(store, sql) }

    /// DuckDuckGo's bookmarks of versions 1 to 3 hold favourites as the to-one `favoriteFolder` and its
    /// ordered to-many inverse `favorites`; version 4 made it the to-many `favoriteFolders` (its renaming
    /// identifier names the old one), so the pair is a many-to-many with a join table. Each store goes
    /// to version 6 inferred, into a new store and in place: every (folder, favourite) pair is in the join
    /// table in the folder's order, every object keeps its key, and `verify` finds it right.
    @Test(arguments: [1, 2, 3])
    func duckDuckGoFavoritesBecomeAManyToMany(_ version: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Fixtures.url("\(Self.browserServicesKit)/Tests/BookmarksTests/Resources/Bookmarks_V\(version).sqlite"))
        let pairs = try Self.rows(
            source, "SELECT ZFAVORITEFOLDER || '|' || Z_PK FROM ZBOOKMARKENTITY WHERE ZFAVORITEFOLDER IS NOT NULL ORDER BY ZFAVORITEFOLDER, Z_FOK_FAVORITEFOLDER")
        #expect(pairs.count == 5)
        let keys = try Self.rows(source, "SELECT Z_PK || '|' || ZUUID FROM ZBOOKMARKENTITY ORDER BY Z_PK")
        let options = ["--model", Self.bookmarksModel, "--infer"]
        let output = directory.appending("out.sqlite")
        let copy = try directory.copyStore(source, as: "inplace.sqlite")
        let migrated = try MoultProcess.run(["migrate", source.path, "--output", output.path, "--quiet"] + options)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        let inPlace = try MoultProcess.run(["migrate", copy.path, "--no-backup", "--quiet"] + options)
        #expect(inPlace.exitCode == 0, "\(inPlace.standardError)")
        for store in [output, copy] {
            #expect(try Self.rows(store, "SELECT Z_1FAVORITEFOLDERS || '|' || Z_1FAVORITES FROM Z_1FAVORITES ORDER BY Z_1FAVORITEFOLDERS, Z_FOK_1FAVORITES") == pairs)
            #expect(try Self.rows(store, "SELECT Z_PK || '|' || ZUUID FROM ZBOOKMARKENTITY ORDER BY Z_PK") == keys)
            let verified = try MoultProcess.run(["verify", source.path, store.path] + options)
            #expect(verified.exitCode == 0 && verified.standardOutput.contains(": 0 failure(s)"), "\(verified.standardOutput)\(verified.standardError)")
        }
    }

    /// DuckDuckGo's app-rating store was written by a model merged from three (AppRatingPrompt's first
    /// version and two others, 5 entities): no version of AppRatingPrompt matches it (66, the other
    /// entities named). From the model it carries it goes to version 2 as the app's own test takes it:
    /// the rating is kept, its new attribute nil, and the other entities' objects are dropped, each
    /// entity with a warning.
    @Test func duckDuckGoMergedModelStoreMigratesFromTheModelItCarries() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Fixtures.url("duckduckgo__iOS/DuckDuckGoTests/AppRatingPrompt_v1/Database.sqlite"))
        let model = Fixtures.url("duckduckgo__iOS/DuckDuckGo/AppRatingPrompt.xcdatamodeld").path
        let inspected = try MoultProcess.run(["inspect", source.path, "--model", model])
        #expect(inspected.exitCode == 66)
        #expect(inspected.standardError.contains("entity 'HTTPSExcludedDomain' is in the store but not in the model"), "\(inspected.standardError)")
        let rating = "SELECT ZUNIQUEACCESSDAYS || '|' || ZLASTACCESS || '|' || ZLASTSHOWN FROM ZAPPRATINGPROMPTENTITY"
        let before = try Self.rows(source, rating)
        #expect(before.count == 1)
        let options = ["--model", model, "--source-model", "store", "--infer"]
        let output = directory.appending("out.sqlite")
        let migrated = try MoultProcess.run(["migrate", source.path, "--output", output.path, "--quiet"] + options)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        for entity in ["HTTPSExcludedDomain", "HTTPSStoredBloomFilterSpecification", "RemoteMessagingConfigManagedObject"] {
            #expect(migrated.standardError.contains("drops all") && migrated.standardError.contains(" \(entity) object"), "\(entity): \(migrated.standardError)")
        }
        #expect(try Self.rows(output, rating) == before)
        #expect(try Self.rows(output, "SELECT COUNT(*) FROM ZAPPRATINGPROMPTENTITY WHERE ZFIRSTSHOWN IS NULL") == ["1"])
        #expect(try Self.rows(output, "SELECT name FROM sqlite_master WHERE name = 'ZHTTPSEXCLUDEDDOMAIN'").isEmpty)
        let verified = try MoultProcess.run(["verify", source.path, output.path] + options)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)\(verified.standardError)")
    }

    static let xcServer = "richardpiazza__XCServerCoreData"
    /// The model, and the repository's mapping models folder (two of its mapping models: each store
    /// uses the one from its own version).
    static var xcServerOptions: [String] {
        ["--model", Fixtures.url("\(xcServer)/Resources/XCServerCoreData.xcdatamodeld").path, "--mapping", Fixtures.url("\(xcServer)/Resources").path]
    }

    /// XCServerCoreData's store at 2.0.1 (13,225 objects, framework 851) goes to 2.0.3 through the
    /// repository's `MappingModel2.0.1to2.0.3` (3.5 MB, its models archived in it), and its store at
    /// 2.0.0 (framework 836) is inferred to 2.0.1 and then mapped: both verified.
    @Test(arguments: ["2.0.1", "2.0.0_empty"])
    func xcServerStoresGoToTheCurrentVersionThroughTheRepositorysMappings(_ store: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = Fixtures.url("\(Self.xcServer)/Tests/XCServerCoreData_\(store).sqlite").path
        let output = directory.appending("out.sqlite").path
        let migrated = try MoultProcess.run(["migrate", source, "--output", output] + Self.xcServerOptions)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("MappingModel2.0.1to2.0.3.xcmappingmodel"), "\(migrated.standardOutput)")
        let verified = try MoultProcess.run(["verify", source, output] + Self.xcServerOptions)
        #expect(verified.exitCode == 0 && verified.standardOutput.contains(": 0 failure(s)"), "\(verified.standardOutput)\(verified.standardError)")
    }

    /// The store at 1.2.0 takes `MappingModel1.2.0to2.0.3`, whose Integration mapping names the app's
    /// `IntegrationStringToDateMigrationPolicy` (it parses the dates 1.2.0 kept as strings): refused
    /// until the class is bound (66, naming it); bound to the default policy, a string cannot be a date
    /// (65, naming the attribute and the value), and nothing is written.
    @Test func xcServerDatesAsStringsNeedTheAppsPolicy() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = Fixtures.url("\(Self.xcServer)/Tests/XCServerCoreData_1.2.0.sqlite").path
        let output = directory.appending("out.sqlite").path
        let unbound = try MoultProcess.run(["migrate", source, "--output", output] + Self.xcServerOptions)
        #expect(unbound.exitCode == 66)
        #expect(unbound.standardError.contains("'XCServerCoreData.IntegrationStringToDateMigrationPolicy'"), "\(unbound.standardError)")
        let bound = try MoultProcess.run(
            ["migrate", source, "--output", output] + Self.xcServerOptions + ["--policy", "IntegrationStringToDateMigrationPolicy=default"])
        #expect(bound.exitCode == 65)
        #expect(bound.standardError.contains("attribute 'endedTime' (Date) cannot hold \"2017-06-07T18:11:11.297Z\""), "\(bound.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
