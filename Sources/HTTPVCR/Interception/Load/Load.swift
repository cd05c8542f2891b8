import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// One URLSession task's load under a cassette, run as the app's own session would run it.
///
/// A load is one or more requests: the task's own, then each one the loader sends on its own (a redirect's, a
/// retry with credentials). Each is matched on the cassette like any other and replayed, recorded or refused
/// (`sendNext(_:)`). Between them the loader asks the app, and so does the load: at a redirect hop, at a final 3xx
/// (recorded where the app refused to follow) and at a 401 that asks for credentials, the app's delegate is asked
/// on the session's delegate queue (`Load+Session.swift`), and its answer decides what comes next, replaying as
/// recording.
///
/// Each request is one part, numbered: the load receives its replayed scenes with its number (``SceneReceiver``), and
/// its recording's events come in through a ``Part``. When the app takes the load elsewhere than the tape went (a
/// refused hop, a changed request), what is left of the earlier part's chapter is dropped.
///
/// Replayed scenes arrive on the client's queue, in tape order (``Playback``'s delivery queue), and answers are
/// carried back there: the order of what the client hears holds by construction. What the client is told goes
/// through the load's client end (`Load+Client.swift`), under the same lock: one lock a load.
final class Load: LockedObject<Load.State>, @unchecked Sendable {
    /// nil: the load passes the cassette by (ejected meanwhile, or left out by `beforeRecordRequest`).
    let cassette: Cassette?
    /// The task and its session, where the platform shows it (`Load+Session.swift`: what the session decides).
    let task: URLSessionTask?
    let session: URLSession?
    let platform: any LoaderPlatform
    /// The task's request as the app made it: a retry with credentials starts again from it.
    private let original: URLRequest
    /// Captured in `startLoading`, on the queue client callbacks must use.
    let clientQueue: any ClientQueue
    let redirectHandling: RedirectHandling
    /// Where the body goes, and who hears of progress and chunks besides the client, if anyone.
    let route: BodyRoute
    let listener: ListenerCalls?
    /// The Swift task that started the request, if known: while it is being cancelled, the end waits its turn.
    let caller: CallerTask?
    struct State {
        /// The part events are taken from.
        var part = 0
        /// The request the load is at, as the app sees it (without the session's headers): what a redirect is
        /// proposed from.
        var request: URLRequest
        var redirects = 0
        /// Credentials tried so far (a challenge's `previousFailureCount`), and the last one.
        var challenges = 0
        var lastCredential: (space: URLProtectionSpace, credential: URLCredential)?
        /// The app is being asked: replayed scenes that come meanwhile wait here, in order.
        var isDeciding = false
        var held: [Scene.Event] = []
        /// Upload progress to tell before the part's first replayed scene: the body went out in one piece.
        var sentBody: ClientEvent?
        /// How the current part ends, when the loader acts on it rather than just finish.
        var end: End?
        var client: ClientEnd
    }

    /// A response the loader acts on when its part ends.
    enum End {
        /// A redirect left for the end (a 3xx the tape ends with): held, with its body, until the app decides.
        case redirect(HTTPURLResponse, body: Data)
        /// A 401 asking for credentials: told to the client as it came; the app decides at the end.
        case challenge(HTTPURLResponse, URLProtectionSpace)
    }

    /// Make in `startLoading`: it captures where the client is to be called.
    init(
        _ protocolInstance: VCRURLProtocol, task: URLSessionTask?, platform: any LoaderPlatform, cassette: Cassette?,
        redirectHandling: RedirectHandling, caller: CallerTask?
    ) {
        let surroundings = platform.startLoad(of: task)
        self.cassette = cassette
        self.platform = platform
        self.original = protocolInstance.request
        self.route = surroundings.route
        self.listener = ListenerCalls(session: surroundings.session, task: task, listener: surroundings.listener)
        self.clientQueue = surroundings.clientQueue
        self.session = surroundings.session
        self.task = task
        self.redirectHandling = redirectHandling
        self.caller = caller
        // What changes as the load goes on, in the load itself (``LockedObject``): an allocation less a request.
        super.init(State(request: original, client: ClientEnd(protocolInstance: protocolInstance)), level: .load)
    }

