import Foundation

/// Everything that can go wrong with a cassette, said so that a reader knows which file and what to do next.
///
/// A `VCRError` is also what a task fails with when HTTPVCR refuses a request (an unmatched request on a
/// write-protected cassette, an upload whose body it cannot see). It bridges to `NSError` in the
/// ``errorDomain`` with the ``Code`` as its code, so it survives the trip through the URL loading system.
public struct VCRError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError, CustomNSError {
    /// What kind of failure it is; also the `NSError` code it bridges to.
    public var code: Code
    /// The full, human-readable explanation.
    public var message: String
    /// The cassette file concerned, when there is one.
    public var cassettePath: String?
    /// What is wrong, without the file's name: `scenes[3].response.status: expected a number, found a string`.
    /// For showing beside a path the reader already sees (`vcr` does).
    public var reason: String?
    /// The request concerned, as `METHOD URL`, when there is one (an unmatched request, one HTTPVCR cannot serve).
    public var request: String?
    /// For ``Code/noMatch``: what the closest recording says about the request, so that the test integrations give
    /// the remedy that fits (record the test anew, or fix a port) rather than read the message.
    package var mismatch: MismatchKind?

    /// An error of the given kind, with the text a reader sees and what it concerns.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: The full explanation: the error's ``description`` and `localizedDescription`.
    ///   - cassettePath: The cassette file concerned, if any.
    ///   - reason: What is wrong, without the file's name (see ``reason``).
    ///   - request: The request concerned, as `METHOD URL`, if any.
    public init(
        _ code: Code,
        _ message: String,
        cassettePath: String? = nil,
        reason: String? = nil,
        request: String? = nil
    ) {
        self.code = code
        self.message = message
        self.cassettePath = cassettePath
        self.reason = reason
        self.request = request
    }

    /// The kinds of failure, each with a stable number: the `NSError` code in ``errorDomain``.
    public enum Code: Int, Sendable {
        /// The file is not a cassette HTTPVCR can read: truncated, wrong types, bad base64, unknown version.
        case malformedCassette = 1
        /// `.never` mode, or a foreign cassette, and no file at the path.
        case cassetteNotFound = 2
        /// Writing the cassette failed; the previous file is untouched.
        case saveFailed = 3
        /// A request that matched nothing on a cassette that may not record.
        case noMatch = 4
        /// A cassette written by another tool cannot be recorded into.
        case foreignCassetteIsReadOnly = 5
        /// The request cannot be intercepted faithfully on this platform.
        case unsupportedRequest = 6
        /// `insertCassette` while another cassette is inserted, or `ejectCassette` with none.
        case cassetteState = 7
        /// `beforeRecordRequest` refused a request on a cassette that may not record.
        case requestIgnored = 8
        /// The shared URL session was made before HTTPVCR registered itself, so its requests would bypass the
        /// cassette (swift-corelibs-foundation).
        case sharedSessionNotIntercepted = 9
        /// A request failed to reach the server while recording (connection refused, no such host, offline), and
        /// ``VCRConfiguration/recordsConnectionErrors`` is off: it was not written to the cassette.
        case connectionErrorNotRecorded = 10
        /// A matcher named in the configuration is neither built in nor registered.
        case unknownMatcher = 11
        /// The cassette is older than ``VCRConfiguration/reRecordInterval`` and ``ExpiryAction/fail`` is set.
        case cassetteExpired = 12
        /// The save-time check (``VCRConfiguration/checksSecretsOnSave``) found a secret in clear in what was
        /// recorded: the cassette was not written.
        case secretsFound = 13
        /// Tests with task-bound cassettes were running in parallel and the request could not be traced to any
        /// test's task (made outside a Swift task, or from a detached one): HTTPVCR refuses rather than guess.
        case unattributedRequest = 14
        /// A test's sources cannot be read where it runs (no such folder: Xcode Cloud, a copied test bundle; reading
        /// refused: a sandboxed app's tests, a device), and its cassette would need recording, or the test bundle has
        /// no copy of it to replay.
        case sourcesOutOfReach = 15
        /// A request from a URL session HTTPVCR is not installed in met a cassette (Linux): refused where the
        /// cassette may not record, named where it records, since it is not recorded.
        case wentAroundCassette = 16
        /// A request made while no cassette is in force, with ``VCRConfiguration/allowsNetworkWithoutCassette`` off.
        case networkWithoutCassette = 17
        /// Recorded requests of a process a ``VCRBridge`` serves never came while the bridge ran: the server under
        /// test did not make the calls the cassette holds.
        case requestsNeverCame = 18
    }

    public var description: String { message }
    public var errorDescription: String? { message }

    public static var errorDomain: String { "HTTPVCR.VCRError" }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
}

extension VCRError {
    package static func malformed(_ path: String, _ what: String) -> VCRError {
        VCRError(.malformedCassette, "Malformed cassette \(path): \(what)", cassettePath: path, reason: what)
    }
}
