import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// The thin interception layer: decides whether a request is ours, filters it, asks the cassette for a match,
/// and hands over to the playback (replay), the recorder (record) or fails the task (refuse).
///
/// State that outlives `startLoading` lives in its ``Load`` behind a lock; the class itself is not
/// `Sendable`. Not final: tests subclass it to drive another platform's loader (``platform``).
class VCRURLProtocol: URLProtocol {
    /// Set on requests the recorder sends, so that they are not intercepted again.
    static let passThroughKey = "HTTPVCR.passThrough"

    /// The loader this class serves, and everything HTTPVCR needs of it beyond `URLProtocol`'s contract.
    class var platform: any LoaderPlatform { native }

    private static let native: any LoaderPlatform = {
        #if canImport(FoundationNetworking)
        CorelibsPlatform()
        #else
        ApplePlatform()
        #endif
    }()

    /// Registers the class with the URL loading system, once, ahead of the native HTTP protocol.
    /// Sessions HTTPVCR will not be in are guarded from then on (``NetworkGuard``).
    private static let registration: Void = {
        native.register(VCRURLProtocol.self)
        NetworkGuard.start()
    }()

    /// Registers the class with the URL loading system, once, and makes `URLSession.shared` if nothing has yet.
    static func register() { _ = sharedSessionIsIntercepted }

    /// Whether `URLSession.shared` asks this class before the native HTTP protocol. It copies the registered
    /// classes when it is made: made before ``register()``, it sends every request to the network unseen. Made
    /// here otherwise, right after registering, so that nothing later can make it without this class.
    static let sharedSessionIsIntercepted: Bool = {
        registration
        return native.sharedSessionAsks(VCRURLProtocol.self)
    }()

    /// How hops reach this client: reported only where the loader takes them and the cassette asks for it
    /// (``VCRConfiguration/reportsRedirectHops``).
    static func redirectHandling(for cassette: Cassette?) -> RedirectHandling {
        guard platform.redirectHandling == .reportToClient, cassette?.configuration.reportsRedirectHops == true else {
            return .followInProtocol
        }
        return .reportToClient
    }

    /// Made in `startLoading`, once the cassette is known.
    private var load: Load?

    override class func canInit(with request: URLRequest) -> Bool {
        guard let url = request.url, url.hasHTTPScheme,
              URLProtocol.property(forKey: passThroughKey, in: request) == nil, !DoorSending.isSending,
              !asksToUpgrade(request)
        else { return false }
        // The test's own call to the server it runs: to the server, in every record mode, never to a cassette.
        if ServersUnderTest.serve(url) { return forwardsPastTheGuard() }
        let attribution = VCR.attribution()
        let cassette: Cassette
        switch attribution {
        case .none:
            // No cassette in force: to the network as if HTTPVCR were not there, unless that is switched off.
            guard VCR.refusesNetworkWithoutCassette(to: NetworkOrigin(url)) else { return forwardsPastTheGuard() }
            CanInitNotes(attribution: .withoutCassette(test: VCR.currentTest?()), caller: .current)
                .note(on: platform.currentQueue)
            return true
        case .unattributed, .withoutCassette:
            // Refused in startLoading, where the client can be told.
            CanInitNotes(attribution: attribution, caller: .current).note(on: platform.currentQueue)
            return true
        case let .cassette(attributed):
            cassette = attributed
        }
        let (intercepts, madeOf) = cassette.intercepts(request, to: url)
        var notes = CanInitNotes(attribution: attribution, caller: .current)
        if let madeOf { notes.beforeRecordRequest = (request, madeOf) }
        // A hop this protocol reported leads here: the rest of its chapter is on the tape, whatever the host
        // filter says of the host it leads to.
        guard intercepts
            || (redirectHandling(for: cassette) == .reportToClient && cassette.redirectHandoffs.isExpecting(request))
        else { return forwardsPastTheGuard() }
        notes.note(on: platform.currentQueue)
        return true
    }

    /// A request HTTPVCR lets go to the network unrecorded (no cassette is its test's; its cassette's host filter,
    /// passthrough mode or beforeRecordRequest leaves it out). Where the network guard has the loader's sessions
    /// sent to its proxy, HTTPVCR's forwarder sends it, marked (startLoading, with no cassette): the guard would
    /// otherwise judge it as a session HTTPVCR is not in, by other tests' cassettes, and a server that is not there
    /// would reach the app as the proxy's failure rather than its absence.
    private static func forwardsPastTheGuard() -> Bool {
        guard platform.readsProxyFromEnvironment, NetworkGuard.isRouting else { return false }
        CanInitNotes(attribution: .none, caller: .current).note(on: platform.currentQueue)
        return true
    }

