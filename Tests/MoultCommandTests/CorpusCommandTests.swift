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
}
