// The policy build's generator for the package's own build-tool plugin (Plugins/PolicyBuildPlugin):
// `moult policies generate` without the rest of `moult`, so that the plugin's host tool is this file
// and `MoultPolicySource` rather than a second build of the whole package.
//
//     moult-policy-generate FILE... --module MODULE --output FOLDER
//
// FOLDER must exist (the plugin's work folder). Exit 64 for a wrong command line, 65 for what a policy
// file says, 74 when a file cannot be read or written.
import Foundation
import MoultPolicySource

func fail(_ code: Int32, _ message: String) -> Never {
    FileHandle.standardError.write(Data("moult-policy-generate: \(message)\n".utf8))
    exit(code)
}

var files: [String] = []
var module: String?
var output: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--module", "--output":
        guard let value = arguments.popFirst() else { fail(64, "\(argument) needs a value") }
        if argument == "--module" { module = value } else { output = value }
    default:
        if argument.hasPrefix("-") { fail(64, "unknown option \(argument)") }
        files.append(argument)
    }
}
guard let module, let output, !files.isEmpty else { fail(64, "usage: moult-policy-generate FILE... --module MODULE --output FOLDER") }

let registration: PolicyRegistration
do {
    registration = try PolicyRegistration.reading(module: module, paths: files)
} catch let error as PolicyBuildError {
    fail(error.code == .io ? 74 : 65, error.description)
}
let folder = URL(filePath: output, directoryHint: .isDirectory)
for file in registration.writtenFiles {
    do {
        try Data(file.text.utf8).write(to: folder.appending(path: file.name), options: .atomic)
    } catch {
        fail(74, "cannot write \(file.name) into \(output): \(error.localizedDescription)")
    }
}
