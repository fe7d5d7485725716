import CohostAPI
import Forwarding
import Foundation
import Layout
import Media
import RTP

/// A participant's camera or screen share: one stream, or the layers of a simulcast sender (RFC 8853), each a
/// `VideoReceiver` of its own (received, reordered, NACKed and keyframe-requested on its own) with a
/// `VideoForwarder` of its own, so a receiver's slot can take any layer. The mixer decodes one layer: the smallest
/// that covers the tile it paints (`LayerSelector.forTile`); a new layer is decoded beside the old one until its
/// first picture, so a switch never shows a gap. The layers nobody takes are paused at the sender
/// (docs/forwarding.md, "Simulcast").
///
/// Packets come on the UDP thread (each layer's receiver has its own lock); the selection is made on the room's
/// canvas queue and read from its audio queue: `lock` guards it, and is never held while calling into a layer.
final class LayeredVideo: @unchecked Sendable {
    let layers: [VideoReceiver]
    let source: StreamSource
    /// A layer without a packet for this long is stopped (the sender's choice, or its network).
    static let stoppedAfterMs: Int64 = 1500

    private let lock = NSLock()
    private var wanted: (width: Int, height: Int, bothDimensions: Bool)?
    /// The layer the mixer paints, and the one it will paint once that has decoded a picture.
    private var shown: Int?
    private var next: Int?
    private var nextDecodedBefore = 0
    /// Layers Cohost asked the sender to pause (`layers` event): they can be resumed, so they stay selectable.
    private var pausedAtSender: Set<Int> = []
    private var unneededSince: [Int: Int64] = [:]
    private var firstPictureAnnounced = false
    /// The layers as `mixerLayer` reads them (the canvas queue only): reused, no allocation per canvas.
    private var mixerScratch: [LayerSelector.Layer] = []
    /// Simulcast layers (rather than one stream): decoded only once selected. A single stream is decoded as its
    /// receiver was made to.
    let isSimulcast: Bool

    init(layers: [VideoReceiver], source: StreamSource) {
        self.layers = layers
        self.source = source
        forwarders = layers.compactMap(\.forwarder)
        isSimulcast = layers.count > 1 || layers.first?.rid != nil
    }

    /// The first layer: a single stream's receiver.
    var primary: VideoReceiver { layers[0] }
    /// Each layer's forwarder, in layer order (empty when the codec cannot be forwarded); made once.
    let forwarders: [VideoForwarder]

    func layer(owning ssrc: UInt32) -> VideoReceiver? {
        if layers.count == 1 { return layers[0].owns(ssrc) ? layers[0] : nil }
        return layers.first { $0.owns(ssrc) }
    }

    func receive(_ packet: RTPPacket, bytes: Int, nowMs: Int64) {
        layer(owning: packet.ssrc)?.receive(packet, bytes: bytes, nowMs: nowMs)
    }

    /// Every layer's reordering wait; the first picture of any layer is announced once.
    func drain(nowMs: Int64) -> Participant.Signal? {
        var signal: Participant.Signal?
        for layer in layers {
            if let s = layer.drain(nowMs: nowMs), signal == nil { signal = s }
        }
        guard let signal else { return nil }
        return lock.withLock {
            guard !firstPictureAnnounced else { return nil }
            firstPictureAnnounced = true
            return signal
        }
    }

    // MARK: what the mixer takes (the canvas queue)

    /// The size of the tile the mixer paints this stream into (nil: no tile shows it, the smallest layer does).
    func setTile(width: Int, height: Int, fit: FitMode) {
        lock.withLock { wanted = (width, height, fit != .contain) }
    }

    func clearTile() { lock.withLock { wanted = (0, 0, true) } }

    /// The layers as the selectors read them now.
    func selectorLayers(nowMs: Int64, into out: inout [LayerSelector.Layer]) {
        out.removeAll(keepingCapacity: true)
        let paused = lock.withLock { pausedAtSender }
        for (index, layer) in layers.enumerated() {
            let status = layer.layerStatus
            let live = status.lastPacketMs.map { nowMs - $0 < Self.stoppedAfterMs } ?? false
            let rate = layer.forwarder?.bitrateBps ?? status.kbps * 1000
            out.append(
                LayerSelector.Layer(
                    width: status.width, height: status.height, bitrateBps: rate,
                    available: live || paused.contains(index)))
        }
    }

