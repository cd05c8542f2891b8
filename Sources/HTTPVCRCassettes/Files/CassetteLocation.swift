import Foundation

/// Where a cassette's file is: its path, and its URL, made only when asked.
///
/// Loading needs only the path. Making the URL cost a twentieth of loading a small cassette, and most test scopes
/// never ask for it (it is wanted for saving and for some messages).
package struct CassetteLocation: Sendable {
    package let path: String
    /// Set when `URL` resolved the path (relative folders, `..`): the URL is then the source of truth.
    private let resolvedURL: URL?

    /// A plain absolute path (``VCRConfiguration/plainFilePath(_:)``).
    package init(plainPath: String) {
        path = plainPath
        resolvedURL = nil
    }

    package init(url: URL) {
        path = url.path
        resolvedURL = url
    }

    package var url: URL { resolvedURL ?? URL(fileURLWithPath: path, isDirectory: false) }
}
