#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Records sorted by a three-part key in bounded memory: they are kept in memory until `budgetBytes` is reached,
/// then each full buffer is sorted and written to a temporary file as a run, and the runs are merged k ways when
/// read back. A record is its key and a few bytes of payload, written and read with `ByteWriter`/`ByteReader`.
///
/// The temporary file (in `TMPDIR`, else `/tmp`) is unlinked as soon as it is made, so nothing is left behind
/// however the process ends. Used by `users duplicates` (`SplitIdentityFinder`) to group ten million users by
/// name or mailbox with only one group in memory at a time.
///
///     let sorter = ExternalSorter(budgetBytes: 32 << 20)
///     try sorter.append(ExternalSorter.Key(nameKey, 0, index)) { $0.u64(rowid) }
///     let stream = try sorter.sorted()
///     while let rowid = try stream.next({ _, reader in reader.u64() }) { … }
final class ExternalSorter: @unchecked Sendable { // owned by one thread at a time (handed over once, by a background job)
    /// Compared part by part.
    struct Key: Comparable {
        var a: UInt64, b: UInt64, c: UInt64
        init(_ a: UInt64, _ b: UInt64, _ c: UInt64) { self.a = a; self.b = b; self.c = c }
        static func < (x: Key, y: Key) -> Bool { (x.a, x.b, x.c) < (y.a, y.b, y.c) }
    }

    private struct Entry { var key: Key; var offset: Int; var length: Int }

    private let budgetBytes: Int
    private var entries: [Entry] = []
    private var payload: [UInt8] = []
    private var spill: SpillFile?
    private var runs: [Range<Int>] = []
    /// Records appended so far.
    private(set) var count = 0

    /// A sorter that writes a run whenever its buffered records take more than `budgetBytes`.
    init(budgetBytes: Int) {
        self.budgetBytes = max(1 << 16, budgetBytes)
    }

    /// An order-preserving key part for a signed number.
    static func ordered(_ value: Int64) -> UInt64 { UInt64(bitPattern: value) ^ (1 << 63) }

    /// Adds one record: its key, and its payload written by `write`.
    func append(_ key: Key, _ write: (inout ByteWriter) -> Void) throws {
        let start = payload.count
        var writer = ByteWriter(bytes: payload)
        payload = []
        write(&writer)
        payload = writer.bytes
        entries.append(Entry(key: key, offset: start, length: payload.count - start))
        count += 1
        if payload.count + entries.count * MemoryLayout<Entry>.stride >= budgetBytes { try writeRun() }
    }

    /// Sorts the buffer and writes it to the temporary file as one run.
    private func writeRun() throws {
        guard !entries.isEmpty else { return }
        if spill == nil { spill = try SpillFile() }
        entries.sort { $0.key < $1.key }
        let start = spill!.size
        var out = [UInt8](repeating: 0, count: 1 << 20)
        var used = 0
        try payload.withUnsafeBytes { source in
            for entry in entries {
                let need = 32 + entry.length
                if used + need > out.count {
                    try spill!.append(out[0..<used])
                    used = 0
                    if need > out.count { out = [UInt8](repeating: 0, count: need) }
                }
                out.withUnsafeMutableBytes { target in
                    target.storeBytes(of: entry.key.a.littleEndian, toByteOffset: used, as: UInt64.self)
                    target.storeBytes(of: entry.key.b.littleEndian, toByteOffset: used + 8, as: UInt64.self)
                    target.storeBytes(of: entry.key.c.littleEndian, toByteOffset: used + 16, as: UInt64.self)
                    target.storeBytes(of: UInt64(entry.length).littleEndian, toByteOffset: used + 24, as: UInt64.self)
                    if entry.length > 0 {
                        (target.baseAddress! + used + 32).copyMemory(from: source.baseAddress! + entry.offset, byteCount: entry.length)
                    }
                }
                used += need
            }
        }
        try spill!.append(out[0..<used])
        runs.append(start..<spill!.size)
        // The buffers keep their capacity for the next run (growing them again costs a copy per doubling).
        entries.removeAll(keepingCapacity: true)
        payload.removeAll(keepingCapacity: true)
    }

