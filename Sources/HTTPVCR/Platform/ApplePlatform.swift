import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Apple's URL loading system: it registers the newest protocol first, reports every `didLoad`, takes redirect
/// hops through `wasRedirectedTo` and asks the app's delegates itself; it shows a protocol neither its task's
/// session nor any internal. Built on every platform: on Linux, tests drive it through a loader double.
struct ApplePlatform: LoaderPlatform {
    var redirectHandling: RedirectHandling { .reportToClient }

    /// `canInit` runs on a loader thread, not in the caller's task: scopes insert their cassette for the whole
    /// process and take turns.
    var attributesRequestsToTasks: Bool { false }

    /// CFNetwork takes its proxy from the system's settings, not the environment: unverified ways (the
    /// configuration getters OHHTTPStubs answers) are left for a Mac to try.
    var readsProxyFromEnvironment: Bool { false }

    func register(_ protocolClass: URLProtocol.Type) {
        _ = URLProtocol.registerClass(protocolClass)
    }

    func sharedSessionAsks(_ protocolClass: URLProtocol.Type) -> Bool { true }

    var currentQueue: OpaquePointer? { nil }

    /// The loader keeps the session to itself (and asks its delegates itself), hands every client each chunk, and
    /// writes downloads' files itself.
    func startLoad(of task: URLSessionTask?) -> TaskSurroundings {
        TaskSurroundings(session: nil, listener: .none, route: .chunks, clientQueue: RunLoopClientQueue())
    }

    /// The shared storage, as other stubbing libraries use (a protocol cannot see its session here).
    func cookieStorage(for protocolInstance: URLProtocol) -> (storage: HTTPCookieStorage, setsCookies: Bool)? {
        (HTTPCookieStorage.shared, true)
    }

    func uploadBody(of task: URLSessionTask) -> UploadBody? { nil }

    var servesDownloads: Bool { true }

    func setDownloadedFile(_ file: URL, of protocolInstance: URLProtocol) -> Bool { false }

    func finishWithoutChallenge(
        _ task: URLSessionTask, session: URLSession, response: HTTPURLResponse, _ finish: () -> Void
    ) {
        finish()
    }

    func setError(_ error: any Error, on task: URLSessionTask) {}

    func isLive(_ task: URLSessionTask?) -> Bool { task?.state.isLive ?? true }

    func timeoutIsSet(on request: URLRequest) -> Bool? { nil }
}

/// Apple's URL loading system asks a protocol to call its client on the thread that called `startLoading`, a loader
/// thread that runs a run loop: later calls are performed on that run loop, in order. A thread whose run loop is
/// not running (a loader that starts protocols from a dispatch queue) could never perform them: its client is
/// called from wherever the event is.
final class RunLoopClientQueue: ClientQueue, @unchecked Sendable {
    private let thread: Thread
    private let runLoop: RunLoop?

    /// Call from `startLoading`: captures its thread and, if it is running, its run loop.
    init() {
        thread = Thread.current
        runLoop = RunLoop.current.currentMode != nil ? RunLoop.current : nil
    }

    var isCurrent: Bool { runLoop == nil || Thread.current === thread }

    func async(_ body: @escaping () -> Void) {
        guard let runLoop else { return body() }
        let block = UncheckedBlock(body)
        runLoop.perform(inModes: [.common]) { block.body() }
        // `perform` queues without waking a run loop that is waiting for input.
        #if canImport(CoreFoundation) && !canImport(FoundationNetworking)
        CFRunLoopWakeUp(runLoop.getCFRunLoop())
        #else
        // corelibs (where tests drive this loader) has no public CFRunLoopWakeUp: a timer due now wakes it.
        runLoop.add(Timer(timeInterval: 0, repeats: false) { _ in }, forMode: .common)
        #endif
    }

    private struct UncheckedBlock: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
