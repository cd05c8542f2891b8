#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import HTTPVCRCassettes

/// swift-corelibs-foundation's loader, where HTTPVCR stands in for what its client cannot be told: it finds the
/// task's session, who listens to the task, an upload's body, and writes a download's file, the task's error and
/// its response while a 401 is handed over.
///
/// Every internal it touches is looked for once, at first use (``Internals``), by name in the runtime's field
/// records (``StoredField``) or by symbol: never a guessed layout. One that a later corelibs renamed or retyped is
/// reported once on standard error, naming what degrades, and its user falls back to what the loader does without
/// HTTPVCR's help.
struct CorelibsPlatform: LoaderPlatform {
    /// corelibs' fields and symbols that HTTPVCR reads or writes, found once.
    static let internals = Internals()

    struct Internals: Sendable {
        let taskSession = StoredField("session", of: URLSessionTask.self).map(ExistentialObjectField<URLSession>.init)
        let taskResponse = StoredField("_response", of: URLSessionTask.self)
        let taskError = StoredField("error", of: URLSessionTask.self)
        let taskInlineCompletion = StoredField("_callCompletionHandlerInline", of: URLSessionTask.self)
        let taskKnownBody = StoredField("knownBody", of: URLSessionTask.self)
        let taskState = StoredField("_state", of: URLSessionTask.self).flatMap {
            $0.type == URLSessionTask.State.self ? $0 : nil
        }
        let sessionRegistry = StoredField("taskRegistry", of: URLSession.self)
        /// The registry's table (`behaviours`), in the registry's class (internal: known by the field's type).
        let registryTable: TaskRegistryTable?
        let protocolProperties = StoredField("properties", of: URLProtocol.self)
        let requestTimeoutIsSet = StoredField("isTimeoutIntervalSet", of: URLRequest.self)
        let dispatch = DispatchClientQueue.functions
        /// What degrades for want of what was not found: said once, on standard error.
        let degraded: [String]

        init() {
            registryTable = sessionRegistry.flatMap { TaskRegistryTable(registryType: $0.type) }
            let missing: [(Bool, String)] = [
                (taskSession == nil, "URLSessionTask.session: the app's session is not consulted (additional "
                    + "headers, delegates, cookies)"),
                (taskResponse == nil, "URLSessionTask._response: a final 401 makes corelibs ask for credentials again"),
                (taskError == nil, "URLSessionTask.error: a task that failed under a cassette has no error there"),
                (taskInlineCompletion == nil, "URLSessionTask._callCompletionHandlerInline: async callers are "
                    + "resumed on the session's work queue (a cancellation can deadlock, swift-corelibs-foundation#5412)"),
                (taskKnownBody == nil, "URLSessionTask.knownBody: the body of an upload task is not seen: such a "
                    + "task replays, and is refused where its body is needed (recording, a body matcher)"),
                (taskState == nil, "URLSessionTask._state: each client call waits on the task's lock to read its "
                    + "state (slower replay)"),
                (registryTable == nil, "URLSession.taskRegistry: delegates passed to data(for:delegate:) hear "
                    + "nothing, and data delegates get the body in one piece"),
                (protocolProperties?.type as? any LoaderProperties.Type == nil,
                 "URLProtocol.properties: download tasks cannot be served"),
                (requestTimeoutIsSet == nil, "URLRequest.isTimeoutIntervalSet: the session's "
                    + "timeoutIntervalForRequest wins over a request's 60 s"),
                (dispatch == nil, "libdispatch's dispatch_get_current_queue: requests cannot be traced to the test "
                    + "that made them, and client calls are made from the recording session's queue"),
            ]
            degraded = missing.filter(\.0).map(\.1)
            PlatformReport.degrades("swift-corelibs-foundation", lacking: degraded)
        }
    }

    private var internals: Internals { Self.internals }

    var redirectHandling: RedirectHandling { .followInProtocol }

    var attributesRequestsToTasks: Bool { internals.dispatch != nil }

    /// corelibs sets no proxy of its own: libcurl reads the environment at each transfer.
    var readsProxyFromEnvironment: Bool { true }

    /// corelibs' `registerClass` appends, and the first `URLSession` registers the native classes: a class appended
    /// after them is never consulted for http(s). So the natives (the classes a `.default` configuration names) are
    /// taken out, `protocolClass` registered, and the natives put back after it.
    func register(_ protocolClass: URLProtocol.Type) {
        let natives = URLSessionConfiguration.default.protocolClasses ?? []
        for native in natives { URLProtocol.unregisterClass(native) }
        _ = URLProtocol.registerClass(protocolClass)
        for native in natives { _ = URLProtocol.registerClass(native) }
    }

