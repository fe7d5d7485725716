import Codecs
import Forwarding
import Foundation
import Logging
import Media
import Playout
import RTP
import Testing
@testable import Rooms

/// A simulcast camera (`LayeredVideo`): real libvpx layers at three sizes, time passed in.
@Suite struct LayeredVideoTests {
    static let sizes = [
        (rid: "q", width: 80, height: 46), (rid: "h", width: 160, height: 90), (rid: "f", width: 320, height: 180),
    ]

    /// A participant whose camera is the three layers, on stand-in SSRCs 100, 101, 102 (no decode pool: frames
    /// are decoded on the delivering thread).
    func participant() throws -> Participant {
        var video = NegotiatedStream(
            kind: .video, ssrc: 100, payloadType: 96, clockRate: 90_000, codec: "VP8", srtp: nil)
        video.layers = Self.sizes.enumerated().map { SimulcastLayer(rid: $1.rid, ssrc: 100 + UInt32($0)) }
        video.ridExtension = 10
        return try Participant(
            userId: "u", sessionID: 1, audio: nil, video: video, nowMs: 0, logger: Logger(label: "t"))
    }

    /// Sends frame `i` of every layer (a keyframe at 0 and when `keyframe`), then drains and asks for a picture.
    struct Sender {
        var encoders: [VP8Encoder]
        var sequence: [UInt16] = [0, 0, 0]

        init() throws {
            encoders = try LayeredVideoTests.sizes.map {
                try VP8Encoder(width: $0.width, height: $0.height, fps: 30, bitrateKbps: 300)
            }
        }

        mutating func send(_ i: Int, to p: Participant, keyframe: Bool = false, only: Set<Int> = [0, 1, 2]) throws {
            for (k, size) in LayeredVideoTests.sizes.enumerated() where only.contains(k) {
                let frame = VideoFrame(
                    width: size.width, height: size.height, color: YUVColor(y: UInt8(16 + 5 * (i % 40)), u: 128, v: 128)
                )
                for out in try encoders[k].encode(frame, pts: Int64(i), forceKeyframe: keyframe || i == 0) {
                    let packet = RTPPacket(
                        marker: true, payloadType: 96, sequenceNumber: sequence[k], timestamp: UInt32(3000 * i),
                        ssrc: 100 + UInt32(k), payload: [0x10] + out.data)
                    sequence[k] &+= 1
                    p.receive(packet, bytes: out.data.count + 13, nowMs: Int64(33 * i))
                }
            }
            _ = p.drain(nowMs: Int64(33 * i))
        }
    }

    func picture(_ p: Participant, at i: Int) -> Picture? {
        var timing = PictureTiming()
        return p.currentFrame(nowMs: Int64(33 * i), holdMs: 1000, timing: &timing)
    }

    @Test func everyLayerIsToldByItsKeyframeSizeAndTheMixerDecodesTheOneCoveringItsTile() throws {
        let p = try participant()
        let camera = try #require(p.video)
        var sender = try Sender()
        try sender.send(0, to: p)
        var layers: [LayerSelector.Layer] = []
        camera.selectorLayers(nowMs: 0, into: &layers)
        #expect(layers.map(\.width) == [80, 160, 320] && layers.map(\.height) == [46, 90, 180])
        #expect(layers.allSatisfy { $0.available })

        // A 160×90 tile: the half-size layer is decoded (from its next keyframe), the others not at all.
        camera.setTile(width: 160, height: 90, fit: .cover)
        #expect(picture(p, at: 0) == nil)
        for i in 1..<6 {
            try sender.send(i, to: p, keyframe: i == 1)
            _ = picture(p, at: i)
        }
        let decoded = camera.layers.map { $0.pictures.decoded }
        #expect(decoded[0] == 0 && decoded[1] > 0 && decoded[2] == 0, "\(decoded)")
        #expect(picture(p, at: 5).map { ($0.width, $0.height) } ?? (0, 0) == (160, 90))
        #expect(camera.mixerNeeds == 0b010)
    }

    @Test func aLargerTileKeepsThePictureOfTheOldLayerUntilTheNewOneHasItsFirst() throws {
        let p = try participant()
        let camera = try #require(p.video)
        var sender = try Sender()
        camera.setTile(width: 80, height: 46, fit: .cover)
        try sender.send(0, to: p)
        _ = picture(p, at: 0)
        for i in 1..<4 {
            try sender.send(i, to: p, keyframe: i == 1)
            _ = picture(p, at: i)
        }
        #expect(picture(p, at: 3).map(\.width) == 80)
        // The full-size layer is wanted; until its keyframe, every canvas still gets the quarter-size picture.
        camera.setTile(width: 320, height: 180, fit: .cover)
        for i in 4..<8 {
            try sender.send(i, to: p)
            #expect(picture(p, at: i).map(\.width) == 80, "canvas \(i)")
        }
        #expect(camera.mixerNeeds == 0b101)
        try sender.send(8, to: p, keyframe: true)
        #expect(picture(p, at: 8).map(\.width) == 320)
        #expect(camera.mixerNeeds == 0b100)
        // The quarter layer's decoder stopped with the switch.
        let before = camera.layers[0].pictures.decoded
        for i in 9..<12 { try sender.send(i, to: p) }
        #expect(camera.layers[0].pictures.decoded == before)
    }

    @Test func aLayerUnneededForASecondIsPausedAtTheSenderTheSmallestNeverAndANeededOneAtOnceResumed() throws {
        let p = try participant()
        let camera = try #require(p.video)
        var sender = try Sender()
        try sender.send(0, to: p)
        // Only the half layer is needed from t = 0.
        #expect(camera.updateSenderPauses(needed: 0b010, nowMs: 0) == nil)
        #expect(camera.updateSenderPauses(needed: 0b010, nowMs: 999) == nil)
        #expect(camera.updateSenderPauses(needed: 0b010, nowMs: 1000) == 0b100)
        #expect(camera.rids(in: 0b100) == ["f"])
        // Paused, the full layer stays selectable: choosing it resumes it.
        var layers: [LayerSelector.Layer] = []
        camera.selectorLayers(nowMs: 5000, into: &layers)
        #expect(layers.map(\.available) == [false, false, true])
        #expect(camera.updateSenderPauses(needed: 0b100, nowMs: 5000) == 0)
        #expect(camera.updateSenderPauses(needed: 0b100, nowMs: 6000) == 0b010)
        #expect(camera.updateSenderPauses(needed: 0, nowMs: 6100) == nil)
        #expect(camera.updateSenderPauses(needed: 0, nowMs: 7100) == 0b110)
        #expect(camera.reports(nowMs: 7100).compactMap(\.state) == ["stopped", "paused", "paused"])
    }

    @Test func aLayerThatNeverSentAKeyframeIsNotPaused() throws {
        let p = try participant()
        let camera = try #require(p.video)
        var sender = try Sender()
        // The full layer has not started (libwebrtc waits for its bandwidth estimate): no size to choose it by.
        try sender.send(0, to: p, only: [0, 1])
        #expect(camera.updateSenderPauses(needed: 0b010, nowMs: 0) == nil)
        #expect(camera.updateSenderPauses(needed: 0b010, nowMs: 5000) == nil)
        // Once it sent its keyframe it can be chosen, and so paused when no one does.
        try sender.send(1, to: p, keyframe: true, only: [2])
        #expect(camera.updateSenderPauses(needed: 0b010, nowMs: 5100) == nil)
        #expect(camera.updateSenderPauses(needed: 0b010, nowMs: 6100) == 0b100)
    }
}
