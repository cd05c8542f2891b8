import Foundation
import HTTPVCRCassettes

/// What a cassette does with requests it cannot replay, and whether it replays at all.
///
/// A struct with static members rather than an enum, so that the environment variable `VCR_RECORD_MODE` can
/// name one (``init(rawValue:)``) and so that later modes do not break exhaustive switches in user code.
///
/// ```swift
/// VCR.setup { $0.recordMode = .never }   // replay only: a request the cassettes do not have fails
/// ```
///
/// > Note: ``never`` was called `.none`, a name that collides with `Optional.none`: where a `RecordMode?` is
/// > expected, `.none` means no mode at all. `.none` is kept as a deprecated alias of ``never``, and
/// > `VCR_RECORD_MODE=none` still names it.
public struct RecordMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The mode's name as `VCR_RECORD_MODE` takes it: `once`, `new`, `never`, `all`, `passthrough` or `verify`.
    public let rawValue: String

    /// The mode `rawValue` names, whatever its case and surrounding spaces; nil for any other text.
    ///
    /// `none`, the former name of ``never``, names ``never`` (whose ``rawValue`` is `never`), so that
    /// `VCR_RECORD_MODE=none` keeps working.
    ///
    /// ```swift
    /// RecordMode(rawValue: "never") == .never   // true
    /// RecordMode(rawValue: "none") == .never    // true
    /// RecordMode(rawValue: "sometimes")         // nil
    /// ```
    ///
    /// - Parameter rawValue: A mode's name: `once`, `new`, `never` (or `none`), `all`, `passthrough`, `verify`.
    public init?(rawValue: String) {
        let value = rawValue.trimmingCharacters(in: .whitespaces).lowercased()
        switch value {
        case "none": self = .never
        case "once", "new", "never", "all", "passthrough", "verify": self.rawValue = value
        default: return nil
        }
    }

    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// A new cassette records everything; an existing one only replays, and a request it cannot match fails.
    public static let once = RecordMode("once")
    /// Replays what matches; what does not is sent to the network and recorded.
    public static let new = RecordMode("new")
    /// Replays only and never writes: a request the cassette cannot match fails, unsent. Inserting a cassette whose
    /// file is missing throws. For CI and offline runs: `VCR_RECORD_MODE=never swift test`.
    public static let never = RecordMode("never")
    /// The former name of ``never``: the same mode (`RecordMode.none == .never`).
    ///
    /// Renamed because `.none` collides with `Optional.none`: `let mode: RecordMode? = .none` is no mode at all,
    /// with only a warning. Write `.never`; `VCR_RECORD_MODE=none` still names ``never``.
    @available(*, deprecated, renamed: "never")
    public static var none: RecordMode { .never }
    /// Inserting erases the cassette; everything is recorded again and nothing is replayed.
    public static let all = RecordMode("all")
    /// Requests go to the network as if HTTPVCR were not there; cassettes are neither read nor written. For running
    /// a suite against the real service: `VCR_RECORD_MODE=passthrough swift test`.
    public static let passthrough = RecordMode("passthrough")
    /// Every request goes to the network and the app gets the live answer, as in ``passthrough``; each is also
    /// matched against the cassette and its answer compared with the recording (the status, `Content-Type`, and
    /// a JSON body's shape), and the differences are kept in ``Cassette/drift``. The cassette file is never
    /// changed. A request the cassette has no recording for is reported as new; a recording no request asked for,
    /// as unused. For a nightly run against the real service: `VCR_RECORD_MODE=verify swift test`.
    ///
    /// > Note: The test integrations report drift as a warning on the test, or as a failure with
    /// > `failsOnDrift: true`; see ``CassetteDrift``.
    public static let verify = RecordMode("verify")

    /// The default of the test integrations' `recordMode` parameters (the `.cassette` trait, `VCRCassetteScope`):
    /// leave the record mode as the configuration has it. Not a mode: ``init(rawValue:)`` never makes it, and the
    /// integrations never set it on a configuration. It lets those parameters be non-optional, so that `.none`
    /// passed to them is the deprecated ``none`` rather than `Optional.none`.
    @usableFromInline package static let configured = RecordMode("configured")

    /// The environment variable that, when set, overrides the configured mode: `VCR_RECORD_MODE=all swift test`.
    public static let environmentVariable = "VCR_RECORD_MODE"

    /// The mode `VCR_RECORD_MODE` names, if it is set to one of `once`, `new`, `never` (or `none`), `all`,
    /// `passthrough`, `verify`.
    public static var fromEnvironment: RecordMode? {
        // getenv, not ProcessInfo.environment: that builds a dictionary of the whole environment on every call, a
        // third of the time it takes to load a small cassette.
        from { name in getenv(name).map { String(cString: $0) } }
    }

    /// The mode an environment names. xcodebuild hands the test runner `TEST_RUNNER_`-prefixed variables with the
    /// prefix taken off; a test plan or scheme may still pass the prefixed name through as it is.
    static func from(environment: [String: String]) -> RecordMode? {
        from { environment[$0] }
    }

    private static func from(variable: (String) -> String?) -> RecordMode? {
        (variable(environmentVariable) ?? variable("TEST_RUNNER_" + environmentVariable))
            .flatMap(RecordMode.init(rawValue:))
    }

    /// The mode as written in Swift: `.never`.
    public var description: String { ".\(rawValue)" }
}