    /// `URLSession.shared` copies the registered classes when it is made: made before `protocolClass` was
    /// registered, it sends every request to the network unseen.
    func sharedSessionAsks(_ protocolClass: URLProtocol.Type) -> Bool {
        let classes = URLSession.shared.configuration.protocolClasses ?? []
        guard let ours = classes.firstIndex(where: { $0 == protocolClass }) else { return false }
        let natives = URLSessionConfiguration.default.protocolClasses ?? []
        return !classes[..<ours].contains { registered in natives.contains { $0 == registered } }
    }

    var currentQueue: OpaquePointer? { internals.dispatch?.currentQueue() }

    /// The async caller resumed off the work queue; the client called later on the queue this runs on (the task's
    /// work queue), which the task holds.
    func startLoad(of task: URLSessionTask?) -> TaskSurroundings {
        // Every branch borrows the task: an `if let` would copy it (a retain through its side table).
        switch task {
        case let .some(task):
            resumeCallerOffWorkQueue(task)
            let session = session(of: task)
            let listener = switch session {
            case let .some(session): listener(of: task, in: session)
            case nil: TaskListener.none
            }
            return TaskSurroundings(
                session: session, listener: listener, route: bodyRoute(for: task, listener: listener),
                clientQueue: DispatchClientQueue(heldByTask: true)
            )
        case nil:
            return TaskSurroundings(
                session: nil, listener: .none, route: .whole, clientQueue: DispatchClientQueue(heldByTask: false)
            )
        }
    }

    func session(of task: URLSessionTask) -> URLSession? {
        internals.taskSession?.object(in: task)
    }

    /// Read on the session's work queue (in `startLoading`): the registry is "only accessed on the owning session's
    /// work queue".
    func listener(of task: URLSessionTask, in session: URLSession) -> TaskListener {
        guard let registry = internals.sessionRegistry?.object(in: session), let table = internals.registryTable else {
            return .none
        }
        switch table.kind(of: task.taskIdentifier, in: registry) {
        case .callDelegate?:
            return (session.delegate as? any URLSessionTaskDelegate).map(TaskListener.sessionDelegate) ?? .none
        case let .completionHandler(taskDelegate)?:
            return .completionHandler(taskDelegate: taskDelegate)
        case nil:
            return .none
        }
    }

    /// corelibs keeps only the last `didLoad` for completion handlers and async callers, tells a session data
    /// delegate every one, and tells the delegate passed to an async call none.
    private func bodyRoute(for task: URLSessionTask, listener: TaskListener) -> BodyRoute {
        if task is URLSessionDownloadTask { return .file(DownloadFile()) }
        switch listener {
        case let .sessionDelegate(delegate):
            return delegate is any URLSessionDataDelegate ? .chunks : .whole
        case let .completionHandler(delegate?) where delegate is any URLSessionDataDelegate:
            return .wholeAndChunksToListener
        default:
            return .whole
        }
    }

    /// The session's own storage, read from the task: corelibs stores cookies in its libcurl handle, never from a
    /// custom protocol's responses.
    func cookieStorage(for protocolInstance: URLProtocol) -> (storage: HTTPCookieStorage, setsCookies: Bool)? {
        guard let task = protocolInstance.task, let session = session(of: task) else { return nil }
        let configuration = session.configuration
        guard configuration.httpCookieAcceptPolicy != .never, let storage = configuration.httpCookieStorage else {
            return nil
        }
        return (storage, configuration.httpShouldSetCookies)
    }

    /// corelibs keeps an upload's body in the task's `knownBody` (an internal enum) and never shows it to a
    /// protocol: its payload is read with `Mirror`.
    func uploadBody(of task: URLSessionTask) -> UploadBody? {
        internals.taskKnownBody.flatMap { body(in: $0.value(in: task)) }
    }