    /// Decides which layer the mixer decodes (a single stream: always its only one) and returns the one to paint
    /// now. A new choice is decoded beside the old one, which is painted until the new one has a picture.
    func mixerLayer(nowMs: Int64) -> VideoReceiver {
        guard isSimulcast else { return layers[0] }
        selectorLayers(nowMs: nowMs, into: &mixerScratch)
        let selectable = mixerScratch
        let (tile, current, pending) = lock.withLock { (wanted, shown, next) }
        let target =
            LayerSelector.forTile(
                selectable, width: tile?.width ?? 0, height: tile?.height ?? 0,
                bothDimensions: tile?.bothDimensions ?? true) ?? current ?? 0
        guard let current else {
            layers[target].setDecoding(true)
            lock.withLock { shown = target }
            return layers[target]
        }
        if target == current {
            if let pending {
                layers[pending].setDecoding(false)
                lock.withLock { next = nil }
            }
            return layers[current]
        }
        if pending != target {
            if let pending { layers[pending].setDecoding(false) }
            let before = layers[target].layerStatus.framesDecoded
            layers[target].setDecoding(true)
            lock.withLock {
                next = target
                nextDecodedBefore = before
            }
            return layers[current]
        }
        // The new layer decoded a picture: it is painted from now on, and the old one is no longer decoded.
        let decodedBefore = lock.withLock { nextDecodedBefore }
        guard layers[target].layerStatus.framesDecoded > decodedBefore else { return layers[current] }
        layers[current].setDecoding(false)
        lock.withLock {
            shown = target
            next = nil
        }
        return layers[target]
    }

    /// No layer is decoded (a screen share no region shows).
    func stopDecoding() {
        let (current, pending) = lock.withLock {
            defer {
                shown = nil
                next = nil
            }
            return (shown, next)
        }
        for index in [current, pending].compactMap({ $0 }) { layers[index].setDecoding(false) }
    }

    /// The layers the mixer needs now (painted, or being started), as a bit set.
    var mixerNeeds: UInt32 {
        lock.withLock {
            guard isSimulcast else { return 1 }
            var set: UInt32 = 0
            if let shown { set |= 1 << UInt32(shown) }
            if let next { set |= 1 << UInt32(next) }
            return set
        }
    }

    /// A layer no one needed for this long is paused at the sender.
    static let pauseAfterMs: Int64 = 1000

    /// Which layers the sender should pause, given those needed now (a bit set): a needed layer is resumed at
    /// once, one unneeded for `pauseAfterMs` paused. The smallest layer is never paused, so the participant's video
    /// never stops altogether, nor a layer whose size no keyframe told yet: nothing could choose it, so paused
    /// before its first keyframe (libwebrtc starts its largest layer only once its bandwidth estimate allows) it
    /// would never be resumed. Returns the new set of paused layers when it changed.
    func updateSenderPauses(needed: UInt32, nowMs: Int64) -> UInt32? {
        var smallest = 0
        var smallestArea = Int.max
        var unsized: UInt32 = 0
        for (index, layer) in layers.enumerated() {
            let status = layer.layerStatus
            let area = status.width * status.height
            if area == 0 { unsized |= 1 << UInt32(index) }
            if area > 0 && area < smallestArea {
                smallestArea = area
                smallest = index
            }
        }
        return lock.withLock {
            var changed = false
            for index in layers.indices {
                let bit = UInt32(1) << UInt32(index)
                if needed & bit != 0 || index == smallest || unsized & bit != 0 {
                    unneededSince[index] = nil
                    if pausedAtSender.remove(index) != nil { changed = true }
                } else if !pausedAtSender.contains(index) {
                    let since = unneededSince[index] ?? nowMs
                    unneededSince[index] = since
                    if nowMs - since >= Self.pauseAfterMs {
                        pausedAtSender.insert(index)
                        changed = true
                    }
                }
            }
            guard changed else { return nil }
            return pausedAtSender.reduce(UInt32(0)) { $0 | 1 << UInt32($1) }
        }
    }

    // MARK: feedback and reports

    func reports(nowMs: Int64) -> [StreamReport] {
        guard isSimulcast else { return [layers[0].report()] }
        let (paused, current) = lock.withLock { (pausedAtSender, shown) }
        return layers.enumerated().map { index, layer in
            var report = layer.report()
            let status = layer.layerStatus
            let live = status.lastPacketMs.map { nowMs - $0 < Self.stoppedAfterMs } ?? false
            report.width = status.width
            report.height = status.height
            report.state = live ? "live" : paused.contains(index) ? "paused" : "stopped"
            report.mixed = index == current
            return report
        }
    }

    /// The RIDs of the layers in the set `mask`.
    func rids(in mask: UInt32) -> [String] {
        layers.enumerated().compactMap { index, layer in mask & (1 << UInt32(index)) != 0 ? layer.rid : nil }
    }
}
