import Foundation
import MoultTestSupport
import Testing

/// Whether these tests can run `moult` as the image's user (the suite's condition, outside the suite).
private enum ImageUser {
    static let setpriv = "/usr/bin/setpriv"
    static var canRunAs: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: setpriv) }
}

/// Issue 42, item 3: the image runs as uid 65534 (the Dockerfile's `USER 65534:65534`), and the
/// Kubernetes example of Fleets.md mounts a volume that user must write to. These tests run `moult` as
/// that user through `setpriv` (the tests run as root here, and root passes every permission check, so
/// a folder made read-only would prove nothing), against folders owned as a volume is with and without
/// the pod's `fsGroup`.
@Suite(.enabled(if: ImageUser.canRunAs, "needs root and setpriv (util-linux) to run moult as uid 65534"))
struct KubernetesExampleTests {
    static let setpriv = ImageUser.setpriv
    static let model = Fixtures.peopleModel.path

    /// Runs `moult` as the image's user, uid and gid 65534, with no other group (a pod without `fsGroup`).
    static func asImageUser(_ arguments: [String]) throws -> MoultProcess.Result {
        try MoultProcess.run(
            URL(filePath: setpriv), ["--reuid", "65534", "--regid", "65534", "--clear-groups", MoultProcess.executable.path] + arguments)
    }

