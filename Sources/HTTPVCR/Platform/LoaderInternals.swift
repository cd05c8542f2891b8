import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

/// What the URL loading system keeps internal and HTTPVCR needs to stand in for it: the one place that touches
/// loader internals. On swift-corelibs-foundation the fields are found by name in the runtime's field records
/// (``StoredField``) the first time they are needed; one that a later corelibs renamed or retyped is reported once,
/// with what degrades, and never guessed at. Apple's loader needs none of it (and exposes none).
enum LoaderInternals {
    #if canImport(FoundationNetworking) && !HTTPVCR_APPLE_PATHS
    /// corelibs' fields that HTTPVCR reads or writes, found once.
    private static let fields = Fields()

    private struct Fields: Sendable {
        let taskSession = StoredField("session", of: URLSessionTask.self)
        let taskResponse = StoredField("_response", of: URLSessionTask.self)
        let taskError = StoredField("error", of: URLSessionTask.self)
        let taskInlineCompletion = StoredField("_callCompletionHandlerInline", of: URLSessionTask.self)
        let sessionRegistry = StoredField("taskRegistry", of: URLSession.self)
        let protocolProperties = StoredField("properties", of: URLProtocol.self)
        let requestTimeoutIsSet = StoredField("isTimeoutIntervalSet", of: URLRequest.self)

        init() {
            let missing: [(StoredField?, String)] = [
                (taskSession, "URLSessionTask.session: the app's session is not consulted (additional headers, "
                    + "delegates, cookies)"),
                (taskResponse, "URLSessionTask._response: a final 401 makes corelibs ask for credentials again"),
                (taskError, "URLSessionTask.error: a task that failed under a cassette has no error there"),
                (taskInlineCompletion, "URLSessionTask._callCompletionHandlerInline: async callers are resumed on "
                    + "the session's work queue (a cancellation can deadlock, swift-corelibs-foundation#5412)"),
                (sessionRegistry, "URLSession.taskRegistry: delegates passed to data(for:delegate:) hear nothing, "
                    + "and data delegates get the body in one piece"),
                (protocolProperties, "URLProtocol.properties: download tasks cannot be served"),
                (requestTimeoutIsSet, "URLRequest.isTimeoutIntervalSet: the session's timeoutIntervalForRequest "
                    + "wins over a request's 60 s"),
            ]
            let notes = missing.filter { $0.0 == nil }.map(\.1)
            guard !notes.isEmpty else { return }
            let text = "HTTPVCR: this swift-corelibs-foundation lacks fields HTTPVCR reads, so it degrades: "
                + notes.joined(separator: "; ") + ".\n"
            FileHandle.standardError.write(Data(text.utf8))
        }
    }

    /// The session a task belongs to.
    static func session(of task: URLSessionTask) -> URLSession? {
        fields.taskSession?.value(in: task) as? URLSession
    }

    /// Who hears of `task`'s events. Read on the session's work queue (in `startLoading`): the registry is
    /// "only accessed on the owning session's work queue".
    static func listener(of task: URLSessionTask, in session: URLSession) -> TaskListener? {
        guard let registry = fields.sessionRegistry?.object(in: session),
              let table = RegistryTable.of(type(of: registry))
        else { return nil }
        let address = table.field.address(in: registry)
        let entry = TaskRegistryEntry.read(
            table.type.entryBytes(at: address, for: task.taskIdentifier),
            entry: { table.type.entry(at: address, for: task.taskIdentifier) }
        )
        switch entry {
        case .callDelegate?:
            return (session.delegate as? any URLSessionTaskDelegate).map(TaskListener.sessionDelegate) ?? TaskListener.none
        case let .completionHandler(taskDelegate)?:
            return .completionHandler(taskDelegate: taskDelegate)
        case nil:
            return nil
        }
    }

    /// The registry's table (`behaviours`): its class is internal, so the field is looked up the first time, by the
    /// class the registry has.
    private struct RegistryTable {
        let field: StoredField
        let type: any TaskTable.Type

        private static let found = Locked<RegistryTable??>(nil)

        static func of(_ registryType: AnyClass) -> RegistryTable? {
            found.withLock { found in
                if let known = found { return known }
                let table = StoredField("behaviours", of: registryType).flatMap { field in
                    (field.type as? any TaskTable.Type).map { RegistryTable(field: field, type: $0) }
                }
                found = .some(table)
                return table
            }
        }
    }

    /// Hands a download task's file to corelibs, which gives it to the completion handler or
    /// `urlSession(_:downloadTask:didFinishDownloadingTo:)` when the protocol finishes (corelibs reads it from the
    /// protocol's internal `properties`, and traps where a delegate expects it and it is missing). Returns whether
    /// it could.
    @discardableResult
    static func setDownloadedFile(_ file: URL, of protocolInstance: URLProtocol) -> Bool {
        guard let field = fields.protocolProperties,
              let properties = field.type as? any LoaderProperties.Type
        else { return false }
        return properties.set(file, forKey: "temporaryFileURL", at: field.address(in: protocolInstance))
    }

