import Foundation

extension NetworkGuard {
    /// What happens to a request from a session HTTPVCR is not in, judged by its origin and the cassettes in force
    /// (any test's: the proxy cannot tell which test's session sent it):
    /// - HTTPVCR records that origin now (its recorder, the door's closure): passed on;
    /// - no cassette in force: passed on, unless ``VCRConfiguration/allowsNetworkWithoutCassette`` is off;
    /// - a host every cassette's host filter leaves to the network, or only passthrough cassettes: passed on;
    /// - loopback that no cassette holds recordings for (a server the test runs itself): passed on;
    /// - else, where a cassette may not record: refused, the failure on the cassettes concerned;
    /// - else (recording): passed on, and named as a failure on the recording cassettes, as it happens.
    static func verdict(for request: ProxiedRequest) -> GuardVerdict {
        let origin = request.origin
        if isRecording(origin) { return .forward(ownRecording: true) }
        let inForce = VCR.cassettesInForce
        if inForce.isEmpty {
            guard VCR.refusesNetworkWithoutCassette(to: origin) else { return .forward(ownRecording: false) }
            let refusal = VCRError.networkWithoutCassette(request.described + " (from a session HTTPVCR is not in)",
                                                          test: nil)
            FileHandle.standardError.write(Data("\(refusal.message)\n".utf8))
            return .refuse(refusal.message)
        }
        let concerned = inForce.filter { cassette in
            cassette.recordMode != .passthrough && (cassette.configuration.hostFilter.acceptsEveryHost
                || cassette.configuration.hostFilter.accepts(host: origin.host))
        }
        guard !concerned.isEmpty else { return .forward(ownRecording: false) }
        let knowing = concerned.filter { $0.holdsRecordings(for: origin) }
        if origin.isLoopback && knowing.isEmpty { return .forward(ownRecording: false) }
        let protected = concerned.filter(\.isWriteProtected)
        let refusing = origin.isLoopback ? knowing.filter(\.isWriteProtected) : protected
        if !refusing.isEmpty {
            let message = report(request, refused: true, on: owners(of: request, among: refusing, knowing: knowing))
            return .refuse(message)
        }
        let message = report(request, refused: false, on: owners(of: request, among: concerned, knowing: knowing))
        FileHandle.standardError.write(Data("HTTPVCR: \(message)\n".utf8))
        return .forward(ownRecording: false)
    }

    /// The cassettes whose tests most likely sent it: those holding a recording of the very URL (an https request's is
    /// hidden), else those holding its origin, else all of `candidates`. With tests in parallel, a request no tape
    /// names fails every test it could be from.
    private static func owners(of request: ProxiedRequest, among candidates: [Cassette], knowing: [Cassette]) -> [Cassette] {
        let known = candidates.filter { cassette in knowing.contains { $0 === cassette } }
        if !request.isTunnel, let url = URL(string: request.url) {
            let exact = known.filter { $0.holdsRecording(of: url) }
            if !exact.isEmpty { return exact }
        }
        return known.isEmpty ? candidates : known
    }

    /// Keeps the failure on each cassette, for the test that owns it (counted as a request that reached it, so the
    /// test is not told as well that none did); returns the message for the refusal's body.
    private static func report(_ request: ProxiedRequest, refused: Bool, on cassettes: [Cassette]) -> String {
        var message = ""
        for cassette in cassettes {
            let error = VCRError.wentAround(request.described, cassette: cassette, refused: refused)
            message = error.message
            if refused { cassette.playback.noteRefusedUnmatched() } else { cassette.playback.notePassedBy() }
            VCR.recordFailure(error, on: cassette)
        }
        return message
    }
}

extension VCRError {
    /// A request from a session HTTPVCR is not in, met under `cassette`.
    static func wentAround(_ request: String, cassette: Cassette, refused: Bool) -> VCRError {
        let source = "it came from a URLSession HTTPVCR is not installed in (one made from "
            + "URLSessionConfiguration.default or .ephemeral without VCR.install(in:))"
        let what = refused
            ? "HTTPVCR refused \(request): \(source), while the cassette \(cassette.path) may not record (record mode "
                + ".\(cassette.recordMode.rawValue)). It never reached the server; the app got HTTPVCR's refusal."
            : "\(request) went around the cassette \(cassette.path): \(source), so it went to the server and was "
                + "not recorded; replaying the cassette will not have it."
        return VCRError(
            .wentAroundCassette,
            what + " Fix: pass that session's configuration to VCR.install(in:) before the session is made (see \"An "
                + "app's own session\" in HTTPVCR's README), or, if the request is meant to reach the network "
                + "unrecorded, leave its host out with the cassette's hostFilter.",
            cassettePath: cassette.path,
            request: request
        )
    }
}
