import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Everything that decides how cassettes record and replay: a `Sendable` value.
///
/// `VCR.setup { configuration in … }` edits the shared defaults; `VCR.insertCassette { configuration in … }`
/// edits a copy for one cassette only.
///
/// ```swift
/// VCR.setup { configuration in
///     configuration.cassettesPath = "/path/to/Cassettes"
///     configuration.hostFilter = ["127.0.0.1"]
///     configuration.matchers = [.method, .path]
///     configuration.recordMode = .once
///     configuration.playbackMode = .chronological
/// }
/// ```
public struct VCRConfiguration: Sendable {
    /// The folder relative cassette paths are resolved against. Defaults to `Cassettes` in the current
    /// directory.
    public var cassettesPath: String = FileManager.default.currentDirectoryPath + "/Cassettes"
    /// The cassette file, relative to ``cassettesPath`` or absolute. Without a cassette extension (`.json`, `.plist`,
    /// `.har`, `.yml`) `.json` is added (`host-example.com` becomes `host-example.com.json`);
    /// `.plist` stores a property list.
    public var cassettePath: String?
    /// Which hosts are intercepted. Default: all of them.
    public var hostFilter: HostFilter = .all
    /// What must be equal for a request to replay a recorded one.
    public var matchers: [Matcher] = [.method, .scheme, .host, .port, .path, .query]
    /// Values that change every run (presigned URLs' dates and signatures, nonces, cache busters, request ids, a
    /// client id in a JSON body): matched by presence and shape, not text, and echoed back live in the replayed
    /// response. Default: ``VolatileValue/defaults``; add to it (`+=`), or set `[]` to compare every value as
    /// written. See Docs/VolatileValues.md.
    public var volatileValues: [VolatileValue] = VolatileValue.defaults
    /// Default `.once`. The environment variable `VCR_RECORD_MODE` overrides it when set.
    public var recordMode: RecordMode = .once
    /// How replayed requests are paced against each other. Default `.chronological`.
    public var playbackMode: PlaybackMode = .chronological
    /// In chronological playback, how long to wait for a request whose scene is next on the tape before
    /// going on with the requests that are waiting. Long enough for requests a test starts together.
    public var chronologicalWait: TimeInterval = 0.3
    /// When replayed scenes reach the client: at once (`.instant`, the default), at their recorded offsets from the
    /// request's start (`.recorded`), or at those offsets times a factor (`.scaled`). Playback order still holds: a
    /// scene that is not due yet holds back the deliveries queued after it (in `.momentary` mode too, where they
    /// wait in the order their requests matched).
    public var replayTiming: ReplayTiming = .instant
    /// Apple platforms: report each hop of a redirect to the client with `wasRedirectedTo`, as a server's would
    /// reach it, so that a session delegate's `willPerformHTTPRedirection` sees every recorded hop and can follow,
    /// refuse or change it. Off by default until verified on a Mac: Apple's loader has a known race with protocols
    /// that report hops (radar 39391319; OHHTTPStubs #230, #280). Off, HTTPVCR follows the chain itself and hands
    /// the client the final response, as it always does on Linux (where corelibs traps on `wasRedirectedTo`, so
    /// this setting does nothing).
    public var reportsRedirectHops = false

    // MARK: Filters (see Docs/Filters.md)