    private func body(in value: Any) -> UploadBody? {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            return mirror.children.first.flatMap { body(in: $0.value) }
        }
        guard let (label, payload) = mirror.children.first.map({ ($0.label, $0.value) }) else { return nil }
        switch (label, payload) {
        case let ("data", data as Data): return .data(data)
        case let ("data", data as DispatchData): return .data(Data(data))
        case let ("file", url as URL): return .file(url)
        case let ("stream", stream as InputStream): return .stream(stream)
        default: return nil
        }
    }

    var servesDownloads: Bool {
        (internals.protocolProperties?.type as? any LoaderProperties.Type) != nil
    }

    /// corelibs reads the file from the protocol's internal `properties` when the protocol finishes, and gives it to
    /// the completion handler or `urlSession(_:downloadTask:didFinishDownloadingTo:)` (it traps where a delegate
    /// expects it and it is missing).
    func setDownloadedFile(_ file: URL, of protocolInstance: URLProtocol) -> Bool {
        guard let field = internals.protocolProperties,
              let properties = field.type as? any LoaderProperties.Type
        else { return false }
        return properties.set(file, forKey: "temporaryFileURL", at: field.address(in: protocolInstance))
    }

    /// corelibs' client starts its own authentication (with its own protocol, to the network) when a load finishes
    /// on a 401 that asks for credentials. HTTPVCR has asked the app's delegate already; the 401 is the outcome. So
    /// the task's response, as the client reads it there, is `response` without its `WWW-Authenticate`; the one the
    /// app reads afterwards is `response`, whole: the session's delegate queue holds the completion handler until
    /// then.
    func finishWithoutChallenge(
        _ task: URLSessionTask, session: URLSession, response: HTTPURLResponse, _ finish: () -> Void
    ) {
        guard let field = internals.taskResponse, let url = response.url,
              let stripped = HTTPURLResponse(
                  url: url,
                  statusCode: response.statusCode,
                  httpVersion: "HTTP/1.1",
                  headerFields: (response.allHeaderFields as? [String: String])?.filter {
                      !$0.key.equalsIgnoringASCIICase("WWW-Authenticate")
                  }
              )
        else { return finish() }
        let queue = session.delegateQueue
        let wasSuspended = queue.isSuspended
        queue.isSuspended = true
        defer { queue.isSuspended = wasSuspended }
        field.set(Optional<URLResponse>.some(stripped), in: task)
        finish()
        field.set(Optional<URLResponse>.some(response), in: task)
    }

    /// `error` is `internal(set)`. Call on the client's queue.
    func setError(_ error: any Error, on task: URLSessionTask) {
        internals.taskError?.set(Optional<any Error>.some(error), in: task)
    }

    /// Clears `_callCompletionHandlerInline`, which `data(for:)` sets before `resume()`: the caller is then resumed
    /// from the session's delegate queue, as a completion handler is called. Before the client is told anything.
    private func resumeCallerOffWorkQueue(_ task: URLSessionTask) {
        internals.taskInlineCompletion?.set(false, in: task)
    }

    /// `_state` read without the `dispatch_sync` of `state`'s getter (a tenth of what replaying a request costs
    /// over a bare stub), which this read needs no more: it is made on the task's work queue, where every write
    /// it could meet is made too (`resume`, `suspend`, `cancel`'s `.canceling`). `.completed` is written on the
    /// delegate queue, but only once the client was told the end, or after `stopLoading`: past both a load
    /// reads nothing.
    func isLive(_ task: URLSessionTask?) -> Bool {
        // Not unwrapped with `let`: that would copy the task (see ``startLoad(of:)``).
        guard task != nil else { return true }
        guard let taskState = internals.taskState else { return task.unsafelyUnwrapped.state.isLive }
        return taskState.address(in: task.unsafelyUnwrapped).load(as: URLSessionTask.State.self).isLive
    }

    /// The default, 60 s, is not "set".
    func timeoutIsSet(on request: URLRequest) -> Bool? {
        internals.requestTimeoutIsSet?.value(inValue: request) as? Bool
    }
}

/// `URLProtocol.properties` (`[_PropertyKey: Any]`, its key an internal `String` enum), written through its own
/// type.
fileprivate protocol LoaderProperties {
    static func set(_ value: Any, forKey rawKey: String, at address: UnsafeMutableRawPointer) -> Bool
}

extension Dictionary: LoaderProperties where Value == Any {
    fileprivate static func set(_ value: Any, forKey rawKey: String, at address: UnsafeMutableRawPointer) -> Bool {
        guard let keyType = Key.self as? any RawRepresentable<String>.Type,
              let key = keyType.init(rawValue: rawKey) as? Key
        else { return false }
        address.assumingMemoryBound(to: Self.self).pointee[key] = value
        return true
    }
}
#endif
