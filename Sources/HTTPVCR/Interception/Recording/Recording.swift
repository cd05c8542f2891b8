import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// One request being recorded: its events in the order they came, each stamped with when it happened and
/// where the playhead was, written to the cassette when the request ends (filters need the whole body).
final class Recording: @unchecked Sendable {
    /// What is sent to the server.
    let live: URLRequest
    /// What matching saw, and what goes on the tape.
    let filtered: URLRequest
    /// nil: forward without recording.
    let cassette: Cassette?
    /// The request of a URLSession load it is: where the app hears of it as it happens, and decides at its hops. nil
    /// when the caller gets the outcome itself (``VCR/data(for:sending:)``).
    let part: Load.Part?
    /// How long the app's session lets the request wait.
    let timeout: TimeInterval

    private let startedAt = DispatchTime.now().uptimeNanoseconds
    /// When it was sent, for the tape (``RecordedRequest/recordedAt``).
    private let recordedAt = RecordingTime.now
    private let requestAnchor: Int
    private let state = Locked(State(), level: .recording)

    /// What came so far, behind the recording's one lock (taken with no other held).
    private struct State {
        var events: [(event: Event, anchor: Int, order: UInt64)] = []
        var hasCompleted = false
    }

    /// What came from the network, as the filters need it: a hop's whole request, and the door's response with every
    /// field, which no client is told. Not a ``ClientEvent``: carrying these, the client's event cost the replay its
    /// inlining (Docs/Performance.md, "Event types").
    private enum Event {
        /// `next` is what the loader proposed until the app answers.
        case redirect(HTTPURLResponse, next: URLRequest)
        case response(ResponseFilter.Received)
        case data(Data)
        case error(any Error)
        case completion
    }

    init(live: URLRequest, filtered: URLRequest, cassette: Cassette?, part: Load.Part?) {
        self.live = live
        self.filtered = filtered
        // Bridge: what a bridge's cassette takes is forwarded, never taped (the test process tapes it).
        self.cassette = BridgeConnection.isBridgeCassette(cassette) ? nil : cassette
        self.part = part
        self.timeout = part?.timeout(of: live) ?? live.timeoutInterval
        self.requestAnchor = self.cassette?.playhead ?? 0
        self.cassette?.beginRecording(self)
    }

    /// Returns where the event is.
    @discardableResult
    private func append(_ event: Event) -> Int {
        let anchor = cassette?.playhead ?? 0
        let order = DispatchTime.now().uptimeNanoseconds
        return state.withLock { state in
            state.events.append((event, anchor, order))
            return state.events.count - 1
        }
    }

    /// A hop: `answer` gets the request to send next, as the app's session decides (``Load``), or nil to end with the
    /// hop. Taped as it happens, so that a hop the app never answers is on the tape as far as it went.
    func redirected(
        _ response: HTTPURLResponse, to request: URLRequest, _ answer: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let position = append(.redirect(response, next: request))
        guard let part else { return answer(request) }
        part.redirected(response, proposed: request) { [self] next in
            state.withLock { state in
                if let next {
                    state.events[position].event = .redirect(response, next: next)
                } else {
                    // Refused: the 3xx comes next as the outcome.
                    state.events.remove(at: position)
                }
            }
            answer(next)
        }
    }

    /// `setsCookies`: whether it has a `Set-Cookie`, where the caller knows (the bridge, from the fields it read);
    /// nil: asked of `response`, which costs a copy of its fields.
    func received(_ response: HTTPURLResponse, setsCookies: Bool? = nil) {
        append(.response(.foundation(response)))
        part?.send(.response(response, setsCookies: setsCookies ?? CookieJar.setsCookies(response)))
    }

    /// A response with every field as the server sent it, in order: the door's
    /// (``VCR/dataKeepingFields(for:sending:)``), which has no load to tell.
    func received(_ response: RecordedResponse) {
        append(.response(.fields(response)))
    }

    func received(_ data: Data) {
        append(.data(data))
        part?.send(.data(data))
    }

    /// Ends the recording, once: a later call (a stream cancelled as it ends) is ignored.
    func completed(error: (any Error)?) {
        guard state.withLock({ state in defer { state.hasCompleted = true }; return !state.hasCompleted }) else { return }
        append(error.map(Event.error) ?? .completion)
        if let error, let cassette, !cassette.configuration.recordsConnectionErrors,
           ConnectionError.isUnreachable(error) {
            // A cassette would replay the outage forever: report it instead, and keep it off the tape.
            VCR.recordFailure(
                .connectionErrorNotRecorded(filtered, error: error, cassettePath: cassette.path), on: cassette
            )
            cassette.finishRecording(self, scenes: nil)
        } else {
            commit()
        }
        part?.send(error.map(ClientEvent.fail) ?? .finish)
    }