    /// Returns the path to use instead of the request's, for matching and recording.
    public var pathFilter: (@Sendable (URLRequest) -> String)?
    /// Rewrites the request's query parameters, for matching and recording; nil (the default) keeps them.
    public var queryParametersFilter: QueryParametersFilter?
    /// Rewrites the request's header fields, for matching and recording; nil (the default) keeps them.
    public var headersFilter: HeadersFilter?
    /// Rewrites the request's body, for matching and recording; nil (the default) keeps it.
    public var postBodyFilter: PostBodyFilter?
    /// Rewrites response bodies before they are recorded; nil (the default) keeps them.
    public var responseBodyFilter: ResponseBodyFilter?
    /// Returns the request to match and record instead, or nil to let the request through to the network
    /// untouched: neither recorded nor replayed.
    public var beforeRecordRequest: (@Sendable (URLRequest) -> URLRequest?)?
    /// Returns the response and body to record instead, or nil not to record this response at all.
    public var beforeRecordResponse: (@Sendable (URLRequest, HTTPURLResponse, Data?) -> (HTTPURLResponse, Data?)?)?
    /// Secure by default: header names (requests and responses), query parameters and JSON or form keys that name
    /// secrets are written as ``filteredPlaceholder``, and so is the userinfo of URLs. The names are those `vcr lint`
    /// looks for: `Authorization`, `Cookie`, `Set-Cookie` (cookie names kept), `X-API-Key`, `X-Auth-Token` and any
    /// `*-Token`; `token`, `access_token`, `refresh_token`, `api_key`, `client_secret`, `password`, `secret`,
    /// `signature`, … Every value filtered from an interaction is also replaced wherever it comes back in it (a
    /// server echoing the request, an error quoting it), plain, percent-encoded or base64. The same filters run on
    /// the live request before it is matched, so cassettes still replay. Set to `false` to record such names in
    /// clear (``secureHeaders`` and ``secretNames`` still apply).
    public var filtersSecrets = true
    /// More header names, query parameters and body keys to treat as secrets (compared case-insensitively), on top of
    /// the built-in ones (or instead of them, with ``filtersSecrets`` off).
    public var secretNames: Set<String> = []
    /// Placeholders both ways (Ruby VCR's `filter_sensitive_data`): recording writes the placeholder wherever the
    /// value appears in a request or its response, and replaying puts the value back into responses. The live
    /// request is matched with the values hidden too, so cassettes recorded with one value replay with another.
    ///
    /// ```swift
    /// configuration.sensitiveData = ["<API_KEY>": { ProcessInfo.processInfo.environment["API_KEY"] }]
    /// ```
    ///
    /// A closure that returns nil or an empty string (the variable is not set, in CI) hides nothing.
    public var sensitiveData: [String: @Sendable () -> String?] = [:]
    /// Before a cassette is written, what was recorded into it is scanned as `vcr lint` scans (secret-named headers,
    /// parameters and keys in clear, token shapes such as JWTs, bearer tokens and cloud API keys anywhere). A finding
    /// keeps the file as it was and fails with ``VCRError/Code/secretsFound``, naming the request, the place and the
    /// setting that keeps it out; the test integrations fail the test with it. Values written by your own
    /// `.replacing` filters and ``sensitiveData`` placeholders count as placeholders. Set to `false` for a cassette
    /// that must hold what the scanner takes for a secret (a public test key, a fake JWT).
    public var checksSecretsOnSave = true
    /// Request headers written to cassettes only as ``filteredPlaceholder``, never in clear. Secure by
    /// default; set to `[]` to record them as they are.
    public var secureHeaders: Set<String> = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// Lets a request whose matching recordings have all been played replay the last of them again, instead of
    /// failing (or, in `.new` mode, being recorded). Off by default: a request made more often than it was recorded
    /// is usually a change worth knowing about.
    public var allowsPlaybackRepeats = false

    /// When a cassette that recorded something is saved, keep only the interactions played or recorded while it
    /// was inserted, in tape order. Off by default. Nothing is dropped when nothing was recorded.
    public var dropsUnusedInteractions = false

    /// How old a cassette may get: when its oldest interaction was recorded longer ago than this (in seconds),
    /// ``expiryAction`` says what happens. Nil (the default): cassettes never expire. Interactions recorded before
    /// HTTPVCR kept their time (``RecordedRequest/recordedAt``) never expire.
    ///
    /// ```swift
    /// configuration.reRecordInterval = 30 * 24 * 60 * 60   // 30 days
    /// configuration.expiryAction = .reRecord
    /// ```
    public var reRecordInterval: TimeInterval?
    /// What an expired cassette does: ``ExpiryAction/warn`` (the default), ``ExpiryAction/fail`` or
    /// ``ExpiryAction/reRecord``.
    public var expiryAction: ExpiryAction = .warn

    /// Records requests that could not reach the server at all (connection refused, no such host, offline).
    /// Off by default: such a request is kept off the tape and reported in ``VCR/failures`` (the test
    /// integrations fail the test with it), so that a recording made while a server was down does not replay the
    /// outage forever. Timeouts and cancellations are recorded either way. Turn it on for a test that records an
    /// outage on purpose.
    public var recordsConnectionErrors = false

    /// Lets cassettes be inserted although `URLSession.shared` bypasses HTTPVCR (Linux: it was made before the
    /// first `VCR` call). Off by default: ``VCR/insertCassette(_:)`` throws rather than let the shared session's
    /// requests reach the network unseen. Turn it on only when every request goes through sessions made with
    /// ``VCR/install(in:)``.
    public var allowsUninterceptedSharedSession = false

    /// Whether a request made while no cassette is in force may reach the network (WebMock's
    /// `disable_net_connect!` when off). On by default. Off, such a request fails at once with a ``VCRError``
    /// (``VCRError/Code/networkWithoutCassette``) naming it and the test that made it: through `URLSession.shared`,
    /// a session made with ``VCR/install(in:)``, or the door. A session HTTPVCR is not in gets an error too (Linux,
    /// where the network guard sees it). `VCR_ALLOW_NETWORK=0` (or `1`) overrides it for a run. Read from the shared
    /// configuration (``VCR/setup(_:)``): with no cassette there is no other.
    ///
    /// ```swift
    /// VCR.setup { configuration in
    ///     configuration.allowsNetworkWithoutCassette = false   // a test without a cassette stays offline
    /// }
    /// ```
    public var allowsNetworkWithoutCassette = true