    /// Whether corelibs could be handed a download task's file (``setDownloadedFile(_:of:)``).
    static var servesDownloads: Bool {
        (fields.protocolProperties?.type as? any LoaderProperties.Type) != nil
    }

    /// Runs `finish` (which tells the client the load finished) while the task's response, as corelibs' client
    /// reads it there, is `response` without its `WWW-Authenticate`: corelibs' client starts its own
    /// authentication (with its own protocol, to the network) when a load finishes on a 401 that asks for
    /// credentials. HTTPVCR has asked the app's delegate already; the 401 is the outcome. The response the app reads
    /// afterwards is `response`, whole: the session's delegate queue holds the completion handler until then.
    static func finishWithoutChallenge(
        _ task: URLSessionTask,
        session: URLSession,
        response: HTTPURLResponse,
        _ finish: () -> Void
    ) {
        guard let field = fields.taskResponse, let url = response.url,
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

    /// Sets the task's `error` (`internal(set)`), as corelibs' own protocol does before it tells the client a load
    /// failed. Call on the client's queue.
    static func setError(_ error: any Error, on task: URLSessionTask) {
        fields.taskError?.set(Optional<any Error>.some(error), in: task)
    }

    /// Has corelibs resume the caller of an async `data(for:)` (and the other async forms) from the session's
    /// delegate queue, as it calls a completion handler, instead of inline on the work queue
    /// (`_callCompletionHandlerInline`, which `data(for:)` sets before `resume()`; see ``CallerTask``). Call from
    /// `startLoading`, before the client is told anything. Returns whether the task now ends off the work queue.
    @discardableResult
    static func resumesCallerOffWorkQueue(_ task: URLSessionTask) -> Bool {
        fields.taskInlineCompletion?.set(false, in: task) ?? false
    }

    /// Whether `request.timeoutInterval` was set, and so wins over the session's `timeoutIntervalForRequest` (the
    /// default, 60 s, does not). nil when that cannot be told.
    static func timeoutIsSet(on request: URLRequest) -> Bool? {
        fields.requestTimeoutIsSet?.value(inValue: request) as? Bool
    }
    #else
    static func session(of task: URLSessionTask) -> URLSession? { nil }
    static func listener(of task: URLSessionTask, in session: URLSession) -> TaskListener? { nil }
    @discardableResult
    static func setDownloadedFile(_ file: URL, of protocolInstance: URLProtocol) -> Bool { false }
    static var servesDownloads: Bool { false }
    static func finishWithoutChallenge(
        _ task: URLSessionTask, session: URLSession, response: HTTPURLResponse, _ finish: () -> Void
    ) {
        finish()
    }
    static func setError(_ error: any Error, on task: URLSessionTask) {}
    @discardableResult
    static func resumesCallerOffWorkQueue(_ task: URLSessionTask) -> Bool { false }
    static func timeoutIsSet(on request: URLRequest) -> Bool? { nil }
    #endif
}

#if canImport(FoundationNetworking) && !HTTPVCR_APPLE_PATHS
/// An entry of corelibs' task registry (`URLSession._TaskRegistry._Behaviour`, an internal enum): how its task was
/// made. Reading one with `Mirror` decodes the payload's function type each time (90 K instructions, as much as the
/// rest of a replayed request). So each case's tag is learned once with `Mirror`, then read from the entry's bytes:
/// the tag in its last byte, the delegate of a `…WithTaskDelegate` case in the word at offset 16. Each learned fact
/// is checked against `Mirror` the first time it is used and against simple invariants every time; where either
/// fails, `Mirror` reads every entry (slow, never wrong).
private enum TaskRegistryEntry {
    enum Kind {
        case callDelegate
        case completionHandler(taskDelegate: (any URLSessionTaskDelegate)?)
    }

    private struct Learned {
        /// What each tag byte stands for: the case's label.
        var labels: [UInt8: String] = [:]
        /// The delegate word was seen to hold the delegate `Mirror` found (an object, and nil as zero).
        var delegateWordHoldsDelegate = false
        var delegateWordIsZeroForNil = false
        /// The bytes did not say what `Mirror` said: read with `Mirror` only.
        var isBroken = false
    }

    private static let learned = Locked(Learned())
    private static let delegateWord = 16