    /// Builds the chapter's scenes so far through the filters and writes them to the cassette: when the request
    /// ends, or when the cassette is saved while it is still in flight (a stream nobody stopped, a hop the app never
    /// answered), so that the tape holds what the app got. Only the first call writes.
    func commit() {
        guard let cassette else { return }
        let events = state.withLock { $0.events }
        let configuration = cassette.configuration
        // What the filters took out of the request, and out of what this cassette recorded before: none of it may
        // come back anywhere in this interaction.
        // Grows as the interaction goes: a cookie a redirect hop set is hidden in the final response too.
        var learned = RequestFilter.secrets(of: live, with: configuration)
        let earlierSecrets = cassette.recordedSecrets
        learned.formUnion(earlierSecrets)
        let chapter = cassette.reserveChapter()
        var recordedRequest = RecordedRequest(RequestFilter.replacingEchoes(of: earlierSecrets, in: filtered))
        recordedRequest.recordedAt = recordedAt
        var scenes = [(
            scene: Scene(chapter: chapter, time: 0, event: .request(recordedRequest)),
            anchor: requestAnchor,
            order: startedAt
        )]
        var response: ResponseFilter.Received?
        var chunks: [Data] = []
        var bodyStamps: [(anchor: Int, order: UInt64)] = []
        for (event, anchor, order) in events {
            let time = seconds(since: order)
            switch event {
            case let .redirect(hop, next):
                let (recordedHop, recordedNext) = ResponseFilter.filterRedirect(
                    hop, to: next, request: filtered, configuration: configuration, requestSecrets: learned,
                    removed: &learned
                )
                scenes.append((Scene(chapter: chapter, time: time, event: .redirect(recordedHop, to: recordedNext)), anchor, order))
            case let .response(received):
                response = received
                bodyStamps.append((anchor, order))
            case let .data(data):
                chunks.append(data)
                bodyStamps.append((anchor, order))
            case let .error(error):
                if let response {
                    appendResponse(
                        response, chunks: chunks, stamps: bodyStamps, secrets: learned, learned: &learned,
                        to: &scenes, chapter: chapter
                    )
                }
                response = nil
                let recorded = ResponseFilter.filterError(
                    error, request: filtered, configuration: configuration, requestSecrets: learned
                )
                scenes.append((Scene(chapter: chapter, time: time, event: .error(recorded)), anchor, order))
            case .completion:
                if let response {
                    guard appendResponse(
                        response, chunks: chunks, stamps: bodyStamps, secrets: learned, learned: &learned,
                        to: &scenes, chapter: chapter
                    ) else { return }  // beforeRecordResponse said not to record it
                }
                response = nil
                scenes.append((Scene(chapter: chapter, time: time, event: .completion), anchor, order))
            }
        }
        if let response {
            // Still in flight: the response and the body so far.
            appendResponse(
                response, chunks: chunks, stamps: bodyStamps, secrets: learned, learned: &learned, to: &scenes,
                chapter: chapter
            )
        }
        cassette.finishRecording(self, scenes: scenes, secrets: learned)
    }

    /// Appends the response and its chunks, filtered. Returns false when the response is not to be recorded.
    @discardableResult
    private func appendResponse(
        _ response: ResponseFilter.Received,
        chunks: [Data],
        stamps: [(anchor: Int, order: UInt64)],
        secrets: SecretValues,
        learned: inout SecretValues,
        to scenes: inout [(scene: Scene, anchor: Int, order: UInt64)],
        chapter: Int
    ) -> Bool {
        guard let cassette else { return false }
        guard let outcome = ResponseFilter.filter(
            response: response, chunks: chunks, request: filtered, configuration: cassette.configuration,
            requestSecrets: secrets
        ) else { return false }
        learned.formUnion(outcome.removed)
        let responseStamp = stamps.first ?? (cassette.playhead, DispatchTime.now().uptimeNanoseconds)
        scenes.append((
            Scene(chapter: chapter, time: seconds(since: responseStamp.order), event: .response(outcome.response)),
            responseStamp.anchor, responseStamp.order
        ))
        for (position, chunk) in outcome.chunks.enumerated() {
            let stamp = position + 1 < stamps.count ? stamps[position + 1] : (stamps.last ?? responseStamp)
            scenes.append((Scene(chapter: chapter, time: seconds(since: stamp.order), event: .data(chunk)), stamp.anchor, stamp.order))
        }
        return true
    }

    /// Seconds since the request was sent, to the millisecond: enough for latency replay, and stable in diffs.
    private func seconds(since order: UInt64) -> TimeInterval {
        let nanoseconds = order >= startedAt ? order - startedAt : 0
        return (Double(nanoseconds) / 1_000_000).rounded() / 1000
    }
}

extension URLError {
    /// The error URLSession gives a task its client cancelled.
    static func cancelled(_ url: URL?) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: "cancelled"]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
            // NSURLErrorFailingURLStringErrorKey, which URLSession still sets (the constant is deprecated).
            info["NSErrorFailingURLStringKey"] = url.absoluteString
        }
        return URLError(.cancelled, userInfo: info)
    }
}
