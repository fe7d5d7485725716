import Foundation
import Synchronization

/// The bytes the recordings directory may hold (`recordings_max_bytes`): what it held at start plus what every
/// recording of this server has written since, counted as they write. A room's own quota
/// (`recordings_room_max_bytes`) counts what its recordings wrote since it opened, and charges the directory's too.
/// A recording that would pass either stops with the reason (`refusal`), so a full disk or one room's recordings
/// never stop the others, the store or the rooms.
public final class RecordingQuota: Sendable {
    public let limitBytes: Int64
    private let used: Mutex<Int64>
    /// The directory's quota a room's also charges; nil for the directory's own.
    private let parent: RecordingQuota?
    /// Whose quota, in refusals.
    private let scope: String

    /// `directory`'s files are counted as used (a quota is for what the disk holds, not only for this run).
    public init(limitBytes: Int64, directory: String) {
        self.limitBytes = limitBytes
        used = Mutex(Self.size(of: directory))
        parent = nil
        scope = "the recordings directory is full: its quota of \(limitBytes) bytes (recordings_max_bytes) is reached"
    }

    /// One room's quota, charging `parent` (the directory's, when it has one) as well.
    public init(room: String, limitBytes: Int64, parent: RecordingQuota?) {
        self.limitBytes = limitBytes
        used = Mutex(0)
        self.parent = parent
        scope =
            "room '\(room)' has written its quota of \(limitBytes) bytes of recordings (recordings_room_max_bytes)"
    }

    public var usedBytes: Int64 { used.withLock { $0 } }

    /// Counts `count` more bytes here and in the parent; when they would pass either limit, counts nothing anywhere
    /// and returns why.
    func take(_ count: Int64) -> String? {
        let taken = used.withLock { used in
            guard used + count <= limitBytes else { return false }
            used += count
            return true
        }
        guard taken else { return scope }
        if let parent, let refusal = parent.take(count) {
            used.withLock { $0 -= count }
            return refusal
        }
        return nil
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
