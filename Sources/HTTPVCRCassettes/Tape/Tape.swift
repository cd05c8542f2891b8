import Foundation

/// The one model every part of HTTPVCR shares: a cassette's ordered scenes.
///
/// File formats turn files into a tape and back; the player reads it; the recorder appends to it. Nothing
/// downstream knows which format a tape came from.
public struct Tape: Sendable, Equatable {
    /// Every scene, in the order they happened: each chapter's in its order, concurrent chapters interleaved.
    public var scenes: [Scene]

    /// A tape of `scenes`, in their order.
    public init(scenes: [Scene] = []) {
        self.scenes = scenes
    }

    /// A tape that plays the interactions one after the other, as formats without interleaving describe them.
    public init(interactions: [Interaction]) {
        self.scenes = interactions.flatMap(\.scenes)
    }

    /// The tape's requests, one per chapter, in the order the chapters start.
    public var interactions: [Interaction] {
        ChapterLayout(scenes: scenes).scenesOfChapter.compactMap { positions in
            Interaction(scenes: positions.map { scenes[$0] })
        }
    }

    /// The next chapter number that is not used on this tape: one above the highest.
    ///
    /// Never beyond 2147483647, the largest chapter a cassette file may hold: a tape that already reaches it (or,
    /// built in code, `Int.max`, which `+ 1` would overflow) gets the lowest unused positive number instead.
    public var nextChapter: Int {
        let highest = scenes.map(\.chapter).max() ?? 0
        if highest < Self.chapterNumbers.upperBound { return max(highest, 0) + 1 }
        return Self.unusedChapter(from: 1, notIn: Set(scenes.map(\.chapter)))
    }

    /// The chapter numbers a cassette file may hold; reading one outside them fails.
    ///
    /// New chapters are numbered above the highest on the tape, so a file with a chapter at `Int.max` used to make
    /// the next one overflow and trap. No cassette holds anywhere near 2^31 requests, and a number JSON tools
    /// all read exactly leaves cassettes portable.
    package static let chapterNumbers = 0...Int(Int32.max)

    /// The first number from `candidate` on that is in ``chapterNumbers`` (after 0) and not in `used`, wrapping
    /// around to 1 past the end.
    package static func unusedChapter(from candidate: Int, notIn used: Set<Int>) -> Int {
        var chapter = candidate
        while !(1...chapterNumbers.upperBound).contains(chapter) || used.contains(chapter) {
            chapter = chapter >= 1 && chapter < chapterNumbers.upperBound ? chapter + 1 : 1
        }
        return chapter
    }
}

/// All the scenes of one request, read as one request and its outcome.
public struct Interaction: Sendable, Equatable {
    /// The chapter's scenes, request first. Read-only: an interaction is built whole (``init(scenes:)``), so that
    /// its first scene is always its request.
    public internal(set) var scenes: [Tape.Scene]

    /// Groups scenes of one chapter. Returns nil when the first scene is not a request.
    public init?(scenes: [Tape.Scene]) {
        guard let first = scenes.first, case .request = first.event else { return nil }
        self.scenes = scenes
    }

    /// Builds the scenes of a request that finished with a response and a body (or with an error).
    public init(
        chapter: Int,
        request: RecordedRequest,
        redirects: [Redirect] = [],
        response: RecordedResponse?,
        chunks: [Data] = [],
        error: RecordedError? = nil,
        timeToFirstByte: TimeInterval = 0,
        duration: TimeInterval = 0
    ) {
        var scenes = [Scene(chapter: chapter, time: 0, event: .request(request))]
        for redirect in redirects {
            scenes.append(Scene(chapter: chapter, time: 0, event: .redirect(redirect.response, to: redirect.request)))
        }
        if let response {
            scenes.append(Scene(chapter: chapter, time: timeToFirstByte, event: .response(response)))
        }
        for chunk in chunks {
            scenes.append(Scene(chapter: chapter, time: timeToFirstByte, event: .data(chunk)))
        }
        if let error {
            scenes.append(Scene(chapter: chapter, time: duration, event: .error(error)))
        } else if response != nil {
            scenes.append(Scene(chapter: chapter, time: duration, event: .completion))
        }
        self.scenes = scenes
    }

    /// A hop: a redirect response and the request that followed it.
    public struct Redirect: Sendable, Equatable {
        /// The redirect response (a 3xx).
        public var response: RecordedResponse
        /// The request sent next.
        public var request: RecordedRequest

        /// A hop from `response` to `request`.
        public init(response: RecordedResponse, request: RecordedRequest) {
            self.response = response
            self.request = request
        }
    }

    /// The chapter number its scenes share.
    public var chapter: Int { scenes[0].chapter }

    /// The request as first sent; the requests of its hops are in ``redirects``.
    public var request: RecordedRequest {
        guard case let .request(request) = scenes[0].event else { preconditionFailure("checked in init") }
        return request
    }

    /// The hops before the final response, in order.
    public var redirects: [Redirect] {
        scenes.compactMap {
            guard case let .redirect(response, to: request) = $0.event else { return nil }
            return Redirect(response: response, request: request)
        }
    }

    /// The final response; nil when none came.
    public var response: RecordedResponse? {
        for scene in scenes { if case let .response(response) = scene.event { return response } }
        return nil
    }

    /// The response body's chunks, as they came.
    public var chunks: [Data] {
        scenes.compactMap { if case let .data(data) = $0.event { data } else { nil } }
    }

    /// The whole response body: every chunk, joined.
    public var body: Data {
        chunks.reduce(into: Data()) { $0.append($1) }
    }

    /// The error the request failed with; nil unless it failed.
    public var error: RecordedError? {
        for scene in scenes { if case let .error(error) = scene.event { return error } }
        return nil
    }

    /// When the response (or the error) came, in seconds after the request was sent.
    public var timeToFirstByte: TimeInterval? {
        scenes.first {
            switch $0.event {
            case .response, .error: true
            default: false
            }
        }?.time
    }
}