    /// Whether loopback (127.0.0.0/8, `::1`, `localhost`) stays reachable while ``allowsNetworkWithoutCassette`` is
    /// off: tests talk to servers they start. On by default.
    public var allowsLoopbackWithoutCassette = true

    /// Where ``RecordMode/verify`` and ``CassetteDrift/between(_:_:comparedValuePaths:)`` compare values too, not
    /// only the shape: JSONPath-like locations in a JSON body, `[*]` for every element of an array. Empty by
    /// default: ids, times and tokens change on every call. A path written otherwise (without the leading `$`)
    /// compares nothing.
    ///
    /// ```swift
    /// configuration.comparedValuePaths = ["$.status", "$.items[*].currency"]
    /// ```
    public var comparedValuePaths: [String] = []

    /// The cassette is a copy nobody may write (a test bundle's, where the sources are out of reach): it replays
    /// as it is and records nothing, whatever the record mode. Set by the test integrations.
    package var isReadOnlyCopy = false
    /// What a no-match message says to do: the options of the tool that inserted the cassette (`vcr serve`'s); nil,
    /// the library's settings. Optional so that copies of a configuration (and of a playback's rules) retain nothing
    /// more for it.
    package var mismatchAdvice: MismatchAdvice?

    /// What filtered secrets are written as.
    public static let filteredPlaceholder = SecretNames.filteredPlaceholder

    /// A configuration with every default given above.
    public init() {}

    /// The record mode in force: `VCR_RECORD_MODE` when set, else ``recordMode``.
    public var effectiveRecordMode: RecordMode {
        RecordMode.fromEnvironment ?? recordMode
    }

    /// The cassette file ``cassettePath`` names, resolved against ``cassettesPath``, `.json` added when it
    /// has no extension.
    public var cassetteURL: URL? { cassetteFile?.url }

    /// ``cassetteURL`` by its path, which is known before the URL is made (`URL.path` works it out again).
    var cassetteFile: CassetteLocation? {
        guard let cassettePath, !cassettePath.isEmpty else { return nil }
        if let path = Self.plainFilePath(cassettePath.hasPrefix("/") ? cassettePath : cassettesPath + "/" + cassettePath) {
            return CassetteLocation(plainPath: path)
        }
        return CassetteLocation(url: resolvedByFoundation(cassettePath))
    }

    /// The common case without `URL`'s path arithmetic, which cost a fifth of loading a small cassette: an absolute
    /// path with no empty, `.` or `..` segment, whose last segment has no dot (`.json` is added) or ends in a plain
    /// extension. Nil for anything else.
    static func plainFilePath(_ path: String) -> String? {
        var path = path
        let kind: (isPlain: Bool, needsExtension: Bool) = path.withUTF8 { bytes in
            guard bytes.first == Byte.slash else { return (false, false) }
            var segmentStart = 1
            var lastDot: Int?
            for index in 1...bytes.count {
                guard index == bytes.count || bytes[index] == Byte.slash else {
                    if bytes[index] == Byte.dot { lastDot = index }
                    continue
                }
                let segment = UnsafeBufferPointer(rebasing: bytes[segmentStart..<index])
                if segment.isEmpty || segment.allSatisfy({ $0 == Byte.dot }) && segment.count <= 2 { return (false, false) }
                if index < bytes.count {
                    segmentStart = index + 1
                    lastDot = nil
                }
            }
            guard let dot = lastDot else { return (true, true) }
            let pathExtension = UnsafeBufferPointer(rebasing: bytes[(dot + 1)...])
            let isPlainExtension = dot != segmentStart && !pathExtension.isEmpty
                && pathExtension.allSatisfy { (Byte.zero...Byte.nine).contains($0) || (0x41...0x5A).contains($0 & ~0x20) }
            // A dot that ends no cassette extension is part of the name (`host-example.com`): `.json` is added.
            return (isPlainExtension, isPlainExtension && !Self.isCassetteExtension(String(decoding: pathExtension, as: UTF8.self)))
        }
        guard kind.isPlain else { return nil }
        return kind.needsExtension ? path + ".json" : path
    }

    /// The extensions a cassette file has: what HTTPVCR writes and the foreign formats it reads.
    static func isCassetteExtension(_ pathExtension: String) -> Bool {
        ["json", "plist", "har", "yml", "yaml"].contains(pathExtension.lowercased())
    }

    /// `URL`'s resolution: relative folders, `..`, odd extensions.
    func resolvedByFoundation(_ cassettePath: String) -> URL {
        // Saying which parts are folders spares `URL` a look at the disk for each.
        var url = cassettePath.hasPrefix("/")
            ? URL(fileURLWithPath: cassettePath, isDirectory: false)
            : URL(fileURLWithPath: cassettesPath, isDirectory: true).appendingPathComponent(cassettePath, isDirectory: false)
        if !Self.isCassetteExtension(url.pathExtension) { url.appendPathExtension("json") }
        return url.standardizedFileURL
    }
}
