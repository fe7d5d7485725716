import Media

/// A participant's decoded pictures on their way to the canvas, held back until their audio plays.
///
/// Lip-sync (docs/architecture.md, "The video path"): each picture carries the sender's capture time (its RTP
/// timestamp mapped to NTP time by the sender reports), and so does the audio block being mixed. A picture is
/// shown once the audio has reached its capture time. Without sender reports on both streams, or after
/// `maxWaitMs`, the newest picture shows at once.
///
/// The decoder writes straight into one of `slotCount` pictures made once (`DecodedPicture`: a reference to the
/// decoder's own buffer), so holding pictures copies no pixels and allocates nothing in steady state. A slot is
/// handed to the decoder only while nobody else holds its picture: the one on screen never is, and neither is one
/// that left the screen while someone still holds it (a tile of an older canvas, a snapshot drawing it, a slow
/// reader): decoding into it would change the picture under them.
/// Inlinable, so the receiver specialises it for its picture type (generic code boxes values on the heap).
public struct VideoPresenter<Slot: AnyObject> {
    @inlinable public static var slotCount: Int { 8 }
    /// A picture is never held longer than this, whatever the clocks say.
    @inlinable public static var maxWaitMs: Int64 { 400 }

    public var slots: [Slot]
    @usableFromInline var pending: [(slot: Int, capture: Double?, decodedMs: Int64)] = []
    @usableFromInline var shown: Int?
    /// The slot a decoder is writing into now (`reserveSlot`), outside its owner's lock.
    @usableFromInline var reserved: Int?
    /// When the newest picture was decoded: a stream stalls when this gets old.
    public var lastDecodedMs: Int64 = 0
    /// Sender capture time of the newest decoded picture.
    public var newestCapture: Double?
    /// Slots whose picture was still held elsewhere when the decoder needed one, so a new picture was made:
    /// none while the room lets go of the last canvas's tiles in time.
    public var slotsReplaced = 0
    /// Set by `present` when it shows a picture for the first time (when that picture was decoded, and its
    /// capture time); nil after a call that showed nothing new.
    public var newlyShown: (decodedMs: Int64, capture: Double?)?

    @inlinable
    public init(makeSlot: () throws -> Slot) rethrows {
        slots = try (0..<Self.slotCount).map { _ in try makeSlot() }
        pending.reserveCapacity(Self.slotCount)
    }

    @inlinable public var hasPicture: Bool { shown != nil || !pending.isEmpty }
    @inlinable public var waiting: Int { pending.count }

    /// A slot the decoder may overwrite: not on screen, not waiting, and held by nobody else. When too many
    /// wait, the oldest waiting picture is given up to make room; when every other slot is still held elsewhere,
    /// one gets a new picture from `makeSlot` (the old one lives on with whoever holds it).
    @inlinable
    public mutating func freeSlot(makeSlot: () throws -> Slot) rethrows -> Int {
        if pending.count >= Self.slotCount - 2 { pending.removeFirst() }
        var spare: Int?
        for i in 0..<Self.slotCount where i != shown && i != reserved && !pending.contains(where: { $0.slot == i }) {
            if isKnownUniquelyReferenced(&slots[i]) { return i }
            spare = spare ?? i
        }
        // At most slotCount - 1 slots are busy (one shown, one reserved, the rest waiting), so there is a spare.
        let i = spare ?? 0
        slots[i] = try makeSlot()
        slotsReplaced += 1
        return i
    }

    /// A free slot (`freeSlot`) kept from everyone else until `decoded` or `release`: the decoder writes into it
    /// without holding the lock that guards this presenter, so a canvas can be composed meanwhile.
    @inlinable
    public mutating func reserveSlot(makeSlot: () throws -> Slot) rethrows -> Int {
        let slot = try freeSlot(makeSlot: makeSlot)
        reserved = slot
        return slot
    }

    /// The reserved slot got no picture (a decode error, a refused size): it is free again.
    @inlinable
    public mutating func release(slot: Int) {
        if reserved == slot { reserved = nil }
    }

    /// A picture was decoded into `slot`.
    @inlinable
    public mutating func decoded(slot: Int, capture: Double?, nowMs: Int64) {
        if reserved == slot { reserved = nil }
        pending.append((slot, capture, nowMs))
        lastDecodedMs = nowMs
        newestCapture = capture
    }

    /// The picture for the canvas at `nowMs`, given the capture time of the audio being played
    /// (`playout`, nil when unknown): the newest waiting picture that is due, else the one on screen.
    @inlinable
    public mutating func present(playout: Double?, nowMs: Int64) -> Slot? {
        newlyShown = nil
        while let first = pending.first {
            if let playout, let capture = first.capture, capture > playout,
                nowMs - first.decodedMs < Self.maxWaitMs
            {
                break
            }
            shown = first.slot
            newlyShown = (first.decodedMs, first.capture)
            pending.removeFirst()
        }
        return shown.map { slots[$0] }
    }
}

/// The other half of lip-sync: when pictures arrive later than their audio (a deeper video jitter buffer, a slow
/// decoder), the audio must wait instead. Once a second this takes the median of how far each new picture trailed
/// the audio being played, and moves the audio delay by that much (bounded, so a bad clock cannot mute anyone).
/// Why the median: docs/architecture.md, "When the video is slower".
public struct LipSyncController {
    public static let windowMs: Int64 = 1000
    public static let toleranceSeconds = 0.020
    public static let maxDelayFrames = 15 * AudioFormat.blockFrames  // 300 ms
    /// Lags kept per window: a sender with more pictures a second than this is judged on its first ones.
    public static let capacity = 128

    private var windowStart: Int64?
    /// The window's lags in increasing order; capacity reserved once, so nothing is allocated per picture.
    private var lags: [Double] = []
    public private(set) var audioDelayFrames = 0

    public init() {
        lags.reserveCapacity(Self.capacity)
    }

    /// Forgets the lags seen so far: while a delay change waits for a quiet moment (`AudioFIFO.setSyncDelay`),
    /// pictures still show the old lag, which would ask for the same change again.
    public mutating func restartWindow() {
        windowStart = nil
        lags.removeAll(keepingCapacity: true)
    }

    /// `lag`: capture time of the audio playing minus that of a new picture, in seconds, on the first canvas
    /// after that picture was decoded (once per picture). Returns the new audio delay (frames at 48 kHz)
    /// when it changes.
    public mutating func observe(lag: Double, nowMs: Int64) -> Int? {
        let start = windowStart ?? nowMs
        windowStart = start
        if lags.count < Self.capacity, lag.isFinite {
            lags.insert(lag, at: lags.firstIndex(where: { $0 > lag }) ?? lags.count)
        }
        guard nowMs - start >= Self.windowMs else { return nil }
        windowStart = nowMs
        guard !lags.isEmpty else { return nil }
        let lag = lags[(lags.count - 1) / 2]  // the lower median: of two, the smaller
        lags.removeAll(keepingCapacity: true)
        var target = audioDelayFrames
        if lag > Self.toleranceSeconds {
            target += Int(lag * Double(AudioFormat.sampleRate))
        } else if lag < -Self.toleranceSeconds {
            target -= Int(-lag * Double(AudioFormat.sampleRate))
        }
        target = max(0, min(target, Self.maxDelayFrames))
        guard target != audioDelayFrames else { return nil }
        audioDelayFrames = target
        return target
    }
}
