import Foundation
import Locking

/// Fixed threads that run request handlers, so libmicrohttpd's threads never wait for one.
///
/// libmicrohttpd's pool threads each accept a burst of connections and serve them one after another, so a slow
/// handler would hold up every connection its thread had accepted. Instead the access handler suspends the
/// connection and submits the handler here; the job resumes the connection when the response is ready.
///
/// Jobs come in three lanes, taken in this order: ``HTTPServer/Lane/priority``, ``HTTPServer/Lane/standard``,
/// ``HTTPServer/Lane/slow``. With two threads or more, one thread is kept for priority work (a login): standard and
/// slow jobs together run on at most all threads but one, so a flood of cheap-but-slowed requests (a viewer looping
/// over a large audit page) can never keep an admin out. Slow jobs (a scan of the store) may run on at most all threads
/// but two (one with two threads or fewer), so with three threads or more a thread is also left for standard work.
/// Priority jobs may take every thread but one. With one thread there is no reserve, but priority work is still taken
/// first. A pool told that no job is ever priority (a server without a lane classifier) keeps no thread for it.
///
/// Nothing waits without bound: each lane holds at most `maxQueued` jobs (a job beyond is refused at once, and the
/// caller answers 503), a job that waited longer than `maxQueueWait` is shed rather than run, and so is one whose
/// client has gone away (`Job.isAbandoned`): a flood that ended leaves no backlog of work nobody will read.
final class HandlerPool: Sendable {
    /// A request's work, and what to do instead of it when it is shed.
    struct Job: Sendable {
        /// Computes and sends the response.
        let run: @Sendable () -> Void
        /// Sends a refusal instead (503): the job waited too long or its client left.
        let shed: @Sendable (ShedReason) -> Void
        /// Whether the client closed its connection while the job waited.
        let isAbandoned: @Sendable () -> Bool

        init(run: @escaping @Sendable () -> Void, shed: @escaping @Sendable (ShedReason) -> Void = { _ in },
             isAbandoned: @escaping @Sendable () -> Bool = { false }) {
            self.run = run
            self.shed = shed
            self.isAbandoned = isAbandoned
        }
    }

    /// Why a queued job was not run.
    enum ShedReason: Sendable, Equatable {
        /// It waited longer than `maxQueueWait`.
        case waitedTooLong
        /// Its client closed the connection.
        case clientGone
    }

    /// What `submit` did with a job.
    enum Submission: Equatable {
        case queued
        /// The lane's queue is full: answer 503 now.
        case full
        /// The pool is closing.
        case closed
    }

    private let caps: [HTTPServer.Lane: Int]
    /// The most standard and slow jobs that run at once: the rest of the threads are priority work's alone.
    private let nonPriorityCap: Int
    private let maxQueued: Int
    private let maxQueueWait: UInt64
    private let state = Monitor(State())

    /// What the handler threads share.
    private struct State {
        var queues: [HTTPServer.Lane: JobQueue] = [.standard: JobQueue(), .priority: JobQueue(), .slow: JobQueue()]
        var running: [HTTPServer.Lane: Int] = [.standard: 0, .priority: 0, .slow: 0]
        var closed = false
        var liveThreads = 0

        var isEmpty: Bool { queues.values.allSatisfy { $0.count == 0 } }
    }

    /// A first-in, first-out queue that reuses its storage, with when each job came in.
    private struct JobQueue {
        private var jobs: [(job: Job, since: UInt64)] = []
        private var head = 0
        var count: Int { jobs.count - head }
        mutating func append(_ job: Job) { jobs.append((job, DispatchTime.now().uptimeNanoseconds)) }
        mutating func next() -> (job: Job, since: UInt64)? {
            guard head < jobs.count else { return nil }
            let entry = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            return entry
        }
    }

    /// The order in which idle threads look at the lanes.
    private static let order: [HTTPServer.Lane] = [.priority, .standard, .slow]

    /// Starts `threadCount` worker threads. Each lane queues at most `maxQueued` jobs; a job that waited
    /// `maxQueueWaitSeconds` is shed. `reservesPriority` false: no job is ever priority, so standard work may take
    /// every thread.
    init(threadCount: Int, maxQueued: Int = 256, maxQueueWaitSeconds: Double = 20, reservesPriority: Bool = true) {
        state.withLock { $0.liveThreads = threadCount }
        nonPriorityCap = reservesPriority ? max(1, threadCount - 1) : threadCount
        caps = [.standard: nonPriorityCap, .priority: max(1, threadCount - 1), .slow: max(1, threadCount - (threadCount >= 3 ? 2 : 1))]
        self.maxQueued = max(1, maxQueued)
        maxQueueWait = UInt64(max(0, maxQueueWaitSeconds) * 1e9)
        for index in 0..<threadCount {
            let thread = Thread { [self] in work() }
            thread.name = "HTTPServer handler \(index)"
            thread.start()
        }
    }

    /// Runs `prepare` then queues `job` in `lane`, both under the pool's lock, unless the pool is closing or the
    /// lane's queue is full (then neither runs).
    ///
    /// `prepare` suspends the connection: doing it under the lock means ``close()`` cannot return while a
    /// connection is suspended without a job queued to resume it.
    func submit(lane: HTTPServer.Lane = .standard, prepare: () -> Void, _ job: Job) -> Submission {
        state.update { state in
            guard !state.closed else { return .closed }
            guard state.queues[lane]!.count < maxQueued else { return .full }
            prepare()
            state.queues[lane]!.append(job)
            return .queued
        }
    }

    /// Refuses new jobs, waits until every queued and running job has finished, and lets the threads exit.
    func close() {
        state.update { $0.closed = true }
        _ = state.wait(until: { $0.liveThreads == 0 }) { _ in }
    }

    /// The next job a thread may take now, and its lane, taken off its queue and counted as running.
    private func takeJob(_ state: inout State) -> (job: Job, since: UInt64, lane: HTTPServer.Lane)? {
        for lane in Self.order where mayRun(lane, state) {
            if let entry = state.queues[lane]!.next() {
                state.running[lane]! += 1
                return (entry.job, entry.since, lane)
            }
        }
        return nil
    }

    /// Whether a job of `lane` may start now: its lane is under its cap, and standard or slow work leaves priority
    /// work its thread.
    private func mayRun(_ lane: HTTPServer.Lane, _ state: State) -> Bool {
        guard state.running[lane]! < caps[lane]! else { return false }
        return lane == .priority || state.running[.standard]! + state.running[.slow]! < nonPriorityCap
    }

    /// Whether a thread may take a job now.
    private func hasRunnableJob(_ state: State) -> Bool {
        Self.order.contains { mayRun($0, state) && state.queues[$0]!.count > 0 }
    }

    private func work() {
        while true {
            // A job to run, or nil once the pool is closed and nothing is left.
            let taken = state.wait(until: { hasRunnableJob($0) || ($0.closed && $0.isEmpty) }) { state in takeJob(&state) }
            guard let (job, since, lane) = taken ?? nil else { break }
            let shed: ShedReason? = DispatchTime.now().uptimeNanoseconds - since > maxQueueWait ? .waitedTooLong
                : job.isAbandoned() ? .clientGone : nil
            if let shed { job.shed(shed) } else { job.run() }
            // A capped lane has a free slot again: the update wakes a thread waiting with only that lane's jobs queued.
            state.update { $0.running[lane]! -= 1 }
        }
        state.update { $0.liveThreads -= 1 }
    }

}