/// How replayed requests are paced against each other.
public struct PlaybackMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init?(rawValue: String) {
        let value = rawValue.lowercased()
        guard value == "chronological" || value == "momentary" else { return nil }
        self.rawValue = value
    }

    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// Scenes of all requests are delivered in tape order, so concurrent requests complete in the order they
    /// did when recorded. A scene of a request nobody has issued is waited for at most
    /// ``VCRConfiguration/chronologicalWait`` before playback goes on with the requests that are waiting.
    public static let chronological = PlaybackMode("chronological")
    /// Each request gets its recorded scenes as soon as it is issued.
    public static let momentary = PlaybackMode("momentary")

    public var description: String { ".\(rawValue)" }
}

/// When replayed scenes reach the client.
public enum ReplayTiming: Sendable, Hashable, CustomStringConvertible {
    /// As soon as playback order allows: no waiting. The default.
    case instant
    /// Each scene (the response, every chunk, the end) at the offset from the request's start at which it was
    /// recorded: a 1 s response takes about 1 s, a stream arrives at its pace.
    case recorded
    /// The recorded offsets multiplied by a factor: `.scaled(0.1)` replays ten times faster, `.scaled(2)` twice as
    /// slow. A factor of 0 or less is `.instant`.
    case scaled(Double)

    /// The factor on recorded offsets; nil when nothing waits.
    var factor: Double? {
        switch self {
        case .instant: nil
        case .recorded: 1
        case let .scaled(factor): factor > 0 && factor.isFinite ? factor : nil
        }
    }

    public var description: String {
        switch self {
        case .instant: ".instant"
        case .recorded: ".recorded"
        case let .scaled(factor): ".scaled(\(factor))"
        }
    }
}

/// Which hosts a cassette intercepts. Requests to other hosts go to the network, unrecorded.
///
/// ```swift
/// configuration.hostFilter = ["127.0.0.1", "api.example.com"]        // an allow-list
/// configuration.hostFilter = .matching { host in host.hasSuffix(".example.com") }
/// ```
public struct HostFilter: Sendable, ExpressibleByArrayLiteral {
    private let accepts: @Sendable (String) -> Bool
    /// Set for ``all``, so that the host need not even be read.
    let acceptsEveryHost: Bool

    /// Hosts for which `predicate` returns true. The host is lowercased.
    public static func matching(_ predicate: @escaping @Sendable (String) -> Bool) -> HostFilter {
        HostFilter(accepts: { host in
            checkNoLockHeld(running: "a host filter's predicate")
            return predicate(host)
        })
    }

    /// Every host (the default).
    public static let all = HostFilter(accepts: { _ in true }, acceptsEveryHost: true)

    public init(arrayLiteral hosts: String...) {
        self.init(hosts)
    }

    /// Exactly these hosts, compared case-insensitively.
    public init(_ hosts: [String]) {
        let allowed = Set(hosts.map { $0.lowercased() })
        self.init(accepts: { allowed.contains($0) })
    }

    private init(accepts: @escaping @Sendable (String) -> Bool, acceptsEveryHost: Bool = false) {
        self.accepts = accepts
        self.acceptsEveryHost = acceptsEveryHost
    }

    public func accepts(host: String) -> Bool {
        acceptsEveryHost || accepts(host.lowercasedIfNeeded)
    }
}
