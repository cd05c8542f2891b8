import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests from sessions HTTPVCR is not in (made from `.default` or `.ephemeral` without ``VCR/install(in:)``):
/// seen, and refused where a cassette may not record, named where one records.
///
/// corelibs' URLSession runs on libcurl, which reads `http_proxy` and `https_proxy` from the environment at each
/// transfer, for every session in the process. At the first `VCR` call the guard points both at a ``GuardProxy`` on
/// loopback, so every request the process sends through URLSession comes by it: an `https` one as
/// `CONNECT host:port`. The proxy asks ``verdict(for:)`` and forwards or refuses. HTTPVCR's own recorder comes by it
/// too: its origins are registered while it talks to them (``recording(_:)``), and passed on.
enum NetworkGuard {
    /// The environment variables the guard sets or clears; what they held before is ``originalEnvironment``.
    static let proxyVariables = [
        "http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
    ]
    /// Turns the guard off for a run: `VCR_NETWORK_GUARD=0`. The guard also sets it to its proxy's URL, so that a
    /// process the tests launch, which inherits the variables, knows them for another process's guard, not the user's.
    static let switchVariable = "VCR_NETWORK_GUARD"

    /// Starts the guard once, where the loader reads its proxy from the environment.
    static func start() { _ = proxy }

    /// Whether sessions HTTPVCR is not in are guarded in this process.
    static var isActive: Bool { proxy != nil }

    /// What ``proxyVariables`` held before the guard set them (absent ones as ""): what a process the test launches
    /// gets, so that it goes to the network as it would without HTTPVCR (a bridge is its way to the cassette).
    static let originalEnvironment: [String: String] = {
        let environment = ProcessInfo.processInfo.environment
        let inherited = environment[switchVariable]
        return Dictionary(uniqueKeysWithValues: proxyVariables.map { name in
            let value = environment[name] ?? ""
            return (name, value == inherited ? "" : value)
        })
    }()

    private static let proxy: GuardProxy? = {
        let environment = ProcessInfo.processInfo.environment
        guard VCRURLProtocol.platform.readsProxyFromEnvironment else { return nil }
        if let value = environment[switchVariable], ["0", "false", "no", "off"].contains(value.lowercased()) {
            return nil
        }
        // A proxy the user set is where the guard sends what it lets through, as libcurl would have; one that is
        // another process's guard (inherited by a launched process) is not the user's.
        let inherited = environment[switchVariable]
        let routes: ProxyRoutes
        do throws(ProxyRoutes.UnsupportedProxy) {
            routes = try ProxyRoutes(environment: environment.filter { $0.value != inherited })
        } catch {
            FileHandle.standardError.write(Data((
                "HTTPVCR: \(error.variable)=\(error.value) names a proxy the network guard cannot pass requests on to "
                    + "(only http:// proxies), so requests from sessions HTTPVCR is not installed in go there unseen: "
                    + "a protected cassette cannot refuse them.\n"
            ).utf8))
            return nil
        }
        do {
            let proxy = try GuardProxy(routes: routes, judge: verdict(for:))
            _ = originalEnvironment
            // Set once, before any request of HTTPVCR's: libcurl reads these at each transfer. Never changed after:
            // a request HTTPVCR let go when canInit ran must meet the same route when libcurl sends it.
            setenv(switchVariable, proxy.url, 1)
            setenv("http_proxy", proxy.url, 1)
            setenv("https_proxy", proxy.url, 1)
            for shadowed in ["HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] { unsetenv(shadowed) }
            return proxy
        } catch {
            FileHandle.standardError.write(Data((
                "HTTPVCR: the network guard did not start (\(error)): requests from sessions HTTPVCR is not "
                    + "installed in go to the network unseen.\n"
            ).utf8))
            return nil
        }
    }()

    // MARK: HTTPVCR's own requests

    /// The field HTTPVCR's recorder marks its plain http requests with, and its value, made anew in each process: the
    /// proxy knows them by it, takes it off, and passes them on. (An https request's fields travel encrypted: the
    /// origins the recorder talks to stand in for it, ``recording(_:)``.)
    static let markField = "X-HTTPVCR-Forwarded"
    static let markToken = UUID().uuidString

    private static let state = Locked(State(), level: .leaf)

    private struct State {
        /// Origins HTTPVCR's recorder (or the door's closure) talks to now, counted.
        var recording: [NetworkOrigin: Int] = [:]
        /// The last time the proxy could not reach an origin, and why.
        var failures: [NetworkOrigin: (failure: UpstreamFailure, at: UInt64)] = [:]
    }

    /// Lets requests to `url`'s origin pass while HTTPVCR sends them; call ``finished(_:)`` with the result. Only
    /// for https where `onlyTunnels` (the recorder marks its plain requests): while it lasts, another session's
    /// request to that origin passes too.
    static func recording(_ url: URL?, onlyTunnels: Bool = false) -> NetworkOrigin? {
        guard proxy != nil, let origin = NetworkOrigin(url), !onlyTunnels || url?.scheme?.lowercased() == "https"
        else { return nil }
        state.withLock { $0.recording[origin, default: 0] += 1 }
        return origin
    }

    /// Ends what ``recording(_:)`` began.
    static func finished(_ origin: NetworkOrigin?) {
        guard let origin else { return }
        state.withLock { state in
            let left = (state.recording[origin] ?? 1) - 1
            state.recording[origin] = left > 0 ? left : nil
        }
    }

    static func isRecording(_ origin: NetworkOrigin) -> Bool {
        state.withLock { $0.recording[origin] != nil }
    }

    /// Whether the loader's sessions are sent to the proxy.
    static var isRouting: Bool { proxy != nil }

    /// Called when cassettes come into force or go, and when the shared configuration changes: open tunnels are
    /// judged again before they carry more.
    static func cassettesChanged() {
        proxy?.rejudgeTunnels()
    }

    static func noteUpstreamFailure(_ failure: UpstreamFailure, for origin: NetworkOrigin) {
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { $0.failures[origin] = (failure, now) }
    }

    /// Why the proxy could not reach `url`'s origin, if it failed to since `since` (uptime nanoseconds): the error
    /// the recorder's session got then is the proxy's, and the app is told what the server's absence is.
    /// HTTPVCR's own request failed: where the guard could not reach the server, the session heard of a proxy's
    /// failure, and the app is told what its own session would have been told (`cannotConnectToHost`, …).
    static func asTheServerWouldFail(_ error: any Error, url: URL?, since: UInt64) -> any Error {
        guard let url, let failure = upstreamFailure(for: url, since: since) else { return error }
        return URLError(failure.urlErrorCode, userInfo: [
            NSURLErrorFailingURLErrorKey: url,
            NSLocalizedDescriptionKey: (error as NSError).localizedDescription,
        ])
    }

    static func upstreamFailure(for url: URL?, since: UInt64) -> UpstreamFailure? {
        guard proxy != nil, let origin = NetworkOrigin(url) else { return nil }
        return state.withLock { state in
            guard let noted = state.failures[origin], noted.at >= since else { return nil }
            return noted.failure
        }
    }
}
