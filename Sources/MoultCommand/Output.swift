import Foundation

enum FileHandleWriter {
    static func standardError(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
