import Foundation

/// How one request differs from its recording: the live answer's shape against the recorded one
/// (``RecordMode/verify``), or a re-recorded cassette's against the one before (`vcr diff`).
///
/// Compared: the status, the `Content-Type` and, for JSON bodies, the **shape**: keys added or removed, a value's
/// type changed (array ↔ object, null ↔ value, number → string), each at a JSONPath-like location where `[*]`
/// stands for every element of an array (`$.items[*].price: number → string`). Values are compared only at the
/// paths named in ``VCRConfiguration/comparedValuePaths``: ids, dates and tokens change on every call.
///
/// ```swift
/// for drift in cassette.drift {
///     print(drift)   // GET https://api.example.com/items: $.items[*].price: number → string
/// }
/// ```
public struct CassetteDrift: Sendable, Hashable, CustomStringConvertible {
    /// What kind of drift it is: a request whose answer changed, a request with no recording, or a recording
    /// nobody asked for.
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The kind's name: `changed`, `new` or `unused`.
        public let rawValue: String
        /// Makes a kind from its name; any name is kept, so that kinds added later read too.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The request has a recording, and the answers differ (``CassetteDrift/differences`` says how).
        public static let changed = Kind(rawValue: "changed")
        /// The request has no recording: the live side has it, the recorded side does not (`vcr diff`: it
        /// appeared in the newer cassette).
        public static let new = Kind(rawValue: "new")
        /// A recording that no request asked for (`vcr diff`: the request went from the newer cassette).
        public static let unused = Kind(rawValue: "unused")