    /// Whether `request` asks to switch protocols (`Upgrade`, `Sec-WebSocket-Key`): a WebSocket task's handshake,
    /// which Apple's loader hands protocols as an http(s) request. Left to the loader: answering it breaks the
    /// socket, and a cassette holds no socket to replay. One read of the fields, compared by hand (see
    /// `RequestFilter`: `value(forHTTPHeaderField:)` reads them all on each call).
    static func asksToUpgrade(_ request: URLRequest) -> Bool {
        guard let fields = request.allHTTPHeaderFields, !fields.isEmpty else { return false }
        // The length first: most names have neither, and it is known without reading the name.
        return fields.keys.contains { name in
            switch name.utf8.count {
            case 7: name.equalsIgnoringASCIICase("Upgrade")
            case 17: name.equalsIgnoringASCIICase("Sec-WebSocket-Key")
            default: false
            }
        }
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let platform = Self.platform
        // Read once: each read is a call into the loader.
        let task = self.task
        let (attribution, caller, earlier) = CanInitNotes.take(on: platform.currentQueue)
            .map { ($0.attribution, $0.caller, $0.beforeRecordRequest) } ?? (nil, nil, nil)
        let cassette: Cassette?
        switch attribution {
        case let .cassette(noted)?: cassette = noted
        case .unattributed?, .withoutCassette?, .none?: cassette = nil
        // Nothing carried (Apple platforms): only a cassette inserted for the process is in use there.
        case nil: cassette = VCR.cassette
        }
        // Moved into the load, read from it after: each copy of a task is a retain through its side table.
        let load = Load(
            self, task: consume task, platform: platform, cassette: cassette,
            redirectHandling: Self.redirectHandling(for: cassette), caller: caller
        )
        self.load = load
        if case let .unattributed(why)? = attribution {
            return load.tellClient(.fail(VCRError.unattributed(request, why: why)))
        }
        if case let .withoutCassette(test)? = attribution {
            return load.tellClient(.fail(VCRError.networkWithoutCassette(Mismatch.describe(request), test: test)))
        }
        // Nothing carried (Apple platforms): canInit claimed it for a refusal, or the cassette went since.
        if attribution == nil, cassette == nil, VCR.refusesNetworkWithoutCassette(to: NetworkOrigin(request.url)) {
            return load.tellClient(.fail(VCRError.networkWithoutCassette(Mismatch.describe(request), test: nil)))
        }
        if load.task is URLSessionDownloadTask, !platform.servesDownloads {
            return load.tellClient(.fail(VCRError.downloadsUnsupported(request)))
        }
        if let cassette, load.redirectHandling == .reportToClient,
           let previous = cassette.redirectHandoffs.take(for: request) {
            // The next request of a hop another protocol reported: its chapter, or its recording, goes on here.
            load.reportRedirects(to: cassette.redirectHandoffs)
            return previous.handOff(to: load)
        }
        let sent: Load.Sent
        do { sent = try load.sending(request) } catch { return load.tellClient(.fail(error)) }
        let live = sent.request
        // Bridge: its cassette replays and tapes nothing (the test process filters, matches and tapes what is sent
        // to it), so the request goes on unfiltered: filtering it here was a tenth of a bridged request's work.
        if let cassette, cassette.playback.sendsEveryRequest, !sent.hidesBody, BridgeConnection.isBridgeCassette(cassette) {
            return forwardToBridge(live, under: cassette, load)
        }
        // Ejected between canInit and now, or left out by beforeRecordRequest: as if HTTPVCR were not there.
        guard let cassette, let filtered = cassette.filteredForMatching(live, earlier: earlier) else {
            if sent.hidesBody {
                let reason = cassette == nil ? "The cassette was ejected before it started"
                    : "beforeRecordRequest left it out of the cassette"
                return load.refuse(.hiddenBody(of: live, neededFor: .passingBy(reason)))
            }
            let part = Load.Part(load: load, number: load.startPart(sending: live))
            return Recorder.shared.start(Recording(live: live, filtered: live, cassette: nil, part: part))
        }
        // A body the loader hides is refused only where something needs it; otherwise the tape answers without it.
        if sent.hidesBody, let need = HiddenBody.need(before: cassette) {
            cassette.playback.noteRefusedUnmatched()
            return load.refuse(.hiddenBody(of: live, neededFor: need))
        }
        if load.redirectHandling == .reportToClient { load.reportRedirects(to: cassette.redirectHandoffs) }
        let part = load.startPart(sending: live)
        switch cassette.playback.play(filtered, to: load, part: part, live: live) {
        case .replaying:
            break
        case .record where sent.hidesBody:
            load.refuse(.hiddenBody(of: live, neededFor: .recording(cassette.recordMode, matchedNothing: true)))
        case .record:
            let part = Load.Part(load: load, number: part)
            Recorder.shared.start(Recording(live: live, filtered: filtered.request, cassette: cassette, part: part))
        case let .refuse(error):
            load.refuse(sent.hidesBody ? HiddenBody.noting(error) : error)
        }
    }

    /// A request of a process connected to a bridge: sent on as it is. Out of line, so that `startLoading` stays
    /// small enough for what replay calls in it to be inlined.
    @inline(never)
    private func forwardToBridge(_ live: URLRequest, under cassette: Cassette, _ load: Load) {
        if load.redirectHandling == .reportToClient { load.reportRedirects(to: cassette.redirectHandoffs) }
        let part = Load.Part(load: load, number: load.startPart(sending: live))
        Recorder.shared.start(Recording(live: live, filtered: live, cassette: cassette, part: part))
    }

    override func stopLoading() {
        load?.stop()
    }
}
