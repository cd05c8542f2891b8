import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

/// A cassette's lock held while VCR's is taken: against the lock order (VCR's state comes first). A debug build
/// traps naming both locks; a release build checks nothing and returns.
func lockOrderBroken() -> String {
    let cassette = Locked(0, level: .cassette)
    let vcr = Locked(0, level: .vcr)
    cassette.withLock { _ in vcr.withLock { _ in } }
    return "taken out of order without a trap (not a debug build)"
}

/// A matcher of the app's asked under a playback's lock: a debug build traps, naming the closure and the lock.
func matcherUnderLock() -> String {
    let playback = Locked(0, level: .playback)
    let request = URLRequest(url: URL(string: "https://example.com/")!)
    let matcher = Matcher(name: "apps-own") { _, _ in true }
    _ = playback.withLock { _ in matcher.matches(request, request) }
    return "ran under a lock without a trap (not a debug build)"
}
