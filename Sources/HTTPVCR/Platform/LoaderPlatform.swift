import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What HTTPVCR needs of the URL loading system around its protocol beyond `URLProtocol`'s public contract: the one
/// seam between the interception layer and a platform's loader. Everything that reads a loader's internals (private
/// fields, the task registry, `dlsym`, reflection) is behind it.
///
/// Two implementations: ``CorelibsPlatform`` (swift-corelibs-foundation, which HTTPVCR stands in for where its
/// client cannot be told something) and ``ApplePlatform`` (Apple's loader, which asks the app's delegates itself).
/// ``VCRURLProtocol/platform`` says which one a protocol class uses; tests swap it by subclassing, and drive the
/// Apple one on Linux through a loader double.
protocol LoaderPlatform: Sendable {
    /// How redirect hops reach the client: followed inside the protocol (corelibs traps on `wasRedirectedTo`) or
    /// reported (Apple's loader asks the delegate and starts a protocol for the next request).
    var redirectHandling: RedirectHandling { get }

    /// Whether `canInit` runs in the caller's Swift task and ``currentQueue`` ties it to `startLoading`, so that
    /// test scopes may bind a cassette to their task and run in parallel.
    var attributesRequestsToTasks: Bool { get }

    /// Whether the loader's sessions take their proxy from `http_proxy` and `https_proxy` at each transfer
    /// (libcurl's): what lets ``NetworkGuard`` see sessions HTTPVCR is not in.
    var readsProxyFromEnvironment: Bool { get }

    /// Registers `protocolClass` so that the loader asks it before its native HTTP protocol.
    func register(_ protocolClass: URLProtocol.Type)

    /// Whether `URLSession.shared` asks `protocolClass` before the native HTTP protocol.
    func sharedSessionAsks(_ protocolClass: URLProtocol.Type) -> Bool

    /// The queue this thread runs a block of now (corelibs: in `canInit` and `startLoading`, the task's own), if
    /// the loader lets it be known.
    var currentQueue: OpaquePointer? { get }

    /// Readies the protocol's `task` for its load, in `startLoading` before the client is told anything, and reads
    /// what the load needs of it (``TaskSurroundings``). One call: each call that hands the task across this seam
    /// costs it a retain and a release, through the side table a corelibs task has (Docs/Performance.md).
    func startLoad(of task: URLSessionTask?) -> TaskSurroundings

    /// The cookie storage the load's session keeps, and whether it adds cookies to requests; nil when it keeps
    /// none.
    func cookieStorage(for protocolInstance: URLProtocol) -> (storage: HTTPCookieStorage, setsCookies: Bool)?

    /// The body an upload task holds where the protocol's request has none; nil when the loader does not show it.
    func uploadBody(of task: URLSessionTask) -> UploadBody?

    /// Whether a download task's file can be handed to the loader (``setDownloadedFile(_:of:)``).
    var servesDownloads: Bool { get }

    /// Hands a download task's file to the loader. Returns whether it could.
    @discardableResult
    func setDownloadedFile(_ file: URL, of protocolInstance: URLProtocol) -> Bool

    /// Runs `finish` (which tells the client the load finished on a 401 the app's session has answered) so that
    /// the loader does not start asking for credentials itself.
    func finishWithoutChallenge(
        _ task: URLSessionTask, session: URLSession, response: HTTPURLResponse, _ finish: () -> Void
    )

    /// Whether `task` may still be told of its load: not once it is being cancelled or has completed (nil: no task
    /// to cancel). Read on the queue the client is called on. Optional so that the load need not unwrap it, a copy
    /// of the task (``startLoad(of:)``).
    func isLive(_ task: URLSessionTask?) -> Bool

    /// Sets the task's `error`, as the loader's own protocol does before a load fails.
    func setError(_ error: any Error, on task: URLSessionTask)

    /// Whether `request.timeoutInterval` was set, and so wins over the session's; nil when that cannot be told.
    func timeoutIsSet(on request: URLRequest) -> Bool?
}

extension URLSessionTask.State {
    /// Neither being cancelled nor completed.
    var isLive: Bool { self != .canceling && self != .completed }
}

/// What a load reads of its task when it starts (``LoaderPlatform/startLoad(of:)``).
struct TaskSurroundings {
    /// The session the task belongs to: nil where the loader keeps it to itself (and asks its delegates itself).
    var session: URLSession?
    /// Who hears of the task's events besides the client.
    var listener: TaskListener
    /// Where the load's body goes, as the loader's own protocol would send it.
    var route: BodyRoute
    /// Where the client may be called later.
    var clientQueue: any ClientQueue
}

/// Where a protocol may talk to its client: captured in `startLoading`, where the loader asks for the calls.
protocol ClientQueue: Sendable {
    /// Whether a client call may be made right here.
    var isCurrent: Bool { get }
    /// Runs `body` where client calls may be made, after what was sent there before.
    func async(_ body: @escaping () -> Void)
}

/// Who hears of a task's events besides the protocol's client, as the loader decided when the task was made.
enum TaskListener {
    /// Nobody: no delegate, or a session delegate that is no task delegate.
    case none
    /// The task was made without a completion handler: the session's delegate hears of everything.
    case sessionDelegate(any URLSessionTaskDelegate)
    /// A completion handler takes the outcome (`data(for:)`, `download(from:)` and their completion-handler
    /// forms); `taskDelegate` is the delegate passed to the async form, which hears of data and progress.
    case completionHandler(taskDelegate: (any URLSessionTaskDelegate)?)

    /// The delegate that hears of a task's body and progress, if any.
    var delegate: (any URLSessionTaskDelegate)? {
        switch self {
        case .none: nil
        case let .sessionDelegate(delegate): delegate
        case let .completionHandler(delegate): delegate
        }
    }
}

/// An upload task's body, as its task holds it.
enum UploadBody {
    case data(Data)
    case file(URL)
    case stream(InputStream)
}

/// How a redirect hop reaches the URL loading system's client.
enum RedirectHandling: Sendable {
    /// Follow the chain inside the protocol and hand the client only the final response. Linux: corelibs traps
    /// on `wasRedirectedTo` ("doesn't currently handle redirects directly").
    case followInProtocol
    /// Report each hop with `wasRedirectedTo`, then hand over the 3xx and finish, as Apple's loader expects: it
    /// asks the session delegate, stops this protocol and starts a new one for the next request, or, when the
    /// delegate refuses, ends the task with the 3xx.
    case reportToClient
}

/// Says once, on standard error, what a platform lacks and what degrades for it.
enum PlatformReport {
    /// Writes ``message(_:lacking:)``, if there is one.
    static func degrades(_ platform: String, lacking notes: [String]) {
        guard let text = message(platform, lacking: notes) else { return }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// nil when nothing is lacking.
    static func message(_ platform: String, lacking notes: [String]) -> String? {
        guard !notes.isEmpty else { return nil }
        return "HTTPVCR: this \(platform) lacks what HTTPVCR relies on, so it degrades: " + notes.joined(separator: "; ")
            + "."
    }
}
