import Foundation

/// Fixed threads that run request handlers, so libmicrohttpd's threads never wait for one.
///
/// libmicrohttpd's pool threads each accept a burst of connections and serve them one after another, so a slow
/// handler would hold up every connection its thread had accepted. Instead the access handler suspends the
/// connection and submits the handler here; the job resumes the connection when the response is ready.
final class HandlerPool: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var head = 0
    private var running = 0
    private var closed = false
    private var liveThreads = 0

    /// Starts `threadCount` worker threads.
    init(threadCount: Int) {
        liveThreads = threadCount
        for index in 0..<threadCount {
            let thread = Thread { [self] in work() }
            thread.name = "HTTPServer handler \(index)"
            thread.start()
        }
    }

    /// Runs `prepare` then queues `job`, both under the pool's lock, unless the pool is closing.
    ///
    /// `prepare` suspends the connection: doing it under the lock means ``close()`` cannot return while a
    /// connection is suspended without a job queued to resume it.
    /// - Returns: `false` (and runs neither) when the pool no longer takes work.
    func submit(prepare: () -> Void, _ job: @escaping Job) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return false }
        prepare()
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Refuses new jobs, waits until every queued and running job has finished, and lets the threads exit.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        while liveThreads > 0 {
            condition.wait()
        }
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            if head < jobs.count {
                let job = jobs[head]
                head += 1
                if head == jobs.count {
                    jobs.removeAll(keepingCapacity: true)
                    head = 0
                }
                running += 1
                condition.unlock()
                job()
                condition.lock()
                running -= 1
            } else if closed {
                break
            } else {
                condition.wait()
            }
        }
        liveThreads -= 1
        condition.broadcast()
        condition.unlock()
    }
}
