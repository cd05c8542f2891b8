import Foundation

/// The Swift task that started a request, kept so that HTTPVCR can see it being cancelled (Linux).
///
/// swift-corelibs-foundation's async `data(for:)` cancels its URLSessionTask from a task cancellation handler, and
/// that handler runs holding the Swift task's status lock while it waits (`workQueue.sync`) for the session's work
/// queue. Ending the same task from the work queue resumes its continuation, which needs that lock: the two wait
/// for each other forever. Plain URLSession falls into it too when a task group cancels requests whose answers
/// are arriving. HTTPVCR steps aside: before it ends a task whose caller is cancelled, it gives the work queue up
/// once, so that the waiting cancellation goes first and ends the task itself (``VCRURLProtocol/isTaskLive``).
///
/// `canInit` sees it (it runs inside `resume()`, in the caller's task); ``CanInitNotes`` carries it to
/// `startLoading`.
struct CallerTask: @unchecked Sendable {
    /// Holds the task object, which keeps it alive: read only while it is.
    private let task: Task<Never, Never>

    var isCancelled: Bool { task.isCancelled }

    /// The current Swift task, if there is one. `UnsafeCurrentTask` and `Task` both hold nothing but the task
    /// object; going through `AnyObject` retains it, so this value may outlive the scope it was taken in.
    static var current: CallerTask? {
        guard let object = withUnsafeCurrentTask(body: { $0.map { unsafeBitCast($0, to: AnyObject.self) } }) else {
            return nil
        }
        return CallerTask(task: unsafeBitCast(object, to: Task<Never, Never>.self))
    }
}
