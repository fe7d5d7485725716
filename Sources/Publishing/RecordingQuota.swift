import Foundation
import Synchronization

/// The bytes the recordings directory may hold (`recordings_max_bytes`): what it held at start plus what every
/// recording of this server has written since, counted as they write. A recording that would pass it stops with
/// the reason (`refusal`), so a full disk never stops the others, the store or the rooms.
public final class RecordingQuota: Sendable {
    public let limitBytes: Int64
    private let used: Mutex<Int64>

    /// `directory`'s files are counted as used (a quota is for what the disk holds, not only for this run).
    public init(limitBytes: Int64, directory: String) {
        self.limitBytes = limitBytes
        used = Mutex(Self.size(of: directory))
    }

    public var usedBytes: Int64 { used.withLock { $0 } }

    /// Counts `count` more bytes; false, counting nothing, when they would pass the limit.
    func take(_ count: Int64) -> Bool {
        used.withLock { used in
            guard used + count <= limitBytes else { return false }
            used += count
            return true
        }
    }

    var refusal: String {
        "the recordings directory is full: its quota of \(limitBytes) bytes (recordings_max_bytes) is reached"
    }

    private static func size(of directory: String) -> Int64 {
        guard let files = FileManager.default.enumerator(atPath: directory) else { return 0 }
        var total: Int64 = 0
        while let name = files.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            if attributes?[.type] as? FileAttributeType == .typeRegular {
                total += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
            }
        }
        return total
    }
}
