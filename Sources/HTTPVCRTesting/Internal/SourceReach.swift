import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a test can read its sources where it runs. A simulator reads the Mac's source tree; a device cannot (the
/// path is refused or not there), nor can a macOS test hosted in a sandboxed app, and Xcode Cloud's test runners have
/// no sources at all. There, cassettes come from the test bundle's copy (``BundleFallback``).
enum SourceReach: Equatable, Sendable {
    case reachable
    /// No such folder: the tests run where the sources are not.
    case missing(path: String)
    /// Reading the folder was refused (`EACCES`, `EPERM`).
    case refused(path: String, error: String)
    /// ``VCRTestCase`` found no package root, so there is no folder to look at.
    case noPackageRoot

    /// The reach of a scope's cassettes: `cassettesFolder` when it is there; else the first folder above it that is
    /// there (a folder not there yet is made when recording), then `sourceFolder`, the folder of the test's source
    /// file (or its package root), which must be there too. An empty `cassettesFolder` is ``VCRTestCase``'s "no
    /// package root".
    static func check(cassettesFolder: String, sourceFolder: String?) -> SourceReach {
        guard !cassettesFolder.isEmpty else { return .noPackageRoot }
        let start = URL(fileURLWithPath: cassettesFolder).standardizedFileURL.path
        var folder = start
        while true {
            let reach = of(folder: folder)
            if reach == .reachable {
                if folder == start { return .reachable }
                break
            }
            if case .refused = reach { return reach }
            let parent = (folder as NSString).deletingLastPathComponent
            if parent.isEmpty || parent == folder { break }
            folder = parent
        }
        guard let sourceFolder, !sourceFolder.isEmpty else { return .reachable }
        return of(folder: sourceFolder)
    }

    /// What opening `folder` for reading says: what any read of it would.
    static func of(folder: String) -> SourceReach {
        guard let directory = opendir(folder) else { return classify(errno: errno, path: folder) }
        closedir(directory)
        return .reachable
    }

    /// An error opening `path`, as a reach. Errors that say nothing about the sources (too many open files, …) count
    /// as reachable: the ordinary path then fails as it would have.
    static func classify(errno code: Int32, path: String) -> SourceReach {
        switch code {
        case ENOENT, ENOTDIR: .missing(path: path)
        case EACCES, EPERM: .refused(path: path, error: String(cString: strerror(code)))
        default: .reachable
        }
    }

    /// Where the test is running, in a few words.
    var summary: String {
        switch self {
        case .reachable: "sources in reach"
        case .missing: "no sources here: Xcode Cloud or a copied test bundle"
        case .refused: "sandbox or device"
        case .noPackageRoot: "no package root"
        }
    }

    /// Why the sources cannot be read, with the words that say where the test is running.
    var cause: String {
        switch self {
        case .reachable:
            "the sources can be read"
        case let .missing(path):
            "\(path) does not exist (no sources here: Xcode Cloud or a copied test bundle)"
        case let .refused(path, error):
            "reading \(path) was refused: \(error) (sandbox or device)"
        case .noPackageRoot:
            "no package root was found: no Package.swift above the test bundle or the current directory, and neither "
                + "testFilePath nor VCR_PACKAGE_ROOT says where the sources are"
        }
    }
}
