import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Who hears of a body besides the client hears of it under a cassette as from the server: the delegate of an
    /// async call, an upload's delegate, a download's file and delegate.
    @Suite struct BodyRouteTests {
        /// `body` run with no cassette, recording, then replaying with `.never` (the server out of reach).
        func liveRecordReplay<Outcome>(_ body: () async throws -> Outcome) async throws -> [Outcome] {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let live = try await body()
                let recorded = try await withCassette("body", in: folder.path, { $0.recordMode = .all }) { _ in
                    try await body()
                }
                let replayed = try await withCassette("body", in: folder.path, { $0.recordMode = .never }) { _ in
                    try await body()
                }
                #expect(VCR.takeFailures().isEmpty)
                return [live, recorded, replayed]
            }
        }

        @Test func theDelegateOfAnAsyncCallHearsTheBody() async throws {
            let session = appSession()
            let url = try HTTPBin.url("/stream-bytes/6000?seed=7&chunk_size=1000")
            let runs = try await liveRecordReplay {
                let delegate = AppDelegate()
                let (data, _) = try await session.data(from: url, delegate: delegate)
                // The loader tells the delegate on the session's delegate queue, and may resume the caller first.
                await withCheckedContinuation { done in session.delegateQueue.addOperation { done.resume() } }
                return [data.count, delegate.body.count, delegate.body == data ? 1 : 0]
            }
            #expect(runs[0] == [6000, 6000, 1])
            #expect(runs[1] == runs[0])
            #expect(runs[2] == runs[0])
        }

        @Test func anUploadsDelegateHearsTheBodyWasSent() async throws {
            let delegate = AppDelegate()
            let session = appSession(delegate: delegate)
            var request = URLRequest(url: try HTTPBin.url("/put"))
            request.httpMethod = "PUT"
            let body = Data(count: 16 * 1024)
            let runs = try await liveRecordReplay {
                let before = delegate.sent.count
                let error = await delegate.run(session.uploadTask(with: request, from: body))
                #expect(error == nil)
                let sent = delegate.sent.dropFirst(before)
                return [sent.last ?? 0, sent.isEmpty ? 0 : 1]
            }
            #expect(runs[0] == [16384, 1])
            #expect(runs[1] == runs[0])
            #expect(runs[2] == runs[0])
            // The loader tells of the body before the response.
            let calls = delegate.calls
            #expect(calls.filter { $0 == "didSendBodyData" }.count == 3)
            #expect(zip(calls, calls.dropFirst()).filter { $0 == ("didSendBodyData", "didReceiveResponse") }.count == 3)
        }

        @Test func aDownloadTaskHandsTheDelegateAFileWithTheBody() async throws {
            let delegate = DownloadLog()
            let session = appSession(delegate: delegate)
            let url = try HTTPBin.url("/bytes/5000?seed=3")
            let runs = try await liveRecordReplay {
                await delegate.run(session.downloadTask(with: url))
            }
            #expect(runs[0].file.count == 5000)
            #expect(runs[0].written == 5000)
            #expect(runs[0].error == nil)
            for run in runs.dropFirst() {
                #expect(run.file == runs[0].file)
                #expect(run.written == runs[0].written)
                #expect(run.error == nil)
                #expect(run.calls.last == "didComplete")
                #expect(run.calls.dropLast().last == "didFinishDownloadingTo")
            }
        }

        @Test func aGzippedDownloadIsWrittenDecoded() async throws {
            let delegate = DownloadLog()
            let session = appSession(delegate: delegate)
            let url = try HTTPBin.url("/gzip")
            let runs = try await liveRecordReplay { await delegate.run(session.downloadTask(with: url)) }
            #expect(runs[0].file.json?["gzipped"] as? Bool == true)
            #expect(runs[0].written == Int64(runs[0].file.count))
            #expect(runs[1].file == runs[0].file)
            #expect(runs[2].file == runs[0].file)
        }

        @Test func asyncAndCompletionHandlerDownloadsGetTheFile() async throws {
            let session = appSession()
            let url = try HTTPBin.url("/bytes/3000?seed=5")
            let runs = try await liveRecordReplay {
                let (location, response) = try await session.download(from: url)
                let delegate = DownloadLog()
                let (_, withDelegate) = try await session.download(from: url, delegate: delegate)
                let handled: Data = try await withCheckedThrowingContinuation { continuation in
                    session.downloadTask(with: url) { location, _, error in
                        continuation.resume(with: Result { try Data(contentsOf: location ?? URL(fileURLWithPath: "/")) })
                        _ = error
                    }.resume()
                }
                return [
                    try Data(contentsOf: location), handled,
                    Data("\((response as? HTTPURLResponse)?.statusCode ?? 0) \(delegate.written) \(withDelegate.url != nil)".utf8),
                ]
            }
            #expect(runs[0][0].count == 3000)
            #expect(runs[0][1] == runs[0][0])
            #expect(runs[0][2].text == "200 3000 true")
            #expect(runs[1] == runs[0])
            #expect(runs[2] == runs[0])
        }
    }
}

/// A download task's delegate that notes what the loader tells it, and keeps the file it hands over.
final class DownloadLog: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    struct Outcome {
        var file = Data()
        var written: Int64 = 0
        var error: URLError.Code?
        var calls: [String] = []
    }

    private struct State {
        var outcome = Outcome()
        var waiting: CheckedContinuation<Outcome, Never>?
    }

    private let state = Locked(State())

    var written: Int64 { state.withLock { $0.outcome.written } }

    /// Resumes `task` and waits for it to complete.
    func run(_ task: URLSessionTask) async -> Outcome {
        await withCheckedContinuation { continuation in
            state.withLock { $0 = State(waiting: continuation) }
            task.resume()
        }
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        state.withLock { state in
            if state.outcome.calls.last != "didWriteData" { state.outcome.calls.append("didWriteData") }
            state.outcome.written = totalBytesWritten
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let file = (try? Data(contentsOf: location)) ?? Data()
        state.withLock { state in
            state.outcome.calls.append("didFinishDownloadingTo")
            state.outcome.file = file
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (waiting, outcome) = state.withLock { state in
            state.outcome.calls.append("didComplete")
            state.outcome.error = (error as? URLError)?.code
            defer { state.waiting = nil }
            return (state.waiting, state.outcome)
        }
        waiting?.resume(returning: outcome)
    }
}
