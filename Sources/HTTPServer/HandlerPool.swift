import Foundation

/// Fixed threads that run request handlers, so libmicrohttpd's threads never wait for one.
///
/// libmicrohttpd's pool threads each accept a burst of connections and serve them one after another, so a slow
/// handler would hold up every connection its thread had accepted. Instead the access handler suspends the
/// connection and submits the handler here; the job resumes the connection when the response is ready.
///
/// Jobs come in two lanes. ``HTTPServer/Lane/slow`` jobs (a password hash, a scan of the store) may take at
/// most all threads but one, so however many of them queue up, one thread is always left for
/// ``HTTPServer/Lane/standard`` jobs, which are taken first. With one thread there is no reserve.
final class HandlerPool: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    private let condition = NSCondition()
    private var standard = JobQueue()
    private var slow = JobQueue()
    private var running = 0
    private var runningSlow = 0
    private let maxSlow: Int
    private var closed = false
    private var liveThreads = 0

    /// A first-in, first-out queue that reuses its storage.
    private struct JobQueue {
        private var jobs: [Job] = []
        private var head = 0
        var isEmpty: Bool { head == jobs.count }
        mutating func append(_ job: @escaping Job) { jobs.append(job) }
        mutating func next() -> Job? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            return job
        }
    }

    /// Starts `threadCount` worker threads.
    init(threadCount: Int) {
        liveThreads = threadCount
        maxSlow = max(1, threadCount - 1)
        for index in 0..<threadCount {
            let thread = Thread { [self] in work() }
            thread.name = "HTTPServer handler \(index)"
            thread.start()
        }
    }

    /// Runs `prepare` then queues `job` in `lane`, both under the pool's lock, unless the pool is closing.
    ///
    /// `prepare` suspends the connection: doing it under the lock means ``close()`` cannot return while a
    /// connection is suspended without a job queued to resume it.
    /// - Returns: `false` (and runs neither) when the pool no longer takes work.
    func submit(lane: HTTPServer.Lane = .standard, prepare: () -> Void, _ job: @escaping Job) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return false }
        prepare()
        if lane == .slow { slow.append(job) } else { standard.append(job) }
        condition.broadcast()
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
            var isSlow = false
            var job = standard.next()
            if job == nil, runningSlow < maxSlow, let next = slow.next() {
                job = next
                isSlow = true
            }
            if let job {
                running += 1
                if isSlow { runningSlow += 1 }
                condition.unlock()
                job()
                condition.lock()
                running -= 1
                if isSlow {
                    runningSlow -= 1
                    // A slow slot is free: a thread waiting with only slow jobs queued may take one now.
                    condition.broadcast()
                }
            } else if closed && standard.isEmpty && slow.isEmpty {
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
