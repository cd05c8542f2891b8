import Foundation
import HTTPVCRCassettes

/// Reading cassettes named on the command line, with errors that name the file as the user wrote it.
enum CassetteInput {
    static func url(_ path: String) -> URL {
        URL(fileURLWithPath: path)
    }

    /// The tape and format of the cassette at `path`, or an error (exit status 2) saying what is wrong with it.
    static func read(_ path: String) throws(CommandError) -> (tape: Tape, format: CassetteFormat) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw CommandError(message: "\(path): no such file")
        }
        if isFolder.boolValue {
            throw CommandError(message: "\(path): is a folder, not a cassette file")
        }
        do {
            return try CassetteFile.read(at: url(path))
        } catch {
            throw CommandError(message: "\(path): \(reason(error))")
        }
    }

    /// What is wrong, for showing after the path as the user wrote it: the error's reason, which leaves out the
    /// library's own (absolute) path.
    static func reason(_ error: VCRError) -> String {
        error.reason ?? error.message
    }

    static func describe(_ format: CassetteFormat) -> String {
        switch format {
        case .json: "HTTPVCR JSON"
        case .plist: "HTTPVCR property list"
        case .har: "HAR"
        case .yahttpvcr: "YAHTTPVCR"
        case .vcrpy: "VCR.py"
        }
    }

    /// Two paths naming the same file (after `..`, symbolic links and the like are resolved).
    static func sameFile(_ left: String, _ right: String) -> Bool {
        let a = url(left).standardizedFileURL.resolvingSymlinksInPath().path
        let b = url(right).standardizedFileURL.resolvingSymlinksInPath().path
        if a == b { return true }
        // Hard links, or case-insensitive file systems: compare device and inode when both exist.
        guard let first = try? FileManager.default.attributesOfItem(atPath: a),
              let second = try? FileManager.default.attributesOfItem(atPath: b),
              let firstInode = first[.systemFileNumber] as? NSNumber,
              let secondInode = second[.systemFileNumber] as? NSNumber,
              let firstDevice = first[.systemNumber] as? NSNumber,
              let secondDevice = second[.systemNumber] as? NSNumber
        else { return false }
        return firstInode == secondInode && firstDevice == secondDevice
    }
}
