import Foundation
import HTTPVCRCassettes

extension NetworkGuard {
    /// What happens to a request from a session HTTPVCR is not in, judged by its origin and the cassettes in force
    /// (any test's: the proxy cannot tell which test's session sent it):
    /// - HTTPVCR records that origin now (its recorder, the door's closure), or a server under test listens there
    ///   (``ServersUnderTest``): passed on;
    /// - no cassette in force: passed on, unless ``VCRConfiguration/allowsNetworkWithoutCassette`` is off;
    /// - a host every cassette's host filter leaves to the network, or only passthrough cassettes: passed on;
    /// - loopback that no cassette holds recordings for (a server the test runs itself): passed on;
    /// - else, where a cassette may not record: refused;
    /// - else (recording): passed on, and named as it happens.
    /// The failure goes to the cassettes the guard can tell own the request (``owners(of:among:)``).
    static func verdict(for request: ProxiedRequest) -> GuardVerdict {
        let origin = request.origin
        if request.isMarked || isRecording(origin) || ServersUnderTest.serve(origin) { return .forward }
        let inForce = VCR.cassettesInForce
        if inForce.isEmpty {
            guard VCR.refusesNetworkWithoutCassette(to: origin) else { return .forward }
            let refusal = VCRError.networkWithoutCassette(request.described + " (from a session HTTPVCR is not in)",
                                                          test: nil)
            FileHandle.standardError.write(Data("\(refusal.message)\n".utf8))
            return .refuse(refusal.message)
        }
        let concerned = inForce.filter { cassette in
            cassette.recordMode != .passthrough && (cassette.configuration.hostFilter.acceptsEveryHost
                || cassette.configuration.hostFilter.accepts(host: origin.host))
        }
        guard !concerned.isEmpty else { return .forward }
        let knowing = concerned.filter { $0.holdsRecordings(for: origin) }
        if origin.isLoopback && knowing.isEmpty { return .forward }
        let protected = concerned.filter(\.isWriteProtected)
        let refusing = origin.isLoopback ? knowing.filter(\.isWriteProtected) : protected
        if !refusing.isEmpty {
            return .refuse(report(request, refused: true, among: concerned, shown: refusing[0]))
        }
        _ = report(request, refused: false, among: concerned, shown: concerned.first { !$0.isWriteProtected } ?? concerned[0])
        return .forward
    }

    /// The cassettes whose tests sent it, as far as the guard can tell, among every cassette in force it concerns:
    /// those holding a recording of the very URL (an https request's is hidden), else the only one. None where tests
    /// in parallel leave it open: a failure on a test that did not send it would be a false one.
    private static func owners(of request: ProxiedRequest, among candidates: [Cassette]) -> [Cassette] {
        if !request.isTunnel, let url = URL(string: request.url) {
            let exact = candidates.filter { $0.holdsRecording(of: url) }
            if !exact.isEmpty { return exact }
        }
        return candidates.count == 1 ? candidates : []
    }

    /// Keeps the failure on each owner's cassette, for its test (counted as a request that reached it, so the test is
    /// not told as well that none did), and says it on stderr as it happens where it names no owner or goes on to
    /// the server; returns the message, the refusal's body.
    private static func report(_ request: ProxiedRequest, refused: Bool, among candidates: [Cassette], shown: Cassette) -> String {
        let owners = owners(of: request, among: candidates)
        for cassette in owners {
            if refused { cassette.playback.noteRefusedUnmatched() } else { cassette.playback.notePassedBy() }
            VCR.recordFailure(.wentAround(request.described, cassette: cassette, refused: refused), on: cassette)
        }
        let shown = owners.first ?? shown
        var message = VCRError.wentAround(request.described, cassette: shown, refused: refused).message
        if owners.isEmpty {
            message += " (Tests with cassettes run in parallel, and the guard cannot tell whose session sent it.)"
        }
        if owners.isEmpty || !refused {
            FileHandle.standardError.write(Data(((refused ? "" : "HTTPVCR: ") + message + "\n").utf8))
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