    /// The number of the part for the request the load is at now, `live` as it is sent.
    func startPart(sending live: URLRequest) -> Int {
        let sentBody = Self.sentBody(of: live)
        return withLock { state in
            state.sentBody = sentBody
            return state.part
        }
    }

    // MARK: Sending requests

    /// Sends a request the loader makes on its own in this load (a hop the tape does not have, a retry with
    /// credentials): with the session's headers, matched on the cassette and replayed, recorded or refused like any
    /// other. Starts a new part.
    private func sendNext(_ request: URLRequest) {
        let live = addingSessionHeaders(to: request)
        let sentBody = Self.sentBody(of: live)
        let part = withLock { state in
            state.part += 1
            state.request = request
            state.end = nil
            state.isDeciding = false
            state.held = []
            state.sentBody = sentBody
            return Part(load: self, number: state.part)
        }
        guard let cassette, let filtered = cassette.filtered(live) else {
            return Recorder.shared.start(Recording(live: live, filtered: live, cassette: nil, part: part))
        }
        switch cassette.playback.play(FilteredRequest(filtered), to: self, part: part.number, live: live) {
        case .replaying:
            break
        case .record:
            Recorder.shared.start(Recording(live: live, filtered: filtered, cassette: cassette, part: part))
        case let .refuse(error):
            refuse(error)
        }
    }

    /// Fails the load with `error`, kept on its cassette for the test to report.
    func refuse(_ error: VCRError) {
        if let cassette { VCR.recordFailure(error, on: cassette) }
        tellClient(.fail(error))
    }

    // MARK: Replayed scenes

    /// Scenes of `part`'s chapter, in order, on the client's queue. Once the app is asked, what follows waits for
    /// its answer.
    func replayed(_ run: SceneRun) {
        // Usually every scene is told as it is: then they go to the client end as one run, with no actions between.
        var told: [ClientEvent] = []
        var actions: [Action] = []
        withLock { state in
            guard run.part == state.part else { return }
            told.reserveCapacity(run.deliveries.count + 1)
            if let sentBody = state.sentBody {
                state.sentBody = nil
                told.append(sentBody)
            }
            // Each event is read where it is on the tape: an array's subscript would copy the whole scene out first.
            run.scenes.withUnsafeBufferPointer { scenes in
                for delivery in run.deliveries {
                    if state.isDeciding {
                        state.held.append(run.event(of: delivery))
                        continue
                    }
                    let action = if let position = delivery.scene {
                        self.action(for: scenes[checked: position].event, in: &state)
                    } else {
                        self.action(for: .completion, in: &state)
                    }
                    if actions.isEmpty, case let .tell(clientEvent) = action {
                        told.append(clientEvent)
                    } else {
                        actions.append(action)
                    }
                }
            }
        }
        if !told.isEmpty { tellRun(told) }
        if !actions.isEmpty { perform(actions) }
    }

    /// What the load does with one event of its part: a decision, not an event. Made under the lock (what the client
    /// is told is a ``ClientEvent``), carried out outside it.
    private enum Action {
        case nothing
        case tell(ClientEvent)
        /// A 3xx held for the end sets cookies: stored now, as the loader does, so that a hop to follow carries them.
        case storeCookies(HTTPURLResponse)
        /// A held 3xx turned out to be the outcome (an error came after it): it, its body, then `event`.
        case tellHeld(HTTPURLResponse, body: Data, then: ClientEvent)
        /// Ask the app at a hop the tape holds; `next` is the request the tape went on with.
        case askAtHop(HTTPURLResponse, proposed: URLRequest, next: RecordedRequest)
        case askAtEnd(End)
    }