    /// `bytes`: the entry's, if it is laid out as expected; `entry`: the entry itself, for `Mirror` (nil when the
    /// task is not in the registry).
    static func read(_ bytes: Bytes?, entry: () -> Any?) -> Kind? {
        guard let bytes, !learned.withLock({ $0.isBroken }) else { return entry().flatMap(readWithMirror) }
        let known = learned.withLock { $0.labels[bytes.tag] }
        guard let label = known ?? entry().map({ learn($0, bytes) }) else { return nil }
        guard bytes.fits(label) else { return entry().flatMap(markBroken) }
        switch label {
        case "callDelegate":
            return .callDelegate
        case "dataCompletionHandler", "downloadCompletionHandler":
            return .completionHandler(taskDelegate: nil)
        case "dataCompletionHandlerWithTaskDelegate", "downloadCompletionHandlerWithTaskDelegate":
            let (holds, zeroForNil) = learned.withLock { ($0.delegateWordHoldsDelegate, $0.delegateWordIsZeroForNil) }
            if bytes.delegate == 0, zeroForNil { return .completionHandler(taskDelegate: nil) }
            if bytes.delegate != 0, holds, let pointer = UnsafeRawPointer(bitPattern: bytes.delegate) {
                // The registry holds the delegate, and is read on its session's work queue.
                let object = Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue()
                return .completionHandler(taskDelegate: object as? any URLSessionTaskDelegate)
            }
            // Not seen yet: read it with Mirror, and learn whether the word holds it.
            guard let entry = entry() else { return nil }
            let kind = readWithMirror(entry)
            guard case let .completionHandler(delegate)? = kind else { return markBroken(entry) }
            learned.withLock { learned in
                if let delegate, UInt(bitPattern: Unmanaged.passUnretained(delegate as AnyObject).toOpaque()) == bytes.delegate {
                    learned.delegateWordHoldsDelegate = true
                } else if delegate == nil, bytes.delegate == 0 {
                    learned.delegateWordIsZeroForNil = true
                }
            }
            return kind
        default:
            return entry().flatMap(markBroken)
        }
    }

    /// What matters of an entry's bytes.
    struct Bytes {
        let tag: UInt8
        let firstWord: UInt
        let delegate: UInt
        let isPayloadZero: Bool

        /// nil when the entry is not laid out as one payload of four words and a tag byte.
        init?<Entry>(of value: Entry) {
            guard MemoryLayout<Entry>.size == 4 * MemoryLayout<UInt>.size + 1 else { return nil }
            self = withUnsafeBytes(of: value) { raw in
                Bytes(
                    tag: raw[raw.count - 1],
                    firstWord: raw.loadUnaligned(as: UInt.self),
                    delegate: raw.loadUnaligned(fromByteOffset: delegateWord, as: UInt.self),
                    isPayloadZero: (0..<4).allSatisfy {
                        raw.loadUnaligned(fromByteOffset: $0 * MemoryLayout<UInt>.size, as: UInt.self) == 0
                    }
                )
            }
        }

        private init(tag: UInt8, firstWord: UInt, delegate: UInt, isPayloadZero: Bool) {
            self.tag = tag
            self.firstWord = firstWord
            self.delegate = delegate
            self.isPayloadZero = isPayloadZero
        }

        /// What every entry of `label` must show: no payload for `callDelegate`, a completion handler's function
        /// for the others.
        func fits(_ label: String) -> Bool {
            label == "callDelegate" ? isPayloadZero : firstWord != 0
        }
    }

    /// Learns the label of `bytes`' tag from `Mirror`.
    private static func learn(_ entry: Any, _ bytes: Bytes) -> String {
        let label = label(of: entry)
        learned.withLock { $0.labels[bytes.tag] = label }
        return label
    }

    private static func markBroken(_ entry: Any) -> Kind? {
        learned.withLock { $0.isBroken = true }
        return readWithMirror(entry)
    }

    /// A case with a payload shows it as its one child; one without (`callDelegate`) only in its description.
    private static func label(of entry: Any) -> String {
        Mirror(reflecting: entry).children.first?.label ?? String(describing: entry)
    }

    private static func readWithMirror(_ entry: Any) -> Kind? {
        switch label(of: entry) {
        case "callDelegate":
            return .callDelegate
        case "dataCompletionHandler", "downloadCompletionHandler":
            return .completionHandler(taskDelegate: nil)
        case "dataCompletionHandlerWithTaskDelegate", "downloadCompletionHandlerWithTaskDelegate":
            // (completion, delegate?)
            let payload = Mirror(reflecting: entry).children.first?.value
            let delegate = payload.flatMap { Mirror(reflecting: $0).children.dropFirst().first?.value }
                .flatMap { $0 as? any URLSessionTaskDelegate }
            return .completionHandler(taskDelegate: delegate)
        default:
            return nil
        }
    }
}

/// corelibs' task registry table (`[Int: _Behaviour]`, its value type internal), read through its own type.
private protocol TaskTable {
    static func entry(at address: UnsafeMutableRawPointer, for taskIdentifier: Int) -> Any?
    /// The entry's bytes, read where it is, without boxing it (as ``entry(at:for:)`` does).
    static func entryBytes(at address: UnsafeMutableRawPointer, for taskIdentifier: Int) -> TaskRegistryEntry.Bytes?
}

extension Dictionary: TaskTable where Key == Int {
    fileprivate static func entry(at address: UnsafeMutableRawPointer, for taskIdentifier: Int) -> Any? {
        address.assumingMemoryBound(to: Self.self).pointee[taskIdentifier]
    }

    fileprivate static func entryBytes(
        at address: UnsafeMutableRawPointer, for taskIdentifier: Int
    ) -> TaskRegistryEntry.Bytes? {
        address.assumingMemoryBound(to: Self.self).pointee[taskIdentifier].flatMap(TaskRegistryEntry.Bytes.init)
    }
}

/// `URLProtocol.properties` (`[_PropertyKey: Any]`, its key an internal `String` enum), written through its own
/// type.
private protocol LoaderProperties {
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
