import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Swift task that started a request, kept so that HTTPVCR can see it being cancelled (Linux).
///
/// swift-corelibs-foundation's async `data(for:)` cancels its URLSessionTask from a task cancellation handler, and
/// that handler runs holding the Swift task's status lock while it waits (`workQueue.sync`) for the session's work
/// queue. Ending the same task from the work queue resumes its continuation, which needs that lock: the two wait
/// for each other forever. Plain URLSession falls into it too when a task group cancels requests whose answers
/// are arriving (swift-corelibs-foundation#5412). The fix (#5417, a `workQueue.async` in `cancel()`) is on the 6.4
/// branch and in no 6.3 release, 6.3.3 included. Where the toolchain has it (`#if compiler(>=6.4)`: on Linux
/// Foundation ships with the compiler) the flag can be left alone and the step-aside dropped, once
/// `FreshProcessTests`' task-group cancellation test has run on that toolchain.
///
/// HTTPVCR takes the cycle apart: it has corelibs resume async callers from the session's delegate queue, as it
/// calls completion handlers, so that ending a task on the work queue never waits for a Swift task's lock
/// (``LoaderPlatform/startLoad(of:)``). Where that cannot be done it steps aside instead: before
/// it ends a task whose caller is cancelled, it gives the work queue up once, so that the waiting cancellation goes
/// first and ends the task itself (`Load.isTaskLive`). That narrows the window without closing it.
///
/// `canInit` sees it (it runs inside `resume()`, in the caller's task); ``CanInitNotes`` carries it to
/// `startLoading`.
struct CallerTask: @unchecked Sendable {
    /// Holds the task object, which keeps it alive: read only while it is.
    private let task: Task<Never, Never>

    var isCancelled: Bool { task.isCancelled }

    /// The current Swift task, if there is one. `UnsafeCurrentTask` and `Task` both hold nothing but the task
    /// object; the `Task` is a copy, which retains it, so this value may outlive the scope it was taken in. Cast
    /// where it lies: copying the optional `UnsafeCurrentTask` (of a type laid out out of sight) costs more.
    static var current: CallerTask? {
        withUnsafeCurrentTask { unsafeBitCast($0, to: Task<Never, Never>?.self) }.map(CallerTask.init)
    }
}