    @inline(__always)
    private func action(for event: Scene.Event, in state: inout State) -> Action {
        guard let clientEvent = ClientEvent.replaying(event, fallbackURL: state.request.url) else { return .nothing }
        switch clientEvent {
        case let .redirect(hop, _, _):
            guard decides, case let .redirect(_, next) = event,
                  let proposed = LoaderRules.redirect(from: state.request, by: hop)
            else { return .tell(clientEvent) }
            state.isDeciding = true
            return .askAtHop(hop, proposed: proposed, next: next)
        case let .response(response, _):
            return responded(response, clientEvent, in: &state, replaying: true)
        case let .data(data):
            if case let .redirect(response, body)? = state.end {
                state.end = .redirect(response, body: body + data)
                return .nothing
            }
            return .tell(clientEvent)
        case .finish:
            guard let end = state.end else { return .tell(clientEvent) }
            state.isDeciding = true
            return .askAtEnd(end)
        default:
            if case let .redirect(response, body)? = state.end {
                state.end = nil
                return .tellHeld(response, body: body, then: clientEvent)
            }
            return .tell(clientEvent)
        }
    }

    /// A response of the current part: told, or kept for the end when the loader acts on it.
    private func responded(
        _ response: HTTPURLResponse, _ event: ClientEvent, in state: inout State, replaying: Bool
    ) -> Action {
        guard decides else { return .tell(event) }
        if response.statusCode == 401, let space = LoaderRules.protectionSpace(of: response) {
            state.end = .challenge(response, space)
            return .tell(event)
        }
        // While recording, a 3xx arrives only where the app refused to follow it.
        if replaying, LoaderRules.redirect(from: state.request, by: response) != nil {
            state.end = .redirect(response, body: Data())
            if case let .response(_, setsCookies) = event, setsCookies { return .storeCookies(response) }
            return .nothing
        }
        return .tell(event)
    }

    /// Performs actions in order; what is told to the client goes in runs.
    private func perform(_ actions: [Action]) {
        var told: [ClientEvent] = []
        told.reserveCapacity(actions.count)
        for action in actions {
            guard case let .tell(event) = action else {
                if !told.isEmpty { tellRun(told) }
                told = []
                perform(action)
                continue
            }
            told.append(event)
        }
        if !told.isEmpty { tellRun(told) }
    }

    private func tellRun(_ events: [ClientEvent]) {
        if case .finish? = events.last { keepCredential() }
        tellClient(events)
    }

    private func perform(_ action: Action) {
        switch action {
        case .nothing:
            break
        case let .tell(event):
            if case .finish = event { keepCredential() }
            tellClient(event)
        case let .storeCookies(response):
            storeCookies(of: response)
        case let .tellHeld(response, body, event):
            tellClient(.response(response, setsCookies: false))
            if !body.isEmpty { tellClient(.data(body)) }
            tellClient(event)
        case let .askAtHop(hop, proposed, next):
            storeCookies(of: hop)
            askAboutRedirect(hop, proposed: proposed) { [self] answer in
                guard let answer else {
                    // Refused: the 3xx is the outcome (the tape keeps no body for a hop it followed).
                    leavePart()
                    tellClient(.response(hop, setsCookies: false))
                    return tellClient(.finish)
                }
                if followsTape(answer, next: next) {
                    withLock { $0.request = answer; $0.redirects += 1 }
                    return release()
                }
                leavePart()
                sendNext(answer)
            }
        case let .askAtEnd(.redirect(response, body)):
            let (redirects, proposed) = withLock { ($0.redirects, LoaderRules.redirect(from: $0.request, by: response)) }
            guard redirects < LoaderRules.redirectLimit else { return finishPart(.fail(URLError.tooManyRedirects(response.url))) }
            guard let proposed else { return deliverAtEnd(.response(response, setsCookies: false), body: body) }
            askAboutRedirect(response, proposed: proposed) { [self] answer in
                guard let answer else { return deliverAtEnd(.response(response, setsCookies: false), body: body) }
                withLock { $0.redirects += 1 }
                leavePart()
                sendNext(answer)
            }
        case let .askAtEnd(.challenge(response, space)):
            askAboutChallenge(response, space: space)
        }
    }

