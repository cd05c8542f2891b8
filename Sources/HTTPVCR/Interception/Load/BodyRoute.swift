import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Where a load's body goes, decided once in `startLoading` from the task and who listens to it, as the loader's own
/// protocol would send it (``LoaderPlatform/startLoad(of:)``).
enum BodyRoute {
    /// One `didLoad`, just before the end: corelibs keeps only the last for completion handlers and async callers.
    case whole
    /// Each chunk in a `didLoad` of its own, as it comes: a session data delegate hears every one.
    case chunks
    /// The caller gets the body whole, and the delegate passed to the async call (`data(for:delegate:)`) hears each
    /// chunk, which corelibs' client would not tell it.
    case wholeAndChunksToListener
    /// A download task: the body goes into a file, which the loader hands over when the load finishes.
    case file(DownloadFile)
}

/// Calls the loader's own protocol makes on the delegate that listens to a task, and its client does not: each
/// chunk to the delegate of an async call, upload progress, download progress. Made on the session's delegate
/// queue, in the order the load makes them.
struct ListenerCalls: @unchecked Sendable {
    let session: URLSession
    let task: URLSessionTask
    let delegate: any URLSessionTaskDelegate

    /// nil when nobody listens.
    init?(session: borrowing URLSession?, task: borrowing URLSessionTask?, listener: borrowing TaskListener) {
        // Borrowed, and the delegate first: most tasks have none, and then session and task are not retained for
        // nothing (an init's arguments are otherwise handed over retained).
        guard let delegate = listener.delegate, let session = copy session, let task = copy task else { return nil }
        self.session = session
        self.task = task
        self.delegate = delegate
    }

    func received(_ chunk: Data) {
        guard let delegate = delegate as? any URLSessionDataDelegate, let task = task as? URLSessionDataTask else {
            return
        }
        session.delegateQueue.addOperation { [session] in
            DelegateCalls.didReceive(chunk, delegate: delegate, session: session, task: task)
        }
    }

    func sent(_ bytes: Int64, total: Int64, expected: Int64) {
        session.delegateQueue.addOperation { [session, task, delegate] in
            DelegateCalls.didSendBodyData(
                bytes, total: total, expected: expected, delegate: delegate, session: session, task: task
            )
        }
    }

    func wrote(_ bytes: Int64, total: Int64, expected: Int64) {
        guard let delegate = delegate as? any URLSessionDownloadDelegate, let task = task as? URLSessionDownloadTask
        else { return }
        session.delegateQueue.addOperation { [session] in
            DelegateCalls.didWriteData(bytes, total: total, expected: expected, delegate: delegate, session: session, task: task)
        }
    }
}

/// A download task's body, written to a file of its own as it comes, as the loader does: the file is left where
/// the loader would leave it (the temporary folder), for the app to move.
final class DownloadFile: @unchecked Sendable {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("HTTPVCR-download-\(UUID().uuidString).tmp")
    private(set) var written: Int64 = 0
    /// The response's `Content-Length`, or -1 (`NSURLSessionTransferSizeUnknown`).
    var expected: Int64 = -1
    private var handle: FileHandle?
    /// Why the file could not be written, once it could not.
    private(set) var failure: (any Error)?

    /// Appends `chunk`; called on the client's queue, one at a time.
    func append(_ chunk: Data) {
        guard failure == nil else { return }
        do {
            if handle == nil {
                guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
                }
                handle = try FileHandle(forWritingTo: url)
            }
            try handle?.write(contentsOf: chunk)
            written += Int64(chunk.count)
        } catch {
            failure = error
        }
    }

    /// Closes the file (made empty if no body came); the error that kept it from being written, if any.
    func finish() -> (any Error)? {
        if handle == nil, failure == nil { append(Data()) }
        try? handle?.close()
        handle = nil
        return failure
    }
}

extension VCRError {
    /// A download task where corelibs cannot be handed its file (``LoaderPlatform/servesDownloads``).
    static func downloadsUnsupported(_ request: URLRequest) -> VCRError {
        VCRError(
            .unsupportedRequest,
            "HTTPVCR cannot serve the download task \(Mismatch.describe(request)) with this "
                + "swift-corelibs-foundation: it finds no URLProtocol.properties to hand the downloaded file over "
                + "in, and corelibs traps when a download finishes without one. Use data(for:) and write the data "
                + "to a file instead.",
            request: Mismatch.describe(request)
        )
    }
}

extension VCRError {
    static func downloadNotWritten(_ file: DownloadFile, _ error: any Error) -> VCRError {
        VCRError(
            .unsupportedRequest,
            "HTTPVCR could not write the downloaded body to \(file.url.path): \(error.localizedDescription)"
        )
    }
}