        /// The kind's name.
        public var description: String { rawValue }
    }

    /// One difference between a recorded answer and the live (or newer) one.
    ///
    /// ```swift
    /// difference.location   // "$.items[*].price"
    /// difference.recorded   // "number"
    /// difference.live       // "string"
    /// difference.description   // "$.items[*].price: number → string"
    /// ```
    public struct Difference: Sendable, Hashable, CustomStringConvertible {
        /// What changed.
        public struct Kind: RawRepresentable, Sendable, Hashable {
            /// The kind's name.
            public let rawValue: String
            /// Makes a kind from its name; any name is kept, so that kinds added later read too.
            public init(rawValue: String) { self.rawValue = rawValue }

            /// The status code differs.
            public static let status = Kind(rawValue: "status")
            /// The `Content-Type` differs (compared without case and spaces).
            public static let contentType = Kind(rawValue: "contentType")
            /// A key the recorded JSON had is missing.
            public static let keyRemoved = Kind(rawValue: "keyRemoved")
            /// A key the recorded JSON did not have is there.
            public static let keyAdded = Kind(rawValue: "keyAdded")
            /// The value at a location has another type (`number → string`, `object → array`, `null → string`;
            /// `not JSON` for a body that is not JSON on one side).
            public static let typeChanged = Kind(rawValue: "typeChanged")
            /// The value at a location named in ``VCRConfiguration/comparedValuePaths`` differs.
            public static let valueChanged = Kind(rawValue: "valueChanged")
            /// One side ended in a transport error, the other did not, or the errors differ.
            public static let outcome = Kind(rawValue: "outcome")
            /// A value of a new request that changed from its closest recording's but kept its shape (a timestamp,
            /// a UUID, a signature): the location is the volatile value that would match it, `.jsonPath("$.sentAt")`.
            public static let looksVolatile = Kind(rawValue: "looksVolatile")
        }

        /// What changed.
        public let kind: Kind
        /// Where: `status`, `Content-Type`, `outcome`, or a JSONPath-like location in the body (`$.items[*].id`).
        public let location: String
        /// What the recording has there (a status, a type, a value); nil for a key added.
        public let recorded: String?
        /// What the live (or newer) answer has there; nil for a key removed.
        public let live: String?

        /// Makes a difference.
        /// - Parameters:
        ///   - kind: What changed.
        ///   - location: Where.
        ///   - recorded: The recorded side, nil when it has nothing there.
        ///   - live: The live side, nil when it has nothing there.
        public init(_ kind: Kind, at location: String, recorded: String?, live: String?) {
            self.kind = kind
            self.location = location
            self.recorded = recorded
            self.live = live
        }

        /// `$.items[*].price: number → string`, `$.author: removed (string)`, `$.extra: added (object)`.
        public var description: String {
            switch (recorded, live) {
            case let (recorded?, live?): "\(location): \(recorded) → \(live)"
            case let (recorded?, nil): "\(location): removed (\(recorded))"
            case let (nil, live?): "\(location): added (\(live))"
            case (nil, nil): location
            }
        }
    }

    /// Changed, new or unused.
    public let kind: Kind
    /// The request as `METHOD URL`, as matched and recorded (after the request filters).
    public let request: String
    /// How the answers differ, in the order status, `Content-Type`, body; empty for a new or unused request.
    public let differences: [Difference]

    /// Makes a drift.
    /// - Parameters:
    ///   - kind: Changed, new or unused.
    ///   - request: The request as `METHOD URL`.
    ///   - differences: How the answers differ.
    public init(_ kind: Kind, request: String, differences: [Difference] = []) {
        self.kind = kind
        self.request = request
        self.differences = differences
    }

    /// One line: `GET https://…/items: $.items[*].price: number → string; status: 200 → 500`, or
    /// `new request (no recording): GET https://…` / `unused recording (not requested): GET https://…`.
    public var description: String {
        switch kind {
        case .new:
            "new request (no recording): \(request)" + (volatile.isEmpty ? "" : "; looks volatile, add to "
                + "volatileValues: " + volatile.map { "\($0.location) (\($0.recorded ?? "") → \($0.live ?? ""))" }
                .joined(separator: ", "))
        case .unused: "unused recording (not requested): \(request)"
        default: "\(request): " + differences.map(\.description).joined(separator: "; ")
        }
    }

    /// Values proposed as volatile (``Difference/Kind/looksVolatile``).
    private var volatile: [Difference] { differences.filter { $0.kind == .looksVolatile } }

    /// How `newer` differs from `older`, request by request: each request of `newer` is paired with the first
    /// unpaired one of `older` that has the same method and URL, and their answers compared; requests only in
    /// `newer` are ``Kind/new``, only in `older` ``Kind/unused``. What `vcr diff` prints.
    ///
    /// ```swift
    /// let old = try CassetteFile.read(at: oldURL).tape
    /// let new = try CassetteFile.read(at: newURL).tape
    /// for drift in CassetteDrift.between(old, new) { print(drift) }
    /// ```
    ///
    /// - Parameters:
    ///   - older: The recorded side (the cassette before a re-record).
    ///   - newer: The live side (the cassette after it).
    ///   - comparedValuePaths: Locations whose values are compared too (`$.status`, `$.items[*].id`).
    public static func between(_ older: Tape, _ newer: Tape, comparedValuePaths: [String] = []) -> [CassetteDrift] {
        let olderInteractions = older.interactions
        var paired = Array(repeating: false, count: olderInteractions.count)
        var drifts: [CassetteDrift] = []
        for interaction in newer.interactions {
            let request = interaction.request
            guard let index = olderInteractions.indices.first(where: { index in
                !paired[index] && olderInteractions[index].request.method == request.method
                    && olderInteractions[index].request.url == request.url
            }) else {
                drifts.append(CassetteDrift(.new, request: ShapeComparison.describe(request)))
                continue
            }
            paired[index] = true
            if let drift = ShapeComparison.drift(
                recorded: olderInteractions[index], live: interaction, comparedValuePaths: comparedValuePaths
            ) {
                drifts.append(drift)
            }
        }
        for (index, interaction) in olderInteractions.enumerated() where !paired[index] {
            drifts.append(CassetteDrift(.unused, request: ShapeComparison.describe(interaction.request)))
        }
        return drifts
    }
}