    /// A scratch folder the image's user can reach, with a folder `volume` in it owned by root, mode 0755
    /// (a volume mounted without `fsGroup`), holding a v1 store.
    static func rootVolume(in directory: TemporaryDirectory) throws -> (volume: URL, store: URL) {
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.url.path)
        let volume = directory.appending("volume")
        try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
        let store = try MigrateCommandTests.generate("1", persons: 10, in: directory, name: "volume/s.sqlite")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: volume.path)
        return (volume, store)
    }

    @Test func theExampleOfFleetsRunsAsWrittenAndFailsClearlyWithoutFSGroup() throws {
        let script = Fixtures.packageRoot.appending(path: "scripts/k8s-example.sh").path
        let result = try MoultProcess.run(URL(filePath: "/bin/bash"), [script, "--moult", MoultProcess.executable.path, "--stores", "16"])
        let output = result.standardOutput + result.standardError
        #expect(result.exitCode == 0, "\(output)")
        #expect(output.contains("16 stores (16 result lines): 16 migrated, 0 already migrated, 0 already current, 0 failed"), "\(output)")
        #expect(output.contains("metrics: 8 files in"), "\(output)")
        #expect(output.contains("exit 74: "), "\(output)")
        #expect(output.contains("ok: the Kubernetes example runs as written"), "\(output)")
    }

    @Test func aStoreInAFolderTheUserCannotWriteNamesTheLockFileTheFolderTheUserAndTheFix() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (volume, store) = try Self.rootVolume(in: directory)
        let before = try MigrateCommandTests.digest(store)
        let result = try Self.asImageUser(["migrate", store.path, "--model", Self.model, "--to", "v2", "--quiet"])
        #expect(result.exitCode == 74, "\(result.standardError)")
        let message = result.standardError
        #expect(message.contains("cannot create the lock file: permission denied"), "\(message)")
        #expect(message.contains(store.path + ".moult-lock"), "\(message)")
        #expect(message.contains("uid 65534, gid 65534, groups none"), "\(message)")
        #expect(message.contains("its folder \(volume.path) is owned by 0:0, mode 0755"), "\(message)")
        #expect(message.contains("securityContext.fsGroup"), "\(message)")
        #expect(!message.contains("the file the file") && !message.contains("folder the file"), "\(message)")
        #expect(try MigrateCommandTests.digest(store) == before)
    }

    @Test func aStoreTheUserCannotWriteInAFolderItCanSaysWhoOwnsIt() throws {
        // A store copied onto the volume by root after the kubelet set its group: the folder is the
        // group's (setgid, group-writable), the store root's own, 0644.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (volume, store) = try Self.rootVolume(in: directory)
        _ = chown(volume.path, 0, 65534)
        _ = chmod(volume.path, 0o2775)
        let result = try MoultProcess.run(
            URL(filePath: Self.setpriv),
            ["--reuid", "65534", "--regid", "65534", "--groups", "65534", MoultProcess.executable.path,
             "migrate", store.path, "--model", Self.model, "--to", "v2", "--quiet"])
        #expect(result.exitCode == 74, "\(result.standardError)")
        let message = result.standardError
        #expect(message.contains("\(store.path): read-only: the store cannot be written"), "\(message)")
        #expect(message.contains("this process (uid 65534, gid 65534, groups 65534) may not write it"), "\(message)")
        #expect(message.contains("the file is owned by 0:0, mode 0644, its folder \(volume.path) is owned by 0:65534, mode 2775"), "\(message)")
        #expect(message.contains("securityContext.fsGroup"), "\(message)")
    }

    @Test func aFleetWhoseResultsFileCannotBeWrittenStopsBeforeItsFirstStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (volume, store) = try Self.rootVolume(in: directory)
        let manifest = volume.appending(path: "fleet.jsonl")
        // The store's folder is writable, the manifest's is not: the store could be migrated, its result
        // not recorded.
        let stores = directory.appending("stores")
        try FileManager.default.createDirectory(at: stores, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: store, to: stores.appending(path: "s.sqlite"))
        _ = chown(stores.path, 65534, 65534)
        _ = chown(stores.appending(path: "s.sqlite").path, 65534, 65534)
        try "{\"store\":\"\(stores.path)/s.sqlite\",\"model\":\"\(Self.model)\",\"to\":\"v2\"}\n".write(to: manifest, atomically: true, encoding: .utf8)
        let before = try MigrateCommandTests.digest(stores.appending(path: "s.sqlite"))
        let result = try Self.asImageUser(["fleet", "migrate", "--manifest", manifest.path, "--shard", "0/1", "--quiet"])
        #expect(result.exitCode == 74, "\(result.standardError)")
        let message = result.standardError
        #expect(message.contains("cannot append to the results file \(manifest.path).results.jsonl"), "\(message)")
        #expect(message.contains("its folder \(volume.path) is owned by 0:0, mode 0755"), "\(message)")
        #expect(message.contains("nothing was migrated"), "\(message)")
        #expect(try MigrateCommandTests.digest(stores.appending(path: "s.sqlite")) == before, "the store was not migrated")
    }

    @Test func theMetricsAndEventsFoldersAreMadeAndOneThatCannotBeIsRefusedBeforeTheRun() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (volume, store) = try Self.rootVolume(in: directory)
        // Missing folders are made (as root here: the folders are the point).
        let metrics = directory.appending("metrics/new/m.prom")
        let events = directory.appending("events/e.jsonl")
        let made = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.model, "--to", "v2", "--output", directory.appending("o.sqlite").path,
             "--metrics", metrics.path, "--events", events.path, "--quiet"])
        #expect(made.exitCode == 0, "\(made.standardError)")
        #expect(try String(contentsOf: metrics, encoding: .utf8).contains("moult_"))
        #expect(FileManager.default.fileExists(atPath: events.path))

        // As the image's user, a metrics folder in root's volume cannot be made: refused, nothing done.
        let output = directory.appending("o2.sqlite")
        let refused = try Self.asImageUser(
            ["migrate", store.path, "--model", Self.model, "--to", "v2", "--output", output.path,
             "--metrics", volume.appending(path: "metrics/m.prom").path, "--quiet"])
        #expect(refused.exitCode == 74, "\(refused.standardError)")
        let message = refused.standardError
        #expect(message.contains("cannot write the metrics file \(volume.path)/metrics/m.prom"), "\(message)")
        #expect(message.contains("cannot create the folder: permission denied"), "\(message)")
        #expect(message.contains("its folder \(volume.path) is owned by 0:0, mode 0755"), "\(message)")
        #expect(message.contains("nothing was done"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}