    private static func put(_ value: UInt64, _ out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    /// The records in key order (records with equal keys in no particular order). Call once, after the last append.
    func sorted() throws -> SortedStream {
        if runs.isEmpty {
            entries.sort { $0.key < $1.key }
            let stream = SortedStream(entries: entries.map { ($0.key, $0.offset, $0.length) }, payload: payload)
            entries = []
            payload = []
            return stream
        }
        try writeRun()
        entries = []
        payload = []
        let readBuffer = max(1 << 16, min(1 << 20, budgetBytes / max(1, runs.count)))
        return SortedStream(file: spill!, runs: runs, bufferBytes: readBuffer)
    }

    /// A pull-style reader over the sorted records.
    final class SortedStream {
        // In memory: the sorted entries and their payload.
        private var entries: [(Key, Int, Int)] = []
        private var payload: [UInt8] = []
        private var position = 0
        // Spilled: one reader per run, merged through a binary heap of run numbers ordered by their current key.
        private var readers: [RunReader] = []
        private var heap: [Int] = []
        private let file: SpillFile?

        fileprivate init(entries: [(Key, Int, Int)], payload: [UInt8]) {
            self.entries = entries
            self.payload = payload
            file = nil
        }

        fileprivate init(file: SpillFile, runs: [Range<Int>], bufferBytes: Int) {
            self.file = file
            readers = runs.map { RunReader(file: file, range: $0, bufferBytes: bufferBytes) }
        }

        private var started = false

        /// The next record, decoded by `decode` (its reader is valid only during the call); nil at the end.
        func next<T>(_ decode: (Key, inout ByteReader) throws -> T) throws -> T? {
            guard let file else {
                guard position < entries.count else { return nil }
                let (key, offset, length) = entries[position]
                position += 1
                return try payload.withUnsafeBytes { raw in
                    var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)]))
                    return try decode(key, &reader)
                }
            }
            _ = file
            if !started {
                started = true
                for run in readers.indices where try readers[run].advance() { push(run) }
            } else if let top = heap.first {
                // The record handed out last time is consumed now: its run moves on.
                if try readers[top].advance() { siftDown(0) } else { popTop() }
            }
            guard let top = heap.first else { return nil }
            return try readers[top].withCurrent(decode)
        }

        private func less(_ i: Int, _ j: Int) -> Bool { readers[heap[i]].key < readers[heap[j]].key }

        private func push(_ run: Int) {
            heap.append(run)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard less(child, parent) else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        private func popTop() {
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            if !heap.isEmpty { siftDown(0) }
        }

        private func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count && less(left, smallest) { smallest = left }
                if right < heap.count && less(right, smallest) { smallest = right }
                guard smallest != parent else { return }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
    }

    /// Reads one run of the spill file through a buffer of its own.
    private final class RunReader {
        let file: SpillFile
        var next: Int
        let end: Int
        var buffer: [UInt8]
        var bufferStart = 0 // file offset of buffer[0]
        var bufferCount = 0
        var recordAt = 0 // offset in buffer of the current record's payload
        var recordLength = 0
        var key = Key(0, 0, 0)

        init(file: SpillFile, range: Range<Int>, bufferBytes: Int) {
            self.file = file
            next = range.lowerBound
            end = range.upperBound
            buffer = []
            buffer.reserveCapacity(bufferBytes)
            self.bufferCapacity = bufferBytes
        }

        var bufferCapacity: Int

        /// Makes `count` bytes from file offset `next` available in the buffer.
        private func ensure(_ count: Int) throws {
            let have = bufferStart + bufferCount - next
            if have >= count { return }
            let keepFrom = next - bufferStart
            let wanted = max(count, bufferCapacity)
            var fresh = [UInt8](repeating: 0, count: min(wanted, end - next))
            if have > 0 { fresh.replaceSubrange(0..<have, with: buffer[keepFrom..<(keepFrom + have)]) }
            let toRead = fresh.count - max(0, have)
            if toRead > 0 { try file.read(into: &fresh, at: max(0, have), count: toRead, from: next + max(0, have)) }
            buffer = fresh
            bufferStart = next
            bufferCount = fresh.count
        }

        /// Moves to the run's next record; false at the run's end.
        func advance() throws -> Bool {
            guard next < end else { return false }
            try ensure(32)
            var offset = next - bufferStart
            func u64() -> UInt64 {
                var value: UInt64 = 0
                withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: buffer[offset..<(offset + 8)]) }
                offset += 8
                return UInt64(littleEndian: value)
            }
            key = Key(u64(), u64(), u64())
            let length = Int(u64())
            next += 32
            try ensure(length)
            recordAt = next - bufferStart
            recordLength = length
            next += length
            return true
        }

        func withCurrent<T>(_ decode: (Key, inout ByteReader) throws -> T) rethrows -> T {
            try buffer.withUnsafeBytes { raw in
                var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[recordAt..<(recordAt + recordLength)]))
                return try decode(key, &reader)
            }
        }
    }
}

/// A temporary file that is unlinked at once and closed when released.
final class SpillFile {
    private let descriptor: Int32
    private(set) var size = 0

    init() throws {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((folder.hasSuffix("/") ? folder : folder + "/").utf8CString.dropLast()) + Array("gatehouse-sort-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw GatehouseError("cannot make a temporary file in \(folder): \(String(cString: strerror(errno)))",
                                 fix: "set TMPDIR to a writable folder with room for the sort (about 300 bytes per user)")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    func append(_ bytes: ArraySlice<UInt8>) throws {
        var written = 0
        try bytes.withUnsafeBytes { raw in
            while written < raw.count {
                let n = pwrite(descriptor, raw.baseAddress! + written, raw.count - written, off_t(size + written))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw GatehouseError("cannot write the temporary sort file: \(String(cString: strerror(errno)))",
                                         fix: "set TMPDIR to a folder with room for the sort (about 300 bytes per user)", code: errno == ENOSPC ? .diskFull : .failed)
                }
                written += n
            }
        }
        size += written
    }

    func read(into buffer: inout [UInt8], at index: Int, count: Int, from offset: Int) throws {
        var done = 0
        try buffer.withUnsafeMutableBytes { raw in
            while done < count {
                let n = pread(descriptor, raw.baseAddress! + index + done, count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw GatehouseError("cannot read the temporary sort file back: \(n < 0 ? String(cString: strerror(errno)) : "it ended early")") }
                done += n
            }
        }
    }
}

/// Appends fixed-width little-endian values to a record's payload.
struct ByteWriter {
    var bytes: [UInt8]
    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) } // little-endian
    }
    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
    mutating func u8(_ value: UInt8) { bytes.append(value) }
}

/// Reads what a `ByteWriter` wrote, in the same order.
struct ByteReader {
    private let raw: UnsafeRawBufferPointer
    private var offset = 0
    init(_ raw: UnsafeRawBufferPointer) { self.raw = raw }
    mutating func u64() -> UInt64 {
        let value = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        offset += 8
        return UInt64(littleEndian: value)
    }
    mutating func i64() -> Int64 { Int64(bitPattern: u64()) }
    mutating func u32() -> UInt32 {
        let value = raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        offset += 4
        return UInt32(littleEndian: value)
    }
    mutating func u8() -> UInt8 {
        defer { offset += 1 }
        return raw[offset]
    }
}