    /// Whether the app's answer at a hop is the request the tape went on with: matched as the cassette matches.
    private func followsTape(_ answer: URLRequest, next: RecordedRequest) -> Bool {
        guard let cassette, let filtered = cassette.filtered(addingSessionHeaders(to: answer)) else { return false }
        let live = RequestParts(filtered)
        let recorded = RequestParts(next)
        return cassette.configuration.matchers.allSatisfy { $0.matches(live, recorded) }
    }

    /// Lets what waited for the app's answer through, in order, on the client's queue.
    private func release() {
        onClientQueue { [self] in
            while true {
                let action: Action? = withLock { state in
                    guard !state.held.isEmpty else {
                        state.isDeciding = false
                        return nil
                    }
                    state.isDeciding = false
                    return self.action(for: state.held.removeFirst(), in: &state)
                }
                guard let action else { return }
                perform(action)
                if withLock({ $0.isDeciding }) { return }  // asking again: its answer releases the rest
            }
        }
    }

    /// The current part's chapter is left behind: what is left of it is dropped.
    private func leavePart() {
        withLock { state in
            state.part += 1
            state.held = []
            state.isDeciding = false
            state.end = nil
        }
    }

    private func deliverAtEnd(_ event: ClientEvent, body: Data) {
        withLock { $0.isDeciding = false; $0.end = nil }
        tellClient(event)
        if !body.isEmpty { tellClient(.data(body)) }
        tellClient(.finish)
    }

    // MARK: Recorded events

    /// An event of `part`'s recording, as it happens.
    func recorded(_ event: ClientEvent, in part: Int) {
        let action: Action = withLock { state in
            guard part == state.part else { return .nothing }
            switch event {
            case let .response(response, _):
                return responded(response, event, in: &state, replaying: false)
            case .finish:
                guard let end = state.end else { return .tell(event) }
                state.isDeciding = true
                return .askAtEnd(end)
            case .fail:
                state.end = nil
                return .tell(event)
            default:
                return .tell(event)
            }
        }
        perform(action)
    }

    /// The load ended on a response the app's session did not act on: a credential used on the way is kept in the
    /// session's storage, as the loader does once it worked.
    private func keepCredential() {
        guard let (space, credential) = withLock({ $0.lastCredential }),
              let storage = session?.configuration.urlCredentialStorage, let task
        else { return }
        storage.set(credential, for: space, task: task)
    }

    /// A hop of `part`'s recording: the app decides whether the recording session follows it, and where to.
    /// `answer` gets the request to send next (with the session's headers, and the cookies the loader would add),
    /// or nil to end with the hop.
    func recordingRedirected(
        _ hop: HTTPURLResponse, proposed: URLRequest, in part: Int, _ answer: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard decides else {
            // The loader asks its delegates itself (Apple's): the client end reports the hop, and the recording follows.
            if let target = proposed.url { tellClient(.redirect(hop, to: target, method: proposed.httpMethod)) }
            return answer(addingCookies(to: proposed))
        }
        storeCookies(of: hop)
        let proposal = withLock { LoaderRules.redirect(from: $0.request, by: hop) } ?? proposed
        askAboutRedirect(hop, proposed: proposal) { [self] next in
            guard let next else { return answer(nil) }
            withLock { $0.request = next; $0.redirects += 1 }
            answer(addingSessionHeaders(to: next))
        }
    }

    /// Sends the task's request again with `credential`, or, without one (or for a scheme the loader cannot
    /// answer), ends with the 401.
    func retry(with credential: URLCredential?, for space: URLProtectionSpace) {
        guard let credential, let retried = LoaderRules.authorizing(original, with: credential, for: space) else {
            return finishPart(.finish)
        }
        withLock { state in
            state.challenges += 1
            state.lastCredential = (space, credential)
        }
        sendNext(retried)
    }

    /// Ends the load with `event` after the app decided at its end.
    func finishPart(_ event: ClientEvent) {
        withLock { $0.isDeciding = false; $0.end = nil }
        tellClient(event)
    }
}
