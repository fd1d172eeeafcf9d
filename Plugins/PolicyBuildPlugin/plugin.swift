import Foundation
import PackagePlugin

/// Builds a target's app policy files as `moult policies build` does, inside this package: the files a
/// target lists in its `policy-sources.txt` (paths from the package's folder, one a line, `#` for
/// comments) are rewritten and registered into the plugin's work folder by `moult-policy-generate` (what
/// `moult policies generate` does, built alone), and compiled into the target with
/// `PolicyRegistration.swift`. The module is the target's.
@main
struct PolicyBuildPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let list = target.directoryURL.appending(path: "policy-sources.txt")
        let lines = try String(contentsOf: list, encoding: .utf8).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let sources = lines.filter { !$0.isEmpty && !$0.hasPrefix("#") }.map { context.package.directoryURL.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL
        let outputs = sources.map { output.appending(path: $0.lastPathComponent) } + [output.appending(path: "PolicyRegistration.swift")]
        return [
            .buildCommand(
                displayName: "moult-policy-generate (\(sources.count) files) for \(target.name)",
                executable: try context.tool(named: "moult-policy-generate").url,
                arguments: sources.map(\.path) + ["--module", target.moduleName, "--output", output.path],
                inputFiles: sources + [list],
                outputFiles: outputs)
        ]
    }
}
