import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A live request as a cassette's filters leave it, with the text of its URL when the filters already read it:
/// matching compares that text, and reading a `URLRequest`'s URL again would copy it again.
struct FilteredRequest {
    let request: URLRequest
    /// `request.url?.absoluteString`, known only for a URL relative to no base; nil: not read, ask `request`.
    let absoluteURL: String?

    init(_ request: URLRequest, absoluteURL: String? = nil) {
        self.request = request
        self.absoluteURL = absoluteURL
    }
}
